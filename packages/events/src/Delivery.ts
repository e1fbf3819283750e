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
 * - A circuit breaker (decision 0061): a Destination that failed `breaker.failures` attempts in a row over at least
 *   `breaker.after` is `paused` and the ledger records `destination.paused`. Its deliveries then wait (their
 *   attempts not counted) except one every `breaker.probeEvery`; the first that succeeds resumes it
 *   (`destination.resumed`) and the waiting deliveries go out at once. A delivery still waiting when its event is
 *   older than the retry window (about 75 hours) has `failed`.
 *
 * Every attempt is logged in `events.delivery_attempts` (status, latency, result, next attempt).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as WorkQueue from "@service/core/WorkQueue"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AddressGuard } from "@service/core/AddressGuard"
import { EventLedger } from "./EventLedger.js"
import { isoText, originOf } from "./internal/views.js"
import * as RetrySchedule from "./RetrySchedule.js"
import * as WebhookPost from "./WebhookPost.js"

/** What finally became of a delivery. @since 0.1.0 @category models */
export const Outcome = Schema.Literal("pending", "delivered", "gone", "too_large", "failed", "expired", "stopped", "disabled")
/** @since 0.1.0 @category models */
export type Outcome = typeof Outcome.Type

/**
 * How long a worker holds a delivery before another may take it over (renewed while the attempt runs): how long
 * the deliveries of a killed worker wait. 60 seconds unless `SERVICE_DELIVERY_LEASE` says otherwise.
 *
 * @since 0.1.0 @category config
 */
export const leaseConfig = Config.duration("SERVICE_DELIVERY_LEASE").pipe(
  Config.withDefault(Duration.seconds(60)),
  Config.validate({ message: "must be at least 3 seconds", validation: (d) => Duration.toMillis(d) >= 3000 }),
  Config.withDescription("How long a worker's claim on a delivery lasts before another worker may take it over.")
)

/** The queue's spec: the Standard Webhooks schedule after the first, immediate, attempt. @since 0.1.0 @category queue */
export const queueSpec: WorkQueue.Spec = {
  table: "events.deliveries",
  // The default lease; a live worker renews it every third of it, so it never loses its claim mid-POST.
  lease: Duration.seconds(60),
  retryDelays: RetrySchedule.DELAYS_SECONDS.slice(1).map((seconds) => Duration.seconds(seconds))
}

/**
 * When a Destination's circuit opens and how often a paused one is tried.
 *
 * @since 0.1.0 @category models
 */
export interface Breaker {
  /** Failed attempts in a row (default 5). */
  readonly failures: number
  /** Since the first of them, at least (default 1 hour): a burst of failures in a minute is no outage. */
  readonly after: Duration.DurationInput
  /** How often one delivery of a paused Destination is tried (default 1 hour). */
  readonly probeEvery: Duration.DurationInput
}

/** @since 0.1.0 @category constants */
export const defaultBreaker: Breaker = { failures: 5, after: Duration.hours(1), probeEvery: Duration.hours(1) }

/** @since 0.1.0 @category models */
export interface Options {
  /** The circuit breaker (default {@link defaultBreaker}). */
  readonly breaker?: Partial<Breaker> | undefined
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
  probe_at: Schema.NullOr(Schema.Number),
  secret: Schema.String,
  previous_secret: Schema.NullOr(Schema.String),
  ledger_id: Schema.String,
  name: Schema.String,
  payload: Schema.parseJson(),
  occurred_at: Schema.String
})
const decodeDue = Schema.decodeUnknown(Schema.Array(Due))

