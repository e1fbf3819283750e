/**
 * aggregate_awards: award counts and exact totals grouped by up to three dimensions, in one currency and one
 * amount scope, optionally compared with an earlier period in the same grouped statement.
 *
 * - Totals are SQL `sum` over `numeric`, served as exact decimal strings, never across currencies or scopes.
 * - Grouping by `cog_partida` or `cog_capitulo` unnests the award's codes: an award counts in full under each
 *   of its partidas and once under each capítulo its partidas fall in (never prorated), so group sums can
 *   exceed the corpus total; awards without a published code form the group whose code is null. The capítulo is the COG capítulo code: the first digit followed by
 *   "000" ("21101" is under "2000").
 * - Ranking and page order: period B's total descending, then the group key (nulls last); keyset paging over
 *   the groups. A cursor's digest includes compare_period, so a cursor issued with one is refused without it
 *   and the reverse.
 *
 * @since 0.1.0
 */
import type { Fragment } from "@effect/sql/Statement"
import type { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  AmountScope,
  checkDateOrder,
  CurrencyCode,
  Cursor,
  dateRange,
  IsoDate,
  normalizeCurrency,
  textFields,
  textQuery,
  visibleAwards
} from "./Awards.js"
import { Envelope, type Normalization, type SemanticWarning } from "./Envelope.js"
import { withStatementTimeout } from "./internal/statementTimeout.js"
import { defaultAggregatePageSize, maxAggregatePageSize } from "./Limits.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Paging from "./Paging.js"
import { Limit } from "./Suppliers.js"
import { strict } from "./internal/fields.js"
import { kit } from "./MarketKit.js"

/**
 * The dimensions awards can be grouped by. `supplier_name` is deliberately not one: names are approximate.
 *
 * @since 0.1.0 @category constants
 */
export const groupDimensions = [
  "supplier_rfc",
  "buyer_name",
  "buyer_acronym",
  "procedure_type",
  "contracting_type",
  "supplier_size",
  "award_month",
  "award_year",
  "cog_partida",
  "cog_capitulo"
] as const

/** @since 0.1.0 @category schemas */
export const GroupDimension = Schema.Literal(...groupDimensions)
/** @since 0.1.0 @category schemas */
export type GroupDimension = typeof GroupDimension.Type

/** @since 0.1.0 @category schemas */
export const Period = Schema.Struct({
  from_date: IsoDate.annotations({ description: "First day of the period (YYYY-MM-DD)." }),
  to_date: IsoDate.annotations({ description: "Last day of the period (YYYY-MM-DD)." })
}).annotations({ ...strict, identifier: "AwardPeriod" })

/** @since 0.1.0 @category models */
export const AggregateAwardsInput = Schema.Struct({
  currency: CurrencyCode.annotations({ description: "ISO 4217 currency (MXN, USD): totals never mix currencies." }),
  amount_scope: AmountScope.annotations({
    description: "supplier_contract or award_group_published_total: totals never mix scopes."
  }),
  group_by: Schema.Array(GroupDimension).pipe(
    Schema.minItems(1, { message: () => "group_by needs 1 to 3 dimensions" }),
    Schema.maxItems(3, { message: () => "group_by takes at most 3 dimensions" }),
    Schema.filter((dims) => new Set(dims).size === dims.length, { message: () => "group_by dimensions must differ" })
  ).annotations({ description: `1 to 3 of: ${groupDimensions.join(", ")}.` }),
  from_date: Schema.optional(IsoDate).annotations({ description: "Period start (YYYY-MM-DD), on award_date." }),
  to_date: Schema.optional(IsoDate).annotations({ description: "Period end (YYYY-MM-DD), on award_date." }),
  compare_period: Schema.optional(Period).annotations({
    description:
      "An earlier period {from_date, to_date} to compare with from_date..to_date (then both are required): each group gets periodA (this one), periodB, deltaAmount and deltaPct."
  }),
  ...textFields,
  limit: Schema.optional(Limit(maxAggregatePageSize)).annotations({
    description: `Groups per page, 1 to ${maxAggregatePageSize} (default ${defaultAggregatePageSize}).`
  }),
  cursor: Schema.optional(Cursor)
}).annotations({ ...strict, identifier: "AggregateAwardsInput" })
/** @since 0.1.0 @category models */
export type AggregateAwardsInput = typeof AggregateAwardsInput.Type

