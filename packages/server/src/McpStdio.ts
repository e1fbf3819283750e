/**
 * MCP over stdio for local clients (Claude Desktop, Inspector, ...), for any application: its operation groups as
 * tools and its bundles' extra methods (`events/*`) for the principal of one API key, over the same services as
 * the HTTP host. The database and keys come from the environment like `npm start`'s:
 *
 * - `SERVICE_API_KEY` (required): the API key every call is answered for.
 * - `DATABASE_URL`: PostgreSQL; otherwise PGlite in `<SERVICE_DATA_DIR>/pglite` (SERVICE_DATA_DIR defaults to `.data`).
 * - `SERVICE_SEALING_KEYS` / `SERVICE_FINGERPRINT_KEY`: otherwise `keys.json` in the data folder.
 * - `SERVICE_BOOTSTRAP_DEMO=1`: create workspace `demo` and register `SERVICE_API_KEY` in it (scope
 *   `market_data:read`) when the key is unknown, for a fresh local data folder; the bundles' demo tasks (the demo
 *   corpus) then run in the background.
 *
 * The client's opening handshake (`initialize`, or the 2026-era `server/discover` probe) is answered at once, from
 * what needs no database; the database opens (and migrates), the key is authenticated and the demo bootstrapped
 * meanwhile, and every other request waits for that, then is answered in order (docs/decisions/0086). A start-up
 * that fails is logged and is the answer to every waiting and later request.
 *
 * stdout carries protocol messages only: every log line goes to stderr.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Authenticator } from "@service/core/Authenticator"
import { WorkspaceSlug } from "@service/core/Ids"
import * as McpHandler from "@service/mcp/McpHandler"
import * as Config from "effect/Config"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type { Readable, Writable } from "node:stream"
import * as McpRoute from "./McpRoute.js"

const DEMO_WORKSPACE = WorkspaceSlug.make("demo")

/**
 * Registers `apiKey` in workspace `demo` (scope `market_data:read`) unless it already authenticates.
 *
 * @since 0.1.0 @category bootstrap
 */
export const bootstrapDemo = (apiKey: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const known = yield* Effect.option(authenticator.authenticate({ kind: "api_key", secret: apiKey }))
    if (Option.isSome(known)) return
    const accounts = yield* Accounts.Accounts
    const existing = yield* accounts.findWorkspaceBySlug(DEMO_WORKSPACE)
    const workspace = Option.isSome(existing)
      ? existing.value
      : yield* accounts.createWorkspace({ slug: DEMO_WORKSPACE, name: "Demo" })
    yield* accounts.issueCredential({
      workspaceId: workspace.id,
      kind: "api_key",
      label: "mcp-stdio demo key",
      scopes: ["market_data:read"],
      secret: apiKey
    })
    yield* Effect.logInfo("Registered SERVICE_API_KEY in workspace demo")
  })

/** @since 0.1.0 @category models */
export interface Options {
  /** Defaults to `process.stdin`. */
  readonly stdin?: Readable | undefined
  /** Defaults to `process.stdout`: nothing else may write there. */
  readonly stdout?: Writable | undefined
}

/**
 * Serves `app` on stdio until the client closes it, over `services`, which open in the background: the client's
 * opening handshake is answered at once, its other requests once the services are open and `SERVICE_API_KEY` is
 * authenticated (`McpHandler.serveStdio`). A start-up that fails (a locked data folder, an unknown key) is logged,
 * answered to every request with its reason, and then this effect's failure.
 *
 * @since 0.1.0 @category programs
 */
export const serveOver = <S, E, D, R, ROut, EL, RIn>(
  app: App.Application<S, E, D, R>,
  services: Layer.Layer<ROut, EL, RIn>,
  options: Options = {}
) =>
  McpHandler.serveStdio({
    ...McpRoute.handlerOptions(app),
    services,
    stdin: options.stdin,
    stdout: options.stdout,
    principal: Effect.gen(function*() {
      const apiKey = yield* Config.redacted("SERVICE_API_KEY")
      const bootstrap = yield* Config.withDefault(Config.boolean("SERVICE_BOOTSTRAP_DEMO"), false)
      if (bootstrap) yield* bootstrapDemo(apiKey)
      const authenticator = yield* Authenticator
      const principal = yield* authenticator.authenticate({ kind: "api_key", secret: apiKey }).pipe(
        Effect.mapError(() =>
          new Error("SERVICE_API_KEY is not a valid API key here (SERVICE_BOOTSTRAP_DEMO=1 registers it in a fresh data folder).")
        )
      )
      // Forked only now: a demo load holds the one embedded connection for about a second at first.
      if (bootstrap) for (const task of app.demo) yield* Effect.forkScoped(task.run)
      yield* Effect.logInfo(`Serving MCP on stdio for workspace ${principal.workspace.slug}`)
      // Every call is scope-checked, rate-limited and metered like on HTTP (core.credit_ledger, core.rate_windows).
      return principal
    })
  })

/**
 * {@link serveOver} the application's services already in context (a test's, a host's).
 *
 * @since 0.1.0 @category programs
 */
export const serve = <S, E, D, R>(app: App.Application<S, E, D, R>, options: Options = {}) =>
  Effect.contextWithEffect((context: Context.Context<Layer.Layer.Success<App.AppLayer<S, unknown, D>>>) =>
    serveOver(app, Layer.succeedContext(context), options)
  )

// stdout belongs to the protocol: every log line goes to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

/**
 * {@link serveOver} the configured database (opened and migrated while the client's handshake is answered) as a
 * process's main program; a failure is one line on stderr that says what to change, and the answer to every
 * request the client sends. Run it with {@link runMain}.
 *
 * @since 0.1.0 @category programs
 */
export const make = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  serveOver(app, app.layerFromConfig()).pipe(Effect.provide(StderrLogger))

/**
 * Runs a stdio main program (no pretty logger on stdout).
 *
 * @since 0.1.0 @category programs
 */
export const runMain = <A, E>(main: Effect.Effect<A, E, never>): void =>
  NodeRuntime.runMain(main, { disablePrettyLogger: true, disableErrorReporting: true })

