/**
 * Durable work on a domain's own rows. A table that holds work (Arrivals to apply, deliveries to send) carries
 * the queue's columns ({@link columns}); workers claim due rows with `FOR UPDATE SKIP LOCKED` and a lease, so
 * any number of workers in any number of processes share one table and never hold the same row at once. A
 * worker that dies holding a row loses nothing: its lease expires and another worker takes the row. A failed
 * attempt is retried on an explicit schedule of delays; after the last one the row is `dead` with its error.
 *
 * Every instant comes from Effect's `Clock`, never from the database's `now()`, so schedules and leases are
 * tested with `TestClock`. Processing is at least once: a worker whose lease ran out may finish after another
 * took over. With `transactional` processing (the default) the handler's writes and the completion commit
 * together, fenced by the attempt number, so a worker that lost its lease commits nothing; a handler that calls out
 * (`transactional: false`) may return the writes that record its outcome, and they commit with the completion,
 * fenced the same way.
 *
 * Idle workers do not poll fast: every row that becomes due (inserted, requeued, given back) notifies the queue's
 * channel ({@link notifySql}, a trigger), and {@link WorkQueue.process} listens on it through the database layer's `Notifications` when
 * the host provides it, in any process on the same database. Between notifications a worker sleeps until the next
 * row's due time or lease expiry, and at most its `idle` poll, the fallback for a notification never heard.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Notifications } from "./Notifications.js"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

/**
 * The queue's columns, to add to a domain table in its migration (`CREATE TABLE ... (..., ${columns})`).
 * A new row is due at once.
 *
 * @since 0.1.0 @category schema
 */
export const columns = `queue_state text NOT NULL DEFAULT 'pending' CHECK (queue_state IN ('pending', 'running', 'done', 'dead')),
  queue_attempts integer NOT NULL DEFAULT 0,
  queue_next_attempt_at timestamptz NOT NULL DEFAULT '-infinity',
  queue_lease_until timestamptz,
  queue_worker text,
  queue_last_error text`

/**
 * The partial index claims read, for the domain's migration.
 *
 * @since 0.1.0 @category schema
 */
export const indexSql = (table: string, name: string): string =>
  `CREATE INDEX ${name} ON ${table} (queue_next_attempt_at) WHERE queue_state IN ('pending', 'running')`

/**
 * The channel a queue's table notifies when a row becomes due: `work_<schema>_<table>`.
 *
 * @since 0.1.0 @category schema
 */
export const channelOf = (table: string): string => `work_${table.replace(".", "_")}`

/**
 * The statements, for the domain's migration, of a trigger that notifies {@link channelOf} the table whenever a row
 * becomes due now: inserted, requeued, released, made due by hand. Rows retried later are found by the waiting
 * workers' own timers. PostgreSQL sends one notification per transaction and channel, after the commit.
 *
 * @since 0.1.0 @category schema
 */
export const notifySql = (table: string): ReadonlyArray<string> => {
  if (!identifier.test(table) || !table.includes(".")) throw new Error(`WorkQueue.notifySql: ${table} is not schema.table`)
  const name = `${table}_queue_notify`
  const trigger = `${table.split(".")[1]}_queue_notify`
  return [
    `CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('${channelOf(table)}', 'due'); RETURN NULL; END $$`,
    `CREATE TRIGGER ${trigger} AFTER INSERT OR UPDATE OF queue_state, queue_next_attempt_at ON ${table}
      FOR EACH ROW WHEN (NEW.queue_state = 'pending' AND NEW.queue_next_attempt_at <= now()) EXECUTE FUNCTION ${name}()`
  ]
}


/** @since 0.1.0 @category models */
export type State = "pending" | "running" | "done" | "dead"

/**
 * One claimed row: its id, the attempt this is (1 for the first) and the worker holding it. The attempt
 * number fences every later write: a worker whose lease was taken over can no longer complete or fail it.
 *
 * @since 0.1.0 @category models
 */
export interface Claim {
  readonly id: string
  readonly attempt: number
  readonly worker: string
}

/**
 * The row is no longer this claim's: its lease ran out and another worker claimed it (or it was requeued).
 *
 * @since 0.1.0 @category errors
 */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{ readonly id: string; readonly attempt: number }> {}

