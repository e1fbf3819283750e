/**
 * Awards: the published statements that a contract was awarded. The award row of the abstracted projection,
 * the award filters shared with the aggregate ({@link AwardAggregates}), and the `search_awards` and
 * `get_supplier_history` queries with their declarations.
 *
 * An award is a publication that a contract was awarded, not a payment, delivery or execution; amounts carry
 * their currency and amount scope and are never summed across either.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { excerpt } from "@service/core/Refusal"
import type { RequestContext } from "@service/core/RequestContext"
import { parseRfc } from "@service/market-warehouse/Rfc"
import { stateByCode } from "@service/market-warehouse/States"
import { normalizeName } from "@service/market-warehouse/Text"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  Envelope,
  EvidenceCategory,
  evidenceCategoryLabels,
  type InterpretedRequest,
  type Normalization,
  type ProvenanceEntry,
  QueryMode,
  type SemanticWarning
} from "./Envelope.js"
import { compileTextQuery, type TextQueryHost } from "./internal/narrowing.js"
import { sealRecordRef } from "./internal/refs.js"
import { RISK_SUMMARY_COLUMNS, riskSummaryDbFields, riskSummaryJoin, riskSummaryOf } from "./internal/riskSummaries.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Paging from "./Paging.js"
import { RiskField } from "./RiskSummary.js"
import { Limit } from "./Suppliers.js"
import { IsoDate, TrimmedText, strict } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"
import { kit } from "./MarketKit.js"

// -----------------------------------------------------------------------------
// Field schemas shared by the award operations
// -----------------------------------------------------------------------------

/** An ISO 4217 currency code (case ignored, served upper-case). @since 0.1.0 @category schemas */
export const CurrencyCode = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{3}$/, { message: () => "a currency is an ISO 4217 code of three letters (MXN, USD)" })
)

/** The two amount quantities, never summed together. @since 0.1.0 @category schemas */
export const AmountScope = Schema.Literal("supplier_contract", "award_group_published_total")
/** @since 0.1.0 @category schemas */
export type AmountScope = typeof AmountScope.Type

/** A COG partida específica: exactly five digits. @since 0.1.0 @category schemas */
export const CogPartida = Schema.String.pipe(
  Schema.pattern(/^\d{5}$/, { message: () => "a COG partida is exactly five digits (21101)" })
)

/** A non-negative exact decimal amount, as a string. @since 0.1.0 @category schemas */
export const DecimalAmount = Schema.String.pipe(
  Schema.pattern(/^\d{1,18}(\.\d{1,8})?$/, {
    message: () => "an amount is a decimal string such as \"150000\" or \"99.50\" (up to 8 decimals)"
  })
)

/** The optional text query fields (words over supplier name, title and buyer). @since 0.1.0 @category schemas */
export const textFields = {
  query: Schema.optional(TrimmedText(200)).annotations({
    description: "Words to find in supplier names, award titles and buyer names (Spanish; accents and case ignored)."
  }),
  query_mode: Schema.optional(QueryMode).annotations({
    description: "How query words combine: auto (default: all terms), exact_phrase, all_terms, any_terms."
  })
}

/** @since 0.1.0 @category schemas */
export const Cursor = TrimmedText(2048).annotations({
  description: "page.nextCursor of the previous response, to read the next page with the same filters."
})

const SearchAwardsFields = {
  supplier_rfc: Schema.optional(TrimmedText(20)).annotations({
    description: "Supplier RFC (12 characters for a company, 13 for a person): strong identity."
  }),
  supplier_name: Schema.optional(TrimmedText(200)).annotations({
    description: "Supplier name: approximate (trigram match); the rows are candidates, confirm by supplier_rfc."
  }),
  cog_partidas: Schema.optional(Schema.Array(CogPartida).pipe(Schema.minItems(1), Schema.maxItems(20))).annotations({
    description: "1 to 20 COG partidas (five digits each); an award matches when it carries any of them."
  }),
  ...textFields,
  from_date: Schema.optional(IsoDate).annotations({ description: "Awarded on or after this date (YYYY-MM-DD)." }),
  to_date: Schema.optional(IsoDate).annotations({ description: "Awarded on or before this date (YYYY-MM-DD)." }),
  currency: Schema.optional(CurrencyCode).annotations({ description: "ISO 4217 currency of the amount (MXN, USD)." }),
  amount_scope: Schema.optional(AmountScope).annotations({
    description:
      "supplier_contract (the supplier's own contract) or award_group_published_total (one total published for a group of suppliers)."
  }),
  min_amount: Schema.optional(DecimalAmount).annotations({
    description: "Amount at least this (decimal string); needs currency and amount_scope."
  }),
  max_amount: Schema.optional(DecimalAmount).annotations({
    description: "Amount at most this (decimal string); needs currency and amount_scope."
  }),
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(Cursor)
}

