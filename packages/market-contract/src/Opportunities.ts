/**
 * Public procurement procedures (opportunities): the inputs, the abstracted opportunity row with its awards
 * as a nested child collection, the search and get queries, and the `search_opportunities` and
 * `get_opportunity` declarations.
 *
 * An opportunity's status is the one recorded when the corpus was loaded, never a live check, and the corpus
 * holds no reliable deadline: every deadline filter is accepted by the schema only to be refused with
 * `deadline_not_available` (docs/decisions/0040-opportunity-and-permit-operations.md).
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { excerpt } from "@service/core/Refusal"
import type { RequestContext } from "@service/core/RequestContext"
import { stateByCode } from "@service/market-warehouse/States"
import { foldWords } from "@service/market-warehouse/Text"
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
import { compileTextQuery, resolveStateInput, type TextQuery, type TextQueryHost } from "./internal/narrowing.js"
import { openRecordRef, sealRecordRef } from "./internal/refs.js"
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

// Repeated rather than imported from Operations.ts, which imports this module.

/**
 * How a text query is retrieved: `lexical` (full-text rank, the default) or `hybrid` (full-text rank fused
 * with the trigram similarity of the title, so near spellings also match).
 *
 * @since 0.1.0 @category models
 */
export const Strategy = Schema.Literal("lexical", "hybrid")
/** @since 0.1.0 @category models */
export type Strategy = typeof Strategy.Type

/**
 * The deadline-shaped fields a caller tries. The corpus holds no reliable deadline, so each is accepted by
 * the schema only to be refused with `deadline_not_available` rather than as an unknown field.
 *
 * @since 0.1.0 @category constants
 */
export const deadlineFields = [
  "deadline",
  "deadline_from",
  "deadline_to",
  "deadline_before",
  "deadline_after",
  "closes_before",
  "closes_after",
  "tender_end_before",
  "tender_end_after"
] as const

const deadline = Schema.optional(Schema.String).annotations({
  description: "Not available: the corpus holds no reliable deadlines; any value is refused with deadline_not_available."
})

/**
 * search_opportunities input (the same on every surface: there is no canonical-only field).
 *
 * @since 0.1.0 @category models
 */
export const SearchOpportunitiesInput = Schema.Struct({
  query: Schema.optional(TrimmedText(200)).annotations({
    description: "Words to find in titles, descriptions and buyer names (Spanish; accents and case ignored)."
  }),
  query_mode: Schema.optional(QueryMode).annotations({
    description:
      "How query words combine: auto (default: all terms), exact_phrase, all_terms, any_terms. Forces lexical retrieval."
  }),
  strategy: Schema.optional(Strategy).annotations({
    description:
      "lexical (default): full-text rank. hybrid: full-text rank fused with title similarity, so near spellings match too; not with query_mode."
  }),
  buyer: Schema.optional(TrimmedText(200)).annotations({
    description: "Buyer: its exact acronym (GACM, API-Veracruz) or an approximate name (candidates)."
  }),
  state: Schema.optional(TrimmedText(64)).annotations({
    description: "State name, code or common alias (CDMX, Jalisco, 14...)."
  }),
  procedure_type: Schema.optional(TrimmedText(64)).annotations({
    description: "Procedure type as the corpus holds it: licitacion_publica, invitacion_tres, adjudicacion_directa..."
  }),
  published_from: Schema.optional(IsoDate).annotations({ description: "Published on or after this date (YYYY-MM-DD)." }),
  published_to: Schema.optional(IsoDate).annotations({ description: "Published on or before this date (YYYY-MM-DD)." }),
  open_only: Schema.optional(Schema.Boolean).annotations({
    description: "Only procedures recorded as open when the corpus was loaded (not a live check)."
  }),
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(TrimmedText(2048)).annotations({
    description: "page.nextCursor of the previous response, to read the next page with the same filters."
  }),
  deadline,
  deadline_from: deadline,
  deadline_to: deadline,
  deadline_before: deadline,
  deadline_after: deadline,
  closes_before: deadline,
  closes_after: deadline,
  tender_end_before: deadline,
  tender_end_after: deadline
}).annotations({ ...strict, identifier: "SearchOpportunitiesInput" })
/** @since 0.1.0 @category models */
export type SearchOpportunitiesInput = typeof SearchOpportunitiesInput.Type

