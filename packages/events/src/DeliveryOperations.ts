/**
 * The delivery log on every surface: `events_subscriptions` (HTTP `GET /workspaces/<slug>/events/subscriptions`,
 * MCP `service_events_subscriptions`, CLI `service events subscriptions`) lists the workspace's subscriptions and
 * Destinations with their state; `events_deliveries` (`GET .../events/deliveries`, `service_events_deliveries`,
 * `service events deliveries [--follow]`) lists deliveries newest first with every attempt: status, latency,
 * result and the next attempt.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Outcome } from "./Delivery.js"
import { DeliveryLog, DeliveryView, DestinationView } from "./DeliveryLog.js"
import { codec, refuse } from "./EventsRefusal.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const scopes: ReadonlyArray<Scope> = ["context:read", "commercial:read", "topics:write"]

const DestinationId = Schema.String.pipe(Schema.pattern(/^(sub|dst)_[0-9a-f]{24,32}$/)).annotations({
  description: "A subscription id (sub_…) or Destination id (dst_…)."
})

const SubscriptionsInput = Schema.Struct({}).annotations({ ...strict, identifier: "EventSubscriptionsInput" })

/** @since 0.1.0 @category operations */
export const eventsSubscriptions = Operation.make({
  name: "events_subscriptions",
  title: "List event subscriptions",
  description:
    "The workspace's event subscriptions (created by agents with events/subscribe) and Destinations, newest first: address origin, events, subject, state (active, disabled after a 410, expired, stopped, paused), expiry, last delivery, last error and consecutive failures. Free.",
  refusals: codec,
  refuses: [],
  scopes,
  annotations: Operation.readOnly,
  metered: false,
  paginates: false,
  http: { method: "GET", path: "/subscriptions", input: { kind: "query" } },
  cli: { words: ["subscriptions"] },
  input: SubscriptionsInput,
  modelInput: SubscriptionsInput,
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
export const eventsDeliveries = Operation.make({
  name: "events_deliveries",
  title: "Read the delivery log",
  description:
    "Deliveries of catalog events to the workspace's subscriptions and Destinations, newest first, each with its event, outcome, next attempt and every attempt (started_at, HTTP status, latency_ms, result, error, next_attempt_at). Filter by destination_id or outcome; page with cursor. Free.",
  refusals: codec,
  refuses: ["destination_not_found"],
  scopes,
  annotations: Operation.readOnly,
  metered: false,
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
        return yield* refuse(
          "destination_not_found",
          `No subscription or Destination ${input.destination_id} in this workspace.`,
          "List the workspace's subscriptions and use one of their ids.",
          { field: "destination_id" }
        )
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

/** @since 0.1.0 @category operations */
export const operations = [eventsSubscriptions, eventsDeliveries] as const

/** What running the delivery log operations needs. @since 0.1.0 @category models */
export type Requirements = DeliveryLog | Caller

/** @since 0.1.0 @category groups */
export const group: Operation.Group<Requirements> = Operation.group<Requirements>({
  name: "events",
  title: "Events",
  description: "Where the workspace's catalog events go, and what became of each delivery.",
  refusals: codec,
  operations,
  http: { prefix: "/workspaces/:workspace/events", workspaceScoped: true },
  mcp: { namespace: "events" },
  cli: { word: "events", description: "Event subscriptions and the delivery log." }
})