/**
 * A handler's failure that names the earliest time of the next attempt (a receiver's `Retry-After`): the row
 * waits for the later of the schedule's delay and `notBefore` (epoch millis). Any other failure follows the
 * schedule alone.
 *
 * @since 0.1.0 @category errors
 */
export class RetryLater extends Data.TaggedError("RetryLater")<{ readonly error: string; readonly notBefore?: number | undefined }> {}

/**
 * A handler's answer that it did not try the row and it is not due before `until` (epoch millis), e.g. a webhook
 * to a receiver whose circuit is open: the row goes back pending, the attempt is not counted, and `reason` is
 * recorded as its last error.
 *
 * @since 0.1.0 @category errors
 */
export class Postpone extends Data.TaggedError("Postpone")<{ readonly until: number; readonly reason: string }> {}

/** @since 0.1.0 @category models */
export interface Spec {
  /** Schema-qualified table holding the work, e.g. `door.arrivals`. */
  readonly table: string
  /** Its key column (default `id`), read back as text. */
  readonly idColumn?: string | undefined
  /** How long a claim holds a row before another worker may take it. */
  readonly lease: Duration.DurationInput
  /**
   * The wait after each failed attempt: attempt 1 failing waits `retryDelays[0]`, and so on. After a failed
   * attempt `retryDelays.length + 1` the row is `dead`.
   */
  readonly retryDelays: ReadonlyArray<Duration.DurationInput>
}

/** @since 0.1.0 @category models */
export interface ProcessOptions<E, R, A = unknown> {
  /** Names the worker in the rows it holds (a process id, a host name). */
  readonly worker: string
  readonly handler: (claim: Claim) => Effect.Effect<A, E, R>
  /**
   * Writes that record a successful attempt's outcome, for a handler that is not `transactional` (one that calls
   * out): they commit in one transaction with the completion, so they are written only while the claim still holds
   * the row, and never twice.
   */
  readonly record?: ((claim: Claim, outcome: A) => Effect.Effect<void, never, R>) | undefined
  /** Rows claimed per round (default 10). */
  readonly batch?: number | undefined
  /**
   * Rows of a round handled at once (default 1: one after another). Handlers that wait on the network (a webhook
   * delivery) use more, so one slow receiver does not hold the rest of the batch. Meant for handlers that are not
   * `transactional`: concurrent transactions would each hold a connection (and on PGlite, queue for its only one).
   */
  readonly concurrency?: number | undefined
  /**
   * Commit the handler's writes with the completion, fenced by the attempt (default true). Handlers that call
   * out (a webhook delivery) pass false: their effects happen at least once.
   */
  readonly transactional?: boolean | undefined
  /**
   * The longest wait when nothing is due (default 1 second): with notifications a fallback poll, since a
   * notification or the next row's due time ends the wait sooner.
   */
  readonly idle?: Duration.DurationInput | undefined
  /** Told how many rows each round of {@link WorkQueue.process} attempted (progress counts). */
  readonly onRound?: ((attempted: number) => Effect.Effect<void, never, R>) | undefined
  /**
   * Called once a row's last attempt failed (it is dead), with the error recorded, e.g. to record the outcome; also
   * for a row whose last attempt's worker died holding it, by the worker that finds it dead.
   */
  readonly onDead?: ((claim: Claim, error: string) => Effect.Effect<void, never, R>) | undefined
}