const recordRefField = TrimmedText(2048).annotations({
  description: "A record_ref copied verbatim from a search_opportunities row."
})
const includeAwardsDescription = "Read the procedure's awards (default true); false leaves awards null."

// HTTP carries this GET's extra fields as query parameters, so the canonical input also reads "true"/"false".
const BooleanText = Schema.transform(Schema.Literal("true", "false"), Schema.Literal(true, false), {
  strict: true,
  decode: (text) => text === "true",
  encode: (flag) => (flag ? "true" : "false")
})

/**
 * Canonical get_opportunity input (HTTP: the ref in the path, include_awards as a query parameter).
 *
 * @since 0.1.0 @category models
 */
export const GetOpportunityInput = Schema.Struct({
  record_ref: recordRefField,
  include_awards: Schema.optional(Schema.Union(Schema.Literal(true, false), BooleanText)).annotations({
    description: includeAwardsDescription
  })
}).annotations({ ...strict, identifier: "GetOpportunityInput" })
/** @since 0.1.0 @category models */
export type GetOpportunityInput = typeof GetOpportunityInput.Type

/**
 * Model-facing get_opportunity input (MCP, CLI): include_awards is a boolean (a true/false choice on the CLI).
 *
 * @since 0.1.0 @category models
 */
export const GetOpportunityModelInput = Schema.Struct({
  record_ref: recordRefField,
  include_awards: Schema.optional(Schema.Literal(true, false)).annotations({ description: includeAwardsDescription })
}).annotations({ ...strict, identifier: "GetOpportunityModelInput" })

// -----------------------------------------------------------------------------
// Rows
// -----------------------------------------------------------------------------

const CodeName = Schema.Struct({ code: Schema.String, name: Schema.String })

/** Search rows carry a short description; get carries it whole. */
const DESCRIPTION_LIMIT = 400

/** Awards nested in one get_opportunity answer at most (the largest procedure of the demo corpus has 11). */
const MAX_NESTED_AWARDS = 200

/**
 * Load-time actionability of a procedure, as the warehouse derives it from the recorded status.
 *
 * @since 0.1.0 @category models
 */
export const Actionability = Schema.Literal("open_at_load", "closed", "awarded", "cancelled", "unknown")

const AmountScope = Schema.Literal("supplier_contract", "award_group_published_total")

/**
 * An opportunity (public procedure) in the abstracted projection. `is_open` and `actionability` are as
 * recorded at load time; there is no deadline field.
 *
 * @since 0.1.0 @category models
 */
export const OpportunityRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String).annotations({
    description: `As published; in search rows cut to ${DESCRIPTION_LIMIT} characters at a word (ending with …).`
  }),
  buyer_name: Schema.NullOr(Schema.String),
  buyer_acronym: Schema.NullOr(Schema.String),
  procedure_type: Schema.NullOr(Schema.String),
  contracting_type: Schema.NullOr(Schema.String),
  status_text: Schema.NullOr(Schema.String).annotations({ description: "The publisher's status as recorded at load time." }),
  is_open: Schema.Boolean.annotations({ description: "Recorded as open at load time; not a live check." }),
  actionability: Actionability,
  actionability_reason: Schema.String,
  published_on: Schema.NullOr(Schema.String).annotations({ description: "Publication date (YYYY-MM-DD)." }),
  state: Schema.NullOr(CodeName),
  cog_partidas: Schema.Array(Schema.String),
  amount: Schema.NullOr(
    Schema.Struct({
      amount: Schema.String.annotations({ description: "Exact decimal string; never a float." }),
      currency: Schema.NullOr(Schema.String)
    })
  ),
  award_count: Schema.Number.annotations({ description: "Awards published for this procedure in the corpus." })
}).annotations({ identifier: "OpportunityRow" })
/** @since 0.1.0 @category models */
export type OpportunityRow = typeof OpportunityRow.Type

/**
 * An award of the procedure, nested in get_opportunity.
 *
 * @since 0.1.0 @category models
 */
