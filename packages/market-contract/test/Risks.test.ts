import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as Leaks from "@service/core/Leaks"
import * as RequestContext from "@service/core/RequestContext"
import { Corpus } from "@service/market-warehouse/Corpus"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import type * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Operations from "../src/Operations.js"
import { forbiddenValues } from "../src/ProjectionAudit.js"
import * as Risks from "../src/Risks.js"
import * as Suppliers from "../src/Suppliers.js"

const refusal = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : undefined))

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(refusal(effect), (r) => r?.semanticCode ?? "succeeded")

const codes = (warnings: ReadonlyArray<{ readonly code: string }> | undefined) => (warnings ?? []).map((w) => w.code)

/** `count` distinct well-formed company RFCs with no mark in the demo corpus. */
const unlistedRfcs = (count: number) =>
  Array.from({ length: count }, (_, i) => `ZZZ010101${String(i).padStart(3, "0")}`)

/** Every value of a risk-mark source that must never reach a response: slugs, publishers, quoted record ids. */
const riskSourceValues = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT DISTINCT r.source_slug, s.publisher, r.source_record_id
    FROM market.risk_marks r JOIN market.sources s ON s.slug = r.source_slug`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({
      source_slug: Schema.String,
      publisher: Schema.String,
      source_record_id: Schema.String
    })))),
    Effect.orDie
  )
  return rows.flatMap((r) => [r.source_slug, r.publisher, `"${r.source_record_id}"`])
})

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `risk marks before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses before anything is published", () =>
        Effect.gen(function*() {
          assert.strictEqual(yield* refusalCode(Risks.searchRiskMarks({ rfc: "GTA140724H10" })), "serving_projection_unavailable")
          assert.strictEqual(yield* refusalCode(Risks.screenRiskMarks({ rfcs: ["GTA140724H10"] })), "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`risk marks on ${target.name}`, (it) => {
    it.effect("search by RFC: that RFC's marks, newest listing first, as abstracted rows with one warning", () =>
      Effect.gen(function*() {
        // PRI1504275G2 is on the definitive list and, in a later cycle, on the presumed list.
        const envelope = yield* Risks.searchRiskMarks({ rfc: "pri-150427-5g2" })
        assert.strictEqual(envelope.operation, "search_risks")
        assert.strictEqual(envelope.interpretedRequest.request["rfc"], "PRI1504275G2")
        assert.deepStrictEqual(envelope.interpretedRequest.normalizations.map((n) => n.field), ["rfc"])
        assert.strictEqual(envelope.results.length, 2)
        assert.deepStrictEqual(envelope.results.map((r) => r.status).sort(), ["definitivo", "presunto"])
        const dates = envelope.results.map((r) => r.listed_on ?? "")
        assert.deepStrictEqual(dates, [...dates].sort().reverse())
        for (const row of envelope.results) {
          assert.strictEqual(row.subject_rfc, "PRI1504275G2")
          assert.strictEqual(row.evidence_category, "administrative_risk")
          assert.strictEqual(row.kind, "efos")
          assert.strictEqual(row.legal_basis, "art_69b")
          assert.isTrue(row.is_active)
          assert.isNull(row.fine)
          assert.match(row.record_fingerprint, /^[0-9a-f]{32}$/)
          assert.match(row.listed_on ?? "", /^\d{4}-\d{2}-\d{2}$/)
          assert.strictEqual(row.stage_dates[row.status], row.listed_on)
        }
        assert.deepStrictEqual(envelope.provenance.map((p) => p.record_ref), envelope.results.map((r) => r.record_ref))
        assert.deepStrictEqual(codes(envelope.semanticWarnings), ["listing_not_conviction"])
        assert.deepStrictEqual(envelope.coverage.map((c) => c.evidenceCategory), ["administrative_risk"])
        assert.strictEqual(envelope.page?.returned, 2)
        assert.isFalse(envelope.page?.hasMore)
      }), 0)

    it.effect("an exoneration is a mark that is not active", () =>
      Effect.gen(function*() {
        const envelope = yield* Risks.searchRiskMarks({ rfc: "AAA091014835" })
        assert.strictEqual(envelope.results.length, 1)
        const row = envelope.results[0]
        assert.strictEqual(row?.status, "desvirtuado")
        assert.strictEqual(row?.status_text, "Desvirtuado")
        assert.isFalse(row?.is_active)
        assert.isString(row?.stage_dates["desvirtuado"])
        assert.isTrue(Risks.isActiveStatus("definitivo_69b_bis"))
        assert.isTrue(Risks.isActiveStatus("sancion_inhabilitacion"))
        assert.isFalse(Risks.isActiveStatus("sentencia_favorable"))
      }))

    it.effect("search by name: candidates by similarity, sanction fields, exact fine amounts, a candidates warning", () =>
      Effect.gen(function*() {
        const envelope = yield* Risks.searchRiskMarks({ entity_name: "Humberto Reyes Báez", limit: 50 })
        assert.strictEqual(envelope.interpretedRequest.request["entity_name"], "humberto reyes baez")
        assert.isAtLeast(envelope.results.length, 7)
        assert.deepStrictEqual(codes(envelope.semanticWarnings), ["listing_not_conviction", "approximate_name_match"])
        // The exact name ranks before any merely similar one.
        const exact = envelope.results.filter((r) => r.subject_name === "HUMBERTO REYES BÁEZ")
        assert.strictEqual(exact.length, 7)
        assert.deepStrictEqual(envelope.results.slice(0, 7).map((r) => r.subject_name), exact.map((r) => r.subject_name))
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ fingerprint: string; amount: string | null }>`
          SELECT fingerprint, fine_amount::text AS amount FROM market.risk_marks r
          JOIN market.snapshots s ON s.id = r.snapshot_id AND s.status = 'active'
          WHERE r.subject_name = 'HUMBERTO REYES BÁEZ'`
        for (const row of exact) {
          assert.strictEqual(row.kind, "sancion")
          assert.strictEqual(row.legal_basis, "sfp_directory")
          assert.isNull(row.subject_rfc)
          assert.isTrue(row.is_active)
          assert.isString(row.sanctioning_body)
          assert.isString(row.sanction_type)
          const amount = stored.find((s) => s.fingerprint === row.record_fingerprint)?.amount ?? null
          assert.deepStrictEqual(row.fine, amount === null ? null : { amount, currency: "MXN" })
        }
        // A fine is the published decimal, never a float: 133502.74 pesos stays "133502.74".
        const fined = yield* Risks.searchRiskMarks({ entity_name: "A y V Industrial y Comercial, S.A. de C.V." })
        const av = fined.results[0]
        assert.strictEqual(av?.subject_name, "A Y V INDUSTRIAL Y COMERCIAL S.A. DE C.V.")
        assert.deepStrictEqual(av?.fine, { amount: "133502.74", currency: "MXN" })
        assert.strictEqual(av?.period, "3 MESES")
        assert.strictEqual(av?.status, "sancion_multa_inhabilitacion")
        assert.strictEqual(av?.stage_dates["resolution"], av?.listed_on)
      }))

    it.effect("mark_kinds keeps only the kinds asked for", () =>
      Effect.gen(function*() {
        const both = yield* Risks.searchRiskMarks({ entity_name: "Grupo Saurica del Sureste", limit: 50 })
        assert.isTrue(both.results.some((r) => r.kind === "efos"))
        const sanctions = yield* Risks.searchRiskMarks({ entity_name: "Grupo Saurica del Sureste", mark_kinds: ["SANCION"], limit: 50 })
        assert.isTrue(sanctions.results.every((r) => r.kind === "sancion"))
        assert.deepStrictEqual(sanctions.interpretedRequest.request["mark_kinds"], ["sancion"])
        const efos = yield* Risks.searchRiskMarks({ rfc: "GSS130419715", mark_kinds: ["efos", "efos"] })
        // Two listing cycles of one RFC: two marks.
        assert.strictEqual(efos.results.length, 2)
        const none = yield* Risks.searchRiskMarks({ rfc: "GSS130419715", mark_kinds: ["sancion"] })
        assert.strictEqual(none.results.length, 0)
      }))

    it.effect("an unknown mark kind is invalid_mark_kind with the allowed values, on the model surface too", () =>
      Effect.gen(function*() {
        const direct = yield* refusal(Risks.searchRiskMarks({ entity_name: "Humberto Reyes", mark_kinds: ["efos", "fraude"] }))
        assert.strictEqual(direct?.semanticCode, "invalid_mark_kind")
        assert.deepStrictEqual(direct?.allowedValues, ["efos", "sancion"])
        assert.strictEqual(direct?.field, "mark_kinds")
        assert.include(direct?.why ?? "", "fraude")
        const model = yield* refusal(Risks.searchRisks.runModel({ rfc: "GTA140724H10", mark_kinds: ["multa"] }))
        assert.strictEqual(model?.semanticCode, "invalid_mark_kind")
      }))

    it.effect("needs an RFC or a name: query_too_broad otherwise; malformed values are invalid_field_value", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Risks.searchRiskMarks({})), "query_too_broad")
        assert.strictEqual(yield* refusalCode(Risks.searchRiskMarks({ mark_kinds: ["efos"], limit: 5 })), "query_too_broad")
        const bad = yield* refusal(Risks.searchRiskMarks({ rfc: "NOT-AN-RFC" }))
        assert.strictEqual(bad?.semanticCode, "invalid_field_value")
        assert.strictEqual(bad?.field, "rfc")
        assert.strictEqual(yield* refusalCode(Risks.searchRiskMarks({ entity_name: "..." })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(Risks.searchRisks.runModel({ rfc: "GTA140724H10", limit: 51 })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(Risks.searchRisks.runModel({ rfc: "GTA140724H10", source_slugs: ["x"] })), "invalid_field_value")
      }))

    it.effect("an RFC without marks is an empty page declared against coverage", () =>
      Effect.gen(function*() {
        const envelope = yield* Risks.searchRiskMarks({ rfc: "AAA010101AAA" })
        assert.strictEqual(envelope.results.length, 0)
        assert.deepStrictEqual(codes(envelope.semanticWarnings), ["zero_results_with_coverage"])
        assert.isAbove(envelope.coverage[0]?.visibleRows ?? 0, 0)
      }))

    it.effect("pages a name search with keyset cursors: every row once, in the one-page order", () =>
      Effect.gen(function*() {
        const filters = { entity_name: "Lizbeth Adriana Delgado Fernandez" }
        const all = yield* Risks.searchRiskMarks({ ...filters, limit: 50 })
        assert.isFalse(all.page?.hasMore)
        assert.isAtLeast(all.results.length, 9)
        const walked: Array<string> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const page = yield* Risks.searchRiskMarks({ ...filters, limit: 2, ...(cursor === undefined ? {} : { cursor }) })
          walked.push(...page.results.map((r) => r.record_fingerprint))
          assert.strictEqual(page.page?.returned, page.results.length)
          cursor = page.page?.nextCursor ?? undefined
          assert.strictEqual(page.page?.hasMore, cursor !== undefined)
          if (cursor !== undefined) assert.isTrue(page.diagnostics.truncated)
          pages++
        } while (cursor !== undefined && pages < 50)
        assert.deepStrictEqual(walked, all.results.map((r) => r.record_fingerprint))
        assert.strictEqual(new Set(walked).size, walked.length)
        assert.strictEqual(pages, Math.ceil(all.results.length / 2))
      }))

    it.effect("pages an RFC search by listing date", () =>
      Effect.gen(function*() {
        const first = yield* Risks.searchRiskMarks({ rfc: "PRI1504275G2", limit: 1 })
        const cursor = first.page?.nextCursor
        assert.isString(cursor)
        const second = yield* Risks.searchRiskMarks({ rfc: "PRI1504275G2", limit: 1, cursor: cursor ?? "" })
        assert.isFalse(second.page?.hasMore)
        assert.isNull(second.page?.nextCursor)
        const all = yield* Risks.searchRiskMarks({ rfc: "PRI1504275G2" })
        assert.deepStrictEqual(
          [...first.results, ...second.results].map((r) => r.record_fingerprint),
          all.results.map((r) => r.record_fingerprint)
        )
      }))

    it.effect("refuses a cursor issued for other filters or another operation", () =>
      Effect.gen(function*() {
        const first = yield* Risks.searchRiskMarks({ entity_name: "Lizbeth Adriana Delgado Fernandez", limit: 2 })
        const cursor = first.page?.nextCursor ?? ""
        assert.strictEqual(
          yield* refusalCode(Risks.searchRiskMarks({ entity_name: "Lizbeth Adriana Delgado Fernandez", mark_kinds: ["sancion"], limit: 2, cursor })),
          "invalid_cursor"
        )
        assert.strictEqual(
          yield* refusalCode(Risks.searchRiskMarks({ entity_name: "Humberto Reyes Baez", limit: 2, cursor })),
          "invalid_cursor"
        )
        const supplierCursor = (yield* Suppliers.searchSuppliers({ state: "Zacatecas", limit: 1 })).page?.nextCursor ?? ""
        assert.strictEqual(
          yield* refusalCode(Risks.searchRiskMarks({ entity_name: "Lizbeth Adriana Delgado Fernandez", limit: 2, cursor: supplierCursor })),
          "invalid_cursor"
        )
      }))

    it.effect("screen: one entry per requested RFC in request order, zero-mark RFCs and repeats included", () =>
      Effect.gen(function*() {
        const rfcs = ["aaa010101aaa", "GTA140724H10", "PRI1504275G2", "AAA091014835", "GTA140724H10"]
        const envelope = yield* Risks.screenRiskMarks({ rfcs })
        assert.strictEqual(envelope.operation, "screen_risks")
        assert.isNull(envelope.page)
        assert.deepStrictEqual(envelope.results.map((e) => e.rfc), ["AAA010101AAA", "GTA140724H10", "PRI1504275G2", "AAA091014835", "GTA140724H10"])
        assert.deepStrictEqual(envelope.interpretedRequest.normalizations.map((n) => n.field), ["rfcs[0]"])
        const [none, gta, pri, aaa, gtaAgain] = envelope.results
        assert.deepStrictEqual(
          { count: none?.mark_count, marks: none?.marks.length, kinds: none?.kinds, active: none?.any_active, exoneration: none?.has_exoneration },
          { count: 0, marks: 0, kinds: [], active: false, exoneration: false }
        )
        assert.deepStrictEqual(codes(none?.warnings), ["zero_results_with_coverage"])
        assert.strictEqual(gta?.mark_count, 1)
        assert.isTrue(gta?.any_active)
        assert.deepStrictEqual(gta?.kinds, ["efos"])
        assert.strictEqual(pri?.mark_count, 2)
        assert.strictEqual(pri?.marks.length, 2)
        const priDates = pri?.marks.map((m) => m.listed_on ?? "") ?? []
        assert.deepStrictEqual(priDates, [...priDates].sort().reverse())
        assert.isTrue(aaa?.has_exoneration)
        assert.isFalse(aaa?.any_active)
        for (const entry of [gta, pri, aaa]) assert.isUndefined(entry?.warnings)
        // A repeated RFC keeps its position and shows the same rows, with the same record_ref.
        assert.deepStrictEqual(gtaAgain, gta)
        // Marks are the rows search_risks returns for the same RFC.
        const searched = yield* Risks.searchRiskMarks({ rfc: "PRI1504275G2" })
        assert.deepStrictEqual(pri?.marks.map((m) => m.record_fingerprint), searched.results.map((r) => r.record_fingerprint))
        // One provenance entry per distinct row, each naming a row of the results.
        const refs = envelope.results.flatMap((e) => e.marks.map((m) => m.record_ref))
        assert.deepStrictEqual(envelope.provenance.map((p) => p.record_ref).sort(), [...new Set(refs)].sort())
        // Some marks: the envelope warns of listings, and does not repeat the zero warning.
        assert.deepStrictEqual(codes(envelope.semanticWarnings), ["listing_not_conviction"])
      }))

    it.effect("screen: a batch with no marks at all warns on each entry and on the envelope", () =>
      Effect.gen(function*() {
        const envelope = yield* Risks.screenRiskMarks({ rfcs: unlistedRfcs(3) })
        assert.strictEqual(envelope.results.length, 3)
        for (const entry of envelope.results) assert.deepStrictEqual(codes(entry.warnings), ["zero_results_with_coverage"])
        assert.deepStrictEqual(codes(envelope.semanticWarnings), ["zero_results_with_coverage"])
        const risk = envelope.coverage.find((c) => c.evidenceCategory === "administrative_risk")
        assert.isTrue(risk?.licensedForDisplay)
        assert.isAbove(risk?.visibleRows ?? 0, 0)
      }))

    it.effect("screen: 50 RFCs are screened, 51 are batch_too_large and never truncated", () =>
      Effect.gen(function*() {
        const fifty = yield* Risks.screenRisks.runModel({ rfcs: unlistedRfcs(50) })
        assert.strictEqual(fifty.results.length, 50)
        const tooMany = yield* refusal(Risks.screenRisks.runModel({ rfcs: unlistedRfcs(51) }))
        assert.strictEqual(tooMany?.semanticCode, "batch_too_large")
        assert.strictEqual(tooMany?.field, "rfcs")
        assert.deepStrictEqual(tooMany?.allowedRange, { minimum: 1, maximum: 50 })
        assert.strictEqual(yield* refusalCode(Risks.screenRisks.runModel({ rfcs: unlistedRfcs(200) })), "batch_too_large")
        assert.strictEqual(yield* refusalCode(Risks.screenRisks.runModel({ rfcs: [] })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(Risks.screenRisks.runModel({})), "invalid_field_value")
      }))

    it.effect("screen: a malformed RFC is invalid_field_value naming it", () =>
      Effect.gen(function*() {
        const bad = yield* refusal(Risks.screenRiskMarks({ rfcs: ["GTA140724H10", "NOPE-123"] }))
        assert.strictEqual(bad?.semanticCode, "invalid_field_value")
        assert.strictEqual(bad?.field, "rfcs")
        assert.include(bad?.why ?? "", "rfcs[1]")
        assert.include(bad?.why ?? "", "NOPE-123")
        const long = yield* refusal(Risks.screenRiskMarks({ rfcs: ["X".repeat(19)] }))
        assert.isAtMost(long?.why.length ?? 0, 160)
      }))

    it.effect("no response carries a source identity, record id, retrieval date or contact coordinate", () =>
      Effect.gen(function*() {
        const forbidden = [...(yield* forbiddenValues), ...(yield* riskSourceValues)]
        assert.include(forbidden, "sfp_sanciones")
        const bodies = [
          yield* Risks.searchRisks.runModel({ entity_name: "Humberto Reyes Baez", limit: 50 }),
          yield* Risks.searchRisks.runModel({ rfc: "PRI1504275G2" }),
          yield* Risks.screenRisks.runModel({ rfcs: ["GTA140724H10", "PRI1504275G2", "AAA091014835", "AAA010101AAA"] })
        ].map((body) => JSON.stringify(body))
        for (const body of bodies) {
          assert.deepStrictEqual(Leaks.find([body], forbidden)[0], [], "a response leaked a forbidden value")
          assert.notInclude(body, "retrieved_on")
          assert.notInclude(body, "source_record_id")
          assert.notInclude(body, "case_id")
        }
      }))

    it.effect("is declared and registered: refusals, paging, runnable examples", () =>
      Effect.gen(function*() {
        const search = Risks.searchRisks
        const screen = Risks.screenRisks
        assert.isTrue(search.metered && screen.metered)
        assert.isTrue(search.paginates)
        assert.isFalse(screen.paginates)
        assert.deepStrictEqual(
          [...search.refuses].sort(),
          ["cursor_stale", "invalid_cursor", "invalid_field_value", "invalid_mark_kind", "query_too_broad", "serving_projection_stale", "serving_projection_unavailable"]
        )
        assert.deepStrictEqual(
          [...screen.refuses].sort(),
          ["batch_too_large", "invalid_field_value", "serving_projection_stale", "serving_projection_unavailable"]
        )
        assert.strictEqual(search.http.path, "/risks/search")
        assert.strictEqual(screen.http.path, "/risks/screen")
        assert.deepStrictEqual(search.cli.words, ["risks", "search"])
        assert.deepStrictEqual(screen.cli.words, ["risks", "screen"])
        assert.includeMembers(Operations.operations.map((o) => o.name), ["search_risks", "screen_risks"])
        const searched = yield* search.runModel(search.capability.example)
        assert.isAbove(searched.results.length, 0)
        const screened = yield* screen.runModel(screen.capability.example)
        assert.deepStrictEqual(screened.results.map((e) => e.mark_count > 0), [true, true, false])
      }))

    // Last: it withdraws the risk sources from display and republishes.
    it.effect("with no effective risks coverage neither an entry nor the envelope says zero_results_with_coverage", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const corpus = yield* Corpus
        yield* sql`UPDATE market.sources SET licensed_for_display = false WHERE evidence_category = 'administrative_risk'`
        yield* corpus.publish(yield* corpus.loadingSnapshot)
        const envelope = yield* Risks.screenRiskMarks({ rfcs: ["GTA140724H10", "AAA010101AAA"] })
        const risk = envelope.coverage.find((c) => c.evidenceCategory === "administrative_risk")
        assert.isFalse(risk?.licensedForDisplay)
        assert.strictEqual(risk?.visibleRows, 0)
        // The listed RFC's marks are not licensed for display: invisible, so zero marks, and no warning anywhere.
        assert.deepStrictEqual(envelope.results.map((e) => e.mark_count), [0, 0])
        for (const entry of envelope.results) assert.isUndefined(entry.warnings)
        assert.deepStrictEqual(codes(envelope.semanticWarnings), [])
        const searched = yield* Risks.searchRiskMarks({ rfc: "GTA140724H10" })
        assert.strictEqual(searched.results.length, 0)
        assert.deepStrictEqual(codes(searched.semanticWarnings), [])
      }))
  })
}
