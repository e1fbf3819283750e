/**
 * Per-workspace rate limits in fixed one-minute windows, stored in `core.rate_windows` so every node of
 * a scaled-out deployment counts the same calls. Every call of every transport (each call inside an MCP
 * batch included) consumes one unit before it runs.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

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

const WINDOW_MS = 60_000
const Calls = Schema.Array(Schema.Struct({ calls: Schema.Number }))
const decodeCalls = Schema.decodeUnknown(Calls)

/** @since 0.1.0 @category constructors */
export const makeSql = (limit: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return RateLimiter.of({
      consume: (workspaceId) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const windowStart = now - (now % WINDOW_MS)
          const rows = yield* sql`INSERT INTO core.rate_windows (workspace_id, window_start, calls)
            VALUES (${workspaceId}, ${new Date(windowStart).toISOString()}::timestamptz, 1)
            ON CONFLICT (workspace_id, window_start) DO UPDATE SET calls = core.rate_windows.calls + 1
            RETURNING calls`.pipe(Effect.flatMap(decodeCalls), Effect.orDie)
          const calls = rows[0]?.calls ?? 1
          if (calls === 1) {
            // First call of a window: old windows are no longer read.
            yield* sql`DELETE FROM core.rate_windows WHERE workspace_id = ${workspaceId}
              AND window_start < ${new Date(windowStart).toISOString()}::timestamptz`.pipe(Effect.orDie)
          }
          if (calls > limit) {
            return yield* new RateLimited({ limit, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now) / 1000)) })
          }
        }).pipe(Effect.withSpan("RateLimiter.consume"))
    })
  })

/** @since 0.1.0 @category layers */
export const layerSql: Layer.Layer<RateLimiter, ConfigError.ConfigError, SqlClient.SqlClient> = Layer.effect(
  RateLimiter,
  Effect.flatMap(limitConfig, makeSql)
)

/**
 * No limit: for in-process runtimes (the research belt) and tests that are not about limits.
 *
 * @since 0.1.0 @category layers
 */
export const layerUnlimited: Layer.Layer<RateLimiter> = Layer.succeed(RateLimiter, RateLimiter.of({ consume: () => Effect.void }))