export const OpportunityAward = Schema.Struct({
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  supplier_rfc: Schema.NullOr(Schema.String),
  risk: RiskField,
  supplier_name: Schema.String,
  award_date: Schema.NullOr(Schema.String).annotations({ description: "Date of the award as published (YYYY-MM-DD)." }),
  amount: Schema.NullOr(Schema.String).annotations({ description: "Exact decimal string; never a float." }),
  currency: Schema.NullOr(Schema.String),
  amount_scope: AmountScope,
  cogPartidas: Schema.Array(Schema.String).annotations({ description: "Five-digit COG partidas; [] when none were published." })
}).annotations({ identifier: "OpportunityAward" })
/** @since 0.1.0 @category models */
export type OpportunityAward = typeof OpportunityAward.Type

/**
 * get_opportunity's result: the row with its awards (null when include_awards is false).
 *
 * @since 0.1.0 @category models
 */
export const OpportunityDetail = Schema.Struct({
  ...OpportunityRow.fields,
  awards: Schema.NullOr(Schema.Array(OpportunityAward)).annotations({
    description: `The procedure's awards (at most ${MAX_NESTED_AWARDS}); null when include_awards is false.`
  })
}).annotations({ identifier: "OpportunityDetail" })
/** @since 0.1.0 @category models */
export type OpportunityDetail = typeof OpportunityDetail.Type

const OpportunityDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  title: Schema.String,
  description: Schema.NullOr(Schema.String),
  buyer_name: Schema.NullOr(Schema.String),
  buyer_acronym: Schema.NullOr(Schema.String),
  procedure_type: Schema.NullOr(Schema.String),
  contracting_type: Schema.NullOr(Schema.String),
  status_text: Schema.NullOr(Schema.String),
  is_open: Schema.Boolean,
  actionability: Actionability,
  actionability_reason: Schema.String,
  published_on: Schema.NullOr(Schema.String),
  state_code: Schema.NullOr(Schema.String),
  cog_partidas: Schema.Array(Schema.String),
  amount: Schema.NullOr(Schema.String),
  currency: Schema.NullOr(Schema.String),
  award_count: Schema.Number,
  /** The first ordering key (text rank, fused score or publication date), for the cursor position. */
  sort_key: Schema.optional(Schema.Union(Schema.Number, Schema.String))
})
type OpportunityDbRow = typeof OpportunityDbRow.Type
const decodeOpportunityRows = Schema.decodeUnknown(Schema.Array(OpportunityDbRow))

// Dates and amounts leave the database as text: a date never shifts with a time zone and an amount is never a float.
const OPPORTUNITY_COLUMNS = `o.id::text AS id, o.snapshot_id, o.fingerprint, o.title, o.description, o.buyer_name,
  o.buyer_acronym, o.procedure_type, o.contracting_type, o.status_text, o.is_open, o.actionability,
  o.actionability_reason, o.published_on::text AS published_on, o.state_code, o.cog_partidas, o.amount::text AS amount,
  o.currency, o.award_count`

const AwardDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  supplier_rfc: Schema.NullOr(Schema.String),
  supplier_name: Schema.String,
  award_date: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.String),
  currency: Schema.NullOr(Schema.String),
  amount_scope: AmountScope,
  cog_partidas: Schema.Array(Schema.String),
  ...riskSummaryDbFields
})
type AwardDbRow = typeof AwardDbRow.Type
const decodeAwardRows = Schema.decodeUnknown(Schema.Array(AwardDbRow))

