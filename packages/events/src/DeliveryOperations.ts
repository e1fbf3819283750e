/**
 * Outgoing events on every surface.
 *
 * - `events_subscriptions` (HTTP `GET /workspaces/<slug>/events/subscriptions`, MCP
 *   `service_events_subscriptions`, CLI `service events subscriptions`): the workspace's subscriptions and
 *   Destinations with their state.
 * - `events_deliveries` (`GET .../events/deliveries`, `service_events_deliveries`, `service events deliveries
 *   [--follow]`): deliveries newest first with every attempt (status, latency, result, next attempt).
 * - People's Destinations, owner or admin person only, HTTP and CLI: `destinations_create` (`POST
 *   .../events/destinations`, the secret shown once), `destinations_stop` (`DELETE .../destinations/<id>`) and
 *   `destinations_replay` (`POST .../destinations/<id>/replay`, a time window sent again with the same
 *   webhook-ids).
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Catalog from "./Catalog.js"
import { Outcome } from "./Delivery.js"
import { DeliveryLog, DeliveryView, DestinationView } from "./DeliveryLog.js"
import { type DestinationRefused, Destinations, notFoundMessage } from "./Destinations.js"
import { codec, refuse } from "./EventsRefusal.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const scopes: ReadonlyArray<Scope> = ["context:read", "commercial:read", "topics:write", "events:write"]
const writeScopes: ReadonlyArray<Scope> = ["events:write"]

const DestinationId = Schema.String.pipe(Schema.pattern(/^(sub_[0-9a-f]{32}|dst_[0-9a-f]{24})$/)).annotations({
  description: "A subscription id (sub_…) or Destination id (dst_…)."
})

const destinationNotFound = (why: string) =>
  refuse("destination_not_found", why, "List the workspace's subscriptions and use one of their ids.", { field: "destination_id" })

const SubscriptionsInput = Schema.Struct({}).annotations({ ...strict, identifier: "EventSubscriptionsInput" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes, annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const eventsSubscriptions = kit.make({
  name: "events_subscriptions",
  title: "List event subscriptions",
  description:
    "The workspace's event subscriptions (created by agents with events/subscribe) and Destinations, newest first: address origin, events, subject, state (active, disabled after a 410, expired, stopped, paused), expiry, last delivery, last error and consecutive failures. Free.",
  refuses: [],
  http: { method: "GET", path: "/subscriptions", input: { kind: "query" } },
  cli: { words: ["subscriptions"] },
  input: SubscriptionsInput,
  output: Schema.Struct({ subscriptions: Schema.Array(DestinationView) }).annotations({ identifier: "EventSubscriptions" }),
  capability: {
    question: "Where do this workspace's events go, and are those addresses healthy?",
    requires: "Nothing.",
    example: {}
  },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return { subscriptions: yield* (yield* DeliveryLog).destinations(caller.workspace.id) }
    })
})

const DeliveriesFields = {
  destination_id: Schema.optional(DestinationId).annotations({ description: "Only this subscription's or Destination's deliveries." }),
  outcome: Schema.optional(Outcome).annotations({
    description: "Only deliveries with this outcome: pending, delivered, gone, too_large, failed, expired, stopped or disabled."
  }),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(200))).annotations({ description: "next_cursor of the previous page, for older deliveries." })
}

const DeliveriesInput = Schema.Struct({
  ...DeliveriesFields,
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))).annotations({
    description: "Deliveries per page, 1 to 100 (default 20)."
  })
}).annotations({ ...strict, identifier: "EventDeliveriesInput" })

// Models and the CLI send a number; the HTTP route reads text from the query string.
const DeliveriesModelInput = Schema.Struct({
  ...DeliveriesFields,
  limit: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 100))).annotations({
    description: "Deliveries per page, 1 to 100 (default 20)."
  })
}).annotations({ ...strict, identifier: "EventDeliveriesModelInput" })

/** @since 0.1.0 @category operations */
export const eventsDeliveries = kit.make({
  name: "events_deliveries",
  title: "Read the delivery log",
  description:
    "Deliveries of catalog events to the workspace's subscriptions and Destinations, newest first, each with its event, outcome, next attempt and every attempt (started_at, HTTP status, latency_ms, result, error, next_attempt_at). Filter by destination_id or outcome; page with cursor. Free.",
  refuses: ["destination_not_found"],
  paginates: true,
  http: { method: "GET", path: "/deliveries", input: { kind: "query" } },
  cli: { words: ["deliveries"], follow: { items: "deliveries", keys: ["id", "outcome"] } },
  input: DeliveriesInput,
  modelInput: DeliveriesModelInput,
  output: Schema.Struct({
    deliveries: Schema.Array(DeliveryView),
    next_cursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as cursor for older deliveries; null on the last page." })
  }).annotations({ identifier: "EventDeliveries" }),
  capability: {
    question: "Did my events reach their receiver, and when is the next retry?",
    requires: "Nothing; optionally destination_id, outcome, limit and cursor.",
    example: { limit: 5 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const log = yield* DeliveryLog
      if (input.destination_id !== undefined && Option.isNone(yield* log.destination(caller.workspace.id, input.destination_id))) {
        return yield* destinationNotFound(notFoundMessage(input.destination_id))
      }
      const page = yield* log.deliveries({
        workspaceId: caller.workspace.id,
        destinationId: input.destination_id,
        outcome: input.outcome,
        limit: input.limit ?? 20,
        cursor: input.cursor
      }).pipe(
        Effect.catchTag("BadCursor", (bad) =>
          refuse("invalid_field_value", bad.detail, "Send the next_cursor of a previous page unchanged, or leave cursor out.", { field: "cursor" }))
      )
      return { deliveries: page.deliveries, next_cursor: page.nextCursor }
    })
})

