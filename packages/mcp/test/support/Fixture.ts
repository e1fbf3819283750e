/**
 * What the MCP tests share: the market services over a test database with the demo corpus (a copy of the run's
 * prepared one), metering and rate limits; principals in workspaces of their own (usage rows need a real
 * workspace); and the two official client generations connected in process to a web handler.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import { Principal, type Scope } from "@service/core/Principal"
import * as RateLimiter from "@service/core/RateLimiter"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope_ from "effect/Scope"
import type * as McpHandler from "../../src/McpHandler.js"

/** The market services, accounts, meter and rate limiter over a migrated database with the demo corpus. */
export const layerFor = (target: TestDatabase.TestDatabaseTarget) =>
  Layer.mergeAll(MarketLayer.layer, Accounts.layerSql, Meter.layerSql, RateLimiter.layerSql).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.prepared(target, DemoSnapshot.market)),
    Layer.orDie
  )

let workspaces = 0

/**
 * A principal in a workspace of its own, so usage and rate windows of one test never mix with another's.
 */
export const principalWith = (scopes: ReadonlyArray<Scope>) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    workspaces += 1
    const slug = WorkspaceSlug.make(`mcp-test-${workspaces}-${globalThis.crypto.randomUUID().slice(0, 8)}`)
    const workspace = yield* accounts.createWorkspace({ slug, name: slug }).pipe(Effect.orDie)
    return new Principal({
      workspace,
      person: Option.none(),
      role: "member",
      scopes,
      credential: { id: CredentialId.make("key_test"), kind: "api_key" }
    })
  })

/** The units metered for the principal's workspace, summed over operations and days. */
export const meteredUnits = (principal: Principal) =>
  Effect.flatMap(Meter.Meter, (meter) => meter.usage(principal.workspace.id)).pipe(
    Effect.map((rows) => rows.reduce((sum, row) => sum + row.units, 0))
  )

/** The client's fetch goes straight to the web handler, no socket. */
export const inProcessFetch = (web: McpHandler.WebHandler, principal: Principal) => (url: string | URL, init?: RequestInit) =>
  web.handle(new Request(url, init), principal)

const endpoint = new URL("http://mcp.test/mcp")

/** The 2.x client: `auto` negotiates 2026-07-28, `legacy` the 2025 era. */
export const connectV2 = (
  web: McpHandler.WebHandler,
  principal: Principal,
  mode: "auto" | "legacy"
): Effect.Effect<Client, never, Scope_.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "test-client-v2", version: "0.0.0" }, { versionNegotiation: { mode } })
      await client.connect(new StreamableHTTPClientTransport(endpoint, { fetch: inProcessFetch(web, principal) }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** The 1.x client (`@modelcontextprotocol/sdk`): 2025-era only. Its transport tells the negotiated version. */
export const connectV1 = (
  web: McpHandler.WebHandler,
  principal: Principal
): Effect.Effect<{ readonly client: ClientV1; readonly transport: StreamableHTTPClientTransportV1 }, never, Scope_.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new ClientV1({ name: "test-client-v1", version: "0.0.0" })
      const transport = new StreamableHTTPClientTransportV1(endpoint, { fetch: inProcessFetch(web, principal) })
      await client.connect(transport)
      return { client, transport }
    }),
    ({ client }) => Effect.promise(() => client.close())
  )

/** A web handler closed with the scope. */
export const acquireWebHandler = <E, R>(make: Effect.Effect<McpHandler.WebHandler, E, R>) =>
  Effect.acquireRelease(make, (handler) => Effect.promise(() => handler.close()))