const shorten = (text: string | null, limit: number | undefined): string | null => {
  if (text === null) return null
  const clean = text.trim()
  if (clean.length === 0) return null
  if (limit === undefined || clean.length <= limit) return clean
  const cut = clean.slice(0, limit)
  const space = cut.lastIndexOf(" ")
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/**
 * The warnings every opportunity answer with rows carries.
 *
 * @since 0.1.0 @category constants
 */
export const opportunityMeaning: ReadonlyArray<SemanticWarning> = [
  {
    code: "award_not_payment",
    message: "An award is a publication that a contract was awarded, not a payment, delivery or execution."
  },
  {
    code: "status_as_loaded",
    message:
      "Status, is_open and actionability are as recorded when the corpus was loaded, not a live check of the procedure."
  }
]

const buyerWarning: SemanticWarning = {
  code: "approximate_name_match",
  message:
    "buyer matched no acronym exactly, so it was matched approximately against buyer names: rows are candidates; check buyer_name."
}

const provenanceStatement = "A publication of record, not a verification."

const projectOpportunity = (row: OpportunityDbRow, descriptionLimit: number | undefined) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "opportunity", id: row.id, fingerprint: row.fingerprint })
    const opportunity: OpportunityRow = {
      evidence_category: "government_contracting",
      evidence_category_label: evidenceCategoryLabels.government_contracting,
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      title: row.title,
      description: shorten(row.description, descriptionLimit),
      buyer_name: row.buyer_name,
      buyer_acronym: row.buyer_acronym,
      procedure_type: row.procedure_type,
      contracting_type: row.contracting_type,
      status_text: row.status_text,
      is_open: row.is_open,
      actionability: row.actionability,
      actionability_reason: row.actionability_reason,
      published_on: row.published_on,
      state: row.state_code === null
        ? null
        : { code: row.state_code, name: stateByCode(row.state_code)?.name ?? row.state_code },
      cog_partidas: row.cog_partidas,
      amount: row.amount === null ? null : { amount: row.amount, currency: row.currency },
      award_count: row.award_count
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "government_contracting",
      corpusSnapshot: row.snapshot_id,
      statement: provenanceStatement
    }
    return { opportunity, provenance }
  })

const projectAward = (row: AwardDbRow) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "award", id: row.id, fingerprint: row.fingerprint })
    const award: OpportunityAward = {
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      supplier_rfc: row.supplier_rfc,
      risk: riskSummaryOf(row.supplier_rfc, row),
      supplier_name: row.supplier_name,
      award_date: row.award_date,
      amount: row.amount,
      currency: row.currency,
      amount_scope: row.amount_scope,
      cogPartidas: row.cog_partidas
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "government_contracting",
      corpusSnapshot: row.snapshot_id,
      statement: "A publication that a contract was awarded, not a verification."
    }
    return { award, provenance }
  })

// -----------------------------------------------------------------------------
// Narrowing
// -----------------------------------------------------------------------------

/** Trigram word similarity from which a buyer name counts as a match (pg_trgm's own word threshold). */
const NAME_SIMILARITY = 0.6

/** Trigram word similarity from which a title matches in hybrid retrieval: low enough for a one-letter typo. */
const TITLE_SIMILARITY = 0.5

/** Weight of the full-text rank in the hybrid score; the title's trigram similarity has the rest. */
const LEXICAL_WEIGHT = 0.5

interface Narrowed {
  readonly conditions: ReadonlyArray<Fragment>
  readonly text: TextQuery | undefined
  readonly strategy: Strategy
  readonly textOnly: boolean
  readonly filterDigest: string
  readonly request: Readonly<Record<string, unknown>>
  readonly normalizations: ReadonlyArray<Normalization>
  readonly queryInterpretation: InterpretedRequest["query_interpretation"] | undefined
  readonly warnings: ReadonlyArray<SemanticWarning>
}

/** Deadline questions and the query_mode/hybrid conflict: refused before the corpus is read. */
const refuseMisunderstandings = (input: SearchOpportunitiesInput): Effect.Effect<void, MarketDataRefusal> => {
  const asked = deadlineFields.filter((field) => input[field] !== undefined)
  const [first] = asked
  if (first !== undefined) {
    return Effect.fail(
      refuse(
        "deadline_not_available",
        `The corpus holds no reliable deadlines, so ${asked.join(", ")} cannot be answered.`,
        "Drop the deadline filter. Use open_only (status recorded at load time) or published_from/published_to, and check the procedure with its buyer.",
        { field: first }
      )
    )
  }
  if (input.query_mode !== undefined && input.strategy === "hybrid") {
    return Effect.fail(
      refuse(
        "invalid_field_value",
        "An explicit query_mode asks for lexical retrieval, which strategy \"hybrid\" contradicts.",
        "Drop query_mode to use hybrid retrieval, or drop strategy (or send \"lexical\") to keep query_mode.",
        { field: "strategy" }
      )
    )
  }
  return Effect.void
}