const fromRefused = (refused: DestinationRefused) => {
  switch (refused.reason) {
    case "unknown_event":
      return refuse("invalid_field_value", refused.message, "Use names from events/list (the catalog).", { field: "events" })
    case "url_rejected":
      return refuse("address_rejected", refused.message, "Give a public https address (a developer's own server may allow local ones with SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true).", { field: "url" })
    case "not_found":
      return destinationNotFound(refused.message)
    case "test_workspace":
      return refuse("test_workspace_not_allowed", refused.message, "Create the Destination in the real workspace.")
  }
}

// As many names as the catalog has (it grew past the spec's fourteen), so one Destination can take every event.
const CreateInput = Schema.Struct({
  url: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048)).annotations({ description: "A public https address." }),
  events: Schema.Array(Schema.String.pipe(Schema.maxLength(100))).pipe(Schema.minItems(1), Schema.maxItems(Catalog.names.length)).annotations({
    description: "Catalog event names (events/list)."
  }),
  subject: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z_]+\/[A-Za-z0-9_-]{1,100}$/))).annotations({
    description: "Only events of this record, e.g. opportunity/<id>."
  }),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(500)))
}).annotations({ ...strict, identifier: "DestinationCreateInput" })

/** @since 0.1.0 @category operations */
export const destinationsCreate = kit.make({
  name: "destinations_create",
  title: "Create a Destination",
  description:
    "Owner or admin person only: sends the named catalog events to a public https address as signed webhooks (Standard Webhooks; retried about 75 hours). Answers the Destination's id and its whsec_ signing secret, shown once. Not in a test workspace.",
  refuses: ["address_rejected", "test_workspace_not_allowed"],
  authorize: requireOwnerOrAdminPerson,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  scopes: writeScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/destinations", input: { kind: "body" } },
  cli: { words: ["destinations", "create"] },
  input: CreateInput,
  output: Schema.Struct({
    id: Schema.String,
    secret: Schema.String.annotations({ description: "The whsec_ signing secret: verify deliveries with it. Shown once." })
  }).annotations({ identifier: "CreatedDestination" }),
  capability: {
    question: "How do I send this workspace's events to my own system?",
    requires: "url and events (owner or admin).",
    example: { url: "https://hooks.example.com/service", events: ["opportunity.moved"] }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const created = yield* (yield* Destinations).create(caller, input).pipe(Effect.catchTag("DestinationRefused", fromRefused))
      return { id: created.id, secret: Redacted.value(created.secret) }
    })
})

