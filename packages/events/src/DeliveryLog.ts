/**
 * What a workspace can read of its outgoing events: its subscriptions and Destinations with their state, and
 * each delivery with every attempt (when, what came back, how long it took, when the next one is due).
 *
 * A URL may carry a receiver's own token in its path or query, so reads show only its origin.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { isoText, originOf } from "./internal/views.js"
import { eventId, Outcome } from "./Delivery.js"
import { State } from "./Destinations.js"

const Iso = Schema.String.annotations({ description: "ISO 8601 UTC." })

/** A subscription or Destination as reads show it. @since 0.1.0 @category models */
export const DestinationView = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("subscription", "destination").annotations({
    description: "subscription: created by an agent through events/subscribe; destination: created by an owner or admin."
  }),
  address: Schema.String.annotations({ description: "The origin of the delivery URL (its path and query are not shown)." }),
  events: Schema.Array(Schema.String),
  subject: Schema.NullOr(Schema.String),
  state: State,
  state_reason: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Iso),
  last_delivery_at: Schema.NullOr(Iso),
  last_error: Schema.NullOr(Schema.String),
  consecutive_failures: Schema.Number,
  created_at: Iso
}).annotations({ identifier: "DestinationView" })
/** @since 0.1.0 @category models */
export type DestinationView = typeof DestinationView.Type

/** One attempt of a delivery. @since 0.1.0 @category models */
export const AttemptView = Schema.Struct({
  attempt: Schema.Number,
  started_at: Iso,
  status: Schema.NullOr(Schema.Number).annotations({ description: "The receiver's HTTP status; null when it did not answer." }),
  latency_ms: Schema.Number,
  result: Schema.String.annotations({
    description: "delivered, gone, too_large, status (another status), redirect, timeout, connection, tls or url_rejected."
  }),
  error: Schema.NullOr(Schema.String),
  next_attempt_at: Schema.NullOr(Iso)
}).annotations({ identifier: "DeliveryAttempt" })

/** A delivery with its attempts. @since 0.1.0 @category models */
export const DeliveryView = Schema.Struct({
  id: Schema.String,
  destination_id: Schema.String,
  event_id: Schema.String.annotations({ description: "The eventId and webhook-id the receiver sees." }),
  event: Schema.String,
  outcome: Outcome,
  next_attempt_at: Schema.NullOr(Iso).annotations({ description: "When a pending delivery is tried next." }),
  created_at: Iso,
  settled_at: Schema.NullOr(Iso),
  attempts: Schema.Array(AttemptView)
}).annotations({ identifier: "DeliveryView" })
/** @since 0.1.0 @category models */
export type DeliveryView = typeof DeliveryView.Type

/** A cursor that is not one this service gave. @since 0.1.0 @category errors */
export class BadCursor extends Data.TaggedError("BadCursor")<{ readonly detail: string }> {}

/** @since 0.1.0 @category tags */
export class DeliveryLog extends Context.Tag("@service/events/DeliveryLog")<DeliveryLog, {
  readonly destinations: (workspaceId: string) => Effect.Effect<ReadonlyArray<DestinationView>>
  readonly destination: (workspaceId: string, id: string) => Effect.Effect<Option.Option<DestinationView>>
  /** Deliveries newest first, with their attempts; `cursor` is a previous page's `nextCursor`. */
  readonly deliveries: (input: {
    readonly workspaceId: string
    readonly destinationId?: string | undefined
    readonly outcome?: Outcome | undefined
    readonly limit: number
    readonly cursor?: string | undefined
  }) => Effect.Effect<{ readonly deliveries: ReadonlyArray<DeliveryView>; readonly nextCursor: string | null }, BadCursor>
}>() {}


// The row has the URL; reads show only its origin as `address`.
const { address: _address, ...viewFields } = DestinationView.fields
const DestinationRow = Schema.Struct({
  ...viewFields,
  url: Schema.String,
  events: Schema.parseJson(Schema.Array(Schema.String))
})
const decodeDestinations = Schema.decodeUnknown(Schema.Array(DestinationRow))

const destinationColumns = `x.id, x.kind, x.url, to_json(x.events)::text AS events, x.subject, x.state, x.state_reason,
  ${isoText("x.expires_at")} AS expires_at, ${isoText("x.last_delivery_at")} AS last_delivery_at, x.last_error, x.consecutive_failures,
  ${isoText("x.created_at")} AS created_at`


const DeliveryRow = Schema.Struct({
  id: Schema.String,
  destination_id: Schema.String,
  ledger_id: Schema.String,
  event: Schema.String,
  outcome: Outcome,
  queue_state: Schema.String,
  next_attempt_at: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  settled_at: Schema.NullOr(Schema.String),
  attempts: Schema.parseJson(Schema.Array(AttemptView))
})
const decodeDeliveries = Schema.decodeUnknown(Schema.Array(DeliveryRow))