const narrow = (
  market: TextQueryHost,
  snapshotId: string,
  input: SearchOpportunitiesInput
): Effect.Effect<Narrowed, MarketDataRefusal> =>
  Effect.gen(function*() {
    const { sql } = market
    const query = input.query?.trim()
    const buyer = input.buyer?.trim()
    const procedureInput = input.procedure_type?.trim()
    const openOnly = input.open_only === true
    const structured = buyer !== undefined || input.state !== undefined || procedureInput !== undefined ||
      input.published_from !== undefined || input.published_to !== undefined || openOnly
    if (query === undefined && !structured) {
      return yield* refuse(
        "query_too_broad",
        "An opportunity search needs at least one narrowing dimension; the whole market is not offered.",
        "Add at least one of: query, buyer, state, procedure_type, published_from, published_to, open_only."
      )
    }
    const strategy: Strategy = input.strategy ?? "lexical"
    if (strategy === "hybrid" && query === undefined) {
      return yield* refuse(
        "invalid_field_value",
        "strategy \"hybrid\" ranks words, and this request has no query.",
        "Add a query, or drop strategy.",
        { field: "strategy" }
      )
    }
    const normalizations: Array<Normalization> = []
    const conditions: Array<Fragment> = [sql`o.snapshot_id = ${snapshotId}`, licensedRows(sql, "o")]
    const filterNames: Array<string> = []
    const warnings: Array<SemanticWarning> = []
    const aliases: Array<string> = []

    let stateCode: string | undefined
    if (input.state !== undefined) {
      const resolved = yield* resolveStateInput(input.state)
      stateCode = resolved.code
      if (resolved.normalization !== undefined) normalizations.push(resolved.normalization)
      if (resolved.alias !== undefined) aliases.push(resolved.alias)
      conditions.push(sql`o.state_code = ${stateCode}`)
      filterNames.push("state")
    }

    let procedureType: string | undefined
    if (procedureInput !== undefined) {
      const observed = yield* sql<{ value: string }>`
        SELECT DISTINCT o.procedure_type AS value FROM market.opportunities o
        WHERE o.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "o")} AND o.procedure_type IS NOT NULL
        ORDER BY 1`.pipe(Effect.orDie)
      const allowed = observed.map((r) => r.value)
      // "Licitación pública" and "licitacion-publica" name the stored value licitacion_publica.
      const key = foldWords(procedureInput).replaceAll(" ", "_")
      if (!allowed.includes(key)) {
        return yield* refuse(
          "unknown_filter_value",
          `procedure_type "${excerpt(procedureInput, 40)}" is not a procedure type the corpus holds.`,
          `Use one of: ${allowed.join(", ")}; or drop procedure_type.`,
          { field: "procedure_type", allowedValues: allowed }
        )
      }
      if (key !== procedureInput) {
        normalizations.push({ field: "procedure_type", from: procedureInput, to: key, reason: "procedure type as the corpus writes it" })
      }
      procedureType = key
      conditions.push(sql`o.procedure_type = ${key}`)
      filterNames.push("procedure_type")
    }

    if (input.published_from !== undefined && input.published_to !== undefined && input.published_from > input.published_to) {
      return yield* refuse(
        "invalid_field_value",
        `published_from (${input.published_from}) is after published_to (${input.published_to}).`,
        "Send published_from on or before published_to.",
        { field: "published_from" }
      )
    }
    if (input.published_from !== undefined) {
      conditions.push(sql`o.published_on >= ${input.published_from}::date`)
      filterNames.push("published_from")
    }
    if (input.published_to !== undefined) {
      conditions.push(sql`o.published_on <= ${input.published_to}::date`)
      filterNames.push("published_to")
    }
    if (openOnly) {
      conditions.push(sql`o.is_open`)
      filterNames.push("open_only")
    }

    let buyerMatch: "acronym" | "approximate_name" | undefined
    if (buyer !== undefined) {
      // An exact acronym is a strong identity: when the corpus holds it, it alone decides.
      const hit = yield* sql<{ hit: boolean }>`
        SELECT EXISTS (SELECT 1 FROM market.opportunities o
          WHERE o.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "o")}
            AND market.fold(o.buyer_acronym) = market.fold(${buyer})) AS hit`.pipe(Effect.orDie)
      if (hit[0]?.hit === true) {
        buyerMatch = "acronym"
        conditions.push(sql`market.fold(o.buyer_acronym) = market.fold(${buyer})`)
      } else {
        buyerMatch = "approximate_name"
        conditions.push(
          sql`word_similarity(market.fold(${buyer}), market.fold(o.buyer_name)) >= ${NAME_SIMILARITY}::float8`
        )
        warnings.push(buyerWarning)
      }
      filterNames.push("buyer")
    }

    const text = query === undefined ? undefined : yield* compileTextQuery(market, query, input.query_mode)
    if (text !== undefined) {
      conditions.push(
        strategy === "hybrid"
          ? sql`(o.search_tsv @@ ${text.tsquery}
              OR word_similarity(market.fold(${text.query}), market.fold(o.title)) >= ${TITLE_SIMILARITY}::float8)`
          : sql`o.search_tsv @@ ${text.tsquery}`
      )
    }

    const filters = {
      query: query ?? null,
      mode: text?.appliedMode ?? null,
      strategy: text === undefined ? null : strategy,
      buyer: buyer ?? null,
      buyer_match: buyerMatch ?? null,
      state: stateCode ?? null,
      procedure_type: procedureType ?? null,
      published_from: input.published_from ?? null,
      published_to: input.published_to ?? null,
      open_only: openOnly
    }
    return {
      conditions,
      text,
      strategy,
      textOnly: text !== undefined && filterNames.length === 0,
      filterDigest: Paging.filterDigest(filters),
      request: {
        ...(query === undefined ? {} : { query, strategy }),
        ...(buyer === undefined ? {} : { buyer, buyer_match: buyerMatch }),
        ...(stateCode === undefined ? {} : { state: stateCode }),
        ...(procedureType === undefined ? {} : { procedure_type: procedureType }),
        ...(input.published_from === undefined ? {} : { published_from: input.published_from }),
        ...(input.published_to === undefined ? {} : { published_to: input.published_to }),
        ...(openOnly ? { open_only: true } : {})
      },
      normalizations,
      queryInterpretation: text === undefined ? undefined : {
        requested_mode: text.requestedMode,
        applied_mode: text.appliedMode,
        normalized_terms: text.normalizedTerms,
        recognized_state_aliases: aliases,
        filters: filterNames,
        warning: strategy === "hybrid"
          ? "hybrid: every word must match by full text, or the title must be spelled close to the words; ranked by both"
          : text.requestedMode === null
          ? "auto mode: every word must match (Spanish stemming, accents ignored)"
          : null
      },
      warnings
    }
  })