// A Destination as the breaker's ledger entries describe it.
const Circuit = Schema.Struct({
  workspace_id: Schema.String,
  kind: Schema.Literal("subscription", "destination"),
  url: Schema.String,
  consecutive_failures: Schema.Number,
  failing_since: Schema.NullOr(Schema.String),
  last_error: Schema.NullOr(Schema.String),
  probe_at: Schema.NullOr(Schema.String)
})
const decodeCircuit = Schema.decodeUnknown(Schema.Array(Circuit))



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
    const ledger = yield* EventLedger
    const queue = yield* WorkQueue.make({ ...queueSpec, lease: yield* Effect.orDie(leaseConfig) })
    const breaker = { ...defaultBreaker, ...options?.breaker }
    const breakAfterMillis = Duration.toMillis(breaker.after)
    const probeEveryMillis = Duration.toMillis(breaker.probeEvery)
    const windowMillis = Duration.toMillis(RetrySchedule.window)

    const load = (id: string, now: number) =>
      sql`SELECT d.id, d.destination_id, x.kind, x.url, x.state,
          (x.expires_at IS NOT NULL AND x.expires_at <= ${iso(now)}::timestamptz) AS expired,
          (extract(epoch FROM x.probe_at) * 1000)::float8 AS probe_at, x.secret,
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

    /** Logs a final attempt and settles its delivery in one statement (one commit: the worker's hot path). */
    const logAndSettle = (input: Parameters<typeof logAttempt>[0], outcome: Outcome) =>
      sql`WITH logged AS (
          INSERT INTO events.delivery_attempts (delivery_id, attempt, destination_id, started_at, status, latency_ms, result, error, next_attempt_at)
          VALUES (${input.claim.id}, ${input.claim.attempt}, ${input.destinationId}, ${iso(input.started)}::timestamptz, ${input.status},
            ${input.latencyMs}, ${input.result}, ${input.error}, NULL)
          ON CONFLICT (delivery_id, attempt) DO UPDATE SET status = EXCLUDED.status, latency_ms = EXCLUDED.latency_ms,
            result = EXCLUDED.result, error = EXCLUDED.error, next_attempt_at = NULL
          RETURNING delivery_id)
        UPDATE events.deliveries SET outcome = ${outcome}, settled_at = ${iso(input.started + input.latencyMs)}::timestamptz
        WHERE id = (SELECT delivery_id FROM logged)`.pipe(Effect.orDie)

    /** Records a circuit's change in the ledger, where its owner's subscriptions hear of it. */
    const recordCircuit = (name: "destination.paused" | "destination.resumed", destinationId: string, at: number, rows: ReadonlyArray<unknown>) =>
      Effect.gen(function*() {
        const circuit = (yield* Effect.orDie(decodeCircuit(rows)))[0]
        if (circuit === undefined) return
        yield* ledger.record({
          workspaceId: circuit.workspace_id,
          name,
          subject: `destination/${destinationId}`,
          payload: {
            workspace_id: circuit.workspace_id,
            occurred_at: iso(at),
            destination_id: destinationId,
            kind: circuit.kind,
            origin: originOf(circuit.url),
            consecutive_failures: circuit.consecutive_failures,
            failing_since: circuit.failing_since,
            last_error: circuit.last_error,
            probe_at: circuit.probe_at
          }
        })
      })

    const circuitColumns = `x.workspace_id, x.kind, x.url, x.consecutive_failures, ${isoText("x.failing_since")} AS failing_since,
      x.last_error, ${isoText("x.probe_at")} AS probe_at`

    /** Opens the circuit of an active Destination whose failures went on long enough; true when it did. */
    const maybePause = (destinationId: string, now: number) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE events.destinations x SET state = 'paused',
            state_reason = 'paused after ' || x.consecutive_failures || ' failed attempts in a row since ' || ${isoText("x.failing_since")},
            state_at = ${iso(now)}::timestamptz, probe_at = ${iso(now + probeEveryMillis)}::timestamptz, updated_at = ${iso(now)}::timestamptz
          WHERE x.id = ${destinationId} AND x.state = 'active' AND x.consecutive_failures >= ${breaker.failures}
            AND x.failing_since <= ${iso(now - breakAfterMillis)}::timestamptz
          RETURNING ${sql.literal(circuitColumns)}`.pipe(Effect.orDie)
        yield* recordCircuit("destination.paused", destinationId, now, rows)
      })

    /** Closes the circuit after a delivery to a paused Destination succeeded; its waiting deliveries are due now. */
    const resume = (destinationId: string, now: number) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE events.destinations x SET state = 'active', state_reason = NULL, state_at = ${iso(now)}::timestamptz,
            probe_at = NULL, consecutive_failures = 0, failing_since = NULL, last_error = NULL,
            last_delivery_at = ${iso(now)}::timestamptz, updated_at = ${iso(now)}::timestamptz
          FROM (SELECT id, consecutive_failures, failing_since, last_error FROM events.destinations WHERE id = ${destinationId}) before
          WHERE x.id = before.id AND x.state = 'paused'
          RETURNING x.workspace_id, x.kind, x.url, before.consecutive_failures, ${sql.literal(isoText("before.failing_since"))} AS failing_since,
            before.last_error, NULL::text AS probe_at`.pipe(Effect.orDie)
        if (rows.length === 0) return
        yield* sql`UPDATE events.deliveries SET queue_next_attempt_at = ${iso(now)}::timestamptz
          WHERE destination_id = ${destinationId} AND queue_state = 'pending' AND queue_next_attempt_at > ${iso(now)}::timestamptz`.pipe(Effect.orDie)
        yield* recordCircuit("destination.resumed", destinationId, now, rows)
      })

    /** Takes the probe of a paused Destination when it is due (one delivery wins it); its next one is later. */
    const takeProbe = (destinationId: string, now: number) =>
      sql`UPDATE events.destinations SET probe_at = ${iso(now + probeEveryMillis)}::timestamptz
        WHERE id = ${destinationId} AND state = 'paused' AND (probe_at IS NULL OR probe_at <= ${iso(now)}::timestamptz)
        RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const openSecret = (sealed: string) =>
      crypto.open(SECRET_PURPOSE, sealed).pipe(Effect.map((bytes) => Redacted.make(new TextDecoder().decode(bytes))), Effect.orDie)

    const handle = (claim: WorkQueue.Claim) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const due = (yield* load(claim.id, started))[0]
        if (due === undefined) return Effect.void
        // Nothing is sent to a Destination that stopped wanting it; the delivery says why.
        const stopped: Option.Option<Outcome> = due.state === "active" || due.state === "paused"
          ? (due.expired ? Option.some("expired") : Option.none())
          : Option.some(due.state === "disabled" ? "disabled" : due.state === "expired" ? "expired" : "stopped")
        if (Option.isSome(stopped)) return settle(claim.id, stopped.value)
        if (due.state === "paused") {
          // Waiting past the retry window is as good as failing every attempt of it.
          if (started - Date.parse(due.occurred_at) > windowMillis) {
            return Effect.zipRight(
              logAttempt({
                claim,
                destinationId: due.destination_id,
                started,
                status: null,
                latencyMs: 0,
                result: "paused",
                error: "the destination stayed paused past the event's retry window; nothing was sent",
                next: null
              }),
              settle(claim.id, "failed")
            )
          }
          if (!(yield* takeProbe(due.destination_id, started))) {
            // Back at the probe time, or when the event leaves its retry window if that comes first (to fail then).
            const windowEnds = Date.parse(due.occurred_at) + windowMillis + 1
            const until = Math.max(Math.min(due.probe_at ?? started, windowEnds), started + 1_000)
            return yield* new WorkQueue.Postpone({ until, reason: `the destination is paused (circuit open) until ${iso(until)}` })
          }
        }

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
          // A final outcome is returned as writes, not made: they commit with the queue's completion (`record`).
          case "Delivered": {
            const logged = logAndSettle({ ...attempt, status: outcome.status, result: "delivered", error: null, next: null }, "delivered")
            if (due.state === "paused") return Effect.zipRight(logged, resume(due.destination_id, ended))
            // The Destination's row is written only when it changes (or a second later): every delivery to one busy
            // receiver would otherwise queue on that row.
            return Effect.zipRight(
              logged,
              sql`UPDATE events.destinations SET last_delivery_at = ${iso(ended)}::timestamptz, consecutive_failures = 0,
                failing_since = NULL, last_error = NULL
              WHERE id = ${due.destination_id} AND (consecutive_failures > 0 OR last_error IS NOT NULL OR last_delivery_at IS NULL
                OR last_delivery_at < ${iso(ended - 1000)}::timestamptz)`.pipe(Effect.asVoid, Effect.orDie)
            )
          }
          case "Gone": {
            // 410 is the receiver saying it wants nothing more: the Destination is disabled until renewed.
            return Effect.zipRight(
              logAndSettle({ ...attempt, status: 410, result: "gone", error: null, next: null }, "gone"),
              sql`UPDATE events.destinations SET state = 'disabled', state_reason = 'the receiver answered 410 Gone',
                state_at = ${iso(ended)}::timestamptz, updated_at = ${iso(ended)}::timestamptz
              WHERE id = ${due.destination_id} AND state IN ('active', 'paused')`.pipe(Effect.asVoid, Effect.orDie)
            )
          }
          case "TooLarge": {
            return logAndSettle({
              ...attempt,
              status: sent ? 413 : null,
              result: "too_large",
              error: sent ? null : `the event is over ${WebhookPost.MAX_BODY_BYTES} bytes; nothing was sent`,
              next: null
            }, "too_large")
          }
          case "RetryLater":
          case "Rejected": {
            // The address guard refused the address at send time. A host that does not resolve may resolve again
            // (retried below); any other refusal (a private or reserved address, a scheme or user name the URL
            // should not have) is not fixed by waiting: the delivery fails at once, not after 75 hours of retries.
            if (outcome._tag === "Rejected" && outcome.rule !== "unresolvable") {
              const refused = `address refused: ${outcome.message}`
              return Effect.zipRight(
                logAndSettle({ ...attempt, status: null, result: "url_rejected", error: refused, next: null }, "failed"),
                sql`UPDATE events.destinations SET consecutive_failures = consecutive_failures + 1,
                  failing_since = coalesce(failing_since, ${iso(ended)}::timestamptz), last_error = ${refused}
                WHERE id = ${due.destination_id}`.pipe(Effect.asVoid, Effect.orDie)
              )
            }
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
            yield* maybePause(due.destination_id, ended)
            return yield* new WorkQueue.RetryLater({
              error,
              notBefore: retryAfter === undefined ? undefined : Option.getOrUndefined(Option.map(next, (date) => date.getTime()))
            })
          }
        }
      }).pipe(Effect.withSpan("Delivery.attempt", { captureStackTrace: false, attributes: { id: claim.id, attempt: claim.attempt } }))

    const processOptions = (worker: string, idle?: Duration.DurationInput) => ({
      worker,
      handler: handle,
      // A POST is not undone by a rollback: deliveries are at least once, deduplicated by webhook-id. The outcome is
      // recorded once: its writes commit with the completion, fenced by the attempt, so a worker whose lease was
      // taken over records nothing.
      transactional: false,
      record: (_: WorkQueue.Claim, writes: Effect.Effect<void>) => writes,
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
export const layer = (options?: Options): Layer.Layer<Delivery, never, SqlClient.SqlClient | Crypto | AddressGuard | EventLedger> =>
  Layer.effect(Delivery, make(options))