/**
 * search_awards input. There is no canonical-only field, so HTTP and model-facing surfaces share it.
 *
 * @since 0.1.0 @category models
 */
export const SearchAwardsInput = Schema.Struct(SearchAwardsFields).annotations({
  ...strict,
  identifier: "SearchAwardsInput"
})
/** @since 0.1.0 @category models */
export type SearchAwardsInput = typeof SearchAwardsInput.Type

/** @since 0.1.0 @category models */
export const SupplierHistoryInput = Schema.Struct({
  supplier_rfc: TrimmedText(20).annotations({ description: "Supplier RFC: strong identity." }),
  currency: CurrencyCode.annotations({ description: "ISO 4217 currency of the history's amounts (MXN, USD)." }),
  amount_scope: AmountScope.annotations({
    description: "supplier_contract or award_group_published_total: which quantity the total adds up."
  }),
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(Cursor)
}).annotations({ ...strict, identifier: "SupplierHistoryInput" })
/** @since 0.1.0 @category models */
export type SupplierHistoryInput = typeof SupplierHistoryInput.Type

// -----------------------------------------------------------------------------
// The award row
// -----------------------------------------------------------------------------

const CodeName = Schema.Struct({ code: Schema.String, name: Schema.String })

/**
 * An award in the abstracted projection: what was published about the award, its amount as an exact decimal
 * string with its currency and scope, and its COG partidas (`cogPartidas`, empty when none were published).
 *
 * @since 0.1.0 @category models
 */
export const AwardRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  title: Schema.NullOr(Schema.String),
  supplier_rfc: Schema.NullOr(Schema.String),
  risk: RiskField,
  supplier_name: Schema.String,
  supplier_size: Schema.NullOr(Schema.String),
  buyer_name: Schema.NullOr(Schema.String),
  buyer_acronym: Schema.NullOr(Schema.String),
  procedure_type: Schema.NullOr(Schema.String),
  contracting_type: Schema.NullOr(Schema.String),
  award_date: Schema.NullOr(Schema.String).annotations({ description: "Date of the award as published (YYYY-MM-DD)." }),
  amount: Schema.NullOr(Schema.String).annotations({ description: "Exact decimal string; never a float." }),
  currency: Schema.NullOr(Schema.String),
  amount_scope: AmountScope,
  cogPartidas: Schema.Array(Schema.String).annotations({ description: "Five-digit COG partidas; [] when none were published." }),
  state: Schema.NullOr(CodeName)
}).annotations({ identifier: "AwardRow" })
/** @since 0.1.0 @category models */
export type AwardRow = typeof AwardRow.Type

const AwardDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  title: Schema.NullOr(Schema.String),
  supplier_rfc: Schema.NullOr(Schema.String),
  supplier_name: Schema.String,
  supplier_size: Schema.NullOr(Schema.String),
  buyer_name: Schema.NullOr(Schema.String),
  buyer_acronym: Schema.NullOr(Schema.String),
  procedure_type: Schema.NullOr(Schema.String),
  contracting_type: Schema.NullOr(Schema.String),
  award_date: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  currency: Schema.NullOr(Schema.String),
  amount_scope: AmountScope,
  cog_partidas: Schema.Array(Schema.String),
  state_code: Schema.NullOr(Schema.String),
  ...riskSummaryDbFields,
  /** The award date key (undated awards sort last), for the cursor position. */
  sort_key: Schema.String
})
type AwardDbRow = typeof AwardDbRow.Type
const decodeAwardRows = Schema.decodeUnknown(Schema.Array(AwardDbRow))

// Dates and amounts leave the database as text: a date never shifts with a time zone and an amount is never a float.
const AWARD_COLUMNS = `a.id::text AS id, a.snapshot_id, a.fingerprint, a.title, a.supplier_rfc, a.supplier_name,
  a.supplier_size, a.buyer_name, a.buyer_acronym, a.procedure_type, a.contracting_type, a.award_date::text AS award_date,
  a.amount::text AS amount, a.currency, a.amount_scope, a.cog_partidas, a.state_code`

