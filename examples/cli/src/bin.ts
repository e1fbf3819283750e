/**
 * The `service` binary: runs the command tree on Node with the exit codes of `Failure.ExitCode`.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cli from "@service/cli/Cli"
import * as Effect from "effect/Effect"

// Failures were already printed by Cli.run; the teardown only picks the exit code.
Cli.run(process.argv).pipe(
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true, teardown: Cli.teardown })
)