/** The ordering keys: text rank or fused score when there are words, else newest publication first. */
const keysOf = (sql: SqlClient.SqlClient, narrowed: Narrowed): ReadonlyArray<Paging.Key> => {
  const id: Paging.Key = { expression: sql`o.id`, direction: "asc", type: "bigint" }
  const text = narrowed.text
  if (text === undefined) {
    // Undated procedures sort after every dated one (keyset keys are never null).
    return [{ expression: sql`coalesce(o.published_on, '0001-01-01'::date)`, direction: "desc", type: "date" }, id]
  }
  if (narrowed.strategy === "hybrid") {
    // A weighted sum of the normalized full-text rank (rank / (rank + 1), in [0, 1)) and the trigram similarity
    // of the folded title: computed per row, so a page resumes by keyset like any other order.
    return [{
      expression: sql`(${LEXICAL_WEIGHT}::float8 * ts_rank_cd(o.search_tsv, ${text.tsquery}, 32)
        + ${1 - LEXICAL_WEIGHT}::float8 * similarity(market.fold(${text.query}), market.fold(o.title)))::float8`,
      direction: "desc",
      type: "float8"
    }, id]
  }
  return [{ expression: sql`ts_rank_cd(o.search_tsv, ${text.tsquery})::float8`, direction: "desc", type: "float8" }, id]
}

