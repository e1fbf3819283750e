/**
 * Supplier observations: the inputs, the abstracted supplier row, and the search and get queries.
 *
 * @since 0.1.0
 */
import type { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { EvidenceCategory, evidenceCategoryLabels, type ProvenanceEntry, type SemanticWarning } from "./Envelope.js"
import { sealRecordRef, openRecordRef } from "./internal/refs.js"
import { RISK_SUMMARY_COLUMNS, riskSummaryJoin, riskSummaryOf } from "./internal/riskSummaries.js"
import {
  contactPresenceOf,
  decodeSupplierRows,
  stateOf,
  SUPPLIER_COLUMNS,
  type SupplierRiskDbRow
} from "./internal/supplierRows.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Paging from "./Paging.js"
import { RiskField } from "./RiskSummary.js"
import * as Narrowing from "./SupplierNarrowing.js"
import { Limit, TrimmedText, strict } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"

/** @since 0.1.0 @category models */
export const ScianCode = Narrowing.ScianCode

const searchFields = {
  ...Narrowing.fields,
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(TrimmedText(2048)).annotations({
    description: "page.nextCursor of the previous response, to read the next page with the same filters."
  })
}

/**
 * Canonical search input (HTTP route). `source_slugs` is accepted only here.
 *
 * @since 0.1.0 @category models
 */
export const SearchSuppliersInput = Schema.Struct({
  ...searchFields,
  ...Narrowing.canonicalFields
}).annotations({ ...strict, identifier: "SearchSuppliersInput" })
/** @since 0.1.0 @category models */
export type SearchSuppliersInput = typeof SearchSuppliersInput.Type

/**
 * Model-facing search input (MCP, CLI): no source selection.
 *
 * @since 0.1.0 @category models
 */
export const SearchSuppliersModelInput = Schema.Struct(searchFields).annotations({
  ...strict,
  identifier: "SearchSuppliersModelInput"
})

/** @since 0.1.0 @category models */
export const GetSupplierInput = Schema.Struct({
  record_ref: TrimmedText(2048).annotations({ description: "A record_ref copied verbatim from a search row." })
}).annotations({ ...strict, identifier: "GetSupplierInput" })
/** @since 0.1.0 @category models */
export type GetSupplierInput = typeof GetSupplierInput.Type

const CodeName = Schema.Struct({ code: Schema.String, name: Schema.String })

/**
 * A supplier observation in the abstracted projection: identity handles, what was published about the
 * establishment, and contact presence only (never a coordinate).
 *
 * @since 0.1.0 @category models
 */
export const SupplierRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  name: Schema.String,
  legal_name: Schema.NullOr(Schema.String),
  rfc: Schema.NullOr(Schema.String),
  risk: RiskField,
  scian: Schema.NullOr(Schema.Struct({ code: Schema.String, title: Schema.NullOr(Schema.String) })),
  state: Schema.NullOr(CodeName),
  municipality: Schema.NullOr(CodeName),
  employment_band: Schema.NullOr(Schema.String),
  establishment_type: Schema.NullOr(Schema.String),
  incorporated_on: Schema.NullOr(Schema.String).annotations({ description: "Month of incorporation to the source (YYYY-MM)." }),
  contact_presence: Schema.Struct({
    has_phone: Schema.Boolean,
    has_email: Schema.Boolean,
    has_website: Schema.Boolean,
    channel_count: Schema.Number
  })
}).annotations({ identifier: "SupplierRow" })
/** @since 0.1.0 @category models */
export type SupplierRow = typeof SupplierRow.Type

const observationWarning: SemanticWarning = {
  code: "observation_not_company",
  message:
    "Each supplier result is one published observation, not a consolidated company and not proof of capability."
}

/** Said once per envelope rather than once per row: a provenance entry is a place of reading, not a verification. */
const provenanceStatement = "A publication of record, not a verification."

/** The abstracted supplier row and its provenance entry, with one fresh record_ref for both. */
const project = (row: SupplierRiskDbRow) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "supplier", id: row.id, fingerprint: row.fingerprint })
    const presence = contactPresenceOf(row)
    const supplier: SupplierRow = {
      evidence_category: "supplier_or_organization_evidence",
      evidence_category_label: evidenceCategoryLabels.supplier_or_organization_evidence,
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      name: row.name,
      legal_name: row.legal_name,
      rfc: row.rfc,
      risk: riskSummaryOf(row.rfc, row),
      scian: row.scian_code === null ? null : { code: row.scian_code, title: row.scian_title },
      state: stateOf(row),
      municipality: row.municipality_code === null
        ? null
        : { code: row.municipality_code, name: row.municipality_name ?? row.municipality_code },
      employment_band: row.employment_band,
      establishment_type: row.establishment_type,
      incorporated_on: row.incorporated_on,
      contact_presence: {
        ...presence,
        channel_count: Number(presence.has_phone) + Number(presence.has_email) + Number(presence.has_website)
      }
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "supplier_or_organization_evidence",
      corpusSnapshot: row.snapshot_id,
      statement: provenanceStatement
    }
    return { supplier, provenance }
  })

/**
 * search_suppliers: one keyset page of observations matching the narrowing, by text rank when there is a
 * query, else by normalized name.
 *
 * @since 0.1.0 @category queries
 */
