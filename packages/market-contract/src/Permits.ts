/**
 * Permits (energy generation permits as granted): the input, the abstracted permit row, the search query and
 * the `search_permits` declaration. `holder_rfc` is strong identity (and rarely published); `holder_name` is
 * approximate and returns candidates.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import type { RequestContext } from "@service/core/RequestContext"
import { parseRfc } from "@service/market-warehouse/Rfc"
import { stateByCode } from "@service/market-warehouse/States"
import { foldText, normalizeName } from "@service/market-warehouse/Text"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  Envelope,
  EvidenceCategory,
  evidenceCategoryLabels,
  type Normalization,
  type ProvenanceEntry,
  type SemanticWarning
} from "./Envelope.js"
import { sealRecordRef } from "./internal/refs.js"
import { RISK_SUMMARY_COLUMNS, riskSummaryDbFields, riskSummaryJoin, riskSummaryOf } from "./internal/riskSummaries.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Paging from "./Paging.js"
import { RiskField } from "./RiskSummary.js"
import { Limit } from "./Suppliers.js"
import { TrimmedText, strict } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"
import { kit } from "./MarketKit.js"

// Repeated rather than imported from Operations.ts, which imports this module.

/**
 * search_permits input (the same on every surface).
 *
 * @since 0.1.0 @category models
 */
export const SearchPermitsInput = Schema.Struct({
  holder_rfc: Schema.optional(TrimmedText(16)).annotations({
    description: "Holder RFC (12 characters for a company, 13 for a person): strong identity, rarely published on permits."
  }),
  holder_name: Schema.optional(TrimmedText(200)).annotations({
    description: "Holder name (accents, case, punctuation and legal form ignored): approximate, returns candidates."
  }),
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(TrimmedText(2048)).annotations({
    description: "page.nextCursor of the previous response, to read the next page with the same filters."
  })
}).annotations({ ...strict, identifier: "SearchPermitsInput" })
/** @since 0.1.0 @category models */
export type SearchPermitsInput = typeof SearchPermitsInput.Type

const CodeName = Schema.Struct({ code: Schema.String, name: Schema.String })

const PublisherFigure = (description: string) =>
  Schema.NullOr(Schema.String).annotations({
    description: `${description} Exact decimal string as printed by the publisher, not audited spend; null when not printed.`
  })

/**
 * A permit in the abstracted projection: the granted right as recorded at load time.
 *
 * @since 0.1.0 @category models
 */
export const PermitRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  permit_number: Schema.String,
  holder_name: Schema.String,
  holder_rfc: Schema.NullOr(Schema.String).annotations({ description: "Rarely published; null when not." }),
  risk: RiskField,
  plant_name: Schema.NullOr(Schema.String),
  permit_type: Schema.NullOr(Schema.String),
  status_text: Schema.String.annotations({ description: "The publisher's status as recorded at load time." }),
  is_active_risk: Schema.Boolean.annotations({
    description: "Granted and in force but not operating yet (under construction or works not started), as recorded."
  }),
  is_expansion: Schema.Boolean.annotations({ description: "The plant is recorded as an expansion." }),
  investment_mdd: PublisherFigure("Investment in millions of US dollars."),
  capacity_mw: PublisherFigure("Authorized capacity in MW."),
  estimated_generation: PublisherFigure("Authorized generation in GWh per year."),
  fuel: Schema.NullOr(Schema.String),
  technology: Schema.NullOr(Schema.String),
  state: Schema.NullOr(CodeName),
  granted_on: Schema.NullOr(Schema.String).annotations({ description: "Date the permit was granted (YYYY-MM-DD)." })
}).annotations({ identifier: "PermitRow" })
/** @since 0.1.0 @category models */
export type PermitRow = typeof PermitRow.Type

const PermitDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  permit_number: Schema.String,
  holder_name: Schema.String,
  holder_rfc: Schema.NullOr(Schema.String),
  plant_name: Schema.NullOr(Schema.String),
  permit_type: Schema.NullOr(Schema.String),
  status_text: Schema.String,
  is_active_risk: Schema.Boolean,
  is_expansion: Schema.Boolean,
  investment_mdd: Schema.NullOr(Schema.String),
  capacity_mw: Schema.NullOr(Schema.String),
  estimated_generation: Schema.NullOr(Schema.String),
  fuel: Schema.NullOr(Schema.String),
  technology: Schema.NullOr(Schema.String),
  state_code: Schema.NullOr(Schema.String),
  granted_on: Schema.NullOr(Schema.String),
  ...riskSummaryDbFields,
  /** The first ordering key (name similarity or normalized holder name), for the cursor position. */
  sort_key: Schema.Union(Schema.Number, Schema.String)
})
type PermitDbRow = typeof PermitDbRow.Type
const decodePermitRows = Schema.decodeUnknown(Schema.Array(PermitDbRow))