/** @since 0.1.0 @category models */
export const PeriodTotals = Schema.Struct({
  awardCount: Schema.Number,
  totalAmount: Schema.String.annotations({ description: "Exact decimal sum." })
}).annotations({ identifier: "AwardPeriodTotals" })

const Key = Schema.optional(Schema.NullOr(Schema.String))

/**
 * One group: its key fields (only the requested dimensions, camelCase; null when not published), its award
 * count and exact total, and with compare_period both periods and their difference.
 *
 * @since 0.1.0 @category models
 */
export const AwardGroup = Schema.Struct({
  supplierRfc: Key,
  buyerName: Key,
  buyerAcronym: Key,
  procedureType: Key,
  contractingType: Key,
  supplierSize: Key,
  awardMonth: Key.annotations({ description: "YYYY-MM." }),
  awardYear: Schema.optional(Schema.NullOr(Schema.Number)),
  cogPartida: Key,
  cogCapitulo: Key.annotations({ description: "COG capítulo code: the first digit of the partida and \"000\"." }),
  awardCount: Schema.Number,
  totalAmount: Schema.String.annotations({ description: "Exact decimal sum in the requested currency and scope." }),
  periodA: Schema.optional(PeriodTotals),
  periodB: Schema.optional(PeriodTotals),
  deltaAmount: Schema.optional(Schema.String).annotations({ description: "periodB.totalAmount minus periodA.totalAmount." }),
  deltaPct: Schema.optional(Schema.NullOr(Schema.Number)).annotations({
    description: "(B - A) / A as a fraction; null when periodA's total is zero."
  })
}).annotations({ identifier: "AwardGroup" })
/** @since 0.1.0 @category models */
export type AwardGroup = typeof AwardGroup.Type

/** @since 0.1.0 @category models */
export const AggregateAwardsEnvelope = Envelope(Schema.Array(AwardGroup)).annotations({
  identifier: "AggregateAwardsEnvelope"
})

type GroupField = Exclude<keyof AwardGroup, "awardCount" | "totalAmount" | "periodA" | "periodB" | "deltaAmount" | "deltaPct">

interface Dimension {
  readonly field: GroupField
  readonly kind: "text" | "int"
  readonly unnests: boolean
}

const dimensions: { readonly [K in GroupDimension]: Dimension } = {
  supplier_rfc: { field: "supplierRfc", kind: "text", unnests: false },
  buyer_name: { field: "buyerName", kind: "text", unnests: false },
  buyer_acronym: { field: "buyerAcronym", kind: "text", unnests: false },
  procedure_type: { field: "procedureType", kind: "text", unnests: false },
  contracting_type: { field: "contractingType", kind: "text", unnests: false },
  supplier_size: { field: "supplierSize", kind: "text", unnests: false },
  award_month: { field: "awardMonth", kind: "text", unnests: false },
  award_year: { field: "awardYear", kind: "int", unnests: false },
  cog_partida: { field: "cogPartida", kind: "text", unnests: true },
  cog_capitulo: { field: "cogCapitulo", kind: "text", unnests: true }
}

const GroupDbRow = Schema.Struct({
  k0: Schema.NullOr(Schema.Union(Schema.String, Schema.Number)),
  k1: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number))),
  k2: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Number))),
  b_count: Schema.Number,
  b_total: Schema.String,
  a_count: Schema.optional(Schema.Number),
  a_total: Schema.optional(Schema.String),
  delta_amount: Schema.optional(Schema.String),
  delta_pct: Schema.optional(Schema.NullOr(Schema.Number))
})
type GroupDbRow = typeof GroupDbRow.Type
const decodeGroupRows = Schema.decodeUnknown(Schema.Array(GroupDbRow))

const cogWarning: SemanticWarning = {
  code: "cog_partida_totals_may_exceed_corpus",
  message:
    "Grouped by COG code: an award with several codes counts in full under each of them (never prorated), so group totals can add up to more than the corpus total. Awards without a published code form the group whose code is null."
}

