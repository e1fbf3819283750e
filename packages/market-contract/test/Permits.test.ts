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
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Permits from "../src/Permits.js"
import { forbiddenValues } from "../src/ProjectionAudit.js"

const refusalOf = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : undefined))

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(refusalOf(effect), (refusal) => refusal?.semanticCode ?? "succeeded")

/** Every row of a search, page by page. */
const readAll = (input: Permits.SearchPermitsInput, limit: number) =>
  Effect.gen(function*() {
    const rows: Array<Permits.PermitRow> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = yield* Permits.search({ ...input, limit, ...(cursor === undefined ? {} : { cursor }) })
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
    `permits before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses before anything is published", () =>
        Effect.gen(function*() {
          assert.strictEqual(yield* refusalCode(Permits.search({ holder_name: "Bimbo" })), "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`permits on ${target.name}`, (it) => {
    it.effect("needs a holder: query_too_broad without holder_rfc or holder_name", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Permits.search({})), "query_too_broad")
        assert.strictEqual(yield* refusalCode(Permits.search({ limit: 5 })), "query_too_broad")
        // Only holder fields exist: anything else is a structural refusal.
        assert.strictEqual(
          (yield* refusalOf(Permits.searchPermits.runModel({ state: "Zacatecas" })))?.semanticCode,
          "invalid_field_value"
        )
      }), 0)

    it.effect("holder_name is approximate: candidates closest first, each paged once, with the warning", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* readAll({ holder_name: "Bimbo" }, 7)
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.permits
          WHERE word_similarity('bimbo', holder_name_norm) >= 0.6`
        assert.strictEqual(rows.length, count?.n)
        assert.strictEqual(new Set(rows.map((r) => r.record_fingerprint)).size, rows.length)
        // Exact holder first, then the merely similar one ("Bimbo del Noroeste").
        const exact = rows.filter((r) => r.holder_name.startsWith("Bimbo, "))
        assert.isAbove(exact.length, 0)
        assert.isBelow(exact.length, rows.length)
        assert.deepStrictEqual(rows.slice(0, exact.length).map((r) => r.record_fingerprint), exact.map((r) => r.record_fingerprint))
        const page = yield* Permits.search({ holder_name: "Bimbo", limit: 5 })
        assert.include(page.semanticWarnings.map((w) => w.code), "approximate_name_match")
        assert.include(page.semanticWarnings.map((w) => w.code), "permit_as_granted")
        // Case alone is not a normalization worth reporting.
        assert.deepStrictEqual(page.interpretedRequest.normalizations, [])
      }))

    it.effect("holder_name ignores accents, punctuation and the legal form", () =>
      Effect.gen(function*() {
        const spelled = yield* Permits.search({ holder_name: "TELÉFONOS DE MÉXICO, S.A.B. DE C.V.", limit: 10 })
        const plain = yield* Permits.search({ holder_name: "telefonos de mexico", limit: 10 })
        assert.strictEqual(spelled.results.length, 10)
        assert.deepStrictEqual(spelled.results.map((r) => r.record_fingerprint), plain.results.map((r) => r.record_fingerprint))
        assert.deepStrictEqual(spelled.interpretedRequest.normalizations.map((n) => n.to), ["telefonos de mexico"])
        const refusal = yield* refusalOf(Permits.search({ holder_name: "...,;" }))
        assert.strictEqual(refusal?.semanticCode, "invalid_field_value")
        assert.strictEqual(refusal?.field, "holder_name")
      }))

    it.effect("holder_rfc is validated with parseRfc; a well-formed one nobody holds is an answer with coverage", () =>
      Effect.gen(function*() {
        const refusal = yield* refusalOf(Permits.search({ holder_rfc: "not-an-rfc" }))
        assert.strictEqual(refusal?.semanticCode, "invalid_field_value")
        assert.strictEqual(refusal?.field, "holder_rfc")
        // The publisher prints no RFC on these permits, so a strong-identity search finds none.
        const none = yield* Permits.search({ holder_rfc: "gta-140724-h10" })
        assert.strictEqual(none.results.length, 0)
        assert.strictEqual(none.interpretedRequest.request["holder_rfc"], "GTA140724H10")
        assert.deepStrictEqual(none.interpretedRequest.normalizations.map((n) => n.field), ["holder_rfc"])
        assert.include(none.semanticWarnings.map((w) => w.code), "zero_results_with_coverage")
      }))

    it.effect("holder_rfc matches exactly, and with holder_name both must hold", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // This test database only: give the Bimbo permits an RFC, as a publisher printing one would.
        yield* sql`UPDATE market.permits SET holder_rfc = 'BIM011108DJ5' WHERE holder_name_norm = 'bimbo'`
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.permits WHERE holder_rfc = 'BIM011108DJ5'`
        const byRfc = yield* readAll({ holder_rfc: "BIM011108DJ5" }, 10)
        assert.strictEqual(byRfc.length, count?.n)
        assert.isTrue(byRfc.every((r) => r.holder_rfc === "BIM011108DJ5"))
        const strong = yield* Permits.search({ holder_rfc: "BIM011108DJ5", limit: 5 })
        assert.notInclude(strong.semanticWarnings.map((w) => w.code), "approximate_name_match")
        const both = yield* readAll({ holder_rfc: "BIM011108DJ5", holder_name: "Bimbo del Noroeste" }, 50)
        assert.strictEqual(both.length, 0)
        const agree = yield* readAll({ holder_rfc: "BIM011108DJ5", holder_name: "Bimbo" }, 50)
        assert.strictEqual(agree.length, count?.n)
        yield* sql`UPDATE market.permits SET holder_rfc = NULL WHERE holder_rfc = 'BIM011108DJ5'`
      }))

    it.effect("rows carry exact publisher figures as decimal strings and a permit record_ref", () =>
      Effect.gen(function*() {
        const envelope = yield* Permits.search({ holder_name: "Cogeneración de Altamira", limit: 20 })
        assert.isAbove(envelope.results.length, 0)
        const figures = (yield* readAll({ holder_name: "telefonos de mexico" }, 50)).flatMap((r) => [
          r.investment_mdd,
          r.capacity_mw,
          r.estimated_generation
        ])
        assert.isTrue(figures.some((f) => f !== null))
        for (const figure of figures) if (figure !== null) assert.match(figure, DECIMAL)
        for (const [i, row] of envelope.results.entries()) {
          assert.strictEqual(row.evidence_category, "authorization_or_permit")
          assert.strictEqual(envelope.provenance[i]?.record_ref, row.record_ref)
          const opened = yield* openRecordRef(row.record_ref, "permit")
          assert.strictEqual(opened.fingerprint, row.record_fingerprint)
        }
        assert.deepStrictEqual(envelope.coverage.map((c) => c.evidenceCategory), ["authorization_or_permit"])
      }))

    it.effect("a cursor resumes only the request that issued it", () =>
      Effect.gen(function*() {
        const first = yield* Permits.search({ holder_name: "Bimbo", limit: 2 })
        const cursor = first.page?.nextCursor ?? undefined
        assert.isDefined(cursor)
        if (cursor === undefined) return
        assert.strictEqual(yield* refusalCode(Permits.search({ holder_name: "Telmex", limit: 2, cursor })), "invalid_cursor")
        assert.strictEqual((yield* Permits.search({ holder_name: "Bimbo", limit: 2, cursor })).results.length, 2)
      }))

    it.effect("the declaration runs its capability example and lists its refusals", () =>
      Effect.gen(function*() {
        const op = Permits.searchPermits
        const envelope = yield* op.runModel(op.capability.example)
        assert.isAbove(envelope.results.length, 0)
        assert.isTrue(op.paginates)
        assert.isTrue(op.metered)
        assert.includeMembers([...op.refuses], ["query_too_broad", "invalid_field_value", "invalid_cursor", "cursor_stale"])
      }))

    it.effect("no response carries a source identity, publisher or contact coordinate", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const scan = [...(yield* forbiddenValues)]
        const ids = yield* sql<{ id: string }>`SELECT source_record_id AS id FROM market.permits`
        for (const { id } of ids) scan.push(id)
        const sources = yield* sql<{ slug: string; publisher: string }>`SELECT slug, publisher FROM market.sources`
        for (const source of sources) scan.push(`"${source.slug}"`, source.publisher)
        for (const input of [{ holder_name: "Bimbo", limit: 50 }, { holder_name: "telefonos de mexico", limit: 50 }]) {
          const body = JSON.stringify(yield* Permits.searchPermits.runModel(input))
          assert.deepStrictEqual(Leaks.find([body], scan)[0], [], "a response leaked a forbidden value")
        }
      }))
  })
}
