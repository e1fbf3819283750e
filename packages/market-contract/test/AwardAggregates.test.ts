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
import * as AwardAggregates from "../src/AwardAggregates.js"
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

const RFC = "TST010101AB1"
const OTHER_RFC = "TSU020202CD2"
const fixtures = [
  { key: "1", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-03-01", amount: "100.10", currency: "MXN", scope: "supplier_contract", cogs: ["21101", "26102"] },
  { key: "2", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-06-15", amount: "200.205", currency: "MXN", scope: "supplier_contract", cogs: ["33104"] },
  { key: "3", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2021-02-01", amount: "0.005", currency: "MXN", scope: "supplier_contract", cogs: [] },
  { key: "4", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-05-05", amount: "50.5", currency: "USD", scope: "supplier_contract", cogs: ["21101"] },
  { key: "5", rfc: RFC, buyer: "Fixture Buyer Alfa", date: "2020-07-07", amount: "1000", currency: "MXN", scope: "award_group_published_total", cogs: ["21101"] },
  { key: "6", rfc: OTHER_RFC, buyer: "Fixture Buyer Zeta", date: "2021-03-03", amount: "10", currency: "MXN", scope: "supplier_contract", cogs: [] }
] as const

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

type Aggregate = Effect.Effect.Success<ReturnType<typeof AwardAggregates.aggregateAwardGroups>>

/** Every page of an aggregate, in order. */
const walk = (input: AwardAggregates.AggregateAwardsInput) =>
  Effect.gen(function*() {
    const pages: Array<Aggregate> = []
    let cursor: string | undefined
    do {
      const page = yield* AwardAggregates.aggregateAwardGroups({ ...input, ...(cursor === undefined ? {} : { cursor }) })
      pages.push(page)
      cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
    } while (cursor !== undefined)
    return pages
  })

/** Every award of a search, all pages. */
const searchAll = (input: Awards.SearchAwardsInput) =>
  Effect.gen(function*() {
    const rows: Array<Awards.AwardRow> = []
    let cursor: string | undefined
    do {
      const page = yield* Awards.searchAwardRows({ ...input, limit: 50, ...(cursor === undefined ? {} : { cursor }) })
      rows.push(...page.results)
      cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
    } while (cursor !== undefined)
    return rows
  })

const mxn = { currency: "MXN", amount_scope: "supplier_contract" } as const
const periods = {
  from_date: "2021-01-01",
  to_date: "2021-12-31",
  compare_period: { from_date: "2020-01-01", to_date: "2020-12-31" }
} as const

const Total = Schema.Struct({ n: Schema.Number, total: Schema.String })
const AuditRow = Schema.Struct({ source_slug: Schema.String, source_record_id: Schema.String })

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `aggregate_awards before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses supplier_name as a dimension with the allowed list, and other structural faults, from the schema", () =>
        Effect.gen(function*() {
          const op = AwardAggregates.aggregateAwards
          // Nothing is published: a valid request is refused for that, so these were refused before any read.
          assert.strictEqual(yield* refusalCode(op.runModel({ ...mxn, group_by: ["buyer_name"] })), "serving_projection_unavailable")
          const refusal = yield* Effect.flip(op.runModel({ ...mxn, group_by: ["supplier_name"] }))
          assert.strictEqual(refusal.semanticCode, "invalid_field_value")
          assert.strictEqual(refusal.field, "group_by.0")
          assert.deepStrictEqual(refusal.allowedValues, [...AwardAggregates.groupDimensions])
          assert.notInclude(refusal.allowedValues ?? [], "supplier_name")
          for (
            const input of [
              { ...mxn, group_by: [] },
              { ...mxn, group_by: ["buyer_name", "award_year", "supplier_rfc", "supplier_size"] },
              { ...mxn, group_by: ["buyer_name", "buyer_name"] },
              { currency: "MXN", group_by: ["buyer_name"] },
              { amount_scope: "supplier_contract", group_by: ["buyer_name"] },
              { ...mxn, group_by: ["buyer_name"], compare_period: { from_date: "2020-01-01" } },
              { ...mxn, group_by: ["buyer_name"], compare_period: { from_date: "2020-01-01", to_date: "2020-02-30" } },
              { ...mxn, group_by: ["buyer_name"], limit: 201 }
            ]
          ) {
            assert.strictEqual(yield* refusalCode(op.runModel(input)), "invalid_field_value", JSON.stringify(input))
          }
          assert.strictEqual(yield* refusalCode(op.runModel({ ...mxn, group_by: ["buyer_name"], limit: 200 })), "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`aggregate_awards on ${target.name}`, (it) => {
    it.effect("adds the fixture awards to the demo publication", () =>
      Effect.gen(function*() {
        const publication = yield* Effect.flatten((yield* Corpus).active)
        yield* insertFixtures(publication.snapshotId)
      }), 0)

    it.effect("group totals equal the sum of the group's individual awards, never across currencies or scopes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pages = yield* walk({ ...mxn, group_by: ["supplier_rfc"], limit: 200 })
        const groups = pages.flatMap((p) => p.results)
        assert.isTrue(groups.every((g) => Object.keys(g).sort().join(",") === "awardCount,supplierRfc,totalAmount"))
        for (const rfc of [RFC, "CFE370814QI0"]) {
          const group = groups.find((g) => g.supplierRfc === rfc)
          assert.isDefined(group, rfc)
          const history = yield* Awards.readSupplierHistory({ supplier_rfc: rfc, ...mxn, limit: 50 })
          assert.strictEqual(group?.awardCount, history.results.total.awardCount)
          assert.strictEqual(group?.totalAmount, history.results.total.totalAmount)
          const rows = yield* searchAll({ supplier_rfc: rfc, ...mxn })
          assert.strictEqual(rows.length, group?.awardCount)
          assert.strictEqual(sumOf(rows.map((r) => r.amount)), scaled(group?.totalAmount ?? "x"))
        }
        // The fixture RFC's USD award and its group-total award are in none of these sums.
        assert.strictEqual(groups.find((g) => g.supplierRfc === RFC)?.totalAmount, "300.310")
        // All groups together: exactly the MXN supplier_contract awards.
        const corpus = yield* sql`SELECT count(*)::int AS n, sum(amount)::text AS total FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract'`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Total))),
          Effect.orDie
        )
        assert.strictEqual(groups.reduce((n, g) => n + g.awardCount, 0), corpus[0]?.n)
        assert.strictEqual(sumOf(groups.map((g) => g.totalAmount)), scaled(corpus[0]?.total ?? "x"))
        const usd = yield* AwardAggregates.aggregateAwardGroups({ currency: "USD", amount_scope: "supplier_contract", group_by: ["supplier_rfc"] })
        assert.strictEqual(usd.results.find((g) => g.supplierRfc === RFC)?.totalAmount, "50.5")
        const published = yield* AwardAggregates.aggregateAwardGroups({
          currency: "MXN",
          amount_scope: "award_group_published_total",
          group_by: ["supplier_rfc"]
        })
        assert.deepStrictEqual(published.results.map((g) => [g.supplierRfc, g.totalAmount]), [[RFC, "1000"]])
      }))

    it.effect("pages walk every group exactly once, ranked by total then key", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pages = yield* walk({ ...mxn, group_by: ["buyer_acronym", "award_year"], limit: 7 })
        const groups = pages.flatMap((p) => p.results)
        const expected = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (
          SELECT DISTINCT buyer_acronym, extract(year FROM award_date) FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract') t`.pipe(Effect.orDie)
        assert.strictEqual(groups.length, expected[0]?.n)
        assert.isAbove(pages.length, 3)
        const keys = groups.map((g) => JSON.stringify([g.buyerAcronym, g.awardYear]))
        assert.strictEqual(new Set(keys).size, groups.length)
        // Null keys are groups too (awards without a published acronym or date).
        assert.isTrue(groups.some((g) => g.buyerAcronym === null))
        for (let i = 1; i < groups.length; i++) {
          assert.isTrue(scaled(groups[i - 1]?.totalAmount ?? "0") >= scaled(groups[i]?.totalAmount ?? "0"), `rank at ${i}`)
        }
        for (const page of pages) assert.isAtMost(page.results.length, 7)
        assert.deepStrictEqual(pages.map((p) => p.page?.hasMore), pages.map((_, i) => i < pages.length - 1))
      }))

    it.effect("compare_period: both periods from one statement, ranked by period B, exact deltas, deltaPct null when A is zero", () =>
      Effect.gen(function*() {
        const pages = yield* walk({ ...mxn, group_by: ["buyer_name"], ...periods, limit: 3 })
        const groups = pages.flatMap((p) => p.results)
        const alfa = groups.find((g) => g.buyerName === "Fixture Buyer Alfa")
        assert.deepStrictEqual(alfa?.periodA, { awardCount: 2, totalAmount: "300.305" })
        assert.deepStrictEqual(alfa?.periodB, { awardCount: 1, totalAmount: "0.005" })
        assert.strictEqual(alfa?.awardCount, 1)
        assert.strictEqual(alfa?.totalAmount, "0.005")
        assert.strictEqual(alfa?.deltaAmount, "-300.300")
        assert.closeTo(alfa?.deltaPct ?? 0, (0.005 - 300.305) / 300.305, 1e-12)
        const zeta = groups.find((g) => g.buyerName === "Fixture Buyer Zeta")
        assert.deepStrictEqual(zeta?.periodA, { awardCount: 0, totalAmount: "0" })
        assert.deepStrictEqual(zeta?.periodB, { awardCount: 1, totalAmount: "10" })
        assert.strictEqual(zeta?.deltaAmount, "10")
        assert.isNull(zeta?.deltaPct)
        for (const g of groups) {
          assert.deepStrictEqual(g.periodB, { awardCount: g.awardCount, totalAmount: g.totalAmount })
          assert.strictEqual(scaled(g.deltaAmount ?? "x"), scaled(g.totalAmount) - scaled(g.periodA?.totalAmount ?? "x"))
          assert.isTrue(g.deltaPct === null || Number.isFinite(g.deltaPct))
        }
        for (let i = 1; i < groups.length; i++) {
          assert.isTrue(scaled(groups[i - 1]?.totalAmount ?? "0") >= scaled(groups[i]?.totalAmount ?? "0"), `rank at ${i}`)
        }
        // Period B alone gives the same top-level values as with the comparison.
        const alone = yield* AwardAggregates.aggregateAwardGroups({
          ...mxn,
          group_by: ["buyer_name"],
          from_date: periods.from_date,
          to_date: periods.to_date
        })
        const alfaAlone = alone.results.find((g) => g.buyerName === "Fixture Buyer Alfa")
        assert.deepStrictEqual(alfaAlone, { buyerName: "Fixture Buyer Alfa", awardCount: 1, totalAmount: "0.005" })
        // compare_period needs the period it is compared with.
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...mxn, group_by: ["buyer_name"], compare_period: periods.compare_period })),
          "invalid_field_value"
        )
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({
            ...mxn,
            group_by: ["buyer_name"],
            ...periods,
            compare_period: { from_date: "2020-12-31", to_date: "2020-01-01" }
          })),
          "invalid_field_value"
        )
      }))

    it.effect("grouping by COG code unnests: an award counts in full under each code, with the warning", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const byPartida = (yield* walk({ ...mxn, group_by: ["cog_partida"], limit: 200 }))
        const groups = byPartida.flatMap((p) => p.results)
        assert.isTrue(byPartida.every((p) => p.semanticWarnings.some((w) => w.code === "cog_partida_totals_may_exceed_corpus")))
        for (const code of ["21101", "26102"]) {
          const rows = yield* searchAll({ cog_partidas: [code], ...mxn })
          const group = groups.find((g) => g.cogPartida === code)
          assert.strictEqual(group?.awardCount, rows.length, code)
          assert.strictEqual(scaled(group?.totalAmount ?? "x"), sumOf(rows.map((r) => r.amount)), code)
        }
        // The fixture with 21101 and 26102 is in both groups, so the groups add up to more than the corpus.
        const corpus = yield* sql`SELECT count(*)::int AS n, sum(amount)::text AS total FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract'`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Total))),
          Effect.orDie
        )
        assert.isAbove(groups.reduce((n, g) => n + g.awardCount, 0), corpus[0]?.n ?? 0)
        assert.isTrue(sumOf(groups.map((g) => g.totalAmount)) > scaled(corpus[0]?.total ?? "x"))
        // Awards without codes form the null group.
        const uncoded = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract' AND cardinality(cog_partidas) = 0`.pipe(Effect.orDie)
        assert.strictEqual(groups.find((g) => g.cogPartida === null)?.awardCount, uncoded[0]?.n)

        // Capítulo = first digit and "000": an award counts once per capítulo, however many partidas it has there.
        const byCapitulo = yield* AwardAggregates.aggregateAwardGroups({ ...mxn, group_by: ["cog_capitulo"] })
        assert.include(byCapitulo.semanticWarnings.map((w) => w.code), "cog_partida_totals_may_exceed_corpus")
        const expected = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract'
            AND EXISTS (SELECT 1 FROM unnest(cog_partidas) p WHERE p LIKE '2%')`.pipe(Effect.orDie)
        assert.strictEqual(byCapitulo.results.find((g) => g.cogCapitulo === "2000")?.awardCount, expected[0]?.n)
        assert.isTrue(byCapitulo.results.every((g) => g.cogCapitulo === null || /^[1-9]000$/.test(g.cogCapitulo ?? "")))

        // Composes with compare_period and with another dimension.
        const compared = yield* AwardAggregates.aggregateAwardGroups({ ...mxn, group_by: ["cog_partida", "buyer_name"], ...periods })
        assert.include(compared.semanticWarnings.map((w) => w.code), "cog_partida_totals_may_exceed_corpus")
        const fixture = compared.results.filter((g) => g.buyerName === "Fixture Buyer Alfa")
        assert.sameDeepMembers(fixture.map((g) => [g.cogPartida, g.periodA?.totalAmount, g.totalAmount]), [
          ["21101", "100.10", "0"],
          ["26102", "100.10", "0"],
          ["33104", "200.205", "0"],
          [null, "0", "0.005"]
        ])
        const plain = yield* AwardAggregates.aggregateAwardGroups({ ...mxn, group_by: ["buyer_name"] })
        assert.notInclude(plain.semanticWarnings.map((w) => w.code), "cog_partida_totals_may_exceed_corpus")
      }))

    it.effect("a cursor resumes only its own mode: with and without compare_period refuse each other", () =>
      Effect.gen(function*() {
        const base = { ...mxn, group_by: ["buyer_name"], from_date: periods.from_date, to_date: periods.to_date, limit: 1 } as const
        const without = yield* AwardAggregates.aggregateAwardGroups(base)
        const withCompare = yield* AwardAggregates.aggregateAwardGroups({ ...base, compare_period: periods.compare_period })
        const plainCursor = without.page?.nextCursor ?? undefined
        const comparedCursor = withCompare.page?.nextCursor ?? undefined
        assert.isString(plainCursor)
        assert.isString(comparedCursor)
        if (plainCursor === undefined || comparedCursor === undefined) return
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...base, compare_period: periods.compare_period, cursor: plainCursor })),
          "invalid_cursor"
        )
        assert.strictEqual(yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...base, cursor: comparedCursor })), "invalid_cursor")
        // Another compare period, dimension order or filter is another request too.
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({
            ...base,
            compare_period: { from_date: "2019-01-01", to_date: "2019-12-31" },
            cursor: comparedCursor
          })),
          "invalid_cursor"
        )
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...base, group_by: ["buyer_acronym"], cursor: plainCursor })),
          "invalid_cursor"
        )
        // Each resumes its own request.
        assert.strictEqual(yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...base, cursor: plainCursor })), "succeeded")
        assert.strictEqual(
          yield* refusalCode(AwardAggregates.aggregateAwardGroups({ ...base, compare_period: periods.compare_period, cursor: comparedCursor })),
          "succeeded"
        )
      }))

    it.effect("is declared: metered once per call, paginated, runnable example, nested CLI compare flags", () =>
      Effect.gen(function*() {
        const op = AwardAggregates.aggregateAwards
        assert.isTrue(op.metered)
        assert.isTrue(op.paginates)
        assert.deepStrictEqual(op.cli.nested, { compare_period: { from_date: "compare-from-date", to_date: "compare-to-date" } })
        const encoded = yield* op.runModel(op.capability.example)
        assert.isAbove(encoded.results.length, 0)
        assert.isTrue(encoded.results.every((g) => g.periodA !== undefined && g.periodB !== undefined))
        assert.include(encoded.semanticWarnings.map((w) => w.code), "award_not_payment")
        // A text query narrows the aggregated awards.
        const worded = yield* AwardAggregates.aggregateAwardGroups({ ...mxn, group_by: ["supplier_rfc"], query: "prueba" })
        assert.includeMembers(worded.results.map((g) => g.supplierRfc), [RFC, OTHER_RFC])
        const sql = yield* SqlClient.SqlClient
        const matching = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards
          WHERE currency = 'MXN' AND amount_scope = 'supplier_contract'
            AND search_tsv @@ plainto_tsquery('market.es', 'prueba')`.pipe(Effect.orDie)
        assert.strictEqual(worded.results.reduce((n, g) => n + g.awardCount, 0), matching[0]?.n)
        assert.strictEqual(worded.interpretedRequest.query_interpretation?.applied_mode, "all_terms")
      }))

    it.effect("whole months by year, month or procedure type read the publish-time totals, which equal the awards' own sums", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Demo-corpus years only: the fixture awards (2020-2021) were inserted after publish.
        const byYear = { ...mxn, group_by: ["award_year" as const], from_date: "2014-01-01", to_date: "2014-12-31", compare_period: { from_date: "2013-01-01", to_date: "2013-12-31" }, limit: 200 }
        const byTypeAndMonth = { ...mxn, group_by: ["procedure_type" as const, "award_month" as const], from_date: "2013-02-01", to_date: "2014-11-30", limit: 200 }
        const expected = (from: string, to: string, keys: string) =>
          sql.unsafe<{ key: string; n: number; total: string }>(
            `SELECT ${keys} AS key, count(*)::int AS n, sum(amount)::text AS total FROM market.awards a
             WHERE a.snapshot_id = (SELECT id FROM market.snapshots WHERE status = 'active')
               AND a.source_slug IN (SELECT slug FROM market.sources WHERE licensed_for_display)
               AND a.currency = 'MXN' AND a.amount_scope = 'supplier_contract' AND a.award_date BETWEEN $1::date AND $2::date
             GROUP BY 1`,
            [from, to]
          )
        const asMap = (rows: ReadonlyArray<{ key: string; n: number; total: string }>) =>
          new Map(rows.map((r) => [r.key, [r.n, scaled(r.total)]]))

        const years = yield* AwardAggregates.aggregateAwardGroups(byYear)
        assert.isAbove(years.results.length, 0)
        const b = asMap(yield* expected("2014-01-01", "2014-12-31", "extract(year FROM a.award_date)::int::text"))
        const a = asMap(yield* expected("2013-01-01", "2013-12-31", "extract(year FROM a.award_date)::int::text"))
        for (const group of years.results) {
          const key = String(group.awardYear)
          assert.deepStrictEqual([group.periodB?.awardCount ?? 0, scaled(group.periodB?.totalAmount ?? "0")], b.get(key) ?? [0, 0n], key)
          assert.deepStrictEqual([group.periodA?.awardCount ?? 0, scaled(group.periodA?.totalAmount ?? "0")], a.get(key) ?? [0, 0n], key)
        }
        const typed = yield* AwardAggregates.aggregateAwardGroups(byTypeAndMonth)
        const typedExpected = asMap(yield* expected("2013-02-01", "2014-11-30", "coalesce(a.procedure_type, '-') || '|' || to_char(a.award_date, 'YYYY-MM')"))
        assert.strictEqual(typed.results.length, typedExpected.size)
        for (const group of typed.results) {
          const key = `${group.procedureType ?? "-"}|${group.awardMonth}`
          assert.deepStrictEqual([group.awardCount, scaled(group.totalAmount)], typedExpected.get(key), key)
        }

        // The totals are what is read: change them (in a transaction rolled back) and the answer follows; a
        // bound inside a month reads the awards and does not.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE market.award_month_totals SET total_amount = total_amount + 1`
          const shifted = yield* AwardAggregates.aggregateAwardGroups(byYear)
          assert.strictEqual(scaled(shifted.results[0]?.totalAmount ?? "0") - scaled(years.results[0]?.totalAmount ?? "0") > 0n, true)
          const midMonth = yield* AwardAggregates.aggregateAwardGroups({ ...byYear, to_date: "2014-12-30", compare_period: undefined })
          const raw = b.get(String(midMonth.results[0]?.awardYear))
          assert.isTrue(raw !== undefined && scaled(midMonth.results[0]?.totalAmount ?? "0") <= (raw[1] ?? 0n))
          return yield* Effect.fail("rolled back")
        })).pipe(Effect.ignore)
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
        const op = AwardAggregates.aggregateAwards
        const bodies = [
          yield* op.runModel({ ...mxn, group_by: ["supplier_rfc", "buyer_name", "procedure_type"], limit: 200 }),
          yield* op.runModel({ ...mxn, group_by: ["cog_partida", "award_month"], ...periods, limit: 200 })
        ].map((body) => JSON.stringify(body))
        for (const body of bodies) {
          assert.deepStrictEqual(Leaks.find([body], needles)[0], [], "a response leaked a forbidden value")
        }
      }))
  })
}
