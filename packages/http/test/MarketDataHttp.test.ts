import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, layer } from "@effect/vitest"
import { Accounts, layerSql as accountsLayer } from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import * as MarketMigrations from "@service/market-contract/MarketMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Api } from "../src/Api.js"
import * as HttpLayer from "../src/HttpLayer.js"

const API_KEY = "svc_key_test_http_0123456789abcdef"
const OTHER_KEY = "svc_key_test_other_0123456789abcdef"

/** Bootstraps two workspaces with one key each, and publishes the demo corpus. */
class Fixture extends Context.Tag("Fixture")<Fixture, { readonly scan: ReadonlyArray<string> }>() {}

const fixture = Layer.effect(
  Fixture,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    yield* DemoCorpus.loadAndPublish
    for (const [slug, key] of [["demo", API_KEY], ["other", OTHER_KEY]] as const) {
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(slug), name: slug })
      yield* accounts.issueCredential({
        workspaceId: workspace.id,
        kind: "api_key",
        label: "test",
        scopes: slug === "demo" ? ["market_data:read"] : ["topics:write"],
        secret: Redacted.make(key)
      })
    }
    return { scan: yield* forbiddenValues }
  }).pipe(Effect.orDie)
)

const base = "/api/v1/workspaces/demo/market-data"

