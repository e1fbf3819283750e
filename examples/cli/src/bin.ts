/**
 * The `service` binary: runs the command tree on Node with the exit codes of `Failure.ExitCode`.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cli from "@service/cli/Cli"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

// stdout carries results (summaries, --json); log lines go to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

// Failures were already printed by Cli.run; the teardown only picks the exit code.
Cli.run(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  Effect.provide(StderrLogger),
  NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown: Cli.teardown })
)
