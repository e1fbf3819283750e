/**
 * The response envelope every market-data success carries: what was asked, what was answered, and what the
 * answer saw (coverage and corpus basis), so an empty page is distinguishable from a missing market.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category constants */
export const SCHEMA_VERSION = "market-data/domain/1" as const

/** @since 0.1.0 @category models */
export const EvidenceCategory = Schema.Literal(
  "supplier_or_organization_evidence",
  "government_contracting",
  "administrative_risk",
  "authorization_or_permit",
  "other_public_record"
)
/** @since 0.1.0 @category models */
export type EvidenceCategory = typeof EvidenceCategory.Type

/** @since 0.1.0 @category constants */
export const evidenceCategoryLabels: { readonly [K in EvidenceCategory]: string } = {
  supplier_or_organization_evidence: "Published observation of an organization or establishment",
  government_contracting: "Published procedure or contract recorded as awarded",
  administrative_risk: "Published administrative mark",
  authorization_or_permit: "Permit or concession recorded when granted",
  other_public_record: "General public record"
}

/** @since 0.1.0 @category models */
export const PageInfo = Schema.Struct({
  limit: Schema.Number,
  returned: Schema.Number,
  hasMore: Schema.Boolean,
  nextCursor: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type PageInfo = typeof PageInfo.Type

/**
 * Coverage per evidence category. In the abstracted projection it is grouped by category and counts only
 * rows licensed for display; no source identity appears.
 *
 * @since 0.1.0 @category models
 */
export const CoverageDeclaration = Schema.Struct({
  evidenceCategory: EvidenceCategory,
  evidenceCategoryLabel: Schema.String,
  licensedForDisplay: Schema.Boolean,
  visibleRows: Schema.Number,
  sourceCount: Schema.Number,
  freshness: Schema.Struct({
    /** When the newest contributing source was retrieved for this corpus (date, YYYY-MM-DD). */
    newestRetrieval: Schema.NullOr(Schema.String),
    /** When the oldest contributing source was retrieved (date, YYYY-MM-DD). */
    oldestRetrieval: Schema.NullOr(Schema.String),
    publishedAt: Schema.String
  })
})
/** @since 0.1.0 @category models */
export type CoverageDeclaration = typeof CoverageDeclaration.Type

/** @since 0.1.0 @category models */
export const CorpusBasis = Schema.Struct({
  snapshotId: Schema.String,
  publishedAt: Schema.String,
  contractVersion: Schema.Number,
  freshUntil: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type CorpusBasis = typeof CorpusBasis.Type

/** @since 0.1.0 @category models */
export const SemanticWarningCode = Schema.Literal(
  "zero_results_with_coverage",
  "cog_partida_totals_may_exceed_corpus",
  "observation_not_company",
  "approximate_name_match",
  "query_mode_relaxed",
  "listing_not_conviction",
  "award_not_payment",
  "status_as_loaded",
  "permit_as_granted"
)

/** @since 0.1.0 @category models */
export const SemanticWarning = Schema.Struct({
  code: SemanticWarningCode,
  message: Schema.String
})
/** @since 0.1.0 @category models */
export type SemanticWarning = typeof SemanticWarning.Type

/**
 * Where a row was read. It never claims currency or verification and never names the source.
 *
 * @since 0.1.0 @category models
 */
export const ProvenanceEntry = Schema.Struct({
  record_ref: Schema.String,
  evidence_category: EvidenceCategory,
  corpusSnapshot: Schema.String,
  statement: Schema.String
})
/** @since 0.1.0 @category models */
export type ProvenanceEntry = typeof ProvenanceEntry.Type

/** @since 0.1.0 @category models */
export const Diagnostics = Schema.Struct({
  elapsedMs: Schema.Number,
  rowsExamined: Schema.Number,
  truncated: Schema.Boolean
})

/** @since 0.1.0 @category models */
export const Normalization = Schema.Struct({
  field: Schema.String,
  from: Schema.String,
  to: Schema.String,
  reason: Schema.String
})
/** @since 0.1.0 @category models */
export type Normalization = typeof Normalization.Type

/** @since 0.1.0 @category models */
export const QueryMode = Schema.Literal("auto", "exact_phrase", "all_terms", "any_terms")
/** @since 0.1.0 @category models */
export type QueryMode = typeof QueryMode.Type

/**
 * How a text query was read. Never SQL, schema or a compiled query.
 *
 * @since 0.1.0 @category models
 */
export const QueryInterpretation = Schema.Struct({
  requested_mode: Schema.NullOr(QueryMode),
  applied_mode: QueryMode,
  normalized_terms: Schema.Array(Schema.String),
  recognized_state_aliases: Schema.Array(Schema.String),
  filters: Schema.Array(Schema.String),
  warning: Schema.NullOr(Schema.String)
})

/**
 * The request after normalization. `request` holds the normalized fields.
 *
 * @since 0.1.0 @category models
 */
export const InterpretedRequest = Schema.Struct({
  request: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  normalizations: Schema.Array(Normalization),
  query_interpretation: Schema.optional(QueryInterpretation)
})
/** @since 0.1.0 @category models */
export type InterpretedRequest = typeof InterpretedRequest.Type

/**
 * Builds the envelope schema for one operation's results.
 *
 * @since 0.1.0 @category constructors
 */
export const Envelope = <R extends Schema.Schema.Any>(results: R) =>
  Schema.Struct({
    schemaVersion: Schema.Literal(SCHEMA_VERSION),
    requestId: Schema.String,
    operation: Schema.String,
    interpretedRequest: InterpretedRequest,
    results,
    page: Schema.NullOr(PageInfo),
    coverage: Schema.Array(CoverageDeclaration),
    corpusBasis: CorpusBasis,
    semanticWarnings: Schema.Array(SemanticWarning),
    provenance: Schema.Array(ProvenanceEntry),
    diagnostics: Diagnostics
  })
