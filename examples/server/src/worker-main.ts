/**
 * `npm run worker`: applies stored Arrivals to the CRM against the PostgreSQL at `DATABASE_URL`, next to API nodes
 * started with `SERVICE_EMBEDDED_WORKER=false` (see `Worker.ts`). SIGTERM or SIGINT stops it cleanly.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as StartupFailure from "./StartupFailure.js"
import * as Telemetry from "./Telemetry.js"
import * as Worker from "./Worker.js"

Worker.program.pipe(
  Effect.scoped,
  Effect.provide(Telemetry.layer),
  Effect.tapErrorCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const error = Cause.squash(cause)
    const line = error instanceof Worker.WorkerRefused
      ? error.reason
      : StartupFailure.describe(error, { port: 0, host: "-" }).replace(/^Could not start:/, "The worker could not start:")
    return Console.error(line)
  }),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
