/**
 * The market domain over a test database with the demo corpus (a copy of the run's prepared one), two workspaces
 * with a key each, and the HTTP surface of the given groups on a real listening server (one per test file).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import type * as Operation from "@service/core/Operation"
import type { Caller } from "@service/core/RequestContext"
import * as RateLimiter from "@service/core/RateLimiter"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import type * as MarketOperations from "@service/market-contract/Operations"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import * as HttpLayer from "../../src/HttpLayer.js"

/** A `demo` workspace key with the market_data:read scope. */
export const KEY = "svc_key_test_http_0123456789abcdef"
/** An `other` workspace key without any market scope. */
export const OTHER_KEY = "svc_key_test_other_0123456789abcdef"

export class Fixture extends Context.Tag("Fixture")<Fixture, {
  /** Source identities and contact coordinates no response may carry. */
  readonly scan: ReadonlyArray<string>
  readonly workspaceId: string
}>() {}

const prepared = Layer.effect(
  Fixture,
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    let workspaceId = ""
    for (const [slug, key] of [["demo", KEY], ["other", OTHER_KEY]] as const) {
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(slug), name: slug })
      if (slug === "demo") workspaceId = workspace.id
      yield* accounts.issueCredential({
        workspaceId: workspace.id,
        kind: "api_key",
        label: "test",
        scopes: slug === "demo" ? ["market_data:read"] : ["topics:write"],
        secret: Redacted.make(key)
      })
    }
    return { scan: yield* forbiddenValues, workspaceId }
  }).pipe(Effect.orDie)
)

/** The HTTP surface of `groups` on a listening server, over the market domain on `target`. */
export const layer = (target: TestDatabase.TestDatabaseTarget, groups: ReadonlyArray<Operation.Group<MarketOperations.Requirements | Meter.Meter | Caller>>) => {
  const domain = Layer.mergeAll(MarketLayer.layer, Accounts.layerSql, Meter.layerSql, RateLimiter.layerSql).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.prepared(target, DemoSnapshot.market)),
    Layer.orDie
  )
  const server = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpLayer.layer(groups)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  return Layer.mergeAll(server, prepared).pipe(Layer.provideMerge(domain), Layer.orDie)
}
