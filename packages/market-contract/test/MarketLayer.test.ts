import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import { Corpus, SourceDefinition } from "@service/market-warehouse/Corpus"
import * as DataFiles from "@service/market-warehouse/DataFiles"
import * as WarehouseCategory from "@service/market-warehouse/EvidenceCategory"
import * as Loader from "@service/market-warehouse/Loader"
import type { LoadItem } from "@service/market-warehouse/Loader"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as Parsers from "@service/market-warehouse/Parsers"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Envelope from "../src/Envelope.js"
import * as Suppliers from "../src/Suppliers.js"
import * as MarketLayer from "../src/MarketLayer.js"

const mining = DataFiles.path("suppliers/denue_inegi_21_mineria_sample.csv")
const restaurants = DataFiles.path("suppliers/denue_api_cdmx_restaurantes_sample.csv")

const denue = Effect.suspend(() => {
  const parser = Parsers.byKind("denue")
  return parser === undefined ? Effect.dieMessage("no denue parser") : Effect.succeed(parser)
})

describe("the contract over the warehouse", () => {
  it("serves the warehouse's evidence categories, no more and no fewer", () => {
    // Envelope declares the wire vocabulary; the warehouse stores it per source and coverage row.
    assert.deepStrictEqual([...Envelope.EvidenceCategory.literals], [...WarehouseCategory.EvidenceCategory.literals])
  })
})

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )

  layer(Env, { timeout: "120 seconds" })(`MarketData reads through the warehouse read port on ${target.name}`, (it) => {
    it.effect("answers from the active publication; a loading snapshot is invisible until published", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const parser = yield* denue
        const first = yield* corpus.beginSnapshot({ base: "empty" })
        yield* Loader.loadFile(parser, mining, { snapshotId: first, retrievedOn: "2018-11-27" })
        yield* corpus.publish(first)
        const next = yield* corpus.loadingSnapshot
        yield* Loader.loadFile(parser, restaurants, { snapshotId: next, retrievedOn: "2019-05-25" })
        const before = yield* Suppliers.searchSuppliers({ state: "CDMX", limit: 50 })
        assert.strictEqual(before.corpusBasis.snapshotId, first)
        yield* corpus.publish(next)
        const after = yield* Suppliers.searchSuppliers({ state: "CDMX", limit: 50 })
        assert.strictEqual(after.corpusBasis.snapshotId, next)
        assert.isTrue(after.results.some((r) => r.municipality?.code === "09014"))
      }))

    it.effect("a source not licensed for display gives no search results but is declared in coverage", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const snapshotId = yield* corpus.loadingSnapshot
        const hidden = new SourceDefinition({
          slug: "restricted_directory",
          label: "A directory licensed for internal use only",
          publisher: "Restricted publisher",
          licence: "internal use only",
          licensedForDisplay: false,
          evidenceCategory: "supplier_or_organization_evidence"
        })
        const record = {
          sourceRecordId: "r-1",
          name: "ESTABLECIMIENTO RESTRINGIDO UNICO",
          legalName: null,
          rfc: "RES010101AB1",
          scianCode: null,
          scianTitle: null,
          stateCode: "32",
          municipalityCode: null,
          employmentBand: null,
          establishmentType: null,
          incorporatedOn: null,
          hasPhone: false,
          hasEmail: false,
          hasWebsite: false,
          contact: { phone: null, email: null, website: null }
        }
        yield* Loader.loadItems({
          source: hidden,
          kind: "test",
          label: "restricted.csv",
          items: Stream.make<[LoadItem, LoadItem]>({ _tag: "SupplierObservation", line: 2, record }, { _tag: "Accepted", line: 2 }),
          snapshotId,
          retrievedOn: "2026-01-01"
        })
        yield* corpus.publish(snapshotId)
        const search = yield* Suppliers.searchSuppliers({ rfc: "RES010101AB1" })
        assert.strictEqual(search.results.length, 0)
        const declared = search.coverage.find((c) => c.evidenceCategory === "supplier_or_organization_evidence")
        // Only the licensed DENUE source counts: the restricted one adds neither rows nor a source.
        assert.strictEqual(declared?.sourceCount, 1)
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations
          WHERE snapshot_id = ${snapshotId} AND rfc = 'RES010101AB1'`
        assert.strictEqual(stored[0]?.n, 1)
      }))

    it.effect("a publication past its freshness bound answers serving_projection_stale", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const snapshotId = yield* corpus.loadingSnapshot
        yield* corpus.setFreshness(snapshotId, 3600)
        yield* corpus.publish(snapshotId)
        const fresh = yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 1 })
        assert.isNotNull(fresh.corpusBasis.freshUntil)
        yield* TestClock.adjust("2 hours")
        const stale = yield* Effect.either(Suppliers.searchSuppliers({ state: "Zacatecas", limit: 1 }))
        assert.isTrue(Either.isLeft(stale) && stale.left.semanticCode === "serving_projection_stale")
        assert.isTrue(Either.isLeft(stale) && stale.left.retryable)
      }))
  })
}