const aggregateMeaning: SemanticWarning = {
  code: "award_not_payment",
  message:
    "Totals add up published award amounts: awards are publications that contracts were awarded, not payments, deliveries or executions."
}

/** The dimensions the publish-time month totals carry. */
const monthTotalsDimensions: ReadonlyArray<GroupDimension> = ["award_year", "award_month", "procedure_type"]

const isFirstOfMonth = (date: string): boolean => date.endsWith("-01")

const isLastOfMonth = (date: string): boolean => {
  const [year, month, day] = date.split("-").map(Number)
  if (year === undefined || month === undefined || day === undefined) return false
  // Day 0 of the next month is the last day of this one.
  return new Date(Date.UTC(year, month, 0)).getUTCDate() === day
}

const keyOf = (row: GroupDbRow, i: number) => (i === 0 ? row.k0 : i === 1 ? row.k1 ?? null : row.k2 ?? null)

/** The key fields of a group, named after its dimensions. */
const groupKeys = (dims: ReadonlyArray<Dimension>, row: GroupDbRow): { -readonly [K in GroupField]?: AwardGroup[K] } => {
  const out: { -readonly [K in GroupField]?: AwardGroup[K] } = {}
  dims.forEach((d, i) => {
    const value = keyOf(row, i)
    if (d.field === "awardYear") out.awardYear = value === null ? null : Number(value)
    else out[d.field] = value === null ? null : String(value)
  })
  return out
}

/**
 * aggregate_awards: one keyset page of groups, ranked by period B's exact total.
 *
 * @since 0.1.0 @category queries
 */
