import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import * as Worker from "../src/Worker.js"

describe("Worker", () => {
  it.scoped("a loop that dies is started again after a growing pause; what it did is counted per worker", () =>
    Effect.gen(function*() {
      const starts = yield* Ref.make(0)
      const flaky = Worker.make({
        name: "test.flaky",
        description: "dies on its first two runs",
        unit: "items",
        run: ({ done }) =>
          Effect.gen(function*() {
            const n = yield* Ref.updateAndGet(starts, (k) => k + 1)
            yield* done(1)
            if (n <= 2) return yield* Effect.dieMessage(`run ${n} broke`)
            return yield* Effect.never
          })
      })
      const totals = yield* Worker.runAll([flaky], { name: "test-process" })
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(yield* Ref.get(starts), 1)
      // 1 s after the first death, 2 s after the second.
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* Ref.get(starts), 2)
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* Ref.get(starts), 2)
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual(yield* Ref.get(starts), 3)
      assert.strictEqual((yield* Ref.get(totals)).get("test.flaky"), 3)
    }))

  it.scoped("each worker polls its own interval unless the host sets one for all", () =>
    Effect.gen(function*() {
      const seen: Array<number> = []
      const poller = Worker.make({
        name: "test.poller",
        description: "records its poll",
        poll: "250 millis",
        run: ({ poll }) => Effect.zipRight(Effect.sync(() => seen.push(Duration.toMillis(poll))), Effect.never)
      })
      yield* Worker.runAll([poller], { name: "own" })
      yield* Worker.runAll([poller], { name: "host", poll: Duration.seconds(2) })
      yield* TestClock.adjust(Duration.millis(1))
      assert.deepStrictEqual(seen.sort((a, b) => a - b), [250, 2000])
    }))

  it.effect("describes a worker with its lease and poll when it has them", () =>
    Effect.sync(() => {
      const loop = Worker.make({ name: "d.loop", description: "does a thing", run: () => Effect.never })
      assert.strictEqual(Worker.describe(loop, Option.some(Duration.minutes(2)), Option.some(Duration.seconds(1))), "d.loop: does a thing (lease 2m, polls every 1s)")
      assert.strictEqual(Worker.describe(loop, Option.none(), Option.none()), "d.loop: does a thing")
    }))

  it.scoped("interrupting the scope stops the loops", () =>
    Effect.gen(function*() {
      const running = yield* Ref.make(false)
      const loop = Worker.make({
        name: "s.loop",
        description: "runs until interrupted",
        run: () => Effect.zipRight(Ref.set(running, true), Effect.never).pipe(Effect.ensuring(Ref.set(running, false)))
      })
      const fiber = yield* Effect.fork(Effect.scoped(Effect.zipRight(Worker.runAll([loop], { name: "scoped" }), Effect.never)))
      yield* TestClock.adjust(Duration.millis(1))
      assert.isTrue(yield* Ref.get(running))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(yield* Ref.get(running))
    }))
})
