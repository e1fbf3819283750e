import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/**
 * A write made a short `interval` after the first change not yet written, by a fiber of the enclosing scope, one
 * write at a time, and once more when the scope closes (the rate windows' and the debits' of decision 0080).
 * `schedule` asks for the next write: it is scheduled by the first change after the last write, not by a timer that
 * runs forever, so an idle node writes nothing and a test clock moved by hours runs one write, not one per
 * interval. `write` gets `schedule` to ask again after a failure.
 */
export const make = (
  interval: Duration.DurationInput,
  write: (schedule: Effect.Effect<void>) => Effect.Effect<void>
): Effect.Effect<{ readonly schedule: Effect.Effect<void>; readonly flush: Effect.Effect<void> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const writer = yield* Effect.makeSemaphore(1)
    let scheduled = false
    const schedule: Effect.Effect<void> = Effect.suspend(() => {
      if (scheduled) return Effect.void
      scheduled = true
      // Only the wait can be interrupted (a caller's uninterruptible region would otherwise pass on to the fiber and
      // hold the scope's end); a write once begun is finished.
      return Effect.asVoid(Effect.forkIn(
        Effect.uninterruptible(Effect.zipRight(Effect.interruptible(Effect.sleep(Duration.decode(interval))), Effect.suspend(() => {
          scheduled = false
          return flush
        }))),
        scope
      ))
    })
    const flush: Effect.Effect<void> = writer.withPermits(1)(Effect.suspend(() => write(schedule)))
    yield* Effect.addFinalizer(() => flush)
    return { schedule, flush }
  })
