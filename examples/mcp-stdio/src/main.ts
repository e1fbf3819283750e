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
import * as Accounts from "@service/core/Accounts"
import * as LocalKeys from "@service/core/LocalKeys"
import { Authenticator } from "@service/core/Authenticator"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { WorkspaceSlug } from "@service/core/Ids"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import * as MarketMigrations from "@service/market-contract/MarketMigrations"
import * as McpHandler from "@service/mcp/McpHandler"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

const serverInfo = { name: "service-market", version: "0.1.0" } as const

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

const program = Effect.gen(function*() {
  const loaded = yield* DemoCorpus.ensureLoaded
  if (Option.isSome(loaded)) yield* Effect.logInfo(`Loaded the demo corpus (${loaded.value.publication.snapshotId})`)

  const apiKey = yield* Config.redacted("SERVICE_API_KEY")
  if (yield* Config.withDefault(Config.boolean("SERVICE_BOOTSTRAP_DEMO"), false)) yield* bootstrapDemo(apiKey)
  const authenticator = yield* Authenticator
  const principal = yield* authenticator.authenticate({ kind: "api_key", secret: apiKey }).pipe(
    Effect.mapError(() =>
      new Error("SERVICE_API_KEY is not a valid API key here (SERVICE_BOOTSTRAP_DEMO=1 registers it in a fresh data folder).")
    )
  )

  yield* Effect.logInfo(`Serving MCP on stdio for workspace ${principal.workspace.slug}`)
  yield* McpHandler.serveStdio({ ...serverInfo, principal })
})

// The database is migrated while it is built, so nothing reads it before its schema exists.
const DatabaseLive = Migrations.layer([CoreMigrations.migrations, MarketMigrations.migrations]).pipe(
  Layer.provideMerge(Database.layerFromConfig)
)

const AppLive = Layer.mergeAll(MarketLayer.layer, Accounts.layerSql).pipe(
  Layer.provideMerge(LocalKeys.layer),
  Layer.provideMerge(DatabaseLive)
)

// stdout belongs to the protocol: every log line goes to stderr.
const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false }))

program.pipe(
  Effect.provide(AppLive),
  Effect.tapErrorCause((cause) => Effect.logError("mcp-stdio stopped", cause)),
  Effect.provide(StderrLogger),
  NodeRuntime.runMain({ disablePrettyLogger: true, disableErrorReporting: true })
)
