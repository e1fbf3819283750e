import { assert, layer } from "@effect/vitest"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as CoreMigrations from "@service/core/CoreMigrations"
import type * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Operations from "../src/Operations.js"
import * as Suppliers from "../src/Suppliers.js"
import { countSuppliers } from "../src/SupplierCount.js"

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left.semanticCode : "succeeded"))

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `count_suppliers before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses before anything is published", () =>
        Effect.gen(function*() {
          assert.strictEqual(yield* refusalCode(countSuppliers({ state: "Zacatecas" })), "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`count_suppliers on ${target.name}`, (it) => {
    it.effect("counts exactly the observations a search pages through, with page null and {count}", () =>
      Effect.gen(function*() {
        const filters = { state: "zacatecas", scian_codes: ["212"] }
        let seen = 0
        let cursor: string | undefined
        do {
          const page = yield* Suppliers.searchSuppliers({ ...filters, limit: 50, ...(cursor === undefined ? {} : { cursor }) })
          seen += page.results.length
          cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
        } while (cursor !== undefined)
        assert.isAbove(seen, 0)
        const counted = yield* countSuppliers(filters)
        assert.strictEqual(counted.results.count, seen)
        assert.strictEqual(counted.operation, "count_suppliers")
        assert.isNull(counted.page)
        assert.strictEqual(counted.diagnostics.rowsExamined, seen)
        // Same normalizations as search: the state name was resolved to its code.
        assert.deepStrictEqual(counted.interpretedRequest.normalizations.map((n) => n.field), ["state"])
        assert.include(counted.semanticWarnings.map((w) => w.code), "observation_not_company")
      }), 0)

    it.effect("applies the same narrowing refusals as search", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(countSuppliers({})), "query_too_broad")
        assert.strictEqual(yield* refusalCode(countSuppliers({ state: "Narnia" })), "unknown_state")
        assert.strictEqual(yield* refusalCode(countSuppliers({ rfc: "not-an-rfc" })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(countSuppliers({ query: "minera" })), "query_not_selective")
        assert.strictEqual(yield* refusalCode(countSuppliers({ source_slugs: ["nope"] })), "unknown_filter_value")
        const narrowed = yield* countSuppliers({ query: "minera", state: "Zacatecas" })
        assert.isAbove(narrowed.results.count, 0)
      }))

    it.effect("answers zero as an answer when the corpus covers suppliers", () =>
      Effect.gen(function*() {
        const none = yield* countSuppliers({ rfc: "XAXX010101000" })
        assert.strictEqual(none.results.count, 0)
        assert.include(none.semanticWarnings.map((w) => w.code), "zero_results_with_coverage")
      }))

    it.effect("is declared like search: metered, not paginated, model input without source_slugs", () =>
      Effect.gen(function*() {
        const op = Operations.countSuppliers
        assert.isTrue(op.metered)
        assert.isFalse(op.paginates)
        assert.include(op.refuses, "market_data_timeout")
        assert.include(Operations.group.operations.map((o) => o.name), "count_suppliers")
        assert.strictEqual(yield* refusalCode(op.runModel({ state: "Zacatecas", source_slugs: ["x"] })), "invalid_field_value")
        const encoded = yield* op.runModel(op.capability.example)
        assert.deepStrictEqual(Object.keys(encoded.results), ["count"])
      }))
  })
}