const DestinationInput = Schema.Struct({ destination_id: DestinationId }).annotations({ ...strict, identifier: "DestinationInput" })

/** @since 0.1.0 @category operations */
export const destinationsStop = kit.make({
  name: "destinations_stop",
  title: "Stop a Destination",
  description: "Owner or admin person only: stops a Destination or subscription; its pending deliveries stop and its history stays.",
  refuses: ["destination_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  scopes: writeScopes,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/destinations/:destination_id", input: { kind: "path", params: { destination_id: "destination_id" } } },
  cli: { words: ["destinations", "stop"], positional: "destination_id" },
  input: DestinationInput,
  output: Schema.Struct({ stopped: Schema.String }).annotations({ identifier: "StoppedDestination" }),
  capability: {
    question: "How do I stop sending events to an address?",
    requires: "destination_id (owner or admin).",
    example: { destination_id: "<destination_id>" },
    exampleFrom: { operation: "destinations_create", path: ["id"], field: "destination_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      yield* (yield* Destinations).stop(caller.workspace.id, input.destination_id).pipe(Effect.catchTag("DestinationRefused", fromRefused))
      return { stopped: input.destination_id }
    })
})

const Instant = Schema.String.pipe(Schema.filter((text) => !Number.isNaN(Date.parse(text)), { message: () => "an ISO 8601 instant" }))

const ReplayInput = Schema.Struct({
  destination_id: DestinationId,
  from: Instant.annotations({ description: "Start of the window (inclusive), ISO 8601." }),
  to: Instant.annotations({ description: "End of the window (exclusive), ISO 8601." })
}).annotations({ ...strict, identifier: "DestinationReplayInput" })

/** @since 0.1.0 @category operations */
export const destinationsReplay = kit.make({
  name: "destinations_replay",
  title: "Replay events to a Destination",
  description:
    "Owner or admin person only: sends again every event of [from, to) the Destination or subscription matches, as new deliveries with the same webhook-id (receivers deduplicate). Answers how many were scheduled.",
  refuses: ["destination_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: true },
  scopes: writeScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/destinations/:destination_id/replay", input: { kind: "body", params: { destination_id: "destination_id" } } },
  cli: { words: ["destinations", "replay"], positional: "destination_id" },
  input: ReplayInput,
  output: Schema.Struct({ scheduled: Schema.Number }).annotations({ identifier: "ReplayScheduled" }),
  capability: {
    question: "My receiver was down: how do I get yesterday's events again?",
    requires: "destination_id, from and to (owner or admin).",
    example: { destination_id: "<destination_id>", from: "2026-11-24T00:00:00Z", to: "2026-11-25T00:00:00Z" },
    exampleFrom: { operation: "destinations_create", path: ["id"], field: "destination_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      if (Date.parse(input.from) >= Date.parse(input.to)) {
        return yield* refuse("invalid_field_value", "from must be before to.", "Give a window whose start is before its end.", { field: "from" })
      }
      const scheduled = yield* (yield* Destinations).replay(caller.workspace.id, input.destination_id, {
        from: new Date(input.from).toISOString(),
        to: new Date(input.to).toISOString()
      }).pipe(Effect.catchTag("DestinationRefused", fromRefused))
      return { scheduled }
    })
})

/** @since 0.1.0 @category operations */
export const operations = [eventsSubscriptions, eventsDeliveries, destinationsCreate, destinationsStop, destinationsReplay] as const

/** What running the events operations needs. @since 0.1.0 @category models */
export type Requirements = DeliveryLog | Destinations | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "events",
  title: "Events",
  description: "Where the workspace's catalog events go, people's Destinations, and what became of each delivery.",
  operations,
  http: { prefix: "/workspaces/:workspace/events", workspaceScoped: true },
  mcp: { namespace: "events" },
  cli: { word: "events", description: "Event subscriptions, Destinations and the delivery log." }
})