for (const target of TestDatabase.targets()) {
  const Domain = Layer.mergeAll(MarketLayer.layer, accountsLayer).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )
  const Server = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpLayer.layer),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )
  const Env = Layer.mergeAll(Server, fixture).pipe(Layer.provideMerge(Domain))

  layer(Env, { timeout: "120 seconds" })(`HTTP market data on ${target.name}`, (it) => {
    const client = (key: string) =>
      HttpApiClient.make(Api, { transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", key)) })

    it.effect("serves search and get through the typed client with the full envelope", () =>
      Effect.gen(function*() {
        const api = yield* client(API_KEY)
        const search = yield* api.marketData.search_suppliers({
          path: { workspace: "demo" },
          payload: { state: "Zacatecas", scian_codes: ["212"], limit: 5 }
        })
        assert.strictEqual(search.schemaVersion, "market-data/domain/1")
        assert.strictEqual(search.operation, "search_suppliers")
        assert.isAbove(search.results.length, 0)
        assert.isNotNull(search.page)
        for (const key of ["schemaVersion", "requestId", "operation", "interpretedRequest", "results", "page", "coverage", "corpusBasis", "semanticWarnings", "provenance", "diagnostics"]) {
          assert.property(search, key)
        }
        const row = search.results[0]
        assert.isDefined(row)
        const detail = yield* api.marketData.get_supplier({ path: { workspace: "demo", recordRef: row?.record_ref ?? "" } })
        assert.strictEqual(detail.results.record_fingerprint, row?.record_fingerprint)
        assert.isNull(detail.page)
      }))

    it.effect("refuses tampered refs and cursors with the market_data block on the wire", () =>
      Effect.gen(function*() {
        const api = yield* client(API_KEY)
        const search = yield* api.marketData.search_suppliers({ path: { workspace: "demo" }, payload: { state: "Zacatecas", limit: 2 } })
        const ref = search.results[0]?.record_ref ?? ""
        const cursor = search.page?.nextCursor ?? ""
        for (let i = 0; i < ref.length; i += Math.max(1, Math.floor(ref.length / 12))) {
          const bad = ref.slice(0, i) + (ref[i] === "x" ? "y" : "x") + ref.slice(i + 1)
          const result = yield* Effect.either(api.marketData.get_supplier({ path: { workspace: "demo", recordRef: bad } }))
          assert.isTrue(Either.isLeft(result))
          if (Either.isLeft(result)) {
            assert.strictEqual(result.left._tag, "MarketDataNotFound", JSON.stringify(result.left))
            if (result.left._tag === "MarketDataNotFound") {
              assert.strictEqual(result.left.market_data.semantic_code, "invalid_record_ref")
            }
          }
        }
        for (let i = 0; i < cursor.length; i += Math.max(1, Math.floor(cursor.length / 12))) {
          const bad = cursor.slice(0, i) + (cursor[i] === "x" ? "y" : "x") + cursor.slice(i + 1)
          const result = yield* Effect.either(
            api.marketData.search_suppliers({ path: { workspace: "demo" }, payload: { state: "Zacatecas", limit: 2, cursor: bad } })
          )
          assert.isTrue(Either.isLeft(result))
          if (Either.isLeft(result) && result.left._tag === "MarketDataBadRequest") {
            assert.strictEqual(result.left.market_data.semantic_code, "invalid_cursor")
            assert.strictEqual(result.left.market_data.recovery.action, "restart_without_cursor")
          } else {
            assert.fail("expected MarketDataBadRequest")
          }
        }
      }))

    it.effect("answers 401 without a hint, and 404 for another workspace's slug", () =>
      Effect.gen(function*() {
        const bad = yield* client("svc_key_unknown_000000000000")
        const result = yield* Effect.either(bad.marketData.capabilities_compact({ path: { workspace: "demo" } }))
        assert.isTrue(Either.isLeft(result) && result.left._tag === "Unauthorized")
        const other = yield* client(OTHER_KEY)
        const cross = yield* Effect.either(other.marketData.capabilities_compact({ path: { workspace: "demo" } }))
        assert.isTrue(Either.isLeft(cross) && cross.left._tag === "WorkspaceNotFound")
        const forbidden = yield* Effect.either(other.marketData.capabilities_compact({ path: { workspace: "other" } }))
        assert.isTrue(Either.isLeft(forbidden) && forbidden.left._tag === "Forbidden")
      }))

    it.effect("shapes 404, 405, structural validation and leaks nothing", () =>
      Effect.gen(function*() {
        const http = (yield* HttpClient.HttpClient).pipe(
          HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", API_KEY))
        )
        const { scan } = yield* Fixture
        const bodies: Array<string> = []
        const send = (request: HttpClientRequest.HttpClientRequest) =>
          Effect.gen(function*() {
            const response = yield* http.execute(request)
            const text = yield* response.text
            bodies.push(text)
            return { status: response.status, headers: response.headers, body: JSON.parse(text) as unknown }
          })

        const notFound = yield* send(HttpClientRequest.get(`${base}/nothing/here`))
        assert.strictEqual(notFound.status, 404)
        assert.deepInclude(notFound.body, { statusCode: 404, code: "NOT_FOUND", documentation_url: `${base}/capabilities` })

        const wrongVerb = yield* send(HttpClientRequest.get(`${base}/suppliers/search`))
        assert.strictEqual(wrongVerb.status, 405)
        assert.strictEqual(wrongVerb.headers["allow"], "POST")
        assert.deepInclude(wrongVerb.body, { allowed_methods: ["POST"] })

        const badMode = yield* send(
          HttpClientRequest.post(`${base}/suppliers/search`).pipe(HttpClientRequest.bodyUnsafeJson({ state: "CDMX", query_mode: "fuzzy" }))
        )
        assert.strictEqual(badMode.status, 400)
        assert.deepInclude(badMode.body, { code: "VALIDATION_FAILED" })
        const block = (badMode.body as { market_data: { allowed_values: Array<string>; semantic_code: string } }).market_data
        assert.strictEqual(block.semantic_code, "invalid_field_value")
        assert.deepStrictEqual(block.allowed_values, ["auto", "exact_phrase", "all_terms", "any_terms"])

        const unknownProperty = yield* send(
          HttpClientRequest.post(`${base}/suppliers/search`).pipe(HttpClientRequest.bodyUnsafeJson({ state: "CDMX", sql: "select 1" }))
        )
        assert.strictEqual(unknownProperty.status, 400)
        const unknownBlock = (unknownProperty.body as { market_data: { field: string; allowed_values: Array<string> } }).market_data
        assert.strictEqual(unknownBlock.field, "sql")
        assert.includeMembers(unknownBlock.allowed_values, ["query", "state", "scian_codes", "rfc", "limit", "query_mode", "cursor", "source_slugs"])

        const tooBroad = yield* send(HttpClientRequest.post(`${base}/suppliers/search`).pipe(HttpClientRequest.bodyUnsafeJson({})))
        assert.strictEqual(tooBroad.status, 400)
        assert.strictEqual((tooBroad.body as { market_data: { semantic_code: string } }).market_data.semantic_code, "query_too_broad")

        // Every response body of this test file so far, and a broad read, must carry no source identity or contact.
        const wide = yield* send(
          HttpClientRequest.post(`${base}/suppliers/search`).pipe(HttpClientRequest.bodyUnsafeJson({ state: "CDMX", limit: 50 }))
        )
        assert.strictEqual(wide.status, 200)
        for (const state of ["Zacatecas", "Sonora", "Aguascalientes", "Chihuahua", "Coahuila"]) {
          yield* send(HttpClientRequest.post(`${base}/suppliers/search`).pipe(HttpClientRequest.bodyUnsafeJson({ state, limit: 50 })))
        }
        yield* send(HttpClientRequest.get(`${base}/capabilities`))
        yield* send(HttpClientRequest.get(`${base}/coverage`))
        const openapi = yield* http.execute(HttpClientRequest.get("/openapi.json"))
        assert.strictEqual(openapi.status, 200)
        assert.isAbove(scan.length, 100)
        for (const body of bodies) {
          for (const needle of scan) {
            assert.notInclude(body, needle, `a response leaked "${needle}"`)
          }
        }
      }))
  })
}
