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
import { createHash } from "node:crypto"
import * as Awards from "../src/Awards.js"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import { forbiddenValues } from "../src/ProjectionAudit.js"

const refusalCode = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left.semanticCode : "succeeded"))

/** Exact decimal arithmetic for checks: amounts scaled to integers of 12 decimals. */
const scaled = (amount: string): bigint => {
  const negative = amount.startsWith("-")
  const [whole = "0", fraction = ""] = amount.replace("-", "").split(".")
  const value = BigInt(`${whole}${fraction.padEnd(12, "0")}`)
  return negative ? -value : value
}
const sumOf = (amounts: ReadonlyArray<string | null>): bigint =>
  amounts.reduce((sum: bigint, a) => sum + (a === null ? 0n : scaled(a)), 0n)

// Fixture awards added to the demo publication: one RFC in three (currency, scope) pairs, and two buyers
// whose totals compare across 2020 and 2021.
const RFC = "TST010101AB1"
const OTHER_RFC = "TSU020202CD2"
interface Fixture {
  readonly key: string
  readonly rfc: string
  readonly buyer: string
  readonly date: string
  readonly amount: string
  readonly currency: string
  readonly scope: "supplier_contract" | "award_group_published_total"
  readonly cogs: ReadonlyArray<string>
}
const fixtures: ReadonlyArray<Fixture> = [
  { key: "1", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-03-01", amount: "100.10", currency: "MXN", scope: "supplier_contract", cogs: ["21101", "26102"] },
  { key: "2", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-06-15", amount: "200.205", currency: "MXN", scope: "supplier_contract", cogs: ["33104"] },
  { key: "3", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2021-02-01", amount: "0.005", currency: "MXN", scope: "supplier_contract", cogs: [] },
  { key: "4", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-05-05", amount: "50.5", currency: "USD", scope: "supplier_contract", cogs: ["21101"] },
  { key: "5", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-07-07", amount: "1000", currency: "MXN", scope: "award_group_published_total", cogs: ["21101"] },
  { key: "6", rfc: OTHER_RFC, buyer: "Fixture Buyer Zeta", date: "2021-03-03", amount: "10", currency: "MXN", scope: "supplier_contract", cogs: [] }
]

const insertFixtures = (snapshotId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const f of fixtures) {
      const name = `Proveedor Prueba ${f.rfc}`
      yield* sql`INSERT INTO market.awards (snapshot_id, source_slug, source_record_id, retrieved_on, fingerprint, title,
          supplier_rfc, supplier_name, supplier_name_norm, buyer_name, award_date, amount, currency, amount_scope,
          cog_partidas, search_tsv)
        VALUES (${snapshotId}, 'compranet', ${`fixture-award-${f.key}`}, '2024-01-01'::date,
          ${createHash("md5").update(`fixture-award-${f.key}`).digest("hex")}, ${`Contrato de prueba ${f.key}`},
          ${f.rfc}, ${name}, ${name.toLowerCase()}, ${f.buyer}, ${f.date}::date, ${f.amount}::numeric, ${f.currency},
          ${f.scope}, ${`{${f.cogs.join(",")}}`}::text[], to_tsvector('market.es', ${name}))`
    }
  }).pipe(Effect.orDie)

type SearchPage = Effect.Effect.Success<ReturnType<typeof Awards.searchAwardRows>>

/** Every page of a search, in order. */
const walkSearch = (input: Awards.SearchAwardsInput) =>
  Effect.gen(function*() {
    const pages: Array<SearchPage> = []
    let cursor: string | undefined
    do {
      const page = yield* Awards.searchAwardRows({ ...input, ...(cursor === undefined ? {} : { cursor }) })
      pages.push(page)
      cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
    } while (cursor !== undefined)
    return pages
  })

const AuditRow = Schema.Struct({ source_slug: Schema.String, source_record_id: Schema.String })

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `search_awards and get_supplier_history before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses a malformed cog_partidas item from the schema, before any corpus read", () =>
        Effect.gen(function*() {
          // Nothing is published yet: a well-formed request reaches the corpus and is refused for that reason,
          // so the malformed ones below were refused before it.
          assert.strictEqual(
            yield* refusalCode(Awards.searchAwards.runModel({ cog_partidas: ["21101"] })),
            "serving_projection_unavailable"
          )
          for (const bad of [["2110"], ["21101", "2110A"], ["211011"], [" 21101"]]) {
            const refusal = yield* Effect.flip(Awards.searchAwards.runModel({ cog_partidas: bad }))
            assert.strictEqual(refusal.semanticCode, "invalid_field_value", bad.join(","))
            assert.match(refusal.field ?? "", /^cog_partidas/)
          }
          // 1 to 20 items.
          assert.strictEqual(yield* refusalCode(Awards.searchAwards.runModel({ cog_partidas: [] })), "invalid_field_value")
          const many = Array.from({ length: 21 }, (_, i) => String(21101 + i))
          assert.strictEqual(yield* refusalCode(Awards.searchAwards.runModel({ cog_partidas: many })), "invalid_field_value")
          // History needs its three fields together, also refused by the schema.
          assert.strictEqual(
            yield* refusalCode(Awards.getSupplierHistory.runModel({ supplier_rfc: RFC, currency: "MXN" })),
            "invalid_field_value"
          )
          const scope = yield* Effect.flip(
            Awards.getSupplierHistory.runModel({ supplier_rfc: RFC, currency: "MXN", amount_scope: "total" })
          )
          assert.deepStrictEqual(scope.allowedValues, ["supplier_contract", "award_group_published_total"])
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`search_awards and get_supplier_history on ${target.name}`, (it) => {
    it.effect("adds the fixture awards to the demo publication", () =>
      Effect.gen(function*() {
        const publication = yield* Effect.flatten((yield* Corpus).active)
        yield* insertFixtures(publication.snapshotId)
        const found = yield* Awards.searchAwardRows({ supplier_rfc: RFC, limit: 50 })
        assert.strictEqual(found.results.length, 5)
      }), 0)

    it.effect("requires a narrowing dimension; currency and scope alone do not narrow", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusalCode(Awards.searchAwardRows({})), "query_too_broad")
        assert.strictEqual(
          yield* refusalCode(Awards.searchAwardRows({ currency: "MXN", amount_scope: "supplier_contract" })),
          "query_too_broad"
        )
        const dated = yield* Awards.searchAwardRows({ from_date: "2021-01-01", to_date: "2021-12-31" })
        assert.isTrue(dated.results.every((r) => r.award_date !== null && r.award_date >= "2021-01-01" && r.award_date <= "2021-12-31"))
        assert.strictEqual(
          yield* refusalCode(Awards.searchAwardRows({ from_date: "2021-02-01", to_date: "2021-01-01" })),
          "invalid_field_value"
        )
      }))

    it.effect("refuses an amount bound without both currency and amount_scope", () =>
      Effect.gen(function*() {
        for (
          const input of [
            { min_amount: "100" },
            { max_amount: "100", currency: "MXN" },
            { min_amount: "100", amount_scope: "supplier_contract" as const },
            { supplier_rfc: RFC, min_amount: "100" }
          ]
        ) {
          assert.strictEqual(yield* refusalCode(Awards.searchAwardRows(input)), "amount_requires_currency_and_scope")
        }
        const bounded = yield* Awards.searchAwardRows({
          min_amount: "100.10",
          max_amount: "200.205",
          currency: "mxn",
          amount_scope: "supplier_contract",
          from_date: "2020-01-01",
          to_date: "2020-12-31"
        })
        const amounts = bounded.results.map((r) => r.amount)
        assert.includeMembers(amounts, ["100.10", "200.205"])
        assert.isTrue(bounded.results.every((r) => r.currency === "MXN" && r.amount_scope === "supplier_contract"))
        assert.deepStrictEqual(bounded.interpretedRequest.normalizations.map((n) => n.field), ["currency"])
        assert.strictEqual(
          yield* refusalCode(Awards.searchAwardRows({ min_amount: "5", max_amount: "4.99", currency: "MXN", amount_scope: "supplier_contract" })),
          "invalid_field_value"
        )
        assert.strictEqual(yield* refusalCode(Awards.searchAwards.runModel({ min_amount: "1e5" })), "invalid_field_value")
      }))

    it.effect("matches cog_partidas by array overlap: any one shared code matches", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pages = yield* walkSearch({ cog_partidas: ["26102", "99999", "33104"], limit: 2 })
        const rows = pages.flatMap((p) => p.results)
        const expected = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards
          WHERE cog_partidas && ARRAY['26102', '99999', '33104']::text[]`.pipe(Effect.orDie)
        assert.strictEqual(rows.length, expected[0]?.n)
        assert.isAtLeast(rows.length, 3)
        for (const row of rows) {
          assert.isTrue(row.cogPartidas.some((c) => ["26102", "33104"].includes(c)), row.cogPartidas.join(","))
        }
        // The fixture with two codes matches on one of them and shows both.
        assert.isTrue(rows.some((r) => r.cogPartidas.join(",") === "21101,26102" && r.supplier_rfc === RFC))
      }))

    it.effect("serves award rows: exact amounts, currency and scope, cogPartidas [] when none, one record_ref per row", () =>
      Effect.gen(function*() {
        const envelope = yield* Awards.searchAwardRows({ supplier_rfc: RFC.toLowerCase(), limit: 50 })
        assert.deepStrictEqual(envelope.interpretedRequest.normalizations.map((n) => n.field), ["supplier_rfc"])
        assert.strictEqual(envelope.interpretedRequest.request["supplier_rfc"], RFC)
        assert.include(envelope.semanticWarnings.map((w) => w.code), "award_not_payment")
        // Newest first.
        const dates = envelope.results.map((r) => r.award_date ?? "")
        assert.deepStrictEqual(dates, [...dates].sort().reverse())
        const byAmount = new Map(envelope.results.map((r) => [r.amount, r]))
        const small = byAmount.get("0.005")
        assert.isDefined(small)
        assert.deepStrictEqual(small?.cogPartidas, [])
        assert.strictEqual(small?.award_date, "2021-02-01")
        assert.strictEqual(byAmount.get("200.205")?.currency, "MXN")
        assert.strictEqual(byAmount.get("50.5")?.currency, "USD")
        assert.strictEqual(byAmount.get("1000")?.amount_scope, "award_group_published_total")
        for (const [i, row] of envelope.results.entries()) {
          assert.strictEqual(row.evidence_category, "government_contracting")
          assert.match(row.record_fingerprint, /^[0-9a-f]{32}$/)
          assert.strictEqual(envelope.provenance[i]?.record_ref, row.record_ref)
        }
        assert.strictEqual(yield* refusalCode(Awards.searchAwardRows({ supplier_rfc: "not-an-rfc" })), "invalid_field_value")
      }))

    it.effect("matches supplier_name approximately and says the rows are candidates", () =>
      Effect.gen(function*() {
        const envelope = yield* Awards.searchAwardRows({ supplier_name: "Computel" })
        assert.isTrue(envelope.results.some((r) => r.supplier_name.includes("COMPUTEL")))
        assert.include(envelope.semanticWarnings.map((w) => w.code), "approximate_name_match")
        assert.strictEqual(yield* refusalCode(Awards.searchAwardRows({ supplier_name: "S.A. de C.V." })), "invalid_field_value")
      }))

    it.effect("answers a text query; alone it must be selective", () =>
      Effect.gen(function*() {
        const envelope = yield* Awards.searchAwardRows({ query: "prueba", supplier_rfc: RFC })
        assert.strictEqual(envelope.results.length, 5)
        assert.strictEqual(envelope.interpretedRequest.query_interpretation?.applied_mode, "all_terms")
        assert.strictEqual(yield* refusalCode(Awards.searchAwardRows({ query: "de" })), "invalid_field_value")
        assert.strictEqual(
          yield* refusalCode(Awards.searchAwardRows({ query: "servicios", query_mode: "any_terms" })),
          "query_not_selective"
        )
      }))

    it.effect("pages through a search newest first, each award exactly once", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pages = yield* walkSearch({ from_date: "2013-01-01", to_date: "2013-12-31", limit: 17 })
        const rows = pages.flatMap((p) => p.results)
        const expected = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards
          WHERE award_date BETWEEN '2013-01-01' AND '2013-12-31'`.pipe(Effect.orDie)
        assert.strictEqual(rows.length, expected[0]?.n)
        assert.isAbove(pages.length, 2)
        assert.strictEqual(new Set(rows.map((r) => r.record_fingerprint)).size, rows.length)
        const dates = rows.map((r) => r.award_date ?? "")
        assert.deepStrictEqual(dates, [...dates].sort().reverse())
        // A cursor only resumes its own filters.
        const cursor = pages[0]?.page?.nextCursor ?? undefined
        assert.isDefined(cursor)
        assert.strictEqual(
          yield* refusalCode(Awards.searchAwardRows({ from_date: "2013-01-01", to_date: "2013-12-30", limit: 17, ...(cursor === undefined ? {} : { cursor }) })),
          "invalid_cursor"
        )
      }))

    it.effect("history totals one (currency, scope) pair and lists every other pair the RFC has awards in", () =>
      Effect.gen(function*() {
        const walked: Array<string | null> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const envelope = yield* Awards.readSupplierHistory({
            supplier_rfc: RFC,
            currency: "MXN",
            amount_scope: "supplier_contract",
            limit: 2,
            ...(cursor === undefined ? {} : { cursor })
          })
          pages += 1
          const { other_pairs, total } = envelope.results
          assert.deepStrictEqual(total, { currency: "MXN", amount_scope: "supplier_contract", awardCount: 3, totalAmount: "300.310" })
          assert.sameDeepMembers([...other_pairs], [
            { currency: "USD", amount_scope: "supplier_contract", awardCount: 1, totalAmount: "50.5" },
            { currency: "MXN", amount_scope: "award_group_published_total", awardCount: 1, totalAmount: "1000" }
          ])
          assert.isTrue(envelope.results.awards.every((a) => a.currency === "MXN" && a.amount_scope === "supplier_contract"))
          walked.push(...envelope.results.awards.map((a) => a.amount))
          cursor = envelope.page?.hasMore === true ? envelope.page.nextCursor ?? undefined : undefined
        } while (cursor !== undefined)
        assert.strictEqual(pages, 2)
        assert.strictEqual(sumOf(walked), scaled("300.310"))

        // An RFC with a single pair has no other pairs; a pair it has no awards in is an empty answer.
        const single = yield* Awards.readSupplierHistory({ supplier_rfc: OTHER_RFC, currency: "MXN", amount_scope: "supplier_contract" })
        assert.deepStrictEqual(single.results.other_pairs, [])
        const none = yield* Awards.readSupplierHistory({ supplier_rfc: OTHER_RFC, currency: "USD", amount_scope: "supplier_contract" })
        assert.deepStrictEqual(none.results.total, { currency: "USD", amount_scope: "supplier_contract", awardCount: 0, totalAmount: "0" })
        assert.strictEqual(none.results.other_pairs.length, 1)
        assert.include(none.semanticWarnings.map((w) => w.code), "zero_results_with_coverage")
        assert.strictEqual(
          yield* refusalCode(Awards.readSupplierHistory({ supplier_rfc: "XYZ", currency: "MXN", amount_scope: "supplier_contract" })),
          "invalid_field_value"
        )
      }))

    it.effect("is declared: metered, paginated, runnable examples, CLI history takes the RFC positionally", () =>
      Effect.gen(function*() {
        for (const op of [Awards.searchAwards, Awards.getSupplierHistory]) {
          assert.isTrue(op.metered)
          assert.isTrue(op.paginates)
          assert.includeMembers([...op.refuses], ["invalid_cursor", "cursor_stale", "serving_projection_unavailable", "serving_projection_stale"])
          const encoded = yield* op.runModel(op.capability.example)
          assert.strictEqual(encoded.operation, op.name)
        }
        assert.strictEqual(Awards.getSupplierHistory.cli.positional, "supplier_rfc")
        assert.deepStrictEqual(Awards.getSupplierHistory.cli.words, ["awards", "history"])
        assert.include(Awards.searchAwards.refuses, "amount_requires_currency_and_scope")
      }))

    it.effect("never serves source identity", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const audit = yield* sql`SELECT source_slug, source_record_id FROM market.awards`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(AuditRow))),
          Effect.orDie
        )
        const forbidden = new Set(yield* forbiddenValues)
        for (const row of audit) {
          forbidden.add(row.source_slug)
          if (row.source_record_id.length >= 5) forbidden.add(`"${row.source_record_id}"`)
        }
        const needles = [...forbidden]
        const bodies = [
          yield* Awards.searchAwards.runModel({ from_date: "2017-01-01", to_date: "2018-12-31", limit: 50 }),
          yield* Awards.searchAwards.runModel({ supplier_rfc: RFC }),
          yield* Awards.searchAwards.runModel({ cog_partidas: ["21101", "33104"] }),
          yield* Awards.getSupplierHistory.runModel({ supplier_rfc: "CFE370814QI0", currency: "MXN", amount_scope: "supplier_contract" })
        ].map((body) => JSON.stringify(body))
        for (const body of bodies) {
          assert.deepStrictEqual(Leaks.find([body], needles)[0], [], "a response leaked a forbidden value")
        }
      }))
  })
}
