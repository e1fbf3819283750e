/**
 * The market tools over stdio for local MCP clients (Claude Desktop, Inspector, ...).
 *
 * Configuration (environment):
 * - `SERVICE_API_KEY` (required): the API key every call is answered for.
 * - `DATABASE_URL`: PostgreSQL; otherwise PGlite in `<SERVICE_DATA_DIR>/pglite` (SERVICE_DATA_DIR defaults to `.data`).
 * - `SERVICE_SEALING_KEYS` / `SERVICE_FINGERPRINT_KEY`: otherwise `keys.json` in the data folder.
 * - `SERVICE_BOOTSTRAP_DEMO=1`: create workspace `demo` and register `SERVICE_API_KEY` in it (scope
 *   `market_data:read`) when the key is unknown, for a fresh local data folder.
 *
 * stdout carries protocol messages only: logs go to stderr. Start it directly (`npx tsx src/main.ts` or
 * `node --import tsx src/main.ts`) or with `npm start --silent`, since `npm start` prints its banner on stdout.
 *
 * @since 0.1.0
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import * as LocalKeys from "@service/core/LocalKeys"
import { Authenticator } from "@service/core/Authenticator"
import { WorkspaceSlug } from "@service/core/Ids"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as McpHandler from "@service/mcp/McpHandler"
import * as Database from "@service/storage/Database"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

// The same name as the streamable HTTP server at /mcp: one server, two transports.
const serverInfo = { name: "service", version: "0.1.0" } as const

const DEMO_WORKSPACE = WorkspaceSlug.make("demo")

// Registers the configured key in workspace `demo` unless it already authenticates.
const bootstrapDemo = (apiKey: Redacted.Redacted<string>) =>
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

// In the background, so `initialize` is answered at once: until the corpus is published, market tools answer
// serving_projection_unavailable (retryable). A load stopped halfway is resumed by the next start.
const loadDemoCorpus = DemoLoad.ensureLoaded((event) =>
  event._tag === "FileLoaded"
    ? Effect.logInfo(`Demo corpus ${event.done}/${event.total}: ${event.file}`)
    : event._tag === "Started"
    ? Effect.logInfo(`Loading the demo corpus (${event.total - event.alreadyLoaded} of ${event.total} files to go)`)
    : Effect.void
).pipe(
  Effect.tap(Option.match({
    onNone: () => Effect.void,
    onSome: (loaded) =>
      Effect.logInfo(`Published the demo corpus ${loaded.publication.snapshotId}: ${DemoLoad.describeRows(loaded.rows)}`)
  })),
  Effect.catchAllCause((cause) => Effect.logError("Could not load the demo corpus", cause))
)

const program = Effect.gen(function*() {
  const apiKey = yield* Config.redacted("SERVICE_API_KEY")
  if (yield* Config.withDefault(Config.boolean("SERVICE_BOOTSTRAP_DEMO"), false)) yield* bootstrapDemo(apiKey)
  const authenticator = yield* Authenticator
  const principal = yield* authenticator.authenticate({ kind: "api_key", secret: apiKey }).pipe(
    Effect.mapError(() =>
      new Error("SERVICE_API_KEY is not a valid API key here (SERVICE_BOOTSTRAP_DEMO=1 registers it in a fresh data folder).")
    )
  )

  // Forked only now: the catalogs load holds the one embedded connection for about a second.
  yield* Effect.forkScoped(loadDemoCorpus)
  yield* Effect.logInfo(`Serving MCP on stdio for workspace ${principal.workspace.slug}`)
  // Every call is scope-checked, rate-limited and metered like on HTTP (core.credit_ledger, core.rate_windows).
  yield* McpHandler.serveStdio({ ...serverInfo, principal, groups: App.groups })
})

// The composition root every runtime shares; the database is migrated while it is built.
const AppLive = App.layer(Database.layerFromConfig, LocalKeys.layer)

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message.length > 0
    ? error.message
    : String(error)

// stdout belongs to the protocol: every log line goes to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

program.pipe(
  Effect.scoped,
  Effect.provide(AppLive),
  // One line on stderr that says what to change (a data folder in use, a missing SERVICE_API_KEY...).
  Effect.tapErrorCause((cause) =>
    Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError(`mcp-stdio stopped: ${describe(Cause.squash(cause))}`)
  ),
  Effect.provide(StderrLogger),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