export const aggregateAwardGroups = (
  input: AggregateAwardsInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<AwardGroup>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const normalizations: Array<Normalization> = []
    const compare = input.compare_period
    if (compare !== undefined && (input.from_date === undefined || input.to_date === undefined)) {
      return yield* refuse(
        "invalid_field_value",
        "compare_period compares two periods: from_date and to_date must give the period it is compared with.",
        "Send from_date and to_date (period B) with compare_period (period A), or drop compare_period.",
        { field: input.from_date === undefined ? "from_date" : "to_date" }
      )
    }
    yield* checkDateOrder(input.from_date, input.to_date, "to_date")
    if (compare !== undefined) yield* checkDateOrder(compare.from_date, compare.to_date, "compare_period.to_date")
    const currency = normalizeCurrency(input.currency, normalizations)
    const groupBy = input.group_by
    const dims = groupBy.map((d) => dimensions[d])

    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const text = yield* textQuery(market, input.query, input.query_mode)
    const limit = input.limit ?? defaultAggregatePageSize

    // Whole months, no words, and only month or procedure-type keys: the totals computed at publish answer it.
    const fromTotals = text === undefined && groupBy.every((d) => monthTotalsDimensions.includes(d)) &&
      [input.from_date, compare?.from_date].every((date) => date === undefined || isFirstOfMonth(date)) &&
      [input.to_date, compare?.to_date].every((date) => date === undefined || isLastOfMonth(date))
    const dateColumn = fromTotals ? sql`a.award_month` : sql`a.award_date`

    const expressionOf = (dimension: GroupDimension): Fragment => {
      switch (dimension) {
        case "supplier_rfc":
          return sql`a.supplier_rfc`
        case "buyer_name":
          return sql`a.buyer_name`
        case "buyer_acronym":
          return sql`a.buyer_acronym`
        case "procedure_type":
          return sql`a.procedure_type`
        case "contracting_type":
          return sql`a.contracting_type`
        case "supplier_size":
          return sql`a.supplier_size`
        case "award_month":
          return sql`to_char(${dateColumn}, 'YYYY-MM')`
        case "award_year":
          return sql`extract(year FROM ${dateColumn})::int`
        case "cog_partida":
          return sql`c.code`
        case "cog_capitulo":
          return sql`c.capitulo`
      }
    }
    const unnests = dims.some((d) => d.unnests)
    // Distinct codes: an award counts once under each of its partidas, and once under each capítulo however
    // many of its partidas fall in it. An award without codes gives one row whose codes are null.
    const unnest = groupBy.includes("cog_partida")
      ? sql`LEFT JOIN LATERAL (SELECT DISTINCT p AS code, left(p, 1) || '000' AS capitulo
          FROM unnest(a.cog_partidas) AS p) c ON TRUE`
      : sql`LEFT JOIN LATERAL (SELECT DISTINCT left(p, 1) || '000' AS capitulo FROM unnest(a.cog_partidas) AS p) c ON TRUE`
    const range = (from: string | undefined, to: string | undefined): ReadonlyArray<Fragment> =>
      fromTotals
        ? [
          ...(from === undefined ? [] : [sql`a.award_month >= ${from}::date`]),
          ...(to === undefined ? [] : [sql`a.award_month <= ${to}::date`])
        ]
        : dateRange(sql, from, to)
    const inB = sql.and([sql`TRUE`, ...range(input.from_date, input.to_date)])
    const inA = compare === undefined ? undefined : sql.and(range(compare.from_date, compare.to_date))
    const conditions = [
      ...visibleAwards(sql, publication.snapshotId),
      sql`a.currency = ${currency}`,
      sql`a.amount_scope = ${input.amount_scope}`,
      ...(text === undefined ? [] : [sql`a.search_tsv @@ ${text.tsquery}`]),
      inA === undefined ? inB : sql`(${inB} OR ${inA})`
    ]
    const keyColumns = groupBy.map((d, i) => sql`${expressionOf(d)} AS ${sql.literal(`k${i}`)}`)
    const groupColumns = groupBy.map((_, i) => sql.literal(`k${i}`))
    // Both periods come from the same grouped statement (FILTER clauses), so they see the same rows.
    const counted = fromTotals ? sql`sum(a.award_count)` : sql`count(*)`
    const amount = fromTotals ? sql`a.total_amount` : sql`a.amount`
    const grouped = sql`
      SELECT ${sql.csv(keyColumns)},
        coalesce(${counted} FILTER (WHERE ${inB}), 0)::int AS b_count,
        coalesce(sum(${amount}) FILTER (WHERE ${inB}), 0) AS b_total
        ${inA === undefined ? sql`` : sql`,
        coalesce(${counted} FILTER (WHERE ${inA}), 0)::int AS a_count,
        coalesce(sum(${amount}) FILTER (WHERE ${inA}), 0) AS a_total`}
      FROM ${fromTotals ? sql`market.award_month_totals a` : sql`market.awards a`}
      ${unnests ? unnest : sql``}
      WHERE ${sql.and(conditions)}
      GROUP BY ${sql.csv(groupColumns)}`

    // Period B's total, then each key with nulls last: a total order, since the keys identify the group.
    const keys: ReadonlyArray<Paging.Key> = [
      { expression: sql`g.b_total`, direction: "desc", type: "numeric" },
      ...dims.flatMap((d, i): ReadonlyArray<Paging.Key> => {
        const column = sql.literal(`g.k${i}`)
        return [
          { expression: sql`(${column} IS NULL)::int`, direction: "asc", type: "int" },
          d.kind === "int"
            ? { expression: sql`coalesce(${column}, 0)`, direction: "asc", type: "int" }
            : { expression: sql`coalesce(${column}, '')`, direction: "asc", type: "text" }
        ]
      })
    ]
    const filters = {
      currency,
      amount_scope: input.amount_scope,
      group_by: groupBy,
      from_date: input.from_date ?? null,
      to_date: input.to_date ?? null,
      compare_period: compare === undefined ? null : { from_date: compare.from_date, to_date: compare.to_date },
      query: text?.query ?? null,
      mode: text?.appliedMode ?? null
    }
    const request: Paging.PageRequest = {
      operation: "aggregate_awards",
      snapshotId: publication.snapshotId,
      filterDigest: Paging.filterDigest(filters)
    }
    const position = yield* market.provideCrypto(Paging.resume(input.cursor, request))
    const fetched = yield* withStatementTimeout(market)((timed) => timed`
      SELECT ${sql.csv(groupColumns.map((_, i) => sql.literal(`g.k${i}`)))},
        g.b_count, g.b_total::text AS b_total
        ${inA === undefined ? sql`` : sql`,
        g.a_count, g.a_total::text AS a_total, (g.b_total - g.a_total)::text AS delta_amount,
        CASE WHEN g.a_total = 0 THEN NULL ELSE ((g.b_total - g.a_total) / g.a_total)::float8 END AS delta_pct`}
      FROM (${grouped}) g
      WHERE ${sql.and([sql`TRUE`, ...Paging.after(sql, keys, position)])}
      ORDER BY ${Paging.orderBy(sql, keys)}
      LIMIT ${limit + 1}`).pipe(Effect.flatMap((rows) => Effect.orDie(decodeGroupRows(rows))))
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, {
        limit,
        request,
        positionOf: (row) => [
          row.b_total,
          ...dims.flatMap((d, i) => {
            const value = keyOf(row, i)
            return [value === null ? 1 : 0, value ?? (d.kind === "int" ? 0 : "")]
          })
        ]
      })
    )

    const groups = rows.map((row): AwardGroup => {
      const b = { awardCount: row.b_count, totalAmount: row.b_total }
      return {
        ...groupKeys(dims, row),
        ...b,
        ...(compare === undefined ? {} : {
          periodA: { awardCount: row.a_count ?? 0, totalAmount: row.a_total ?? "0" },
          periodB: b,
          deltaAmount: row.delta_amount ?? "0",
          deltaPct: row.delta_pct ?? null
        })
      }
    })

    const unnestsWarning = unnests ? [cogWarning] : []
    return yield* market.envelope({
      operation: "aggregate_awards",
      publication,
      startedAt,
      request: {
        currency,
        amount_scope: input.amount_scope,
        group_by: groupBy,
        ...(input.from_date === undefined ? {} : { from_date: input.from_date }),
        ...(input.to_date === undefined ? {} : { to_date: input.to_date }),
        ...(compare === undefined ? {} : {
          compare_period: { from_date: compare.from_date, to_date: compare.to_date },
          periods: { periodA: "compare_period", periodB: "from_date..to_date (ranks the groups)" }
        }),
        ...(text === undefined ? {} : { query: text.query }),
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations,
      ...(text === undefined ? {} : { queryInterpretation: text.interpretation(["currency", "amount_scope"]) }),
      results: groups,
      page,
      categories: ["government_contracting"],
      warnings: [aggregateMeaning, ...unnestsWarning],
      empty: groups.length === 0,
      rowsExamined: fetched.length,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("AwardAggregates.aggregateAwardGroups", { captureStackTrace: false }))

/** @since 0.1.0 @category operations */
export const aggregateAwards = kit.make({
  name: "aggregate_awards",
  title: "Aggregate awards",
  description:
    "Award counts and exact totals in one currency and amount scope, grouped by 1 to 3 dimensions and ranked by total, optionally compared with an earlier period. One call is one metered unit whatever the number of groups.",
  http: { method: "POST", path: "/awards/aggregate", input: { kind: "body" } },
  cli: {
    words: ["awards", "aggregate"],
    nested: { compare_period: { from_date: "compare-from-date", to_date: "compare-to-date" } }
  },
  input: AggregateAwardsInput,
  output: AggregateAwardsEnvelope,
  refuses: [
    "invalid_field_value",
    "invalid_cursor",
    "cursor_stale",
    "market_data_timeout",
    "serving_projection_unavailable",
    "serving_projection_stale"
  ],
  paginates: true,
  capability: {
    question: "Who or what was awarded the most in a currency and amount scope, by buyer, supplier, procedure, period or COG code, and how did it change between two periods?",
    requires:
      "currency, amount_scope and group_by (1 to 3 of the allowed dimensions; supplier_name is not one). compare_period {from_date, to_date} needs from_date and to_date.",
    example: {
      currency: "MXN",
      amount_scope: "supplier_contract",
      group_by: ["procedure_type"],
      from_date: "2014-01-01",
      to_date: "2014-12-31",
      compare_period: { from_date: "2013-01-01", to_date: "2013-12-31" },
      limit: 10
    }
  },
  run: aggregateAwardGroups
})