/** The bounded selectivity probe (rule 2): words alone may match at most one page; reads at most one row more. */
const probeSelectivity = (sql: SqlClient.SqlClient, narrowed: Narrowed): Effect.Effect<number, MarketDataRefusal> =>
  Effect.gen(function*() {
    if (!narrowed.textOnly) return 0
    const probe = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (
        SELECT 1 FROM market.opportunities o WHERE ${sql.and(narrowed.conditions)} LIMIT ${maxPageSize + 1}) t`.pipe(
      Effect.orDie
    )
    const matched = probe[0]?.n ?? 0
    if (matched > maxPageSize) {
      return yield* refuse(
        "query_not_selective",
        `The words "${excerpt(narrowed.text?.query ?? "")}" alone match more procedures than one page can hold.`,
        "Keep the words and add a structured filter (buyer, state, procedure_type, published_from/published_to), or use more specific words."
      )
    }
    return matched
  })

// -----------------------------------------------------------------------------
// Queries
// -----------------------------------------------------------------------------

/**
 * search_opportunities: one keyset page of procedures matching the narrowing, by text rank (lexical), fused
 * score (hybrid) or newest publication first when there are no words.
 *
 * @since 0.1.0 @category queries
 */
export const search = (
  input: SearchOpportunitiesInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<OpportunityRow>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    yield* refuseMisunderstandings(input)
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const limit = input.limit ?? defaultPageSize
    const narrowed = yield* narrow(market, publication.snapshotId, input)
    const request: Paging.PageRequest = {
      operation: "search_opportunities",
      snapshotId: publication.snapshotId,
      filterDigest: narrowed.filterDigest
    }
    const position = yield* market.provideCrypto(Paging.resume(input.cursor, request))
    // Words alone must be selective (not asked again when resuming a page).
    let rowsExamined = input.cursor === undefined ? yield* probeSelectivity(sql, narrowed) : 0

    const keys = keysOf(sql, narrowed)
    const first = keys[0]
    const sortKey = first === undefined ? sql`NULL` : first.type === "date" ? sql`(${first.expression})::text` : first.expression
    const fetched = yield* sql`
      SELECT ${sql.literal(OPPORTUNITY_COLUMNS)}, ${sortKey} AS sort_key
      FROM market.opportunities o
      WHERE ${sql.and([...narrowed.conditions, ...Paging.after(sql, keys, position)])}
      ORDER BY ${Paging.orderBy(sql, keys)}
      LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeOpportunityRows), Effect.orDie)
    rowsExamined += fetched.length
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, { limit, request, positionOf: (row) => [row.sort_key ?? null, row.id] })
    )
    const projected = yield* market.provideCrypto(Effect.forEach(rows, (row) => projectOpportunity(row, DESCRIPTION_LIMIT)))

    return yield* market.envelope({
      operation: "search_opportunities",
      publication,
      startedAt,
      request: {
        ...narrowed.request,
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations: narrowed.normalizations,
      ...(narrowed.queryInterpretation === undefined ? {} : { queryInterpretation: narrowed.queryInterpretation }),
      results: projected.map((p) => p.opportunity),
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["government_contracting"],
      warnings: projected.length > 0 ? [...opportunityMeaning, ...narrowed.warnings] : narrowed.warnings,
      empty: projected.length === 0,
      rowsExamined,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Opportunities.search", { captureStackTrace: false }))

/**
 * get_opportunity: the procedure a record_ref names (by the id it was sealed with or, after a republish, by
 * its fingerprint), with its awards: those of the same snapshot and source whose procedure id is this one's.
 *
 * @since 0.1.0 @category queries
 */
export const get = (
  input: GetOpportunityInput
): Effect.Effect<EnvelopeOf<OpportunityDetail>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const market = yield* MarketData
    const { sql } = market
    const ref = yield* market.provideCrypto(openRecordRef(input.record_ref, "opportunity"))
    const publication = yield* market.servingPublication
    const rows = yield* sql`
      SELECT ${sql.literal(OPPORTUNITY_COLUMNS)} FROM market.opportunities o
      WHERE o.snapshot_id = ${publication.snapshotId} AND ${licensedRows(sql, "o")}
        AND (o.id = ${ref.id}::bigint OR o.fingerprint = ${ref.fingerprint})
      ORDER BY (o.id = ${ref.id}::bigint) DESC LIMIT 1`.pipe(Effect.flatMap(decodeOpportunityRows), Effect.orDie)
    const row = rows[0]
    if (row === undefined) {
      return yield* refuse(
        "invalid_record_ref",
        "This record_ref points to a procedure that is not in the published corpus any more.",
        "Search opportunities again and use a record_ref from the new response."
      )
    }
    const includeAwards = input.include_awards ?? true
    // Awards reach their procedure through (snapshot, source, procedure id), as the publish step counts them.
    const awardRows = includeAwards
      ? yield* sql`
          SELECT a.id::text AS id, a.snapshot_id, a.fingerprint, a.supplier_rfc, a.supplier_name,
            a.award_date::text AS award_date, a.amount::text AS amount, a.currency, a.amount_scope, a.cog_partidas,
            ${sql.literal(RISK_SUMMARY_COLUMNS)}
          FROM market.awards a ${sql.literal(riskSummaryJoin("a", "supplier_rfc"))}
          JOIN market.opportunities p ON p.snapshot_id = a.snapshot_id AND p.source_slug = a.source_slug
            AND p.source_record_id = a.opportunity_source_record_id
          WHERE p.id = ${row.id}::bigint AND a.snapshot_id = ${publication.snapshotId}
            AND ${licensedRows(sql, "a")}
          ORDER BY a.award_date ASC NULLS LAST, a.id ASC
          LIMIT ${MAX_NESTED_AWARDS + 1}`.pipe(Effect.flatMap(decodeAwardRows), Effect.orDie)
      : []
    const { opportunity, provenance } = yield* market.provideCrypto(projectOpportunity(row, undefined))
    const awards = yield* market.provideCrypto(Effect.forEach(awardRows.slice(0, MAX_NESTED_AWARDS), projectAward))
    return yield* market.envelope({
      operation: "get_opportunity",
      publication,
      startedAt,
      request: { record_ref: "(sealed)", include_awards: includeAwards },
      results: { ...opportunity, awards: includeAwards ? awards.map((a) => a.award) : null },
      provenance: [provenance, ...awards.map((a) => a.provenance)],
      categories: ["government_contracting"],
      warnings: opportunityMeaning,
      rowsExamined: 1 + awardRows.length,
      truncated: awardRows.length > MAX_NESTED_AWARDS
    })
  }).pipe(Effect.withSpan("Opportunities.get", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// Declarations
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category operations */
export const searchOpportunities = kit.make({
  name: "search_opportunities",
  title: "Search public procurement procedures",
  description:
    "Find published procurement procedures by words (lexical or hybrid retrieval), buyer, state, procedure type, publication dates or open status as recorded at load time. No deadlines exist in the corpus.",
  http: { method: "POST", path: "/opportunities/search", input: { kind: "body" } },
  cli: { words: ["opportunities", "search"] },
  input: SearchOpportunitiesInput,
  output: Envelope(Schema.Array(OpportunityRow)).annotations({ identifier: "SearchOpportunitiesEnvelope" }),
  refuses: [
    "query_too_broad",
    "query_not_selective",
    "invalid_field_value",
    "unknown_state",
    "unknown_filter_value",
    "deadline_not_available",
    "invalid_cursor",
    "cursor_stale",
    "serving_projection_unavailable",
    "serving_projection_stale"
  ],
  paginates: true,
  capability: {
    question: "Which public procurement procedures were published about a subject, by a buyer, in a state or period?",
    requires:
      "At least one of query, buyer, state, procedure_type, published_from, published_to, open_only; a query alone must be selective. query_mode cannot be combined with strategy hybrid; deadline filters are refused.",
    example: { query: "mantenimiento", buyer: "API-Veracruz", limit: 5 }
  },
  run: search
})

/** @since 0.1.0 @category operations */
export const getOpportunity = kit.make({
  name: "get_opportunity",
  title: "Get one procurement procedure",
  description:
    "Read one procurement procedure by the record_ref copied from a search row, with its published awards and award_count.",
  http: {
    method: "GET",
    path: "/opportunities/~ref/:recordRef",
    input: { kind: "path", params: { recordRef: "record_ref" } }
  },
  cli: { words: ["opportunities", "get"], positional: "record_ref" },
  input: GetOpportunityInput,
  modelInput: GetOpportunityModelInput,
  output: Envelope(OpportunityDetail).annotations({ identifier: "GetOpportunityEnvelope" }),
  refuses: ["invalid_record_ref", "invalid_field_value", "serving_projection_unavailable", "serving_projection_stale"],
  capability: {
    question: "What exactly was published about this procedure, and which awards were published for it?",
    requires: "record_ref copied verbatim from a search_opportunities row of a recent response.",
    example: { record_ref: "<record_ref from a search_opportunities row>" },
    exampleFrom: { operation: "search_opportunities", path: ["results", 0, "record_ref"], field: "record_ref" }
  },
  run: get
})

/** @since 0.1.0 @category schemas */
export { IsoDate }
