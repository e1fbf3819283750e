/**
 * The door's limit per sending address: 120 requests a minute (spec), counted like the API's per-workspace limit
 * (decision 0080): in memory per node, written to `core.rate_windows` for every address at once every short
 * interval, so a request costs no statement of its own and every node shares one budget.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@service/core/RateLimiter"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Requests a minute the door takes from one IP address (spec: 120). @since 0.1.0 @category constants */
export const REQUESTS_PER_MINUTE_PER_IP = 120

/** @since 0.1.0 @category tags */
export class DoorLimiter extends Context.Tag("@service/door/DoorLimiter")<DoorLimiter, RateLimiter.RateLimiter["Type"]>() {}

/** @since 0.1.0 @category layers */
export const layer = Layer.scoped(
  DoorLimiter,
  Effect.flatMap(Effect.orDie(RateLimiter.flushIntervalConfig), (ms) =>
    RateLimiter.makeSql(REQUESTS_PER_MINUTE_PER_IP, { flushEvery: Duration.millis(ms) }))
)
