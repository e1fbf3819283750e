/**
 * A worker process's main program for any application (`npm run worker`): `Workers.program` with telemetry, and
 * a failure to start printed as one line (a missing DATABASE_URL, keys that are not there).
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as App from "@service/app/App"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as StartupFailure from "./StartupFailure.js"
import * as Telemetry from "./Telemetry.js"
import * as Workers from "./Workers.js"

/**
 * The worker program of `app` as a process's main program. Run it with {@link runMain}.
 *
 * @since 0.1.0 @category programs
 */
export const make = <S, E, D, R>(app: App.Application<S, E, D, R>, appOptions?: App.Options) =>
  Workers.program(app, appOptions).pipe(
    Effect.scoped,
    Effect.provide(Telemetry.layer),
    Effect.tapErrorCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      const error = Cause.squash(cause)
      const line = error instanceof Workers.WorkerRefused
        ? error.reason
        : StartupFailure.describe(error, { port: 0, host: "-" }).replace(/^Could not start:/, "The worker could not start:")
      return Console.error(line)
    })
  )

/**
 * Runs a worker main program.
 *
 * @since 0.1.0 @category programs
 */
export const runMain = <A, E>(main: Effect.Effect<A, E, never>): void => NodeRuntime.runMain(main, { disableErrorReporting: true })
