/**
 * Per-workspace rate limits in fixed one-minute windows with a budget shared by every node (decision 0080). Every
 * call of every transport (each call inside an MCP batch included) consumes one unit before it runs.
 *
 * A node counts calls in memory and admits one while the window's global total it last read plus its own calls not
 * yet written stay under the limit, so one node refuses the (limit+1)-th call of a window deterministically and no
 * call costs a statement. Every short interval ({@link flushIntervalConfig}) it adds the counts it holds for all keys
 * to `core.rate_windows` in one statement and reads back the global totals. Across nodes a window may therefore
 * admit more than the limit, by at most what the other nodes admitted since their last write (nodes x calls per
 * interval); it never refuses a call the global count allows.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Duration from "effect/Duration"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as WriteBehind from "./internal/writeBehind.js"

/**
 * Too many calls in the current window. `retryAfterSeconds` is when the next window opens.
 *
 * @since 0.1.0 @category errors
 */
export class RateLimited extends Schema.TaggedError<RateLimited>("@service/core/RateLimited")("RateLimited", {
  limit: Schema.Number,
  retryAfterSeconds: Schema.Number
}) {
  override get message(): string {
    return `Rate limit of ${this.limit} calls per minute reached for this workspace; retry in ${this.retryAfterSeconds} s.`
  }
}

/** @since 0.1.0 @category tags */
export class RateLimiter extends Context.Tag("@service/core/RateLimiter")<RateLimiter, {
  /** Counts one call for the workspace, or fails when the window is full. */
  readonly consume: (workspaceId: string) => Effect.Effect<void, RateLimited>
  /** Writes the calls this node counted and not yet wrote, and reads back the global totals (tests, shutdown). */
  readonly flush: Effect.Effect<void>
}>() {}

/**
 * Calls per workspace per minute: `SERVICE_RATE_LIMIT_PER_MINUTE`, default 600.
 *
 * @since 0.1.0 @category config
 */
export const limitConfig = Config.integer("SERVICE_RATE_LIMIT_PER_MINUTE").pipe(
  Config.withDefault(600),
  Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
  Config.withDescription("Calls per workspace per minute across every transport.")
)

/**
 * How often a node writes its counts and reads the global totals: `SERVICE_RATE_LIMIT_FLUSH_MS`, default 100. The
 * longer, the fewer commits and the more a window may overshoot across nodes.
 *
 * @since 0.1.0 @category config
 */
export const flushIntervalConfig = Config.integer("SERVICE_RATE_LIMIT_FLUSH_MS").pipe(
  Config.withDefault(100),
  Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
  Config.withDescription("Milliseconds between two writes of a node's rate-limit counts (and reads of every node's).")
)

const WINDOW_MS = 60_000
const Totals = Schema.Array(Schema.Struct({ key: Schema.String, calls: Schema.Number }))
const decodeTotals = Schema.decodeUnknown(Totals)

/** One key's window as this node knows it. */
interface Counter {
  readonly window: number
  /** The global total read back at the last write (this node's written calls included). */
  known: number
  /** Counted here, being written now. */
  writing: number
  /** Counted here, not yet written. */
  unwritten: number
}

/**
 * A limiter of `limit` calls per key and window, its counts written `flushEvery` after the first call not yet
 * written (by a fiber of the enclosing scope), and once more when the scope closes.
 *
 * @since 0.1.0 @category constructors
 */
export const makeSql = (
  limit: number,
  options: { readonly flushEvery?: Duration.DurationInput | undefined } = {}
): Effect.Effect<RateLimiter["Type"], never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counters = new Map<string, Counter>()
    // Windows older than this one were deleted (by this node; any node's delete serves all).
    let cleared = 0
    const interval = options.flushEvery ?? Duration.millis(100)
    const consume = (key: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const window = now - (now % WINDOW_MS)
        let counter = counters.get(key)
        if (counter === undefined || counter.window !== window) {
          // A past window's unwritten calls are dropped with it: nothing reads that window again.
          counter = { window, known: 0, writing: 0, unwritten: 0 }
          counters.set(key, counter)
        }
        if (counter.known + counter.writing + counter.unwritten >= limit) {
          return Effect.fail(new RateLimited({ limit, retryAfterSeconds: Math.max(1, Math.ceil((window + WINDOW_MS - now) / 1000)) }))
        }
        counter.unwritten += 1
        return schedule
      })

    const write = (schedule: Effect.Effect<void>) => Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const window = now - (now % WINDOW_MS)
      const batch: Array<readonly [string, Counter]> = []
      for (const [key, counter] of counters) {
        if (counter.window < window) counters.delete(key)
        else if (counter.unwritten > 0) batch.push([key, counter])
      }
      if (batch.length === 0) return
      // Sorted, so two nodes writing the same keys lock their rows in the same order.
      batch.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      for (const [, counter] of batch) {
        counter.writing = counter.unwritten
        counter.unwritten = 0
      }
      const start = new Date(window).toISOString()
      const written = yield* Effect.gen(function*() {
        if (cleared < window) {
          yield* sql`DELETE FROM core.rate_windows WHERE window_start < ${start}::timestamptz`
          cleared = window
        }
        return yield* sql`INSERT INTO core.rate_windows (workspace_id, window_start, calls)
          SELECT key, ${start}::timestamptz, calls
          FROM unnest(${batch.map(([key]) => key)}::text[], ${batch.map(([, c]) => c.writing)}::int[]) AS t(key, calls)
          ORDER BY key
          ON CONFLICT (workspace_id, window_start) DO UPDATE SET calls = core.rate_windows.calls + EXCLUDED.calls
          RETURNING workspace_id AS key, calls`.pipe(Effect.flatMap(decodeTotals))
      }).pipe(Effect.either)
      if (written._tag === "Left") {
        // Kept for the next write: a failed write loses no count.
        for (const [, counter] of batch) {
          counter.unwritten += counter.writing
          counter.writing = 0
        }
        yield* Effect.logWarning("Could not write the rate-limit counts; retrying at the next interval", written.left)
        return yield* schedule
      }
      const totals = new Map(written.right.map((row) => [row.key, row.calls]))
      for (const [key, counter] of batch) {
        counter.known = Math.max(counter.known + counter.writing, totals.get(key) ?? 0)
        counter.writing = 0
      }
    })
    const { flush, schedule } = yield* WriteBehind.make(interval, write)

    return RateLimiter.of({
      consume: (workspaceId) => Effect.withSpan(consume(workspaceId), "RateLimiter.consume", { captureStackTrace: false }),
      flush
    })
  })

/** @since 0.1.0 @category layers */
export const layerSql: Layer.Layer<RateLimiter, ConfigError.ConfigError, SqlClient.SqlClient> = Layer.scoped(
  RateLimiter,
  Effect.gen(function*() {
    const limit = yield* limitConfig
    const flushEvery = Duration.millis(yield* flushIntervalConfig)
    return yield* makeSql(limit, { flushEvery })
  })
)

/**
 * No limit: for in-process runtimes (the research belt) and tests that are not about limits.
 *
 * @since 0.1.0 @category layers
 */
export const layerUnlimited: Layer.Layer<RateLimiter> = Layer.succeed(
  RateLimiter,
  RateLimiter.of({ consume: () => Effect.void, flush: Effect.void })
)
