/**
 * The `service` binary: the command tree of every operation group of the application (`App.groups`), the
 * market summaries, and the operator commands (`corpus`, `topics-index`), run on Node with the exit codes of
 * `Failure.ExitCode`.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as App from "@service/app/App"
import * as Cli from "@service/cli/Cli"
import * as CorpusCli from "@service/cli/CorpusCli"
import * as CreditsCli from "@service/cli/CreditsCli"
import * as Format from "@service/cli/Format"
import * as TopicsCli from "@service/cli/TopicsCli"
import * as Operation from "@service/core/Operation"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"

// stdout carries results (summaries, --json); log lines go to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

/** The first word of every command, `service` unless the host names its own. */
const prefix = Config.string("SERVICE_SURFACE_PREFIX").pipe(
  Config.withDefault("service"),
  Config.withDescription("First word of every command line and of printed commands.")
)

// Failures were already printed by Cli.run; the teardown only picks the exit code.
Effect.flatMap(prefix, (first) =>
  Cli.run(process.argv, {
    groups: App.groups,
    summaries: Format.marketSummaries(MarketOperations),
    operators: [Cli.operator(CorpusCli.command), Cli.operator(CreditsCli.command), Cli.operator(TopicsCli.command)]
  }).pipe(Effect.provideService(Operation.SurfacePrefix, first))).pipe(
    Effect.provide(NodeContext.layer),
    Effect.provide(StderrLogger),
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown: Cli.teardown })
  )