export const searchSuppliers = (
  input: SearchSuppliersInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<SupplierRow>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const limit = input.limit ?? defaultPageSize
    const narrowed = yield* Narrowing.narrow(market, publication.snapshotId, input)
    const request: Paging.PageRequest = {
      operation: "search_suppliers",
      snapshotId: publication.snapshotId,
      filterDigest: narrowed.filterDigest
    }
    const position = yield* market.provideCrypto(Paging.resume(input.cursor, request))

    // A text query alone must be selective (not asked again when resuming a page).
    let rowsExamined = input.cursor === undefined ? yield* Narrowing.probeSelectivity(sql, narrowed) : 0

    const keys: ReadonlyArray<Paging.Key> = narrowed.tsquery === undefined
      ? [
        { expression: sql`o.name_norm`, direction: "asc", type: "text" },
        { expression: sql`o.id`, direction: "asc", type: "bigint" }
      ]
      : [
        { expression: sql`ts_rank_cd(o.search_tsv, ${narrowed.tsquery})::float8`, direction: "desc", type: "float8" },
        { expression: sql`o.id`, direction: "asc", type: "bigint" }
      ]
    // Two phases (decision 0084): the page's ids and sort keys first, from the narrowing's columns alone, so an
    // index that carries them (`supplier_obs_state_idx` includes the SCIAN code and source) answers without
    // reading a row it then drops; then the page's rows by id.
    const pageKeys: ReadonlyArray<Paging.Key> = keys.map((key, i) => ({
      ...key,
      expression: i === 0 ? sql`page.sort_key` : sql`page.id`
    }))
    const fetched = yield* sql`
      SELECT ${sql.literal(SUPPLIER_COLUMNS)}, ${sql.literal(RISK_SUMMARY_COLUMNS)}, page.sort_key
      FROM (
        SELECT o.id, ${keys[0]?.expression ?? sql`NULL`} AS sort_key
        FROM market.supplier_observations o
        WHERE ${sql.and([...narrowed.conditions, ...Paging.after(sql, keys, position)])}
        ORDER BY ${Paging.orderBy(sql, keys)}
        LIMIT ${limit + 1}
      ) page
      JOIN market.supplier_observations o ON o.id = page.id ${sql.literal(riskSummaryJoin("o", "rfc"))}
      ORDER BY ${Paging.orderBy(sql, pageKeys)}`.pipe(Effect.flatMap(decodeSupplierRows), Effect.orDie)
    rowsExamined += fetched.length
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, { limit, request, positionOf: (row) => [row.sort_key ?? null, row.id] })
    )
    const projected = yield* market.provideCrypto(Effect.forEach(rows, project))

    return yield* market.envelope({
      operation: "search_suppliers",
      publication,
      startedAt,
      request: {
        ...narrowed.request,
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations: narrowed.normalizations,
      ...(narrowed.queryInterpretation === undefined ? {} : { queryInterpretation: narrowed.queryInterpretation }),
      results: projected.map((p) => p.supplier),
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["supplier_or_organization_evidence"],
      warnings: projected.length > 0 ? [observationWarning] : [],
      empty: projected.length === 0,
      rowsExamined,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Suppliers.searchSuppliers", { captureStackTrace: false }))

/**
 * get_supplier: the observation a record_ref names, by the id it was sealed with or, after a republish, by
 * its fingerprint.
 *
 * @since 0.1.0 @category queries
 */
export const getSupplier = (
  input: GetSupplierInput
): Effect.Effect<EnvelopeOf<SupplierRow>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const market = yield* MarketData
    const { sql } = market
    const ref = yield* market.provideCrypto(openRecordRef(input.record_ref, "supplier"))
    const publication = yield* market.servingPublication
    const rows = yield* sql`
      SELECT ${sql.literal(SUPPLIER_COLUMNS)}, ${sql.literal(RISK_SUMMARY_COLUMNS)}
      FROM market.supplier_observations o ${sql.literal(riskSummaryJoin("o", "rfc"))}
      WHERE o.snapshot_id = ${publication.snapshotId}
        AND ${licensedRows(sql, "o")}
        AND (o.id = ${ref.id}::bigint OR o.fingerprint = ${ref.fingerprint})
      ORDER BY (o.id = ${ref.id}::bigint) DESC LIMIT 1`.pipe(Effect.flatMap(decodeSupplierRows), Effect.orDie)
    const row = rows[0]
    if (row === undefined) {
      return yield* refuse(
        "invalid_record_ref",
        "This record_ref points to an observation that is not in the published corpus any more.",
        "Search again and use a record_ref from the new response."
      )
    }
    const { provenance, supplier } = yield* market.provideCrypto(project(row))
    return yield* market.envelope({
      operation: "get_supplier",
      publication,
      startedAt,
      request: { record_ref: "(sealed)" },
      results: supplier,
      provenance: [provenance],
      categories: ["supplier_or_organization_evidence"],
      warnings: [observationWarning],
      rowsExamined: rows.length
    })
  }).pipe(Effect.withSpan("Suppliers.getSupplier", { captureStackTrace: false }))

/** @since 0.1.0 @category schemas */
export { Limit }