/** @since 0.1.0 @category models */
export interface WorkQueue {
  readonly spec: Spec
  /** Up to `limit` due rows (pending and due, or running with an expired lease), leased to `worker`. */
  readonly claim: (worker: string, limit: number) => Effect.Effect<ReadonlyArray<Claim>>
  /**
   * The row `id` leased to `worker` when it is due (pending and due, or running with an expired lease, attempts
   * left), or none: how a request works its own row at once (claimed in the transaction that inserts it) or takes
   * it over from a worker that died, without handling anyone else's rows.
   */
  readonly claimRow: (worker: string, id: string) => Effect.Effect<Option.Option<Claim>>
  /** One attempt of a claimed row, exactly as {@link process} makes it (heartbeat, schedule, `onDead`, release). */
  readonly handle: <E, R, A>(options: ProcessOptions<E, R, A>, claim: Claim) => Effect.Effect<void, never, R>
  /** Marks a claimed row done. */
  readonly complete: (claim: Claim) => Effect.Effect<void, LeaseLost>
  /**
   * Records a failed attempt: pending again after the schedule's delay (or at `notBefore`, epoch millis, when
   * later), or dead after the last attempt.
   */
  readonly fail: (claim: Claim, error: string, notBefore?: number) => Effect.Effect<"retrying" | "dead", LeaseLost>
  /**
   * Gives a claimed row back untried, the attempt not counted: due at once (a worker shutting down), or at
   * `until` (epoch millis) with `reason` as its last error (a handler's {@link Postpone}).
   */
  readonly release: (claim: Claim, postponed?: { readonly until: number; readonly reason: string }) => Effect.Effect<void>
  /** Renews a claim's lease (a long attempt). */
  readonly extend: (claim: Claim) => Effect.Effect<void, LeaseLost>
  /** Makes rows due again with their attempts reset (reprocessing); returns how many. */
  readonly requeue: (ids: ReadonlyArray<string>) => Effect.Effect<number>
  /** Claims and handles rows until none is due, then returns how many attempts it made. */
  readonly drain: <E, R, A>(options: ProcessOptions<E, R, A>) => Effect.Effect<number, never, R>
  /**
   * Claims and handles rows for ever. When none is due it waits for a notification on the queue's channel (with
   * notifications), the next row's due time or lease expiry, or `idle`, whichever comes first.
   */
  readonly process: <E, R, A>(options: ProcessOptions<E, R, A>) => Effect.Effect<never, never, R>
  /** When the next row is due or its lease runs out (epoch millis), if any row is pending or running. */
  readonly nextDue: Effect.Effect<Option.Option<number>>
}

const identifier = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$/

const ClaimRows = Schema.Array(Schema.Struct({ id: Schema.String, attempt: Schema.Number }))
const ClaimedOrSwept = Schema.Array(
  Schema.Struct({ id: Schema.String, attempt: Schema.Number, worker: Schema.NullOr(Schema.String), error: Schema.NullOr(Schema.String) })
)
const StateRows = Schema.Array(Schema.Struct({ state: Schema.Literal("pending", "dead") }))
const IdRows = Schema.Array(Schema.Struct({ id: Schema.String }))
const NextRows = Schema.Array(Schema.Struct({ at: Schema.NullOr(Schema.Number) }))

/**
 * A queue over `spec.table`.
 *
 * @since 0.1.0 @category constructors
 */
