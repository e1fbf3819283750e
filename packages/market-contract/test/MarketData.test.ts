import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as Parsers from "@service/market-warehouse/Parsers"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Operations from "../src/Operations.js"
import * as SupplierCount from "../src/SupplierCount.js"
import * as Suppliers from "../src/Suppliers.js"

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left.semanticCode : "succeeded"))

/** Flips one character in the middle of a sealed value. */
const tamper = (value: string): string => {
  const i = Math.floor(value.length / 2)
  const c = value[i] === "A" ? "B" : "A"
  return value.slice(0, i) + c + value.slice(i + 1)
}

for (const target of TestDatabase.targets()) {
  const Db = TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])
  const Services = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(Db)
  )

  layer(Services, { timeout: "120 seconds" })(`MarketData on ${target.name}`, (it) => {
    it.effect("refuses every read before anything is published, saying when a load is under way", () =>
      Effect.gen(function*() {
        const refusal = () => Effect.flip(Suppliers.searchSuppliers({ state: "CDMX" }))
        const idle = yield* refusal()
        assert.strictEqual(idle.semanticCode, "serving_projection_unavailable")
        assert.include(idle.suggestedCorrection, "an operator must load and publish")
        // A load begins (the demo corpus on a first start): the same refusal says the corpus is on its way.
        yield* Effect.flatMap(Corpus.Corpus, (corpus) => corpus.loadingSnapshot)
        const loading = yield* refusal()
        assert.strictEqual(loading.semanticCode, "serving_projection_unavailable")
        assert.match(loading.why, /^The market corpus is being loaded \(0 files so far, since \d{4}-/)
        assert.notInclude(loading.suggestedCorrection, "operator")
      }))

    // No wall-clock budget: loading the demo corpus is slower on a loaded machine, not wrong.
    it.effect("loads the demo corpus: every file reconciles accepted plus rejected with its data rows", () =>
      Effect.gen(function*() {
        const { publication, reports } = yield* DemoCorpus.loadAndPublish
        assert.strictEqual(reports.length, DemoCorpus.files.length)
        for (const [i, report] of reports.entries()) {
          const file = DemoCorpus.files[i]
          const parser = file === undefined ? undefined : Parsers.byKind(file.kind)
          assert.isDefined(parser)
          if (file === undefined || parser === undefined) continue
          const rows = yield* parser.countDataRows(`${DemoCorpus.dataDirectory}${file.path}`)
          assert.strictEqual(report.accepted + report.rejected, rows, file.path)
          for (const reject of report.rejects) assert.isAbove(reject.reason.length, 5)
        }
        const denue = reports.filter((r) => r.kind === "denue").reduce((sum, r) => sum + r.accepted, 0)
        assert.strictEqual(denue, 2014)
        assert.isTrue(publication.snapshotId.startsWith("snap_"))
        const corpus = yield* Corpus.Corpus
        const kinds = new Set((yield* corpus.coverage(publication.snapshotId)).map((c) => c.recordKind))
        assert.deepStrictEqual([...kinds].sort(), ["award", "opportunity", "permit", "risk_mark", "supplier_observation"])
      }), 0)

    it.effect("requires a narrowing dimension and a selective text query", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Suppliers.searchSuppliers({ limit: 5 })), "query_too_broad")
        // "minera" alone matches hundreds of mining observations; with a state it is answered.
        assert.strictEqual(yield* refusalCode(Suppliers.searchSuppliers({ query: "minera" })), "query_not_selective")
        const answered = yield* Suppliers.searchSuppliers({ query: "minera", state: "Zacatecas", limit: 5 })
        assert.isAbove(answered.results.length, 0)
      }))

    it.effect("resolves state aliases and says so in normalizations", () =>
      Effect.gen(function*() {
        const envelope = yield* Suppliers.searchSuppliers({ state: "cdmx", limit: 10 })
        assert.strictEqual(envelope.schemaVersion, "market-data/domain/1")
        assert.strictEqual(envelope.interpretedRequest.request["state"], "09")
        assert.deepStrictEqual(envelope.interpretedRequest.normalizations.map((n) => n.field), ["state"])
        assert.isTrue(envelope.results.every((row) => row.state?.code === "09"))
        // The six API-layout restaurants in Benito Juárez are CDMX observations.
        assert.isTrue(envelope.results.some((row) => row.municipality?.code === "09014"))
        assert.strictEqual(yield* refusalCode(Suppliers.searchSuppliers({ state: "Distrto Federall" })), "unknown_state")
      }))

    it.effect("says that a state name, even spelled exactly, was resolved to its code; the code alone needs nothing said", () =>
      Effect.gen(function*() {
        // The spec's own example of a normalization: "Zacatecas" is read as 32.
        const zacatecas = { field: "state", from: "Zacatecas", to: "32 Zacatecas", reason: "state name resolved to its official code" }
        const searched = yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 1 })
        assert.deepStrictEqual(searched.interpretedRequest.normalizations, [zacatecas])
        const counted = yield* SupplierCount.countSuppliers({ state: "Zacatecas" })
        assert.deepStrictEqual(counted.interpretedRequest.normalizations, [zacatecas])
        const byCode = yield* Suppliers.searchSuppliers({ state: "32", limit: 1 })
        assert.deepStrictEqual(byCode.interpretedRequest.normalizations, [])
      }))

    it.effect("validates RFCs before reading", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Suppliers.searchSuppliers({ rfc: "NOT-AN-RFC" })), "invalid_field_value")
        const envelope = yield* Suppliers.searchSuppliers({ rfc: "zin910223-45a" })
        assert.strictEqual(envelope.interpretedRequest.request["rfc"], "ZIN91022345A")
        // DENUE publishes no RFC; the SAT 69-B list does, as an RFC-bearing observation.
        assert.deepStrictEqual(envelope.results.map((r) => r.rfc), ["ZIN91022345A"])
        const absent = yield* Suppliers.searchSuppliers({ rfc: "AAA010101AAA" })
        // An empty page, declared as such against real coverage.
        assert.strictEqual(absent.results.length, 0)
        assert.deepStrictEqual(absent.semanticWarnings.map((w) => w.code), ["zero_results_with_coverage"])
        assert.isAbove(absent.coverage[0]?.visibleRows ?? 0, 0)
      }))

    it.effect("pages with keyset cursors: no duplicates, hasMore from limit plus one", () =>
      Effect.gen(function*() {
        const seen = new Set<string>()
        let cursor: string | undefined
        let pages = 0
        do {
          const page = yield* Suppliers.searchSuppliers({
            state: "Zacatecas",
            limit: 7,
            ...(cursor === undefined ? {} : { cursor })
          })
          for (const row of page.results) {
            assert.isFalse(seen.has(row.record_fingerprint), "a row repeated across pages")
            seen.add(row.record_fingerprint)
          }
          assert.strictEqual(page.page?.returned, page.results.length)
          cursor = page.page?.nextCursor ?? undefined
          assert.strictEqual(page.page?.hasMore, cursor !== undefined)
          pages++
        } while (cursor !== undefined && pages < 100)
        // Every Zacatecas observation was read exactly once across the pages.
        const sql = yield* SqlClient.SqlClient
        const counted = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.supplier_observations o
          JOIN market.snapshots s ON s.id = o.snapshot_id AND s.status = 'active' WHERE o.state_code = '32'`
        const total = counted[0]?.n ?? 0
        assert.isAbove(total, 7)
        assert.strictEqual(seen.size, total)
        assert.strictEqual(pages, Math.ceil(total / 7))
      }))

    it.effect("pages a text query ordered by relevance without losing rows", () =>
      Effect.gen(function*() {
        const all = yield* Suppliers.searchSuppliers({ query: "minera", state: "Zacatecas", limit: 50 })
        const first = yield* Suppliers.searchSuppliers({ query: "minera", state: "Zacatecas", limit: 3 })
        const cursor = first.page?.nextCursor
        assert.isString(cursor)
        const second = yield* Suppliers.searchSuppliers({ query: "minera", state: "Zacatecas", limit: 3, cursor: cursor ?? "" })
        assert.deepStrictEqual(
          [...first.results, ...second.results].map((r) => r.record_fingerprint),
          all.results.slice(0, 6).map((r) => r.record_fingerprint)
        )
      }))

    it.effect("refuses tampered cursors and cursors of other filters", () =>
      Effect.gen(function*() {
        const first = yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 2 })
        const cursor = first.page?.nextCursor ?? ""
        assert.strictEqual(
          yield* refusalCode(Suppliers.searchSuppliers({ state: "Zacatecas", limit: 2, cursor: tamper(cursor) })),
          "invalid_cursor"
        )
        assert.strictEqual(
          yield* refusalCode(Suppliers.searchSuppliers({ state: "Sonora", limit: 2, cursor })),
          "invalid_cursor"
        )
      }))

    it.effect("seals record refs afresh per response, identical within one envelope", () =>
      Effect.gen(function*() {
        const a = yield* Suppliers.searchSuppliers({ state: "Aguascalientes", limit: 3 })
        const b = yield* Suppliers.searchSuppliers({ state: "Aguascalientes", limit: 3 })
        const rowA = a.results[0]
        const rowB = b.results[0]
        assert.isDefined(rowA)
        assert.isDefined(rowB)
        assert.strictEqual(rowA?.record_fingerprint, rowB?.record_fingerprint)
        assert.notStrictEqual(rowA?.record_ref, rowB?.record_ref)
        assert.deepStrictEqual(a.provenance.map((p) => p.record_ref), a.results.map((r) => r.record_ref))
        const detail = yield* Suppliers.getSupplier({ record_ref: rowA?.record_ref ?? "" })
        assert.strictEqual(detail.results.record_fingerprint, rowA?.record_fingerprint)
        assert.strictEqual(detail.page, null)
        assert.strictEqual(yield* refusalCode(Suppliers.getSupplier({ record_ref: tamper(rowA?.record_ref ?? "") })), "invalid_record_ref")
        assert.strictEqual(yield* refusalCode(Suppliers.getSupplier({ record_ref: rowA?.record_fingerprint ?? "" })), "invalid_record_ref")
        // A cursor is not a record ref: sealing purposes are separate.
        const cursor = (yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 1 })).page?.nextCursor ?? ""
        assert.strictEqual(yield* refusalCode(Suppliers.getSupplier({ record_ref: cursor })), "invalid_record_ref")
      }))

    it.effect("capabilities: operations, observed values stamped with the corpus basis, facets", () =>
      Effect.gen(function*() {
        const envelope = yield* Operations.marketCapabilities.run({ facets: "states" })
        assert.deepStrictEqual(
          envelope.results.operations.map((o) => o.operation),
          Operations.group.operations.filter((op) => op.surfaces.mcp).map((op) => op.name)
        )
        assert.includeMembers(envelope.results.operations.map((o) => o.operation), ["market_capabilities", "search_suppliers", "get_supplier"])
        const states = envelope.results.observedValues.states
        assert.isDefined(states)
        assert.strictEqual(states?.corpusBasis.snapshotId, envelope.corpusBasis.snapshotId)
        assert.isTrue(states?.values.some((v) => v.value === "32" && v.label === "Zacatecas"))
        assert.isUndefined(envelope.results.observedValues.scian_codes)
        assert.strictEqual(envelope.results.openapiUrl, "/openapi.json")
        assert.strictEqual(yield* refusalCode(Operations.marketCapabilities.run({ facets: "states,colors" })), "unknown_facet")
      }))

    it.effect("capabilities lists the filter vocabularies the corpus holds, once per publication", () =>
      Effect.gen(function*() {
        const all = yield* Operations.marketCapabilities.run({})
        const observed = all.results.observedValues
        const values = (facet: keyof typeof observed) => (observed[facet]?.values ?? []).map((v) => v.value)
        assert.includeMembers(values("mark_kinds"), ["efos", "sancion"])
        assert.include(values("currencies"), "MXN")
        assert.includeMembers(values("amount_scopes"), ["supplier_contract"])
        assert.isAbove(values("procedure_types").length, 0)
        for (const list of Object.values(observed)) assert.strictEqual(list?.corpusBasis.snapshotId, all.corpusBasis.snapshotId)
        // The counts are the corpus's own: mark kinds add up to the visible risk marks.
        const sql = yield* SqlClient.SqlClient
        const marks = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.risk_marks r
          WHERE r.snapshot_id = ${all.corpusBasis.snapshotId}
            AND r.source_slug IN (SELECT slug FROM market.sources WHERE licensed_for_display)`
        assert.strictEqual((observed.mark_kinds?.values ?? []).reduce((n, v) => n + v.visibleRows, 0), marks[0]?.n)
        // A second call answers from the per-publication cache with the same lists.
        const again = yield* Operations.marketCapabilities.run({ facets: "mark_kinds,currencies" })
        assert.deepStrictEqual(again.results.observedValues.mark_kinds, observed.mark_kinds)
        assert.deepStrictEqual(Object.keys(again.results.observedValues).sort(), ["currencies", "mark_kinds"])
      }))

    // No wall-clock budget: loading the demo corpus is slower on a loaded machine, not wrong.
    it.effect("a publish between two pages makes the second page cursor_stale; refs resolve by fingerprint", () =>
      Effect.gen(function*() {
        const first = yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 2 })
        const cursor = first.page?.nextCursor ?? ""
        const ref = first.results[0]?.record_ref ?? ""
        yield* DemoCorpus.loadAndPublish
        assert.strictEqual(
          yield* refusalCode(Suppliers.searchSuppliers({ state: "Zacatecas", limit: 2, cursor })),
          "cursor_stale"
        )
        const again = yield* Suppliers.getSupplier({ record_ref: ref })
        assert.strictEqual(again.results.record_fingerprint, first.results[0]?.record_fingerprint)
      }), 0)
  })
}

describe("Operations", () => {
  it("declares each operation once with a path and a capability example", () => {
    const names = Operations.all.map((op) => op.name)
    assert.strictEqual(new Set(names).size, names.length)
    for (const op of Operations.all) {
      assert.isTrue(op.http.path.startsWith("/"))
      assert.isAbove(Object.keys(op.capability.example).length, 0)
    }
  })
})
