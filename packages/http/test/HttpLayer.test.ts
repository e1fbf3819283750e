import * as OpenApi from "@effect/platform/OpenApi"
import { assert, layer } from "@effect/vitest"
import * as AccountOperations from "@service/core/AccountOperations"
import * as Leaks from "@service/core/Leaks"
import { Meter } from "@service/core/Meter"
import type * as Operation from "@service/core/Operation"
import type { Caller } from "@service/core/RequestContext"
import * as MarketOperations from "@service/market-contract/Operations"
import * as TestDatabase from "@service/storage/TestDatabase"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as Effect from "effect/Effect"
import * as GroupApi from "../src/GroupApi.js"
import * as RootIndex from "../src/RootIndex.js"
import * as MarketFixture from "./support/MarketFixture.js"
import * as RawHttp from "./support/RawHttp.js"

const base = "/api/v1/workspaces/demo/market-data"
// What the server under test serves: market data and the account's credits.
const groups: ReadonlyArray<Operation.Group<MarketOperations.Requirements | Meter | Caller>> = [MarketOperations.group, AccountOperations.group]

const str = (value: unknown): string => (typeof value === "string" ? value : "")
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

for (const target of TestDatabase.targets()) {
  layer(MarketFixture.layer(target, groups), { timeout: "180 seconds", excludeTestServices: true })(
    `market data over HTTP on ${target.name}`,
    (it) => {
      const bodies: Array<string> = []
      const send = (request: RawHttp.Request) =>
        Effect.gen(function*() {
          const answer = yield* RawHttp.send(yield* RawHttp.port, request)
          bodies.push(answer.text)
          return answer
        })
      const get = (path: string, key = MarketFixture.KEY) => send({ method: "GET", path, headers: { "x-api-key": key } })
      const post = (path: string, body: unknown, key = MarketFixture.KEY) =>
        send({ method: "POST", path, headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) })

      it.effect("serves search and get with the full envelope, and meters them", () =>
        Effect.gen(function*() {
          const search = yield* post(`${base}/suppliers/search`, { state: "Zacatecas", scian_codes: ["212"], limit: 5 })
          assert.strictEqual(search.status, 200, search.text.slice(0, 500))
          for (const key of ["schemaVersion", "requestId", "operation", "interpretedRequest", "results", "page", "coverage", "corpusBasis", "semanticWarnings", "provenance", "diagnostics"]) {
            assert.property(search.json, key)
          }
          assert.strictEqual(RawHttp.field(search.json, "schemaVersion"), "market-data/domain/1")
          assert.strictEqual(RawHttp.field(search.json, "requestId"), search.headers["x-request-id"])
          const row = list(RawHttp.field(search.json, "results"))[0]
          const ref = str(RawHttp.field(row, "record_ref"))
          assert.isAbove(ref.length, 20)
          const detail = yield* get(`${base}/suppliers/~ref/${encodeURIComponent(ref)}`)
          assert.strictEqual(detail.status, 200, detail.text.slice(0, 500))
          assert.strictEqual(RawHttp.field(detail.json, "results", "record_fingerprint"), RawHttp.field(row, "record_fingerprint"))
          assert.isNull(RawHttp.field(detail.json, "page"))
          const capabilities = yield* get(`${base}/capabilities?facets=states`)
          assert.strictEqual(capabilities.status, 200)
          assert.deepStrictEqual(Object.keys(RawHttp.field(capabilities.json, "results", "observedValues") ?? {}), ["states"])
          const coverage = yield* get(`${base}/coverage`)
          assert.strictEqual(coverage.status, 200)
          const compact = yield* get(`${base}/capabilities/compact`)
          assert.strictEqual(compact.status, 200)
          const { workspaceId } = yield* MarketFixture.Fixture
          const usage = yield* Effect.flatMap(Meter, (meter) => meter.usage(workspaceId))
          const units = (operation: string) => usage.filter((u) => u.operation === operation).reduce((n, u) => n + u.units, 0)
          assert.isAtLeast(units("search_suppliers"), 1)
          assert.isAtLeast(units("get_supplier"), 1)
          assert.strictEqual(units("market_capabilities"), 0, "discovery is free")
        }))

      it.effect("refuses tampered refs and cursors with the market_data block and the rule's status", () =>
        Effect.gen(function*() {
          const search = yield* post(`${base}/suppliers/search`, { state: "Zacatecas", limit: 2 })
          const ref = str(RawHttp.field(list(RawHttp.field(search.json, "results"))[0], "record_ref"))
          const cursor = str(RawHttp.field(search.json, "page", "nextCursor"))
          assert.isAbove(cursor.length, 10)
          for (let i = 0; i < ref.length; i += Math.max(1, Math.floor(ref.length / 6))) {
            const bad = ref.slice(0, i) + (ref[i] === "x" ? "y" : "x") + ref.slice(i + 1)
            const refused = yield* get(`${base}/suppliers/~ref/${encodeURIComponent(bad)}`)
            assert.strictEqual(refused.status, 404, refused.text)
            assert.deepInclude(refused.json, { statusCode: 404, code: "VALIDATION_FAILED" })
            assert.strictEqual(RawHttp.field(refused.json, "market_data", "semantic_code"), "invalid_record_ref")
          }
          for (let i = 0; i < cursor.length; i += Math.max(1, Math.floor(cursor.length / 6))) {
            const bad = cursor.slice(0, i) + (cursor[i] === "x" ? "y" : "x") + cursor.slice(i + 1)
            const refused = yield* post(`${base}/suppliers/search`, { state: "Zacatecas", limit: 2, cursor: bad })
            assert.strictEqual(refused.status, 400)
            assert.strictEqual(RawHttp.field(refused.json, "market_data", "semantic_code"), "invalid_cursor")
            assert.strictEqual(RawHttp.field(refused.json, "market_data", "recovery", "action"), "restart_without_cursor")
          }
        }))

      it.effect("401 with a challenge, 404 for another workspace's slug, 403 without the scope", () =>
        Effect.gen(function*() {
          const unknown = yield* get(`${base}/capabilities/compact`, "svc_key_unknown_000000000000")
          assert.strictEqual(unknown.status, 401)
          assert.match(str(unknown.headers["www-authenticate"]), /^Bearer realm="service", ApiKey/)
          const cross = yield* get(`${base}/capabilities/compact`, MarketFixture.OTHER_KEY)
          assert.strictEqual(cross.status, 404)
          assert.deepInclude(cross.json, { code: "NOT_FOUND" })
          const forbidden = yield* get("/api/v1/workspaces/other/market-data/capabilities/compact", MarketFixture.OTHER_KEY)
          assert.strictEqual(forbidden.status, 403)
          assert.deepInclude(forbidden.json, { code: "FORBIDDEN" })
          // A good key beside a bad bearer token (or the other way round) is refused: two credentials are none.
          for (const headers of [
            { "x-api-key": MarketFixture.KEY, authorization: "Bearer not-a-token" },
            { "x-api-key": "svc_key_unknown_000000000000", authorization: `Bearer ${MarketFixture.KEY}` }
          ]) {
            const both = yield* send({ method: "GET", path: `${base}/capabilities/compact`, headers })
            assert.strictEqual(both.status, 401, both.text)
            assert.deepStrictEqual(RawHttp.field(both.json, "code"), unknown.json === undefined ? undefined : RawHttp.field(unknown.json, "code"))
          }
        }))

      it.effect("shapes 404, 405 and structural validation as the spec says", () =>
        Effect.gen(function*() {
          const notFound = yield* get(`${base}/nothing/here`)
          assert.strictEqual(notFound.status, 404)
          assert.deepInclude(notFound.json, { statusCode: 404, code: "NOT_FOUND", documentation_url: `${base}/capabilities` })
          assert.deepStrictEqual(RawHttp.field(notFound.json, "endpoint"), { method: "GET", path: `${base}/nothing/here` })
          assert.deepStrictEqual(
            list(RawHttp.field(notFound.json, "operations")).map((op) => RawHttp.field(op, "operation")),
            MarketOperations.group.operations.map((op) => op.name)
          )

          // A path segment longer than the router takes is the operation's structural refusal, never "GET is not
          // allowed here; use GET."
          const longRef = yield* get(`${base}/suppliers/~ref/${"A".repeat(5000)}`)
          assert.strictEqual(longRef.status, 400, longRef.text.slice(0, 300))
          assert.strictEqual(RawHttp.field(longRef.json, "market_data", "semantic_code"), "invalid_field_value")

          const wrongVerb = yield* get(`${base}/suppliers/search`)
          assert.strictEqual(wrongVerb.status, 405)
          assert.strictEqual(wrongVerb.headers["allow"], "POST")
          assert.deepInclude(wrongVerb.json, { allowed_methods: ["POST"] })

          const badMode = yield* post(`${base}/suppliers/search`, { state: "CDMX", query_mode: "fuzzy" })
          assert.strictEqual(badMode.status, 400)
          assert.deepInclude(badMode.json, { statusCode: 400, code: "VALIDATION_FAILED" })
          assert.strictEqual(RawHttp.field(badMode.json, "market_data", "semantic_code"), "invalid_field_value")
          assert.strictEqual(RawHttp.field(badMode.json, "market_data", "recovery", "action"), "fix_arguments")
          assert.deepStrictEqual(RawHttp.field(badMode.json, "market_data", "allowed_values"), ["auto", "exact_phrase", "all_terms", "any_terms"])

          const unknownProperty = yield* post(`${base}/suppliers/search`, { state: "CDMX", sql: "select 1" })
          assert.strictEqual(unknownProperty.status, 400)
          assert.strictEqual(RawHttp.field(unknownProperty.json, "market_data", "field"), "sql")
          assert.includeMembers(
            [...list(RawHttp.field(unknownProperty.json, "market_data", "allowed_values"))],
            ["query", "state", "scian_codes", "rfc", "limit", "query_mode", "cursor", "source_slugs"]
          )

          const outOfRange = yield* post(`${base}/suppliers/search`, { state: "CDMX", limit: 500 })
          assert.strictEqual(outOfRange.status, 400)
          assert.deepStrictEqual(RawHttp.field(outOfRange.json, "market_data", "allowed_range"), { minimum: 1, maximum: 50 })

          const tooBroad = yield* post(`${base}/suppliers/search`, {})
          assert.strictEqual(tooBroad.status, 400)
          assert.strictEqual(RawHttp.field(tooBroad.json, "market_data", "semantic_code"), "query_too_broad")

          const unknownFacet = yield* get(`${base}/capabilities?facets=nope`)
          assert.strictEqual(unknownFacet.status, 400)
          assert.strictEqual(RawHttp.field(unknownFacet.json, "market_data", "semantic_code"), "unknown_facet")
          const unknownQuery = yield* get(`${base}/coverage?sql=1`)
          assert.strictEqual(unknownQuery.status, 400)
          assert.strictEqual(RawHttp.field(unknownQuery.json, "market_data", "field"), "sql")
        }))

      it.effect("a NUL character never reaches the database; hostile values come back as excerpts", () =>
        Effect.gen(function*() {
          const nul = yield* post(`${base}/suppliers/search`, { state: "Zaca\u0000tecas" })
          assert.strictEqual(nul.status, 400, nul.text)
          assert.strictEqual(RawHttp.field(nul.json, "market_data", "field"), "state")
          const long = yield* post(`${base}/suppliers/search`, { state: "CDMX", query_mode: "x".repeat(100_000) })
          assert.strictEqual(long.status, 400)
          assert.isBelow(long.text.length, 2000)
        }))

      it.effect("serves the same OpenAPI document OpenApi.fromApi gives, valid as OpenAPI 3.1", () =>
        Effect.gen(function*() {
          const served = yield* get("/openapi.json")
          assert.strictEqual(served.status, 200)
          // The groups, and `GET /` (the index every HttpLayer serves).
          const root = RootIndex.mount({ groups, routes: [], openapiPath: "/openapi.json", docsPath: "/docs" })
          assert.deepStrictEqual(served.json, JSON.parse(JSON.stringify(OpenApi.fromApi(GroupApi.make(groups, { routes: [root] })))))
          const result = yield* Effect.promise(() => new Validator().validate(JSON.parse(served.text)))
          assert.isTrue(result.valid, JSON.stringify(result.errors))
          const docs = yield* send({ method: "GET", path: "/docs", headers: {} })
          assert.strictEqual(docs.status, 200)
          assert.match(str(docs.headers["content-type"]), /text\/html/)
        }))

      // No wall-clock budget: six states' pages are read and scanned; a loaded machine is slower, not wrong.
      it.effect("no response carries a source identity or a contact coordinate", () =>
        Effect.gen(function*() {
          for (const state of ["CDMX", "Zacatecas", "Sonora", "Aguascalientes", "Chihuahua", "Coahuila"]) {
            const wide = yield* post(`${base}/suppliers/search`, { state, limit: 50 })
            assert.strictEqual(wide.status, 200)
          }
          yield* get(`${base}/capabilities`)
          const { scan } = yield* MarketFixture.Fixture
          assert.isAbove(scan.length, 100)
          const leaked = Leaks.find(bodies, scan).flat()
          assert.deepStrictEqual(leaked, [], "a response leaked a source identity or a contact")
        }), 0)

      // Last: it empties the workspace's balance, then gives it back.
      it.effect("a workspace out of credits gets 402 credits_exhausted before anything runs; discovery and usage stay free", () =>
        Effect.gen(function*() {
          const { workspaceId } = yield* MarketFixture.Fixture
          const before = yield* get("/api/v1/workspaces/demo/account/usage")
          assert.strictEqual(before.status, 200, before.text)
          const balance = Number(RawHttp.field(before.json, "balance"))
          assert.isAbove(balance, 0)
          const searches = list(RawHttp.field(before.json, "consumption")).find((c) => RawHttp.field(c, "operation") === "search_suppliers")
          assert.isAtLeast(Number(RawHttp.field(searches, "calls")), 1)
          // Spent through the Meter: a node trusts the balance it read for a moment (decision 0080), so a write
          // behind its back would be seen only then.
          yield* Effect.flatMap(Meter, (meter) => meter.charge({ workspaceId, operation: "test_spend", requestId: "req_spend_all", credits: balance }))
          const refused = yield* post(`${base}/suppliers/search`, { state: "Zacatecas", limit: 2 })
          assert.strictEqual(refused.status, 402, refused.text)
          assert.deepInclude(refused.json, { statusCode: 402, code: "CREDITS_EXHAUSTED", semantic_code: "credits_exhausted", balance: 0, price: 1 })
          assert.deepStrictEqual(RawHttp.field(refused.json, "recovery"), { action: "wait_for_allowance_or_add_credits" })
          assert.match(str(RawHttp.field(refused.json, "renews_on")), /^\d{4}-\d{2}-01$/)
          assert.strictEqual((yield* get(`${base}/capabilities/compact`)).status, 200)
          const after = yield* get("/api/v1/workspaces/demo/account/usage")
          assert.strictEqual(RawHttp.field(after.json, "balance"), 0)
          const refusedSearches = list(RawHttp.field(after.json, "consumption")).find((c) => RawHttp.field(c, "operation") === "search_suppliers")
          assert.strictEqual(RawHttp.field(refusedSearches, "refused_for_credits"), 1)
          yield* Effect.flatMap(Meter, (meter) => meter.grant({ workspaceId, credits: balance, note: "test restores the balance" }))
          assert.strictEqual((yield* post(`${base}/suppliers/search`, { state: "Zacatecas", limit: 2 })).status, 200)
        }))
    }
  )
}
