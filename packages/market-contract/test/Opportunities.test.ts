import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as Leaks from "@service/core/Leaks"
import * as RequestContext from "@service/core/RequestContext"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import type * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { openRecordRef } from "../src/internal/refs.js"
import { maxPageSize } from "../src/Limits.js"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Opportunities from "../src/Opportunities.js"
import { forbiddenValues } from "../src/ProjectionAudit.js"
import * as Suppliers from "../src/Suppliers.js"

const refusalOf = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : undefined))

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(refusalOf(effect), (refusal) => refusal?.semanticCode ?? "succeeded")

type SearchInput = Opportunities.SearchOpportunitiesInput

/** Every row of a search, page by page (limit 2 by default, so cursors are exercised). */
const readAll = (input: SearchInput, limit = 2) =>
  Effect.gen(function*() {
    const rows: Array<Opportunities.OpportunityRow> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = yield* Opportunities.search({ ...input, limit, ...(cursor === undefined ? {} : { cursor }) })
      rows.push(...page.results)
      pages++
      cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
    } while (cursor !== undefined && pages < 200)
    return rows
  })

const DECIMAL = /^-?\d+(\.\d+)?$/

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `opportunities before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses before anything is published", () =>
        Effect.gen(function*() {
          assert.strictEqual(yield* refusalCode(Opportunities.search({ query: "dragado" })), "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`opportunities on ${target.name}`, (it) => {
    it.effect("needs a narrowing dimension: query_too_broad without query or structured filter", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Opportunities.search({})), "query_too_broad")
        assert.strictEqual(yield* refusalCode(Opportunities.search({ limit: 5, strategy: "lexical" })), "query_too_broad")
        // open_only false narrows nothing.
        assert.strictEqual(yield* refusalCode(Opportunities.search({ open_only: false })), "query_too_broad")
        const byBuyer = yield* Opportunities.search({ buyer: "GACM", limit: 5 })
        assert.strictEqual(byBuyer.results.length, 5)
      }), 0)

    it.effect("a query alone must be selective (bounded probe); the same words with a filter are answered", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [many] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities
          WHERE search_tsv @@ plainto_tsquery('market.es', 'mantenimiento')`
        assert.isAbove(many?.n ?? 0, maxPageSize)
        assert.strictEqual(yield* refusalCode(Opportunities.search({ query: "mantenimiento" })), "query_not_selective")
        assert.strictEqual(
          yield* refusalCode(Opportunities.search({ query: "mantenimiento", strategy: "hybrid" })),
          "query_not_selective"
        )
        const narrowed = yield* Opportunities.search({ query: "mantenimiento", buyer: "API-Veracruz", limit: 50 })
        assert.isAbove(narrowed.results.length, 0)
        assert.isTrue(narrowed.results.every((r) => r.buyer_acronym === "API-Veracruz"))
        assert.deepStrictEqual(narrowed.interpretedRequest.query_interpretation?.filters, ["buyer"])
        // A selective query alone is answered.
        const alone = yield* Opportunities.search({ query: "dragado" })
        assert.isAbove(alone.results.length, 0)
      }))

    it.effect("lexical and hybrid order differently and each pages every matching row exactly once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const lexical = yield* readAll({ query: "dragado" })
        const hybrid = yield* readAll({ query: "dragado", strategy: "hybrid" })
        const lexicalIds = lexical.map((r) => r.record_fingerprint)
        const hybridIds = hybrid.map((r) => r.record_fingerprint)
        assert.strictEqual(new Set(lexicalIds).size, lexicalIds.length)
        assert.strictEqual(new Set(hybridIds).size, hybridIds.length)
        const [lex] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities
          WHERE search_tsv @@ plainto_tsquery('market.es', 'dragado')`
        const [hyb] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities
          WHERE search_tsv @@ plainto_tsquery('market.es', 'dragado')
             OR word_similarity(market.fold('dragado'), market.fold(title)) >= 0.5`
        assert.strictEqual(lexicalIds.length, lex?.n)
        assert.strictEqual(hybridIds.length, hyb?.n)
        assert.isAbove(lexicalIds.length, 2)
        for (const id of lexicalIds) assert.include(hybridIds, id)
        assert.notDeepEqual(hybridIds, lexicalIds)
        // Hybrid puts the title spelled closest to the words first: the procedure titled just "DRAGADO".
        assert.strictEqual(hybrid[0]?.title, "DRAGADO")
        const lexicalPage = yield* Opportunities.search({ query: "dragado" })
        const hybridPage = yield* Opportunities.search({ query: "dragado", strategy: "hybrid" })
        assert.strictEqual(lexicalPage.interpretedRequest.request["strategy"], "lexical")
        assert.strictEqual(hybridPage.interpretedRequest.request["strategy"], "hybrid")
      }))

    it.effect("hybrid matches near spellings of the title that lexical retrieval misses", () =>
      Effect.gen(function*() {
        const lexical = yield* Opportunities.search({ query: "dragdo" })
        assert.strictEqual(lexical.results.length, 0)
        assert.include(lexical.semanticWarnings.map((w) => w.code), "zero_results_with_coverage")
        const hybrid = yield* Opportunities.search({ query: "dragdo", strategy: "hybrid" })
        assert.isAbove(hybrid.results.length, 0)
        assert.isTrue(hybrid.results.every((r) => r.title.toLowerCase().includes("dragado")))
      }))

    it.effect("an explicit query_mode forces lexical retrieval and is refused with strategy hybrid", () =>
      Effect.gen(function*() {
        const refusal = yield* refusalOf(
          Opportunities.search({ query: "dragado de mantenimiento", query_mode: "exact_phrase", strategy: "hybrid" })
        )
        assert.strictEqual(refusal?.semanticCode, "invalid_field_value")
        assert.strictEqual(refusal?.field, "strategy")
        assert.include(refusal?.suggestedCorrection ?? "", "Drop")
        const phrase = yield* Opportunities.search({ query: "dragado de mantenimiento", query_mode: "exact_phrase" })
        assert.strictEqual(phrase.interpretedRequest.request["strategy"], "lexical")
        assert.strictEqual(phrase.interpretedRequest.query_interpretation?.applied_mode, "exact_phrase")
        assert.deepStrictEqual(phrase.results.map((r) => r.title), ["DRAGADO DE MANTENIMIENTO"])
        const any = yield* readAll({ query: "dragado muelle", query_mode: "any_terms" }, 50)
        const all = yield* readAll({ query: "dragado muelle", query_mode: "all_terms" }, 50)
        assert.isAbove(any.length, all.length)
        // Hybrid needs words to rank.
        assert.strictEqual(
          (yield* refusalOf(Opportunities.search({ buyer: "GACM", strategy: "hybrid" })))?.field,
          "strategy"
        )
      }))

    it.effect("every deadline field is accepted by the schema and refused with deadline_not_available", () =>
      Effect.gen(function*() {
        for (const field of Opportunities.deadlineFields) {
          const refusal = yield* refusalOf(Opportunities.searchOpportunities.runModel({ query: "dragado", [field]: "2026-01-31" }))
          assert.strictEqual(refusal?.semanticCode, "deadline_not_available", field)
          assert.strictEqual(refusal?.field, field)
          // Even alone: the deadline question is answered before the missing narrowing.
          assert.strictEqual(
            yield* refusalCode(Opportunities.searchOpportunities.runCanonical({ [field]: "next week" })),
            "deadline_not_available",
            field
          )
        }
        // An unknown field is still a structural refusal.
        assert.strictEqual(
          (yield* refusalOf(Opportunities.searchOpportunities.runModel({ query: "dragado", closing_soon: true })))?.semanticCode,
          "invalid_field_value"
        )
      }))

    it.effect("buyer is an exact acronym when the corpus holds it, else an approximate name with a warning", () =>
      Effect.gen(function*() {
        const acronym = yield* readAll({ buyer: "gacm" }, 50)
        assert.strictEqual(acronym.length, 176)
        assert.isTrue(acronym.every((r) => r.buyer_acronym === "GACM"))
        const exact = yield* Opportunities.search({ buyer: "GACM", limit: 3 })
        assert.notInclude(exact.semanticWarnings.map((w) => w.code), "approximate_name_match")
        assert.strictEqual(exact.interpretedRequest.request["buyer_match"], "acronym")
        const approximate = yield* Opportunities.search({ buyer: "Portuaria de Veracruz", limit: 50 })
        assert.isAbove(approximate.results.length, 0)
        assert.isTrue(approximate.results.every((r) => r.buyer_name?.includes("Veracruz") === true))
        assert.include(approximate.semanticWarnings.map((w) => w.code), "approximate_name_match")
        assert.strictEqual(approximate.interpretedRequest.request["buyer_match"], "approximate_name")
      }))

    it.effect("procedure_type is a value the corpus holds; another gives unknown_filter_value with the allowed values", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const observed = (yield* sql<{ v: string }>`SELECT DISTINCT procedure_type AS v FROM market.opportunities
          WHERE procedure_type IS NOT NULL ORDER BY 1`).map((r) => r.v)
        const refusal = yield* refusalOf(Opportunities.search({ procedure_type: "subasta inversa" }))
        assert.strictEqual(refusal?.semanticCode, "unknown_filter_value")
        assert.strictEqual(refusal?.field, "procedure_type")
        assert.deepStrictEqual(refusal?.allowedValues, observed)
        const spelled = yield* Opportunities.search({ procedure_type: "Licitación Pública", buyer: "GACM", limit: 50 })
        assert.isAbove(spelled.results.length, 0)
        assert.isTrue(spelled.results.every((r) => r.procedure_type === "licitacion_publica"))
        assert.deepStrictEqual(spelled.interpretedRequest.normalizations.map((n) => n.to), ["licitacion_publica"])
      }))

    it.effect("state resolves names and aliases; an unknown state is refused", () =>
      Effect.gen(function*() {
        const jalisco = yield* Opportunities.search({ state: "Jal", limit: 50 })
        assert.isAbove(jalisco.results.length, 0)
        assert.isTrue(jalisco.results.every((r) => r.state?.code === "14"))
        assert.deepStrictEqual(jalisco.interpretedRequest.normalizations.map((n) => n.field), ["state"])
        // The exact name is resolved to its code too, and says so.
        const exact = yield* Opportunities.search({ state: "Jalisco", limit: 1 })
        assert.deepStrictEqual(exact.interpretedRequest.normalizations.map((n) => [n.field, n.from, n.to]), [["state", "Jalisco", "14 Jalisco"]])
        assert.strictEqual(yield* refusalCode(Opportunities.search({ state: "Narnia" })), "unknown_state")
      }))

    it.effect("published_from/published_to bound the publication date; bad or reversed dates are refused", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* readAll({ published_from: "2015-01-01", published_to: "2015-01-31" }, 50)
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities
          WHERE published_on BETWEEN '2015-01-01' AND '2015-01-31'`
        assert.strictEqual(rows.length, count?.n)
        assert.isAbove(rows.length, 0)
        assert.isTrue(rows.every((r) => r.published_on !== null && r.published_on >= "2015-01-01" && r.published_on <= "2015-01-31"))
        // Newest publication first when there are no words.
        const dates = rows.map((r) => r.published_on ?? "")
        assert.deepStrictEqual(dates, [...dates].sort().reverse())
        const reversed = yield* refusalOf(Opportunities.search({ published_from: "2015-02-01", published_to: "2015-01-01" }))
        assert.strictEqual(reversed?.semanticCode, "invalid_field_value")
        assert.strictEqual(reversed?.field, "published_from")
        const malformed = yield* refusalOf(Opportunities.searchOpportunities.runModel({ published_from: "2015-02-30" }))
        assert.strictEqual(malformed?.semanticCode, "invalid_field_value")
        assert.strictEqual(malformed?.field, "published_from")
      }))

    it.effect("open_only keeps procedures recorded as open at load time (none in the demo corpus)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [open] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities WHERE is_open`
        const envelope = yield* Opportunities.search({ open_only: true, limit: 50 })
        assert.strictEqual(envelope.results.length, open?.n)
        assert.isTrue(envelope.results.every((r) => r.is_open))
        if (envelope.results.length === 0) {
          assert.include(envelope.semanticWarnings.map((w) => w.code), "zero_results_with_coverage")
        }
        const all = yield* Opportunities.search({ buyer: "GACM", limit: 50 })
        assert.isTrue(all.results.some((r) => !r.is_open))
      }))

    it.effect("rows carry the projection fields, exact amounts, the meaning warnings and no deadline", () =>
      Effect.gen(function*() {
        const envelope = yield* Opportunities.search({ query: "aeropuerto", buyer: "GACM", limit: 50 })
        assert.isAbove(envelope.results.length, 0)
        const codes = envelope.semanticWarnings.map((w) => w.code)
        assert.include(codes, "award_not_payment")
        assert.include(codes, "status_as_loaded")
        for (const [i, row] of envelope.results.entries()) {
          assert.strictEqual(row.evidence_category, "government_contracting")
          assert.match(row.record_fingerprint, /^[0-9a-f]{32}$/)
          assert.strictEqual(envelope.provenance[i]?.record_ref, row.record_ref)
          assert.isTrue(["open_at_load", "closed", "awarded", "cancelled", "unknown"].includes(row.actionability))
          assert.isAbove(row.actionability_reason.length, 0)
          if (row.amount !== null) assert.match(row.amount.amount, DECIMAL)
          assert.isTrue((row.description ?? "").length <= 401)
          for (const key of Object.keys(row)) assert.notMatch(key, /deadline|tender_end|closes/)
        }
        assert.isTrue(envelope.results.some((r) => r.amount !== null && r.amount.currency === "MXN"))
        assert.deepStrictEqual(envelope.coverage.map((c) => c.evidenceCategory), ["government_contracting"])
      }))

    it.effect("a cursor resumes only the request that issued it", () =>
      Effect.gen(function*() {
        const first = yield* Opportunities.search({ buyer: "GACM", limit: 2 })
        const cursor = first.page?.nextCursor ?? undefined
        assert.isDefined(cursor)
        if (cursor === undefined) return
        assert.strictEqual(yield* refusalCode(Opportunities.search({ buyer: "AICM", limit: 2, cursor })), "invalid_cursor")
        const next = yield* Opportunities.search({ buyer: "GACM", limit: 2, cursor })
        assert.strictEqual(next.results.length, 2)
      }))

    it.effect("get_opportunity nests the procedure's awards, as many as award_count", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* readAll({ buyer: "AICM" }, 50)
        assert.isAbove(rows.length, 0)
        let nested = 0
        for (const row of rows) {
          const detail = yield* Opportunities.get({ record_ref: row.record_ref })
          assert.isNull(detail.page)
          assert.strictEqual(detail.operation, "get_opportunity")
          assert.strictEqual(detail.results.record_fingerprint, row.record_fingerprint)
          const awards = detail.results.awards ?? []
          assert.strictEqual(awards.length, detail.results.award_count, row.title)
          nested += awards.length
          for (const award of awards) {
            assert.match(award.record_fingerprint, /^[0-9a-f]{32}$/)
            assert.isTrue(Array.isArray(award.cogPartidas))
            if (award.amount !== null) assert.match(award.amount, DECIMAL)
            assert.include(["supplier_contract", "award_group_published_total"], award.amount_scope)
            // An award ref opens as an award, and has its provenance entry.
            const opened = yield* openRecordRef(award.record_ref, "award")
            assert.strictEqual(opened.fingerprint, award.record_fingerprint)
            assert.include(detail.provenance.map((p) => p.record_ref), award.record_ref)
          }
        }
        const [expected] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards a
          JOIN market.opportunities o ON o.snapshot_id = a.snapshot_id AND o.source_slug = a.source_slug
            AND o.source_record_id = a.opportunity_source_record_id
          WHERE o.buyer_acronym = 'AICM'`
        assert.strictEqual(nested, expected?.n)
        const largest = rows.reduce((a, b) => (b.award_count > a.award_count ? b : a))
        assert.strictEqual(largest.award_count, 11)
        const detail = yield* Opportunities.get({ record_ref: largest.record_ref })
        assert.include(detail.semanticWarnings.map((w) => w.code), "award_not_payment")
        assert.strictEqual(detail.diagnostics.rowsExamined, 12)
      }))

    it.effect("include_awards false leaves awards null; HTTP sends it as text, the model as a boolean", () =>
      Effect.gen(function*() {
        const [row] = (yield* Opportunities.search({ buyer: "AICM", limit: 1 })).results
        assert.isDefined(row)
        if (row === undefined) return
        const without = yield* Opportunities.get({ record_ref: row.record_ref, include_awards: false })
        assert.isNull(without.results.awards)
        assert.isAbove(without.results.award_count, 0)
        const canonical = yield* Opportunities.getOpportunity.runCanonical({ record_ref: row.record_ref, include_awards: "false" })
        assert.isNull(canonical.results.awards)
        const model = yield* Opportunities.getOpportunity.runModel({ record_ref: row.record_ref, include_awards: true })
        assert.strictEqual(model.results.awards?.length, row.award_count)
        assert.strictEqual(
          yield* refusalCode(Opportunities.getOpportunity.runModel({ record_ref: row.record_ref, include_awards: "false" })),
          "invalid_field_value"
        )
      }))

    it.effect("get_opportunity refuses a supplier ref, a fingerprint and a tampered ref with invalid_record_ref", () =>
      Effect.gen(function*() {
        const [supplier] = (yield* Suppliers.searchSuppliers({ state: "Zacatecas", scian_codes: ["212"], limit: 1 })).results
        assert.isDefined(supplier)
        if (supplier === undefined) return
        const refusal = yield* refusalOf(Opportunities.get({ record_ref: supplier.record_ref }))
        assert.strictEqual(refusal?.semanticCode, "invalid_record_ref")
        assert.include(refusal?.why ?? "", "supplier")
        const [row] = (yield* Opportunities.search({ buyer: "AICM", limit: 1 })).results
        assert.strictEqual(yield* refusalCode(Opportunities.get({ record_ref: row?.record_fingerprint ?? "" })), "invalid_record_ref")
        assert.strictEqual(yield* refusalCode(Opportunities.get({ record_ref: "not-a-ref" })), "invalid_record_ref")
      }))

    it.effect("the declarations run their capability examples and list their refusals", () =>
      Effect.gen(function*() {
        const search = yield* Opportunities.searchOpportunities.runModel(Opportunities.searchOpportunities.capability.example)
        assert.isAbove(search.results.length, 0)
        const ref = search.results[0]?.record_ref
        assert.isDefined(ref)
        const detail = yield* Opportunities.getOpportunity.runModel({ record_ref: ref })
        assert.isArray(detail.results.awards)
        assert.isTrue(Opportunities.searchOpportunities.paginates)
        assert.isFalse(Opportunities.getOpportunity.paginates)
        assert.includeMembers([...Opportunities.searchOpportunities.refuses], [
          "deadline_not_available",
          "query_not_selective",
          "unknown_filter_value",
          "invalid_cursor",
          "cursor_stale"
        ])
        assert.include(Opportunities.getOpportunity.refuses, "invalid_record_ref")
      }))

    it.effect("no response carries a source identity, publisher or contact coordinate", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const scan = [...(yield* forbiddenValues)]
        const ids = yield* sql<{ id: string }>`SELECT source_record_id AS id FROM market.opportunities
          UNION SELECT source_record_id FROM market.awards`
        for (const { id } of ids) if (id.length >= 5) scan.push(`"${id}"`)
        const sources = yield* sql<{ slug: string; publisher: string }>`SELECT slug, publisher FROM market.sources`
        for (const source of sources) scan.push(`"${source.slug}"`, source.publisher)
        const bodies: Array<string> = []
        for (const input of [
          { buyer: "AICM", limit: 50 },
          { query: "aeropuerto", buyer: "GACM", limit: 50 },
          { query: "dragado", strategy: "hybrid" as const }
        ]) {
          const envelope = yield* Opportunities.searchOpportunities.runModel(input)
          bodies.push(JSON.stringify(envelope))
          for (const row of envelope.results.slice(0, 10)) {
            bodies.push(JSON.stringify(yield* Opportunities.getOpportunity.runModel({ record_ref: row.record_ref })))
          }
        }
        assert.deepStrictEqual(Leaks.find(bodies, scan).flat(), [], "a response leaked a forbidden value")
      }))
  })
}
