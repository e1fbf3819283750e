/**
 * Sends the deliveries `EventLedger.record` scheduled, on the `WorkQueue` over `events.deliveries`: any number of
 * workers in any number of processes, each delivery held by one at a time.
 *
 * One attempt POSTs `{eventId, name, timestamp, data, cursor: null}` signed with the Destination's secret (and the
 * previous one during a renewal's 24 hours), `webhook-id` the event id on every attempt and every replay.
 *
 * - 2xx: delivered.
 * - 410: the Destination is disabled (a subscriber re-enables it by subscribing again).
 * - 413: this event is dropped; the next ones go on.
 * - Anything else, a redirect, no answer in 10 seconds, or an address refused now (DNS rebinding): retried on
 *   the Standard Webhooks schedule (`RetrySchedule`, about 75 hours), not before a 429 or 503's `Retry-After`.
 *   After the last attempt the delivery has `failed`.
 * - A Destination no longer active when its delivery comes up (expired, stopped, disabled) sends nothing: the
 *   delivery settles as `expired`, `stopped` or `disabled`.
 *
 * Every attempt is logged in `events.delivery_attempts` (status, latency, result, next attempt).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as WorkQueue from "@service/core/WorkQueue"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AddressGuard } from "./AddressGuard.js"
import * as RetrySchedule from "./RetrySchedule.js"
import * as WebhookPost from "./WebhookPost.js"

/** What finally became of a delivery. @since 0.1.0 @category models */
export const Outcome = Schema.Literal("pending", "delivered", "gone", "too_large", "failed", "expired", "stopped", "disabled")
/** @since 0.1.0 @category models */
export type Outcome = typeof Outcome.Type

/** The queue's spec: the Standard Webhooks schedule after the first, immediate, attempt. @since 0.1.0 @category queue */
export const queueSpec: WorkQueue.Spec = {
  table: "events.deliveries",
  // Longer than one attempt's 10-second deadline, so a live worker never loses its claim mid-POST.
  lease: Duration.seconds(60),
  retryDelays: RetrySchedule.DELAYS_SECONDS.slice(1).map((seconds) => Duration.seconds(seconds))
}

/** @since 0.1.0 @category models */
export interface Options {
  /** Deliveries handled at once per worker (default 8): one slow receiver does not hold the others. */
  readonly concurrency?: number | undefined
  /** One attempt's deadline (default 10 seconds). */
  readonly timeout?: Duration.DurationInput | undefined
}

/** @since 0.1.0 @category tags */
export class Delivery extends Context.Tag("@service/events/Delivery")<Delivery, {
  /** Sends every due delivery, then returns how many attempts were made. */
  readonly drain: (worker: string) => Effect.Effect<number>
  /** Sends due deliveries for ever, waiting `idle` when none is due. */
  readonly process: (worker: string, idle?: Duration.DurationInput) => Effect.Effect<never>
}>() {}

const SECRET_PURPOSE = "events.destination-secret"

const Due = Schema.Struct({
  id: Schema.String,
  destination_id: Schema.String,
  kind: Schema.Literal("subscription", "destination"),
  url: Schema.String,
  state: Schema.Literal("active", "disabled", "expired", "stopped", "paused"),
  expired: Schema.Boolean,
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  ledger_id: Schema.String,
  name: Schema.String,
  payload: Schema.parseJson(),
  occurred_at: Schema.String
})
const decodeDue = Schema.decodeUnknown(Schema.Array(Due))

const iso = (millis: number): string => new Date(millis).toISOString()

/**
 * The `eventId` (and `webhook-id`) of a ledger entry: the same on every attempt and every replay.
 *
 * @since 0.1.0 @category delivery
 */
export const eventId = (ledgerId: string): string => `evt_${ledgerId}`