// A cursor is the last row's (created_at, id), as text: `<iso>|<id>`.
const Cursor = Schema.TemplateLiteralParser(Schema.String, "|", Schema.String)
const decodeCursor = Schema.decodeUnknownOption(Cursor)

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // A ttl that elapsed is not written to the row (nothing runs at that instant): a read says so itself.
  const view = (now: number) => ({ url, ...row }: typeof DestinationRow.Type): DestinationView =>
    (row.state === "active" || row.state === "paused") && row.expires_at !== null && Date.parse(row.expires_at) <= now
      ? { ...row, state: "expired", state_reason: `its ttl elapsed at ${row.expires_at}; subscribe again to renew it`, address: originOf(url) }
      : { ...row, address: originOf(url) }

  const destinations = (workspaceId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`SELECT ${sql.literal(destinationColumns)} FROM events.destinations x WHERE x.workspace_id = ${workspaceId}
        ORDER BY x.created_at DESC, x.id`.pipe(Effect.flatMap(decodeDestinations), Effect.map((rows) => rows.map(view(now))), Effect.orDie))

  const destination = (workspaceId: string, id: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`SELECT ${sql.literal(destinationColumns)} FROM events.destinations x WHERE x.workspace_id = ${workspaceId} AND x.id = ${id}`.pipe(
        Effect.flatMap(decodeDestinations),
        Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), view(now))),
        Effect.orDie
      ))

  const deliveries = (input: {
    readonly workspaceId: string
    readonly destinationId?: string | undefined
    readonly outcome?: Outcome | undefined
    readonly limit: number
    readonly cursor?: string | undefined
  }) =>
    Effect.gen(function*() {
      const after = input.cursor === undefined ? Option.none() : decodeCursor(input.cursor)
      if (input.cursor !== undefined && Option.isNone(after)) {
        return yield* new BadCursor({ detail: "cursor is not a next_cursor this service gave" })
      }
      // A delivery whose last attempt's lease ran out is dead in the queue without its outcome written: failed.
      const outcome = sql.literal(`CASE WHEN d.outcome = 'pending' AND d.queue_state = 'dead' THEN 'failed' ELSE d.outcome END`)
      const rows = yield* sql`SELECT d.id, d.destination_id, d.ledger_id::text AS ledger_id, l.name AS event, ${outcome} AS outcome,
          d.queue_state, CASE WHEN d.queue_state IN ('pending', 'running') THEN ${sql.literal(isoText("d.queue_next_attempt_at"))} END AS next_attempt_at,
          ${sql.literal(isoText("d.created_at"))} AS created_at, ${sql.literal(isoText("d.settled_at"))} AS settled_at,
          coalesce((SELECT json_agg(json_build_object('attempt', a.attempt, 'started_at', ${sql.literal(isoText("a.started_at"))},
              'status', a.status, 'latency_ms', a.latency_ms, 'result', a.result, 'error', a.error,
              'next_attempt_at', ${sql.literal(isoText("a.next_attempt_at"))}) ORDER BY a.attempt)
            FROM events.delivery_attempts a WHERE a.delivery_id = d.id), '[]')::text AS attempts
        FROM events.deliveries d JOIN events.ledger l ON l.id = d.ledger_id
        WHERE ${
        sql.and([
          sql`d.workspace_id = ${input.workspaceId}`,
          ...(input.destinationId === undefined ? [] : [sql`d.destination_id = ${input.destinationId}`]),
          ...(input.outcome === undefined ? [] : [sql`${outcome} = ${input.outcome}`]),
          ...Option.match(after, {
            onNone: () => [],
            onSome: ([at, , id]) => [sql`(d.created_at, d.id) < (${at}::timestamptz, ${id})`]
          })
        ])
      }
        ORDER BY d.created_at DESC, d.id DESC LIMIT ${input.limit + 1}`.pipe(Effect.flatMap(decodeDeliveries), Effect.orDie)
      const page = rows.slice(0, input.limit)
      const last = page[page.length - 1]
      return {
        deliveries: page.map(({ ledger_id, queue_state: _state, ...row }) => ({ ...row, event_id: eventId(ledger_id) })),
        nextCursor: rows.length > input.limit && last !== undefined ? `${last.created_at}|${last.id}` : null
      }
    })

  return DeliveryLog.of({ destinations, destination, deliveries })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<DeliveryLog, never, SqlClient.SqlClient> = Layer.effect(DeliveryLog, make)
