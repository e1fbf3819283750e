import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import { Corpus, SourceDefinition } from "@service/market-warehouse/Corpus"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Awards from "../src/Awards.js"
import { sealRecordRef } from "../src/internal/refs.js"
import * as MarketLayer from "../src/MarketLayer.js"
import * as Opportunities from "../src/Opportunities.js"
import * as Permits from "../src/Permits.js"
import * as Risks from "../src/Risks.js"
import type { RiskSummary } from "../src/RiskSummary.js"
import * as Suppliers from "../src/Suppliers.js"

/** On the definitive list and, in a later cycle, on the presumed list: two marks in force. */
const LISTED = "PRI1504275G2"
/** On the list of presumptions refuted (desvirtuados) only. */
const EXONERATED = "AAA091014835"
/** An OCDS awardee on the definitive list; this file adds a sanction and gives it the Bimbo permits. */
const AWARDEE = "GTA140724H10"
/** An awardee no mark carries. */
const UNMARKED = "CFE370814QI0"

const zero: RiskSummary = { mark_count: 0, kinds: [], any_active: false, has_exoneration: false }

/** What screen_risks says of each RFC, as a risk summary. */
const screened = (rfcs: ReadonlyArray<string>) =>
  Effect.map(Risks.screenRiskMarks({ rfcs }), (envelope) =>
    new Map(envelope.results.map((e): [string, RiskSummary] => [
      e.rfc,
      { mark_count: e.mark_count, kinds: e.kinds, any_active: e.any_active, has_exoneration: e.has_exoneration }
    ])))