/** @since 0.1.0 @category constructors */
export const make = (options?: Options) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const crypto = yield* Crypto
    const guard = yield* AddressGuard
    const queue = yield* WorkQueue.make(queueSpec)

    const load = (id: string, now: number) =>
      sql`SELECT d.id, d.destination_id, x.kind, x.url, x.state,
          (x.expires_at IS NOT NULL AND x.expires_at <= ${iso(now)}::timestamptz) AS expired, x.secret,
          CASE WHEN x.previous_until > ${iso(now)}::timestamptz THEN x.previous_secret END AS previous_secret,
          l.id::text AS ledger_id, l.name, l.payload::text AS payload,
          to_char(l.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at
        FROM events.deliveries d JOIN events.destinations x ON x.id = d.destination_id JOIN events.ledger l ON l.id = d.ledger_id
        WHERE d.id = ${id}`.pipe(Effect.flatMap(decodeDue), Effect.orDie)

    const settle = (id: string, outcome: Outcome) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql`UPDATE events.deliveries SET outcome = ${outcome}, settled_at = ${iso(now)}::timestamptz WHERE id = ${id}`.pipe(Effect.orDie))

    const logAttempt = (input: {
      readonly claim: WorkQueue.Claim
      readonly destinationId: string
      readonly started: number
      readonly status: number | null
      readonly latencyMs: number
      readonly result: string
      readonly error: string | null
      readonly next: number | null
    }) =>
      sql`INSERT INTO events.delivery_attempts (delivery_id, attempt, destination_id, started_at, status, latency_ms, result, error, next_attempt_at)
        VALUES (${input.claim.id}, ${input.claim.attempt}, ${input.destinationId}, ${iso(input.started)}::timestamptz, ${input.status},
          ${input.latencyMs}, ${input.result}, ${input.error}, ${input.next === null ? null : iso(input.next)}::timestamptz)
        ON CONFLICT (delivery_id, attempt) DO UPDATE SET status = EXCLUDED.status, latency_ms = EXCLUDED.latency_ms,
          result = EXCLUDED.result, error = EXCLUDED.error, next_attempt_at = EXCLUDED.next_attempt_at`.pipe(Effect.orDie)

    const openSecret = (sealed: string) =>
      crypto.open(SECRET_PURPOSE, sealed).pipe(Effect.map((bytes) => Redacted.make(new TextDecoder().decode(bytes))), Effect.orDie)

    const handle = (claim: WorkQueue.Claim) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const due = (yield* load(claim.id, started))[0]
        if (due === undefined) return
        // Nothing is sent to a Destination that stopped wanting it; the delivery says why.
        const stopped: Option.Option<Outcome> = due.state === "active" || due.state === "paused"
          ? (due.expired ? Option.some("expired") : Option.none())
          : Option.some(due.state === "disabled" ? "disabled" : due.state === "expired" ? "expired" : "stopped")
        if (Option.isSome(stopped)) return yield* settle(claim.id, stopped.value)

        const id = eventId(due.ledger_id)
        const body = new TextEncoder().encode(JSON.stringify({ eventId: id, name: due.name, timestamp: due.occurred_at, data: due.payload, cursor: null }))
        const current = yield* openSecret(due.secret)
        const previous = due.previous_secret === null ? [] : [yield* openSecret(due.previous_secret)]
        const { answer: outcome, sent } = yield* WebhookPost.send(
          {
            url: due.url,
            id,
            body,
            secrets: [current, ...previous],
            headers: due.kind === "subscription" ? { "x-mcp-subscription-id": due.destination_id } : {}
          },
          options?.timeout === undefined ? undefined : { timeout: options.timeout }
        ).pipe(
          Effect.map((answer) => ({ answer, sent: true })),
          // Over 256 KiB: nothing is sent, and the event cannot be delivered as it is.
          Effect.catchTag("PayloadTooLarge", () => Effect.succeed({ answer: WebhookPost.TooLarge.make({}), sent: false })),
          Effect.provideService(AddressGuard, guard)
        )
        const ended = yield* Clock.currentTimeMillis
        const latencyMs = Math.max(0, ended - started)
        const attempt = { claim, destinationId: due.destination_id, started, latencyMs }

        switch (outcome._tag) {
          case "Delivered": {
            yield* logAttempt({ ...attempt, status: outcome.status, result: "delivered", error: null, next: null })
            yield* sql`UPDATE events.destinations SET last_delivery_at = ${iso(ended)}::timestamptz, consecutive_failures = 0,
                failing_since = NULL, last_error = NULL WHERE id = ${due.destination_id}`.pipe(Effect.orDie)
            return yield* settle(claim.id, "delivered")
          }
          case "Gone": {
            yield* logAttempt({ ...attempt, status: 410, result: "gone", error: null, next: null })
            // 410 is the receiver saying it wants nothing more: the Destination is disabled until renewed.
            yield* sql`UPDATE events.destinations SET state = 'disabled', state_reason = 'the receiver answered 410 Gone',
                state_at = ${iso(ended)}::timestamptz, updated_at = ${iso(ended)}::timestamptz
              WHERE id = ${due.destination_id} AND state = 'active'`.pipe(Effect.orDie)
            return yield* settle(claim.id, "gone")
          }
          case "TooLarge": {
            yield* logAttempt({
              ...attempt,
              status: sent ? 413 : null,
              result: "too_large",
              error: sent ? null : `the event is over ${WebhookPost.MAX_BODY_BYTES} bytes; nothing was sent`,
              next: null
            })
            return yield* settle(claim.id, "too_large")
          }
          case "RetryLater":
          case "Rejected": {
            const error = outcome._tag === "Rejected"
              ? `address refused: ${outcome.message}`
              : outcome.reason === "status"
              ? `the receiver answered ${outcome.status ?? "?"}`
              : `${outcome.reason}${outcome.detail === undefined ? "" : ` (${outcome.detail})`}`
            const retryAfter = outcome._tag === "RetryLater" ? outcome.retryAfter : undefined
            const next = RetrySchedule.nextAttemptAt(claim.attempt, new Date(ended), retryAfter)
            yield* logAttempt({
              ...attempt,
              status: outcome._tag === "RetryLater" ? outcome.status ?? null : null,
              result: outcome._tag === "Rejected" ? "url_rejected" : outcome.reason,
              error,
              next: Option.match(next, { onNone: () => null, onSome: (date) => date.getTime() })
            })
            yield* sql`UPDATE events.destinations SET consecutive_failures = consecutive_failures + 1,
                failing_since = coalesce(failing_since, ${iso(ended)}::timestamptz), last_error = ${error}
              WHERE id = ${due.destination_id}`.pipe(Effect.orDie)
            return yield* new WorkQueue.RetryLater({
              error,
              notBefore: retryAfter === undefined ? undefined : Option.getOrUndefined(Option.map(next, (date) => date.getTime()))
            })
          }
        }
      }).pipe(Effect.withSpan("Delivery.attempt", { attributes: { id: claim.id, attempt: claim.attempt } }))

    const processOptions = (worker: string, idle?: Duration.DurationInput) => ({
      worker,
      handler: handle,
      // A POST is not undone by a rollback: deliveries are at least once, deduplicated by webhook-id.
      transactional: false,
      batch: 32,
      concurrency: options?.concurrency ?? 8,
      idle,
      onDead: (claim: WorkQueue.Claim) => settle(claim.id, "failed")
    })

    return Delivery.of({
      drain: (worker) => queue.drain(processOptions(worker)),
      process: (worker, idle) => queue.process(processOptions(worker, idle))
    })
  })

/** @since 0.1.0 @category layers */
export const layer = (options?: Options): Layer.Layer<Delivery, never, SqlClient.SqlClient | Crypto | AddressGuard> =>
  Layer.effect(Delivery, make(options))