/** Undated awards sort after every dated one (keyset keys are never null). */
const UNDATED = "0001-01-01"

/**
 * The warning every award answer carries.
 *
 * @since 0.1.0 @category constants
 */
export const awardMeaning: SemanticWarning = {
  code: "award_not_payment",
  message: "An award is a publication that a contract was awarded, not a payment, delivery or execution."
}

const provenanceStatement =
  "A publication that a contract was awarded, not a verification."

const project = (row: AwardDbRow) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "award", id: row.id, fingerprint: row.fingerprint })
    const award: AwardRow = {
      evidence_category: "government_contracting",
      evidence_category_label: evidenceCategoryLabels.government_contracting,
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      title: row.title,
      supplier_rfc: row.supplier_rfc,
      risk: riskSummaryOf(row.supplier_rfc, row),
      supplier_name: row.supplier_name,
      supplier_size: row.supplier_size,
      buyer_name: row.buyer_name,
      buyer_acronym: row.buyer_acronym,
      procedure_type: row.procedure_type,
      contracting_type: row.contracting_type,
      award_date: row.award_date,
      amount: row.amount,
      currency: row.currency,
      amount_scope: row.amount_scope,
      cogPartidas: row.cog_partidas,
      state: row.state_code === null
        ? null
        : { code: row.state_code, name: stateByCode(row.state_code)?.name ?? row.state_code }
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "government_contracting",
      corpusSnapshot: row.snapshot_id,
      statement: provenanceStatement
    }
    return { award, provenance }
  })

// -----------------------------------------------------------------------------
// Filters shared by search, history and the aggregate
// -----------------------------------------------------------------------------

/**
 * The conditions every award read starts from: the active snapshot and sources licensed for display.
 *
 * @since 0.1.0 @category filters
 */
export const visibleAwards = (sql: SqlClient.SqlClient, snapshotId: string): ReadonlyArray<Fragment> => [
  sql`a.snapshot_id = ${snapshotId}`,
  licensedRows(sql, "a")
]

/**
 * A date range on `award_date` (inclusive); `undefined` bounds are open.
 *
 * @since 0.1.0 @category filters
 */
export const dateRange = (
  sql: SqlClient.SqlClient,
  from: string | undefined,
  to: string | undefined
): ReadonlyArray<Fragment> => [
  ...(from === undefined ? [] : [sql`a.award_date >= ${from}::date`]),
  ...(to === undefined ? [] : [sql`a.award_date <= ${to}::date`])
]

/**
 * Refuses a range whose start is after its end.
 *
 * @since 0.1.0 @category filters
 */
export const checkDateOrder = (
  from: string | undefined,
  to: string | undefined,
  field: string
): Effect.Effect<void, MarketDataRefusal> =>
  from !== undefined && to !== undefined && from > to
    ? Effect.fail(
      refuse(
        "invalid_field_value",
        `The period starts (${from}) after it ends (${to}).`,
        "Send a from_date on or before the to_date.",
        { field }
      )
    )
    : Effect.void

/**
 * The upper-cased currency, with the normalization when the caller wrote it otherwise.
 *
 * @since 0.1.0 @category filters
 */
export const normalizeCurrency = (
  currency: string,
  normalizations: Array<Normalization>
): string => {
  const upper = currency.toUpperCase()
  if (upper !== currency) {
    normalizations.push({ field: "currency", from: currency, to: upper, reason: "currency codes are upper-case" })
  }
  return upper
}

/**
 * The normalized supplier RFC, refused with `invalid_field_value` when it is not a well-formed RFC.
 *
 * @since 0.1.0 @category filters
 */
export const resolveRfc = (
  raw: string,
  normalizations: Array<Normalization>
): Effect.Effect<string, MarketDataRefusal> => {
  const rfc = parseRfc(raw)
  if (rfc === undefined) {
    return Effect.fail(
      refuse(
        "invalid_field_value",
        `"${excerpt(raw, 20)}" is not a well-formed RFC.`,
        "An RFC has 12 characters for a company (3 letters, YYMMDD, 3-character homoclave) or 13 for a person (4 letters).",
        { field: "supplier_rfc" }
      )
    )
  }
  if (rfc !== raw) {
    normalizations.push({ field: "supplier_rfc", from: raw, to: rfc, reason: "RFC upper-cased, separators removed" })
  }
  return Effect.succeed(rfc)
}

