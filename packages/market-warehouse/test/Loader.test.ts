import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Corpus, SourceDefinition } from "../src/Corpus.js"
import * as DataFiles from "../src/DataFiles.js"
import { denueParser } from "../src/internal/denueParser.js"
import type { LoadItem } from "../src/internal/records.js"
import * as Loader from "../src/Loader.js"
import * as MarketMigrations from "../src/MarketMigrations.js"
import * as WarehouseLayer from "../src/WarehouseLayer.js"
import { WarehouseReader } from "../src/WarehouseReader.js"

const mining = DataFiles.path("suppliers/denue_inegi_21_mineria_sample.csv")
const restaurants = DataFiles.path("suppliers/denue_api_cdmx_restaurantes_sample.csv")

const supplierRows = (snapshotId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations WHERE snapshot_id = ${snapshotId}`.pipe(
      Effect.map((rows) => rows[0]?.n ?? -1)
    ))

for (const target of TestDatabase.targets()) {
  const Env = WarehouseLayer.layer.pipe(
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
        // Until publish, the read port still answers the old publication.
        const reader = yield* WarehouseReader
        assert.strictEqual(Option.map(yield* reader.active, (p) => p.snapshotId).pipe(Option.getOrNull), oldId)
        yield* corpus.publish(snapshotId)
        assert.strictEqual(Option.map(yield* reader.active, (p) => p.snapshotId).pipe(Option.getOrNull), snapshotId)
        const benitoJuarez = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations
            WHERE snapshot_id = ${snapshotId} AND municipality_code = '09014'`)
        assert.isAbove(benitoJuarez[0]?.n ?? 0, 0)
        assert.strictEqual(yield* supplierRows(oldId), 0)
        assert.strictEqual(yield* supplierRows(snapshotId), 2006)
        const coverage = yield* reader.coverage(snapshotId)
        assert.deepStrictEqual(yield* corpus.coverage(snapshotId), coverage)
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

    it.effect("a source not licensed for display is counted in coverage with no visible rows", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const reader = yield* WarehouseReader
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
        const coverage = (yield* reader.coverage(snapshotId)).find((c) => c.sourceSlug === "restricted_directory")
        assert.deepInclude(coverage, {
          rowCount: 1,
          visibleRows: 0,
          licensedForDisplay: false,
          evidenceCategory: "supplier_or_organization_evidence"
        })
      }))

    it.effect("a publication carries its freshness bound to the read port", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const reader = yield* WarehouseReader
        const snapshotId = yield* corpus.loadingSnapshot
        yield* corpus.setFreshness(snapshotId, 3600)
        const published = yield* corpus.publish(snapshotId)
        assert.strictEqual(published.freshForSeconds, 3600)
        assert.deepStrictEqual(yield* reader.active, Option.some(published))
        // Only a loading snapshot takes a freshness bound.
        const refused = yield* Effect.flip(corpus.setFreshness(snapshotId, null))
        assert.strictEqual(refused._tag, "SnapshotNotLoading")
      }))
  })
}