export const make = (spec: Spec): Effect.Effect<WorkQueue, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wakeups = yield* Effect.serviceOption(Notifications)
    const idColumn = spec.idColumn ?? "id"
    if (!identifier.test(spec.table) || !identifier.test(idColumn)) {
      return yield* Effect.dieMessage(`WorkQueue: ${spec.table}.${idColumn} is not a plain identifier`)
    }
    const table = sql.literal(spec.table)
    const id = sql.literal(idColumn)
    const leaseMillis = Duration.toMillis(Duration.decode(spec.lease))
    const delays = spec.retryDelays.map((delay) => Duration.toMillis(Duration.decode(delay)))
    const maxAttempts = delays.length + 1
    const at = (millis: number) => new Date(millis).toISOString()
    const now = Clock.currentTimeMillis

    // The claim's own row, still held by it.
    const held = (claim: Claim) =>
      sql`${id}::text = ${claim.id} AND queue_state = 'running' AND queue_attempts = ${claim.attempt} AND queue_worker = ${claim.worker}`

    // Due at `millis`: pending and its time has come, or running under a lease that ran out.
    const due = (millis: number) =>
      sql`((queue_state = 'pending' AND queue_next_attempt_at <= ${at(millis)}::timestamptz)
        OR (queue_state = 'running' AND queue_lease_until < ${at(millis)}::timestamptz))`
    // What claiming a row writes: the next attempt, leased to `worker`.
    const leasedTo = (worker: string, millis: number) =>
      sql`queue_state = 'running', queue_attempts = queue_attempts + 1,
        queue_lease_until = ${at(millis + leaseMillis)}::timestamptz, queue_worker = ${worker}`

    /** Claims due rows; also answers the rows found dead (their last attempt's worker died holding them). */
    const claimAndSweep = (worker: string, limit: number) =>
      Effect.gen(function*() {
        const millis = yield* now
        // One statement: a row whose last attempt's lease ran out was tried as often as allowed, so it is swept dead
        // (never claimed: the claim takes only rows with attempts left), and up to `limit` due rows are leased.
        const result = yield* sql`WITH swept AS (
            UPDATE ${table} SET queue_state = 'dead', queue_lease_until = NULL,
              queue_last_error = coalesce(queue_last_error, 'the lease of the last attempt expired')
            WHERE queue_state = 'running' AND queue_lease_until < ${at(millis)}::timestamptz AND queue_attempts >= ${maxAttempts}
            RETURNING ${id}::text AS id, queue_attempts AS attempt, coalesce(queue_worker, '') AS worker, queue_last_error AS error),
          claimed AS (
            UPDATE ${table} SET ${leasedTo(worker, millis)}
            WHERE ${id} IN (
              SELECT ${id} FROM ${table}
              WHERE ${due(millis)} AND queue_attempts < ${maxAttempts}
              ORDER BY queue_next_attempt_at, ${id}
              LIMIT ${limit}
              FOR UPDATE SKIP LOCKED)
            RETURNING ${id}::text AS id, queue_attempts AS attempt)
          SELECT id, attempt, NULL::text AS worker, NULL::text AS error FROM claimed
          UNION ALL SELECT id, attempt, worker, error FROM swept`.pipe(Effect.flatMap(Schema.decodeUnknown(ClaimedOrSwept)))
        const rows = result.filter((row) => row.worker === null)
        const swept = result.flatMap((row) => (row.worker === null ? [] : [{ ...row, worker: row.worker, error: row.error ?? "" }]))
        return {
          claims: rows.map((row): Claim => ({ id: row.id, attempt: row.attempt, worker })),
          dead: swept.map((row) => ({ claim: { id: row.id, attempt: row.attempt, worker: row.worker }, error: row.error }))
        }
      }).pipe(Effect.orDie, Effect.withSpan("WorkQueue.claim", { captureStackTrace: false, attributes: { table: spec.table, worker } }))

    const claim = (worker: string, limit: number) => Effect.map(claimAndSweep(worker, limit), ({ claims }) => claims)

    const claimRow = (worker: string, rowId: string) =>
      Effect.gen(function*() {
        const millis = yield* now
        // A row out of attempts is not due but dead: the next sweep of `claim` records it.
        const rows = yield* sql`UPDATE ${table} SET ${leasedTo(worker, millis)}
          WHERE ${id}::text = ${rowId} AND ${due(millis)} AND queue_attempts < ${maxAttempts}
          RETURNING ${id}::text AS id, queue_attempts AS attempt`.pipe(Effect.flatMap(Schema.decodeUnknown(ClaimRows)), Effect.orDie)
        return Option.map(Option.fromNullable(rows[0]), (row): Claim => ({ id: row.id, attempt: row.attempt, worker }))
      }).pipe(Effect.withSpan("WorkQueue.claimRow", { captureStackTrace: false, attributes: { table: spec.table, worker } }))

    const complete = (claim: Claim) =>
      sql`UPDATE ${table} SET queue_state = 'done', queue_lease_until = NULL, queue_last_error = NULL
          WHERE ${held(claim)} RETURNING ${id}::text AS id`.pipe(
        Effect.flatMap(Schema.decodeUnknown(IdRows)),
        Effect.orDie,
        Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new LeaseLost({ id: claim.id, attempt: claim.attempt })) : Effect.void))
      )

    const fail = (claim: Claim, error: string, notBefore?: number) =>
      Effect.gen(function*() {
        const millis = yield* now
        const delay = delays[claim.attempt - 1]
        const scheduled = delay === undefined ? millis : millis + delay
        const next = notBefore === undefined ? scheduled : Math.max(scheduled, notBefore)
        const rows = yield* sql`UPDATE ${table} SET
              queue_state = CASE WHEN queue_attempts >= ${maxAttempts} THEN 'dead' ELSE 'pending' END,
              queue_next_attempt_at = ${at(next)}::timestamptz, queue_lease_until = NULL,
              queue_last_error = ${error.slice(0, 2000)}
            WHERE ${held(claim)} RETURNING queue_state AS state`.pipe(Effect.flatMap(Schema.decodeUnknown(StateRows)), Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* new LeaseLost({ id: claim.id, attempt: claim.attempt })
        return row.state === "dead" ? "dead" as const : "retrying" as const
      })

    const release = (claim: Claim, postponed?: { readonly until: number; readonly reason: string }) =>
      postponed === undefined
        ? sql`UPDATE ${table} SET queue_state = 'pending', queue_attempts = queue_attempts - 1, queue_lease_until = NULL,
            queue_next_attempt_at = '-infinity'
          WHERE ${held(claim)}`.pipe(Effect.asVoid, Effect.orDie)
        : sql`UPDATE ${table} SET queue_state = 'pending', queue_attempts = queue_attempts - 1, queue_lease_until = NULL,
            queue_next_attempt_at = ${at(postponed.until)}::timestamptz, queue_last_error = ${postponed.reason.slice(0, 2000)}
          WHERE ${held(claim)}`.pipe(Effect.asVoid, Effect.orDie)

    const extend = (claim: Claim) =>
      Effect.gen(function*() {
        const millis = yield* now
        const rows = yield* sql`UPDATE ${table} SET queue_lease_until = ${at(millis + leaseMillis)}::timestamptz
            WHERE ${held(claim)} RETURNING ${id}::text AS id`.pipe(Effect.flatMap(Schema.decodeUnknown(IdRows)), Effect.orDie)
        if (rows.length === 0) return yield* new LeaseLost({ id: claim.id, attempt: claim.attempt })
      })

    const requeue = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(0)
        : sql`UPDATE ${table} SET queue_state = 'pending', queue_attempts = 0, queue_next_attempt_at = '-infinity',
              queue_lease_until = NULL, queue_worker = NULL, queue_last_error = NULL
            WHERE ${id}::text IN ${sql.in(ids)} RETURNING ${id}::text AS id`.pipe(
          Effect.flatMap(Schema.decodeUnknown(IdRows)),
          Effect.map((rows) => rows.length),
          Effect.orDie
        )

    /** One attempt: the handler, then done or failed; a lost lease or an interruption leaves the row as it is. */
    const attempt = <E, R, A>(options: ProcessOptions<E, R, A>, claimed: Claim): Effect.Effect<void, never, R> => {
      const transactional = options.transactional ?? true
      const heartbeat = extend(claimed).pipe(
        Effect.ignore,
        Effect.repeat(Schedule.spaced(Duration.millis(Math.max(1, Math.floor(leaseMillis / 3))))),
        Effect.delay(Duration.millis(Math.max(1, Math.floor(leaseMillis / 3))))
      )
      const record = options.record
      const run = transactional
        ? sql.withTransaction(Effect.zipRight(options.handler(claimed), complete(claimed)))
        : Effect.flatMap(options.handler(claimed), (outcome) =>
          // The outcome's writes and the completion: one commit, none at all once the lease is lost.
          record === undefined ? complete(claimed) : sql.withTransaction(Effect.zipRight(record(claimed, outcome), complete(claimed))))
      // The heartbeat is interruptible even when the caller is not (an MCP tool call runs uninterruptibly): the race
      // interrupts it once the attempt ends, and must not wait on it for ever.
      return Effect.raceFirst(run, Effect.interruptible(Effect.zipRight(heartbeat, Effect.never))).pipe(
        Effect.catchAllCause((cause) => {
          if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
          const failure = Cause.failureOption(cause)
          if (failure._tag === "Some" && failure.value instanceof LeaseLost) {
            return Effect.logWarning("WorkQueue: lease lost, the attempt's writes were not committed", { id: claimed.id })
          }
          if (failure._tag === "Some" && failure.value instanceof Postpone) {
            return release(claimed, { until: failure.value.until, reason: failure.value.reason })
          }
          const later = failure._tag === "Some" && failure.value instanceof RetryLater ? failure.value : undefined
          const error = later?.error ?? Cause.pretty(cause).split("\n")[0] ?? "failed"
          return fail(claimed, error, later?.notBefore).pipe(
            Effect.tap((state) => Effect.logDebug(`WorkQueue: attempt ${claimed.attempt} of ${claimed.id} failed: ${state}`)),
            Effect.flatMap((state) => (state === "dead" && options.onDead !== undefined ? options.onDead(claimed, error) : Effect.void)),
            Effect.catchTag("LeaseLost", () => Effect.void),
            Effect.asVoid
          )
        }),
        // Asked to stop mid-attempt: give the row back rather than wait for its lease to expire.
        Effect.onInterrupt(() => release(claimed)),
        Effect.withSpan("WorkQueue.attempt", { captureStackTrace: false, attributes: { table: spec.table, id: claimed.id, attempt: claimed.attempt } })
      )
    }

    const round = <E, R, A>(options: ProcessOptions<E, R, A>) =>
      Effect.gen(function*() {
        const { claims, dead } = yield* claimAndSweep(options.worker, options.batch ?? 10)
        // A worker that died holding a row's last attempt never heard it fail: its outcome is recorded here.
        if (options.onDead !== undefined) {
          const onDead = options.onDead
          yield* Effect.forEach(dead, (row) => onDead(row.claim, row.error), { discard: true })
        }
        const started = new Set<string>()
        yield* Effect.forEach(claims, (claimed) => Effect.suspend(() => {
          started.add(claimed.id)
          return attempt(options, claimed)
        }), { discard: true, concurrency: options.concurrency ?? 1 }).pipe(
          // Asked to stop: the claims of this batch not yet started go back too (those in hand release themselves).
          Effect.onInterrupt(() => Effect.forEach(claims.filter((c) => !started.has(c.id)), (c) => release(c), { discard: true }))
        )
        return claims.length
      })

    const drain = <E, R, A>(options: ProcessOptions<E, R, A>) =>
      Effect.gen(function*() {
        let total = 0
        while (true) {
          const handled = yield* round(options)
          if (handled === 0) return total
          total += handled
        }
      })

    const nextDue = sql`SELECT (extract(epoch FROM least(
          (SELECT min(queue_next_attempt_at) FROM ${table} WHERE queue_state = 'pending'),
          (SELECT min(queue_lease_until) FROM ${table} WHERE queue_state = 'running'))) * 1000)::float8 AS at`.pipe(
      Effect.flatMap(Schema.decodeUnknown(NextRows)),
      Effect.map((rows) => Option.fromNullable(rows[0]?.at)),
      Effect.orDie
    )

    const channel = channelOf(spec.table)
    /**
     * Counts the notifications heard on the queue's channel, from the moment it returns (listening). A listener
     * that cannot start leaves the count still: the worker polls.
     */
    const heard = Effect.gen(function*() {
      const count = yield* SubscriptionRef.make(0)
      if (Option.isSome(wakeups)) {
        const started = yield* wakeups.value.listen(channel).pipe(
          Effect.tapError((error) => Effect.logWarning(`WorkQueue: cannot listen on ${channel}; polling only`, error)),
          Effect.option
        )
        if (Option.isSome(started)) {
          yield* Effect.forkScoped(Stream.runForEach(started.value, () => SubscriptionRef.update(count, (n) => n + 1)))
        }
      }
      return count
    })

    const process = <E, R, A>(options: ProcessOptions<E, R, A>): Effect.Effect<never, never, R> =>
      Effect.scoped(Effect.gen(function*() {
        const count = yield* heard
        const idleMillis = Duration.toMillis(Duration.decode(options.idle ?? Duration.seconds(1)))
        return yield* Effect.forever(Effect.gen(function*() {
          // Read before the round: a row notified while the round ran ends the wait at once.
          const before = yield* SubscriptionRef.get(count)
          const handled = yield* round(options)
          if (options.onRound !== undefined) yield* options.onRound(handled)
          if (handled > 0) return
          const millis = yield* now
          const next = yield* nextDue
          const wait = Option.match(next, { onNone: () => idleMillis, onSome: (at) => Math.min(idleMillis, Math.max(0, at - millis)) })
          // A row due at this instant is claimed by the next round (after a lease ran out, a millisecond later).
          yield* Effect.raceFirst(
            count.changes.pipe(Stream.filter((n) => n > before), Stream.take(1), Stream.runDrain),
            Effect.sleep(Duration.millis(Math.max(wait, 1)))
          )
        }))
      }))

    return { spec, claim, claimRow, handle: attempt, complete, fail, release, extend, requeue, drain, process, nextDue }
  })
