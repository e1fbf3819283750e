import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { ATTEMPTS, DELAYS_SECONDS, nextAttempt, nextAttemptAt, window } from "../src/RetrySchedule.js"

const Schedules = Schema.Struct({
  schedules: Schema.Array(Schema.Struct({
    name: Schema.String,
    attempts: Schema.Number,
    delays_seconds: Schema.Array(Schema.Number),
    total_seconds: Schema.Number,
    total_human: Schema.String
  }))
})

const fixture = Schema.decodeUnknownSync(Schedules)(
  JSON.parse(readFileSync(fileURLToPath(new URL("./fixtures/retry-schedules.json", import.meta.url)), "utf8"))
).schedules.find((schedule) => schedule.name === "standard-webhooks-example")

const T0 = new Date("2026-11-25T12:00:00.000Z")
const seconds = (date: Date, from: Date): number => (date.getTime() - from.getTime()) / 1000
const next = (attempt: number, failedAt: Date, retryAfter?: Duration.DurationInput): Date =>
  Option.getOrThrow(nextAttemptAt(attempt, failedAt, retryAfter))

describe("RetrySchedule", () => {
  it("is the Standard Webhooks example schedule (test/fixtures/retry-schedules.json)", () => {
    if (fixture === undefined) return assert.fail("standard-webhooks-example is missing from the fixture")
    assert.deepStrictEqual(DELAYS_SECONDS, fixture.delays_seconds)
    assert.strictEqual(ATTEMPTS, fixture.attempts)
    assert.strictEqual(Duration.toSeconds(window), fixture.total_seconds)
    assert.strictEqual(fixture.total_human, "75:35:05")
  })

  it("spaces ten attempts over 75 h 35 min 5 s when each fails at once, and stops after the tenth", () => {
    let at = T0
    const waits: Array<number> = []
    for (let attempt = 1; attempt < ATTEMPTS; attempt++) {
      const after = next(attempt, at)
      waits.push(seconds(after, at))
      at = after
    }
    assert.deepStrictEqual(waits, [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400])
    assert.strictEqual(seconds(at, T0), 75 * 3600 + 35 * 60 + 5)
    assert.isTrue(Option.isNone(nextAttemptAt(ATTEMPTS, at)))
    assert.isTrue(Option.isNone(nextAttemptAt(ATTEMPTS + 3, at)))
  })

  it("counts each wait from the failure of the attempt before", () => {
    const failedAt = new Date(T0.getTime() + 9_500)
    assert.strictEqual(seconds(next(2, failedAt), failedAt), 300)
  })

  it("honours a later Retry-After and ignores an earlier one", () => {
    assert.strictEqual(seconds(next(1, T0, "120 seconds"), T0), 120)
    assert.strictEqual(seconds(next(3, T0, "60 seconds"), T0), 1800)
    assert.strictEqual(seconds(next(2, T0, Duration.zero), T0), 300)
  })

  it("never lets Retry-After reach past the window that is left", () => {
    // After attempt 9 only attempt 10 is left, 24 hours on.
    assert.strictEqual(seconds(next(9, T0, "2 days"), T0), 86400)
    // After attempt 1 (immediate) the whole window is left: 75 h 35 min 5 s.
    assert.strictEqual(seconds(next(1, T0, "100 days"), T0), Duration.toSeconds(window))
    assert.strictEqual(seconds(next(8, T0, "30 hours"), T0), 30 * 3600)
  })

  it("treats an attempt number that is not a positive integer as a defect", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      assert.throws(() => nextAttemptAt(bad, T0), RangeError)
    }
  })

  describe("with jitter (nextAttempt)", () => {
    it.effect("counts from the Clock and moves the wait by at most 10 % either way", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0.getTime())
        const at = (attempt: number, unit: number) =>
          nextAttempt(attempt).pipe(Effect.map(Option.getOrThrow), Effect.withRandom(Random.fixed([unit])))
        assert.strictEqual(seconds(yield* at(3, 0), T0), 1800 * 0.9)
        assert.strictEqual(seconds(yield* at(3, 0.5), T0), 1800)
        assert.strictEqual(seconds(yield* at(3, 0.999), T0), 1800 * (1 + 0.1 * 0.998))
        assert.isTrue(Option.isNone(yield* nextAttempt(ATTEMPTS)))
      }))

    it.effect("stays within the bounds for every attempt under a seeded Random", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0.getTime())
        for (let attempt = 1; attempt < ATTEMPTS; attempt++) {
          const delay = DELAYS_SECONDS[attempt] ?? 0
          const wait = seconds(Option.getOrThrow(yield* nextAttempt(attempt)), T0)
          assert.isTrue(wait >= delay * 0.9 && wait <= delay * 1.1, `attempt ${attempt}: ${wait}`)
        }
      }).pipe(Effect.withRandom(Random.make("retry-schedule"))))

    it.effect("never brings an attempt before a Retry-After", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(T0.getTime())
        const at = yield* nextAttempt(1, "5 seconds").pipe(Effect.withRandom(Random.fixed([0])))
        assert.strictEqual(seconds(Option.getOrThrow(at), T0), 5)
      }))
  })
})