// Figures and dates leave the database as text: exact decimals, dates that never shift with a time zone.
const PERMIT_COLUMNS = `o.id::text AS id, o.snapshot_id, o.fingerprint, o.permit_number, o.holder_name, o.holder_rfc,
  o.plant_name, o.permit_type, o.status_text, o.is_active_risk, o.is_expansion, o.investment_mdd::text AS investment_mdd,
  o.capacity_mw::text AS capacity_mw, o.estimated_generation::text AS estimated_generation, o.fuel, o.technology,
  o.state_code, o.granted_on::text AS granted_on`

/** Trigram word similarity from which a holder name counts as a candidate (pg_trgm's default word threshold). */
const NAME_SIMILARITY = 0.6

/**
 * The warning every permit answer with rows carries.
 *
 * @since 0.1.0 @category constants
 */
export const permitMeaning: SemanticWarning = {
  code: "permit_as_granted",
  message:
    "A permit is a granted right recorded at load time, not live operational verification; figures are as printed by the publisher, not audited spend."
}

const nameWarning: SemanticWarning = {
  code: "approximate_name_match",
  message:
    "holder_name is approximate: rows are candidates whose holder name resembles it, best first; confirm by permit number or RFC."
}

const provenanceStatement = "Read from the published corpus snapshot; a permit as granted, not a verification."

const project = (row: PermitDbRow) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "permit", id: row.id, fingerprint: row.fingerprint })
    const permit: PermitRow = {
      evidence_category: "authorization_or_permit",
      evidence_category_label: evidenceCategoryLabels.authorization_or_permit,
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      permit_number: row.permit_number,
      holder_name: row.holder_name,
      holder_rfc: row.holder_rfc,
      risk: riskSummaryOf(row.holder_rfc, row),
      plant_name: row.plant_name,
      permit_type: row.permit_type,
      status_text: row.status_text,
      is_active_risk: row.is_active_risk,
      is_expansion: row.is_expansion,
      investment_mdd: row.investment_mdd,
      capacity_mw: row.capacity_mw,
      estimated_generation: row.estimated_generation,
      fuel: row.fuel,
      technology: row.technology,
      state: row.state_code === null
        ? null
        : { code: row.state_code, name: stateByCode(row.state_code)?.name ?? row.state_code },
      granted_on: row.granted_on
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "authorization_or_permit",
      corpusSnapshot: row.snapshot_id,
      statement: provenanceStatement
    }
    return { permit, provenance }
  })

interface Narrowed {
  readonly conditions: ReadonlyArray<Fragment>
  readonly nameKey: string | undefined
  readonly filterDigest: string
  readonly request: Readonly<Record<string, unknown>>
  readonly normalizations: ReadonlyArray<Normalization>
}

const narrow = (
  sql: SqlClient.SqlClient,
  snapshotId: string,
  input: SearchPermitsInput
): Effect.Effect<Narrowed, MarketDataRefusal> =>
  Effect.gen(function*() {
    if (input.holder_rfc === undefined && input.holder_name === undefined) {
      return yield* refuse(
        "query_too_broad",
        "A permit search needs a holder; the whole permit register is not offered.",
        "Add holder_rfc (strong identity) or holder_name (approximate)."
      )
    }
    const normalizations: Array<Normalization> = []
    let rfc: string | undefined
    if (input.holder_rfc !== undefined) {
      const parsed = parseRfc(input.holder_rfc)
      if (parsed === undefined) {
        return yield* refuse(
          "invalid_field_value",
          "holder_rfc is not a well-formed RFC.",
          "An RFC has 12 characters for a company (3 letters, YYMMDD, 3-character homoclave) or 13 for a person (4 letters).",
          { field: "holder_rfc" }
        )
      }
      if (parsed !== input.holder_rfc) {
        normalizations.push({ field: "holder_rfc", from: input.holder_rfc, to: parsed, reason: "RFC upper-cased, separators removed" })
      }
      rfc = parsed
    }
    let nameKey: string | undefined
    if (input.holder_name !== undefined) {
      // The same key the warehouse stores in holder_name_norm: folded, punctuation and legal form dropped.
      const key = normalizeName(input.holder_name)
      if (key.length === 0) {
        return yield* refuse(
          "invalid_field_value",
          "holder_name holds no letters or digits to match.",
          "Send the holder's name, e.g. \"Bimbo\" or \"Teléfonos de México\".",
          { field: "holder_name" }
        )
      }
      // Case and accents alone are not worth reporting; a dropped legal form or punctuation is.
      if (key !== foldText(input.holder_name)) {
        normalizations.push({
          field: "holder_name",
          from: input.holder_name,
          to: key,
          reason: "name folded (accents, case, punctuation and legal form ignored) for approximate matching"
        })
      }
      nameKey = key
    }
    return {
      conditions: [
        sql`o.snapshot_id = ${snapshotId}`,
        licensedRows(sql, "o"),
        ...(rfc === undefined ? [] : [sql`o.holder_rfc = ${rfc}`]),
        ...(nameKey === undefined
          ? []
          // `<%` (pg_trgm's word threshold, 0.6 by default) lets the trigram index serve the match; the explicit
          // comparison keeps the threshold fixed whatever the server's setting.
          : [sql`${nameKey} <% o.holder_name_norm`, sql`word_similarity(${nameKey}, o.holder_name_norm) >= ${NAME_SIMILARITY}::float8`])
      ],
      nameKey,
      filterDigest: Paging.filterDigest({ holder_rfc: rfc ?? null, holder_name: nameKey ?? null }),
      request: {
        ...(rfc === undefined ? {} : { holder_rfc: rfc }),
        ...(nameKey === undefined ? {} : { holder_name: input.holder_name, holder_name_match: "approximate" })
      },
      normalizations
    }
  })