/**
 * A resolved text query.
 *
 * @since 0.1.0 @category models
 */
export interface TextQuery {
  readonly query: string
  readonly tsquery: Fragment
  readonly appliedMode: QueryMode
  readonly interpretation: (filters: ReadonlyArray<string>) => NonNullable<InterpretedRequest["query_interpretation"]>
}

/**
 * Compiles a text query over `a.search_tsv` as supplier search does (auto = all terms); a query with no
 * searchable words is refused with `invalid_field_value`.
 *
 * @since 0.1.0 @category filters
 */
export const textQuery = (
  market: TextQueryHost,
  raw: string | undefined,
  mode: QueryMode | undefined
): Effect.Effect<TextQuery | undefined, MarketDataRefusal> =>
  Effect.gen(function*() {
    const query = raw?.trim()
    if (query === undefined) return undefined
    // The words compile exactly as every other text query does (internal/narrowing).
    const { appliedMode, normalizedTerms, requestedMode, tsquery } = yield* compileTextQuery(market, query, mode)
    return {
      query,
      tsquery,
      appliedMode,
      interpretation: (filters) => ({
        requested_mode: requestedMode,
        applied_mode: appliedMode,
        normalized_terms: normalizedTerms,
        recognized_state_aliases: [],
        filters,
        warning: requestedMode === null ? "auto mode: every word must match (Spanish stemming, accents ignored)" : null
      })
    }
  })

// Amounts compare exactly: scaled to integers of eight decimals (the schema allows no more).
const scaled = (amount: string): bigint => {
  const [whole = "0", fraction = ""] = amount.split(".")
  return BigInt(`${whole}${fraction.padEnd(8, "0")}`)
}

// The key that orders award rows: newest award first, undated last, then the row id. The date is written as a
// literal, exactly as in `awards_rfc_order_idx`, so the planner can match the index's expression.
const sortDate = (sql: SqlClient.SqlClient) => sql.literal(`coalesce(a.award_date, '${UNDATED}'::date)`)
const rowKeys = (sql: SqlClient.SqlClient): ReadonlyArray<Paging.Key> => [
  { expression: sortDate(sql), direction: "desc", type: "date" },
  { expression: sql`a.id`, direction: "asc", type: "bigint" }
]

/** One keyset page of award rows under `conditions`, newest first. */
const readAwardPage = (
  conditions: ReadonlyArray<Fragment>,
  options: { readonly limit: number; readonly cursor: string | undefined; readonly request: Paging.PageRequest }
) =>
  Effect.gen(function*() {
    const market = yield* MarketData
    const { sql } = market
    const position = yield* market.provideCrypto(Paging.resume(options.cursor, options.request))
    const keys = rowKeys(sql)
    const fetched = yield* sql`
      SELECT ${sql.literal(AWARD_COLUMNS)}, ${sql.literal(RISK_SUMMARY_COLUMNS)},
        ${sortDate(sql)}::text AS sort_key
      FROM market.awards a ${sql.literal(riskSummaryJoin("a", "supplier_rfc"))}
      WHERE ${sql.and([...conditions, ...Paging.after(sql, keys, position)])}
      ORDER BY ${Paging.orderBy(sql, keys)}
      LIMIT ${options.limit + 1}`.pipe(Effect.flatMap(decodeAwardRows), Effect.orDie)
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, { limit: options.limit, request: options.request, positionOf: (row) => [row.sort_key, row.id] })
    )
    const projected = yield* market.provideCrypto(Effect.forEach(rows, project))
    return { page, projected, fetched: fetched.length }
  })

// -----------------------------------------------------------------------------
// search_awards
// -----------------------------------------------------------------------------

const approximateName: SemanticWarning = {
  code: "approximate_name_match",
  message:
    "supplier_name is matched approximately: the rows are candidates whose names resemble it, possibly of different suppliers. Confirm with supplier_rfc."
}

/**
 * search_awards: one keyset page of awards, newest first, matching the filters. At least one narrowing
 * dimension (supplier_rfc, supplier_name, cog_partidas, query, a date bound or an amount bound) is required;
 * an amount bound needs both currency and amount_scope.
 *
 * @since 0.1.0 @category queries
 */