for (const target of TestDatabase.targets()) {
  const Services = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.prepared(target, DemoSnapshot.market))
  )

  layer(Services, { timeout: "180 seconds" })(`risk summaries on rows on ${target.name}`, (it) => {
    it.effect("republishes a copy of the demo corpus with a sanction and permits for one awardee", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const sql = yield* SqlClient.SqlClient
        yield* corpus.registerSource(
          new SourceDefinition({
            slug: "test_sanctions",
            label: "Test sanctions",
            publisher: "Test publisher",
            licence: "test",
            licensedForDisplay: true,
            evidenceCategory: "administrative_risk"
          })
        )
        // This test database only: a sanction published with the awardee's RFC, and the Bimbo permits printed
        // with it, in a copy of the publication; its publish must summarize the copy's marks.
        const snapshotId = yield* corpus.beginSnapshot()
        yield* sql`INSERT INTO market.risk_marks (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint,
            kind, legal_basis, subject_rfc, subject_name, subject_name_norm, status, status_text)
          VALUES (${snapshotId}, 'test_sanctions', 'sanction-1', DATE '2026-01-31', '0123456789abcdef0123456789abcdef', 'sancion',
            'sfp_directory', ${AWARDEE}, 'GTA TEST', 'gta test', 'sancion_inhabilitacion', 'INHABILITACION')`
        yield* sql`UPDATE market.permits SET holder_rfc = ${AWARDEE} WHERE snapshot_id = ${snapshotId} AND holder_name_norm = 'bimbo'`
        yield* corpus.publish(snapshotId)
      }), 0)

    it.effect("a supplier observation carries its RFC's summary, as screen_risks reports it, in search and get", () =>
      Effect.gen(function*() {
        const screen = yield* screened([LISTED, EXONERATED])
        assert.deepStrictEqual(screen.get(LISTED), { mark_count: 2, kinds: ["efos"], any_active: true, has_exoneration: false })
        assert.deepStrictEqual(screen.get(EXONERATED), { mark_count: 1, kinds: ["efos"], any_active: false, has_exoneration: true })
        for (const rfc of [LISTED, EXONERATED]) {
          const found = yield* Suppliers.searchSuppliers({ rfc })
          assert.isAbove(found.results.length, 0, rfc)
          for (const row of found.results) {
            assert.strictEqual(row.rfc, rfc)
            assert.deepStrictEqual(row.risk, screen.get(rfc))
          }
          const first = found.results[0]
          if (first === undefined) continue
          const got = yield* Suppliers.getSupplier({ record_ref: first.record_ref })
          assert.deepStrictEqual(got.results.risk, screen.get(rfc))
        }
      }))

    it.effect("a row without an RFC has risk null", () =>
      Effect.gen(function*() {
        const found = yield* Suppliers.searchSuppliers({ state: "CDMX", limit: 50 })
        const withoutRfc = found.results.filter((row) => row.rfc === null)
        assert.isAbove(withoutRfc.length, 0)
        for (const row of withoutRfc) assert.isNull(row.risk)
        const permits = yield* Permits.search({ holder_name: "Cogeneración de Altamira", limit: 20 })
        assert.isAbove(permits.results.length, 0)
        for (const row of permits.results) {
          assert.isNull(row.holder_rfc)
          assert.isNull(row.risk)
        }
      }))

    it.effect("award rows carry the supplier's summary in search and history; an unmarked RFC gets the zero summary", () =>
      Effect.gen(function*() {
        const screen = yield* screened([AWARDEE, UNMARKED])
        assert.deepStrictEqual(screen.get(AWARDEE), {
          mark_count: 2,
          kinds: ["efos", "sancion"],
          any_active: true,
          has_exoneration: false
        })
        assert.deepStrictEqual(screen.get(UNMARKED), zero)
        for (const rfc of [AWARDEE, UNMARKED]) {
          const found = yield* Awards.searchAwardRows({ supplier_rfc: rfc, limit: 50 })
          assert.isAbove(found.results.length, 0, rfc)
          for (const row of found.results) assert.deepStrictEqual(row.risk, screen.get(rfc))
        }
        const sql = yield* SqlClient.SqlClient
        const [pair] = yield* sql`SELECT currency, amount_scope FROM market.awards
          WHERE supplier_rfc = ${AWARDEE} AND currency IS NOT NULL LIMIT 1`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ currency: Schema.String, amount_scope: Awards.AmountScope }))))
        )
        assert.isDefined(pair)
        if (pair === undefined) return
        const history = yield* Awards.readSupplierHistory({ supplier_rfc: AWARDEE, ...pair })
        assert.isAbove(history.results.awards.length, 0)
        for (const row of history.results.awards) assert.deepStrictEqual(row.risk, screen.get(AWARDEE))
      }))

    it.effect("get_opportunity's nested awards carry it too", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [procedure] = yield* sql`SELECT o.id::text AS id, o.fingerprint FROM market.opportunities o
          JOIN market.snapshots s ON s.id = o.snapshot_id AND s.status = 'active'
          WHERE EXISTS (SELECT 1 FROM market.awards a WHERE a.snapshot_id = o.snapshot_id AND a.source_slug = o.source_slug
            AND a.opportunity_source_record_id = o.source_record_id AND a.supplier_rfc = ${AWARDEE})
          ORDER BY o.id LIMIT 1`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String, fingerprint: Schema.String }))))
        )
        assert.isDefined(procedure)
        if (procedure === undefined) return
        const ref = yield* sealRecordRef({ kind: "opportunity", id: procedure.id, fingerprint: procedure.fingerprint })
        const awards = (yield* Opportunities.get({ record_ref: ref })).results.awards ?? []
        assert.isTrue(awards.some((a) => a.supplier_rfc === AWARDEE))
        const screen = yield* screened(awards.flatMap((a) => (a.supplier_rfc === null ? [] : [a.supplier_rfc])))
        for (const award of awards) {
          assert.deepStrictEqual(award.risk, award.supplier_rfc === null ? null : screen.get(award.supplier_rfc))
        }
      }))

    it.effect("a permit row printed with an RFC carries its summary", () =>
      Effect.gen(function*() {
        const screen = yield* screened([AWARDEE])
        const found = yield* Permits.search({ holder_rfc: AWARDEE, limit: 50 })
        assert.isAbove(found.results.length, 0)
        for (const row of found.results) {
          assert.strictEqual(row.holder_rfc, AWARDEE)
          assert.deepStrictEqual(row.risk, screen.get(AWARDEE))
        }
      }))
  })
}