/**
 * search_permits: one keyset page of permits of a holder, closest holder names first when a name is given,
 * else by holder name.
 *
 * @since 0.1.0 @category queries
 */
export const search = (
  input: SearchPermitsInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<PermitRow>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const limit = input.limit ?? defaultPageSize
    const narrowed = yield* narrow(sql, publication.snapshotId, input)
    const request: Paging.PageRequest = {
      operation: "search_permits",
      snapshotId: publication.snapshotId,
      filterDigest: narrowed.filterDigest
    }
    const position = yield* market.provideCrypto(Paging.resume(input.cursor, request))
    const keys: ReadonlyArray<Paging.Key> = narrowed.nameKey === undefined
      ? [
        { expression: sql`o.holder_name_norm`, direction: "asc", type: "text" },
        { expression: sql`o.id`, direction: "asc", type: "bigint" }
      ]
      : [
        { expression: sql`similarity(${narrowed.nameKey}, o.holder_name_norm)::float8`, direction: "desc", type: "float8" },
        { expression: sql`o.id`, direction: "asc", type: "bigint" }
      ]
    const fetched = yield* sql`
      SELECT ${sql.literal(PERMIT_COLUMNS)}, ${sql.literal(RISK_SUMMARY_COLUMNS)},
        ${keys[0]?.expression ?? sql`NULL`} AS sort_key
      FROM market.permits o ${sql.literal(riskSummaryJoin("o", "holder_rfc"))}
      WHERE ${sql.and([...narrowed.conditions, ...Paging.after(sql, keys, position)])}
      ORDER BY ${Paging.orderBy(sql, keys)}
      LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodePermitRows), Effect.orDie)
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, { limit, request, positionOf: (row) => [row.sort_key, row.id] })
    )
    const projected = yield* market.provideCrypto(Effect.forEach(rows, project))
    const warnings = [
      ...(projected.length > 0 ? [permitMeaning] : []),
      ...(narrowed.nameKey === undefined ? [] : [nameWarning])
    ]
    return yield* market.envelope({
      operation: "search_permits",
      publication,
      startedAt,
      request: {
        ...narrowed.request,
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations: narrowed.normalizations,
      results: projected.map((p) => p.permit),
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["authorization_or_permit"],
      warnings,
      empty: projected.length === 0,
      rowsExamined: fetched.length,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Permits.search", { captureStackTrace: false }))

/** @since 0.1.0 @category operations */
export const searchPermits = kit.make({
  name: "search_permits",
  title: "Search permits by holder",
  description:
    "Find energy permits as granted and recorded at load time, by holder RFC (strong, rarely published) or holder name (approximate candidates). Figures are as printed, not audited.",
  http: { method: "POST", path: "/permits/search", input: { kind: "body" } },
  cli: { words: ["permits", "search"] },
  input: SearchPermitsInput,
  output: Envelope(Schema.Array(PermitRow)).annotations({ identifier: "SearchPermitsEnvelope" }),
  refuses: [
    "query_too_broad",
    "invalid_field_value",
    "invalid_cursor",
    "cursor_stale",
    "serving_projection_unavailable",
    "serving_projection_stale"
  ],
  paginates: true,
  capability: {
    question: "Which permits were granted to a holder, with their status, capacity and investment as printed?",
    requires: "holder_rfc (strong identity) or holder_name (approximate: candidates, closest first).",
    example: { holder_name: "Bimbo", limit: 5 }
  },
  run: search
})
