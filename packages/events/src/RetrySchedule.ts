/**
 * When a failed delivery is tried again: ten attempts, the first immediate, each later one a fixed wait after
 * the failure of the one before (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h), so the last attempt
 * comes 75 h 35 min 5 s after the first: the "about 75 hours" of the spec. A receiver's `Retry-After` can push
 * an attempt later, never earlier, and never past the end of the window.
 *
 * Jitter: the spec recommends it, so that the deliveries that failed together during a receiver's outage do
 * not all come back in the same second. {@link nextAttempt} moves each wait by up to 10 % either way, drawn
 * from Effect's `Random` (seeded or fixed under test); {@link nextAttemptAt} is the same computation without
 * jitter, a pure function of its arguments.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"

/**
 * `DELAYS_SECONDS[i]` is the wait before attempt `i + 1`, counted from the failure of attempt `i`; attempt 1
 * is immediate. Copied from the example schedule of the Standard Webhooks 1.0.0 specification, section
 * "Deliverability and reliability" (the test compares it with `test/fixtures/retry-schedules.json`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DELAYS_SECONDS: ReadonlyArray<number> = [0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]

/**
 * How many attempts a delivery gets in all.
 *
 * @since 0.1.0
 * @category constants
 */
export const ATTEMPTS: number = DELAYS_SECONDS.length

/**
 * The most a wait moves either way under jitter, as a fraction of the wait.
 *
 * @since 0.1.0
 * @category constants
 */
export const JITTER = 0.1

const sumSeconds = (delays: ReadonlyArray<number>): number => delays.reduce((total, delay) => total + delay, 0)

/**
 * From the first attempt to the last when every attempt fails at once and nothing moves a wait:
 * 75 h 35 min 5 s.
 *
 * @since 0.1.0
 * @category constants
 */
export const window: Duration.Duration = Duration.seconds(sumSeconds(DELAYS_SECONDS))

// `jitter` is in [-1, 1]: the fraction of JITTER by which the scheduled wait moves.
const plan = (
  attempt: number,
  failedAtMillis: number,
  retryAfter: Duration.DurationInput | undefined,
  jitter: number
): Option.Option<Date> => {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`RetrySchedule: attempt must be a positive integer, got ${attempt}`)
  }
  const delay = DELAYS_SECONDS[attempt]
  if (delay === undefined) return Option.none()
  const scheduled = failedAtMillis + delay * 1000 * (1 + jitter * JITTER)
  if (retryAfter === undefined) return Option.some(new Date(scheduled))
  // The window left after this failure, had the schedule been followed: Retry-After may use it, not more.
  const deadline = failedAtMillis + sumSeconds(DELAYS_SECONDS.slice(attempt)) * 1000
  const asked = failedAtMillis + Duration.toMillis(retryAfter)
  return Option.some(new Date(Math.max(scheduled, Math.min(asked, deadline))))
}

/**
 * When to make the next attempt after attempt number `attempt` (1-based) failed at `failedAt`, without jitter;
 * none after the last attempt. With `retryAfter` (a receiver's `Retry-After` on 429 or 503) the attempt comes
 * at the later of the schedule and `failedAt + retryAfter`, but no later than the end of the window left had
 * the schedule been followed. An `attempt` that is not a positive integer is a programming defect and throws.
 *
 * @since 0.1.0
 * @category schedule
 */
export const nextAttemptAt = (
  attempt: number,
  failedAt: Date,
  retryAfter?: Duration.DurationInput
): Option.Option<Date> => plan(attempt, failedAt.getTime(), retryAfter, 0)

/**
 * {@link nextAttemptAt} for an attempt that failed now (Effect's `Clock`), with the scheduled wait moved by up
 * to {@link JITTER} either way (Effect's `Random`). A `Retry-After` is honoured as given: jitter never brings
 * the attempt before it.
 *
 * @since 0.1.0
 * @category schedule
 */
export const nextAttempt = (
  attempt: number,
  retryAfter?: Duration.DurationInput
): Effect.Effect<Option.Option<Date>> =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const unit = yield* Random.next
    return plan(attempt, now, retryAfter, unit * 2 - 1)
  })