export const searchAwardRows = (
  input: SearchAwardsInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<AwardRow>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const normalizations: Array<Normalization> = []
    const narrowing = [
      ...(input.supplier_rfc === undefined ? [] : ["supplier_rfc"]),
      ...(input.supplier_name === undefined ? [] : ["supplier_name"]),
      ...(input.cog_partidas === undefined ? [] : ["cog_partidas"]),
      ...(input.from_date === undefined ? [] : ["from_date"]),
      ...(input.to_date === undefined ? [] : ["to_date"]),
      ...(input.min_amount === undefined ? [] : ["min_amount"]),
      ...(input.max_amount === undefined ? [] : ["max_amount"])
    ]
    if (narrowing.length === 0 && input.query === undefined) {
      return yield* refuse(
        "query_too_broad",
        "An award search needs at least one narrowing dimension; currency and amount_scope alone still cover the whole market.",
        "Add at least one of: supplier_rfc, supplier_name, cog_partidas, query, from_date/to_date, min_amount/max_amount. For totals over the whole market use aggregate_awards."
      )
    }
    const hasAmount = input.min_amount !== undefined || input.max_amount !== undefined
    if (hasAmount && (input.currency === undefined || input.amount_scope === undefined)) {
      return yield* refuse(
        "amount_requires_currency_and_scope",
        "An amount bound means nothing without its currency and amount scope: amounts of different currencies or scopes are different quantities.",
        "Send currency (MXN, USD) and amount_scope (supplier_contract or award_group_published_total) with min_amount or max_amount.",
        { field: input.currency === undefined ? "currency" : "amount_scope" }
      )
    }
    if (input.min_amount !== undefined && input.max_amount !== undefined && scaled(input.min_amount) > scaled(input.max_amount)) {
      return yield* refuse(
        "invalid_field_value",
        "min_amount is greater than max_amount, so nothing could match.",
        "Send a min_amount at most max_amount.",
        { field: "min_amount" }
      )
    }
    yield* checkDateOrder(input.from_date, input.to_date, "to_date")
    const rfc = input.supplier_rfc === undefined ? undefined : yield* resolveRfc(input.supplier_rfc, normalizations)
    let name: string | undefined
    if (input.supplier_name !== undefined) {
      name = normalizeName(input.supplier_name)
      if (name.length < 3) {
        return yield* refuse(
          "invalid_field_value",
          "supplier_name holds too little of a name to match (legal forms such as \"S.A. de C.V.\" are ignored).",
          "Send at least three letters of the supplier's name, or its RFC as supplier_rfc.",
          { field: "supplier_name" }
        )
      }
      if (name !== input.supplier_name) {
        normalizations.push({
          field: "supplier_name",
          from: excerpt(input.supplier_name),
          to: name,
          reason: "name folded (accents, case, punctuation) and legal form removed"
        })
      }
    }
    const currency = input.currency === undefined ? undefined : normalizeCurrency(input.currency, normalizations)
    const cogPartidas = input.cog_partidas === undefined ? undefined : [...new Set(input.cog_partidas)].sort()

    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const text = yield* textQuery(market, input.query, input.query_mode)
    const limit = input.limit ?? defaultPageSize

    const conditions = [
      ...visibleAwards(sql, publication.snapshotId),
      ...(rfc === undefined ? [] : [sql`a.supplier_rfc = ${rfc}`]),
      // word_similarity through the trigram index: the name may be part of a longer published name.
      ...(name === undefined ? [] : [sql`${name} <% a.supplier_name_norm`]),
      ...(cogPartidas === undefined
        ? []
        : [sql`a.cog_partidas && ARRAY[${sql.csv(cogPartidas.map((code) => sql`${code}`))}]::text[]`]),
      ...dateRange(sql, input.from_date, input.to_date),
      ...(currency === undefined ? [] : [sql`a.currency = ${currency}`]),
      ...(input.amount_scope === undefined ? [] : [sql`a.amount_scope = ${input.amount_scope}`]),
      ...(input.min_amount === undefined ? [] : [sql`a.amount >= ${input.min_amount}::numeric`]),
      ...(input.max_amount === undefined ? [] : [sql`a.amount <= ${input.max_amount}::numeric`]),
      ...(text === undefined ? [] : [sql`a.search_tsv @@ ${text.tsquery}`])
    ]

    // A text query alone must be selective: a bounded probe, not asked again when resuming a page.
    let rowsExamined = 0
    if (text !== undefined && narrowing.length === 0 && input.cursor === undefined) {
      const probe = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (
          SELECT 1 FROM market.awards a WHERE ${sql.and(conditions)} LIMIT ${maxPageSize + 1}) t`.pipe(Effect.orDie)
      rowsExamined = probe[0]?.n ?? 0
      if (rowsExamined > maxPageSize) {
        return yield* refuse(
          "query_not_selective",
          `The words "${excerpt(text.query)}" alone match more awards than one page can hold.`,
          "Keep the words and add a structured filter (supplier_rfc, cog_partidas, from_date/to_date or an amount bound), or use more specific words."
        )
      }
    }

    const filters = {
      supplier_rfc: rfc ?? null,
      supplier_name: name ?? null,
      cog_partidas: cogPartidas ?? null,
      query: text?.query ?? null,
      mode: text?.appliedMode ?? null,
      from_date: input.from_date ?? null,
      to_date: input.to_date ?? null,
      currency: currency ?? null,
      amount_scope: input.amount_scope ?? null,
      min_amount: input.min_amount ?? null,
      max_amount: input.max_amount ?? null
    }
    const request: Paging.PageRequest = {
      operation: "search_awards",
      snapshotId: publication.snapshotId,
      filterDigest: Paging.filterDigest(filters)
    }
    const { fetched, page, projected } = yield* readAwardPage(conditions, { limit, cursor: input.cursor, request })
    rowsExamined += fetched

    const interpreted = Object.fromEntries(Object.entries(filters).filter(([key, value]) => value !== null && key !== "mode"))
    return yield* market.envelope({
      operation: "search_awards",
      publication,
      startedAt,
      request: { ...interpreted, limit, ...(input.cursor === undefined ? {} : { resumed_from_cursor: true }) },
      normalizations,
      ...(text === undefined ? {} : { queryInterpretation: text.interpretation(narrowing) }),
      results: projected.map((p) => p.award),
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["government_contracting"],
      warnings: [awardMeaning, ...(name === undefined ? [] : [approximateName])],
      empty: projected.length === 0,
      rowsExamined,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Awards.searchAwards", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// get_supplier_history
// -----------------------------------------------------------------------------

/** A total in one (currency, amount scope) pair. @since 0.1.0 @category models */
export const PairTotal = Schema.Struct({
  currency: Schema.NullOr(Schema.String).annotations({ description: "null for awards published without a currency." }),
  amount_scope: AmountScope,
  awardCount: Schema.Number,
  totalAmount: Schema.String.annotations({ description: "Exact decimal sum of the published amounts of this pair only." })
}).annotations({ identifier: "AwardPairTotal" })
/** @since 0.1.0 @category models */
export type PairTotal = typeof PairTotal.Type

/**
 * The history of one supplier in one (currency, amount scope) pair: the pair's total, every OTHER pair the
 * RFC has awards in (so the total is never read as the whole history), and a page of the pair's awards.
 *
 * @since 0.1.0 @category models
 */
export const SupplierHistory = Schema.Struct({
  supplier_rfc: Schema.String,
  total: PairTotal,
  other_pairs: Schema.Array(PairTotal).annotations({
    description: "Every other (currency, amount_scope) pair with awards of this RFC, each totalled on its own; never add them up."
  }),
  awards: Schema.Array(AwardRow)
}).annotations({ identifier: "SupplierHistory" })
/** @since 0.1.0 @category models */
export type SupplierHistory = typeof SupplierHistory.Type

const PairRow = Schema.Struct({
  currency: Schema.NullOr(Schema.String),
  amount_scope: AmountScope,
  n: Schema.Number,
  total: Schema.String
})
const decodePairRows = Schema.decodeUnknown(Schema.Array(PairRow))

/**
 * get_supplier_history: the awards of one RFC in one (currency, amount scope) pair, newest first, with the
 * pair's exact total and the other pairs the RFC has awards in.
 *
 * @since 0.1.0 @category queries
 */
export const readSupplierHistory = (
  input: SupplierHistoryInput
): Effect.Effect<EnvelopeOf<SupplierHistory>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const normalizations: Array<Normalization> = []
    const rfc = yield* resolveRfc(input.supplier_rfc, normalizations)
    const currency = normalizeCurrency(input.currency, normalizations)
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const limit = input.limit ?? defaultPageSize
    const ofRfc = [...visibleAwards(sql, publication.snapshotId), sql`a.supplier_rfc = ${rfc}`]

    const pairs = yield* sql`
      SELECT a.currency, a.amount_scope, count(*)::int AS n, coalesce(sum(a.amount), 0)::text AS total
      FROM market.awards a WHERE ${sql.and(ofRfc)}
      GROUP BY a.currency, a.amount_scope
      ORDER BY a.currency NULLS LAST, a.amount_scope`.pipe(Effect.flatMap(decodePairRows), Effect.orDie)
    const totals: ReadonlyArray<PairTotal> = pairs.map((p) => ({
      currency: p.currency,
      amount_scope: p.amount_scope,
      awardCount: p.n,
      totalAmount: p.total
    }))
    const isRequested = (p: PairTotal) => p.currency === currency && p.amount_scope === input.amount_scope
    const total = totals.find(isRequested) ?? { currency, amount_scope: input.amount_scope, awardCount: 0, totalAmount: "0" }
    const others = totals.filter((p) => !isRequested(p))

    const request: Paging.PageRequest = {
      operation: "get_supplier_history",
      snapshotId: publication.snapshotId,
      filterDigest: Paging.filterDigest({ supplier_rfc: rfc, currency, amount_scope: input.amount_scope })
    }
    const { fetched, page, projected } = yield* readAwardPage(
      [...ofRfc, sql`a.currency = ${currency}`, sql`a.amount_scope = ${input.amount_scope}`],
      { limit, cursor: input.cursor, request }
    )
    return yield* market.envelope({
      operation: "get_supplier_history",
      publication,
      startedAt,
      request: {
        supplier_rfc: rfc,
        currency,
        amount_scope: input.amount_scope,
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations,
      results: { supplier_rfc: rfc, total, other_pairs: others, awards: projected.map((p) => p.award) },
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["government_contracting"],
      warnings: [awardMeaning],
      empty: projected.length === 0,
      rowsExamined: fetched + pairs.reduce((sum, p) => sum + p.n, 0),
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Awards.getSupplierHistory", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// Declarations
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category operations */
export const searchAwards = kit.make({
  name: "search_awards",
  title: "Search awards",
  description:
    "Find published awards by supplier RFC (strong) or name (approximate), COG partidas, words, dates and amounts. An award is a publication that a contract was awarded, not a payment, delivery or execution.",
  http: { method: "POST", path: "/awards/search", input: { kind: "body" } },
  cli: { words: ["awards", "search"] },
  input: SearchAwardsInput,
  output: Envelope(Schema.Array(AwardRow)).annotations({ identifier: "SearchAwardsEnvelope" }),
  refuses: [
    "query_too_broad",
    "query_not_selective",
    "invalid_field_value",
    "amount_requires_currency_and_scope",
    "invalid_cursor",
    "cursor_stale",
    "serving_projection_unavailable",
    "serving_projection_stale"
  ],
  paginates: true,
  capability: {
    question: "Which contracts were published as awarded to a supplier, for a COG partida, in a period or above an amount?",
    requires:
      "At least one of supplier_rfc, supplier_name, cog_partidas, query, from_date/to_date, min_amount/max_amount. An amount bound needs currency and amount_scope. cog_partidas: 1 to 20 five-digit codes, matched by overlap.",
    example: { supplier_rfc: "CFE370814QI0", limit: 5 }
  },
  run: searchAwardRows
})

/** @since 0.1.0 @category operations */
export const getSupplierHistory = kit.make({
  name: "get_supplier_history",
  title: "Supplier award history",
  description:
    "The awards of one supplier RFC in one currency and amount scope, with that pair's exact total and every other pair the RFC has awards in. Totals are never summed across currencies or scopes.",
  http: { method: "POST", path: "/awards/history", input: { kind: "body" } },
  cli: { words: ["awards", "history"], positional: "supplier_rfc" },
  input: SupplierHistoryInput,
  output: Envelope(SupplierHistory).annotations({ identifier: "SupplierHistoryEnvelope" }),
  refuses: ["invalid_field_value", "invalid_cursor", "cursor_stale", "serving_projection_unavailable", "serving_projection_stale"],
  paginates: true,
  capability: {
    question: "What was a supplier awarded over time, in one currency and amount scope, and in which other pairs does it have awards?",
    requires: "supplier_rfc, currency and amount_scope, all three.",
    example: { supplier_rfc: "CFE370814QI0", currency: "MXN", amount_scope: "supplier_contract" }
  },
  run: readSupplierHistory
})

/** @since 0.1.0 @category schemas */
export { IsoDate }
