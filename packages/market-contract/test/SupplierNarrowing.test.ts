import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as MarketLayer from "../src/MarketLayer.js"
import { countSuppliers } from "../src/SupplierCount.js"
import * as Suppliers from "../src/Suppliers.js"

// Drops one inner letter and the accents: "Fresnillo" -> "fresnilo".
const misspell = (name: string) => {
  const plain = name.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()
  const at = Math.floor(plain.length / 2)
  return plain.slice(0, at) + plain.slice(at + 1)
}

for (const target of TestDatabase.targets()) {
  const Services = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.prepared(target, DemoSnapshot.market))
  )

  layer(Services, { timeout: "180 seconds" })(`supplier narrowing by municipality on ${target.name}`, (it) => {
    it.effect("a misspelled municipality resolves to its canonical name, is reported, and search and count agree", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // The municipality with the most published observations, whose name is at least 7 letters long.
        const top = yield* sql<{ code: string; name: string; state_code: string; n: number }>`
          SELECT m.code, m.name, m.state_code, count(*)::int AS n
          FROM market.supplier_observations o JOIN market.municipalities m ON m.code = o.municipality_code
          WHERE length(m.name) >= 7
          GROUP BY m.code, m.name, m.state_code ORDER BY count(*) DESC, m.code LIMIT 1`
        const municipality = top[0]
        assert.isDefined(municipality)
        if (municipality === undefined) return
        const spelled = misspell(municipality.name)
        const counted = yield* countSuppliers({ municipality: spelled, state: municipality.state_code })
        assert.strictEqual(counted.results.count, municipality.n)
        const normalization = counted.interpretedRequest.normalizations.find((n) => n.field === "municipality")
        assert.strictEqual(normalization?.from, spelled)
        assert.strictEqual(normalization?.to, municipality.name)
        assert.deepStrictEqual(counted.interpretedRequest.request["municipality"], { name: municipality.name, codes: [municipality.code] })

        let seen = 0
        let cursor: string | undefined
        do {
          const page = yield* Suppliers.searchSuppliers({
            municipality: spelled,
            state: municipality.state_code,
            limit: 50,
            ...(cursor === undefined ? {} : { cursor })
          })
          for (const row of page.results) assert.strictEqual(row.municipality?.code, municipality.code)
          seen += page.results.length
          cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
        } while (cursor !== undefined)
        assert.strictEqual(seen, municipality.n)
      }), 0)

    it.effect("municipality alone narrows; a name shared by several states selects them all unless a state is given", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const shared = yield* sql<{ name: string; states: number }>`
          SELECT name, count(*)::int AS states FROM market.municipalities WHERE name = 'Guadalupe' GROUP BY name`
        assert.isAbove(shared[0]?.states ?? 0, 1)
        const everywhere = yield* countSuppliers({ municipality: "guadalupe" })
        const request = everywhere.interpretedRequest.request["municipality"]
        assert.isTrue(typeof request === "object" && request !== null && "codes" in request && Array.isArray(request.codes) &&
          request.codes.length === shared[0]?.states)
        assert.match(everywhere.interpretedRequest.normalizations[0]?.to ?? "", /municipalities of that name/)
        const inZacatecas = yield* countSuppliers({ municipality: "Guadalupe", state: "Zacatecas" })
        assert.deepStrictEqual(inZacatecas.interpretedRequest.request["municipality"], { name: "Guadalupe", codes: ["32017"] })
        assert.isAtMost(inZacatecas.results.count, everywhere.results.count)
      }))

    it.effect("a name that is no municipality is refused with unknown_filter_value and suggestions", () =>
      Effect.gen(function*() {
        const refusal = yield* Effect.flip(countSuppliers({ municipality: "Qwxzv Plk", state: "Zacatecas" }))
        assert.strictEqual(refusal.semanticCode, "unknown_filter_value")
        assert.strictEqual(refusal.field, "municipality")
        const close = yield* Effect.flip(Suppliers.searchSuppliers({ municipality: "Fresnillo", state: "Sonora" }))
        assert.strictEqual(close.semanticCode, "unknown_filter_value")
      }))

    it.effect("words that are all stop words are refused on query, every time and in every mode; one real word is searched", () =>
      Effect.gen(function*() {
        // Asked twice per mode: the second answer comes from the service's memory of the first (decision 0084).
        for (const mode of ["auto", "all_terms", "any_terms", "exact_phrase"] as const) {
          for (let i = 0; i < 2; i++) {
            const refusal = yield* Effect.flip(Suppliers.searchSuppliers({ query: "de la y el", query_mode: mode, state: "Zacatecas" }))
            assert.strictEqual(refusal.semanticCode, "invalid_field_value")
            assert.strictEqual(refusal.field, "query")
          }
        }
        const sql = yield* SqlClient.SqlClient
        const word = yield* sql<{ word: string }>`
          SELECT split_part(name_norm, ' ', 1) AS word FROM market.supplier_observations
          WHERE state_code = '32' AND length(split_part(name_norm, ' ', 1)) >= 6 ORDER BY id LIMIT 1`
        const first = word[0]?.word
        assert.isDefined(first)
        if (first === undefined) return
        for (let i = 0; i < 2; i++) {
          const page = yield* Suppliers.searchSuppliers({ query: `de la ${first}`, state: "Zacatecas" })
          assert.isAbove(page.results.length, 0)
        }
      }))
  })
}
