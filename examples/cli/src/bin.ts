/**
 * The `service` binary: the command tree of every operation group of the application (`App.app`) and its
 * bundles' operator commands (`corpus`, `credits`, `topics-index`), run on Node with the exit codes of
 * `Failure.ExitCode`. Operator commands that work on the database run over the application's services on the
 * configured database (DATABASE_URL, or the embedded one in SERVICE_DATA_DIR).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as App from "@service/app/App"
import * as Cli from "@service/cli/Cli"
import * as EventsListen from "@service/cli/EventsListen"
import * as Login from "@service/cli/Login"
import * as Operators from "@service/cli/Operators"
import * as Operation from "@service/core/Operation"
import * as Catalog from "@service/events/Catalog"
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

const operators = [
  Cli.operator(Login.loginCommand(Cli.defaultBaseUrl)),
  Cli.operator(Login.logoutCommand(Cli.defaultBaseUrl)),
  ...Operators.commands({
    groups: App.app.operators,
    operations: App.app.groups,
    services: App.app.operatorServices
  })
]

// `service events listen`, beside the events group's derived commands.
const nested = [{ under: "events", command: Cli.operator(EventsListen.command({ groups: App.app.groups, catalog: Catalog.names })) }]

// Failures were already printed by Cli.run; the teardown only picks the exit code.
Effect.flatMap(prefix, (first) =>
  Cli.run(process.argv, { groups: App.app.groups, operators, nested }).pipe(Effect.provideService(Operation.SurfacePrefix, first))).pipe(
    Effect.provide(NodeContext.layer),
    Effect.provide(StderrLogger),
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true, teardown: Cli.teardown })
  )
