import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Corpus, SourceDefinition } from "../src/Corpus.js"
import type { LoadItem } from "../src/internal/records.js"
import { denueParser } from "../src/internal/denueParser.js"
import * as Loader from "../src/Loader.js"
import { MarketData } from "../src/MarketData.js"
import * as MarketLayer from "../src/MarketLayer.js"
import * as MarketMigrations from "../src/MarketMigrations.js"

const mining = new URL("../../../data/mx/suppliers/denue_inegi_21_mineria_sample.csv", import.meta.url).pathname
const restaurants = new URL("../../../data/mx/suppliers/denue_api_cdmx_restaurantes_sample.csv", import.meta.url).pathname

const supplierRows = (snapshotId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations WHERE snapshot_id = ${snapshotId}`.pipe(
      Effect.map((rows) => rows[0]?.n ?? -1)
    ))

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )

  layer(Env, { timeout: "120 seconds" })(`Loader and publications on ${target.name}`, (it) => {
    it.effect("loading the same file twice into one snapshot changes nothing", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
        const first = yield* Loader.loadFile(denueParser, mining, { snapshotId, retrievedOn: "2018-11-27" })
        assert.strictEqual(first.accepted, 2000)
        assert.strictEqual(first.inserted, 2000)
        const second = yield* Loader.loadFile(denueParser, mining, { snapshotId, retrievedOn: "2018-11-27" })
        assert.strictEqual(second.accepted, 2000)
        assert.strictEqual(second.inserted, 0)
        assert.strictEqual(yield* supplierRows(snapshotId), 2000)
        yield* corpus.publish(snapshotId)
      }))

    it.effect("a new snapshot starts from the active publication; publishing retires the old rows", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const before = yield* corpus.active
        assert.isTrue(before._tag === "Some")
        const oldId = before._tag === "Some" ? before.value.snapshotId : ""
        const snapshotId = yield* corpus.loadingSnapshot
        assert.notStrictEqual(snapshotId, oldId)
        assert.strictEqual(yield* supplierRows(snapshotId), 2000)
        const added = yield* Loader.loadFile(denueParser, restaurants, { snapshotId, retrievedOn: "2019-05-25" })
        assert.strictEqual(added.inserted, 6)
        // Until publish, readers still see the old publication.
        const market = yield* MarketData
        const stillOld = yield* market.searchSuppliers({ state: "CDMX", limit: 50 })
        assert.strictEqual(stillOld.corpusBasis.snapshotId, oldId)
        yield* corpus.publish(snapshotId)
        const now = yield* market.searchSuppliers({ state: "CDMX", limit: 50 })
        assert.strictEqual(now.corpusBasis.snapshotId, snapshotId)
        assert.isTrue(now.results.some((r) => r.municipality?.code === "09014"))
        assert.strictEqual(yield* supplierRows(oldId), 0)
        assert.strictEqual(yield* supplierRows(snapshotId), 2006)
        const coverage = yield* corpus.coverage(snapshotId)
        assert.deepStrictEqual(
          coverage.map((c) => [c.recordKind, c.sourceSlug, c.rowCount, c.visibleRows]),
          [["supplier_observation", "inegi_denue", 2006, 2006]]
        )
      }))

    it.effect("rejects are logged with file, line and reason, and counted", () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "loader-"))
        const path = join(dir, "denue_broken.csv")
        const original = readFileSync(mining, "utf8")
        const [header = "", row1 = "", row2 = ""] = original.split("\n")
        // Line 3 loses its name (nom_estab is the second column).
        const broken = row2.replace(/^("[^"]*"),("[^"]*")/, "$1,\"\"")
        writeFileSync(path, [header, row1, broken, ""].join("\n"))
        const corpus = yield* Corpus
        const snapshotId = yield* corpus.loadingSnapshot
        const report = yield* Loader.loadFile(denueParser, path, { snapshotId, retrievedOn: "2018-11-27" })
        assert.strictEqual(report.accepted, 1)
        assert.strictEqual(report.rejected, 1)
        assert.strictEqual(report.rejects[0]?.line, 3)
        const logged = yield* corpus.rejects(snapshotId, 10)
        assert.deepStrictEqual(logged.map((r) => [r.fileName, r.line]), [["denue_broken.csv", 3]])
        assert.isAbove(logged[0]?.reason.length ?? 0, 5)
      }))

    it.effect("a source not licensed for display contributes no visible rows and no search results", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const market = yield* MarketData
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
        const report = yield* Loader.loadItems({
          source: hidden,
          kind: "test",
          label: "restricted.csv",
          items: Stream.make<[LoadItem, LoadItem]>({ _tag: "SupplierObservation", line: 2, record }, { _tag: "Accepted", line: 2 }),
          snapshotId,
          retrievedOn: "2026-01-01"
        })
        assert.strictEqual(report.inserted, 1)
        yield* corpus.publish(snapshotId)
        const coverage = (yield* corpus.coverage(snapshotId)).find((c) => c.sourceSlug === "restricted_directory")
        assert.deepInclude(coverage, { rowCount: 1, visibleRows: 0, licensedForDisplay: false })
        const search = yield* market.searchSuppliers({ rfc: "RES010101AB1" })
        assert.strictEqual(search.results.length, 0)
        const declared = search.coverage.find((c) => c.evidenceCategory === "supplier_or_organization_evidence")
        assert.strictEqual(declared?.sourceCount, 1)
      }))

    it.effect("a publication past its freshness bound answers serving_projection_stale", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const market = yield* MarketData
        const snapshotId = yield* corpus.loadingSnapshot
        yield* corpus.setFreshness(snapshotId, 3600)
        yield* corpus.publish(snapshotId)
        const fresh = yield* market.searchSuppliers({ state: "Zacatecas", limit: 1 })
        assert.isNotNull(fresh.corpusBasis.freshUntil)
        yield* TestClock.adjust("2 hours")
        const stale = yield* Effect.either(market.searchSuppliers({ state: "Zacatecas", limit: 1 }))
        assert.isTrue(Either.isLeft(stale) && stale.left.semanticCode === "serving_projection_stale")
        assert.isTrue(Either.isLeft(stale) && stale.left.retryable)
      }))
  })
}
