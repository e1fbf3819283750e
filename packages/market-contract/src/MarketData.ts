/**
 * The market-data service: every operation reads the one active publication through the abstracted
 * projection and answers with the envelope.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import { RequestContext } from "@service/core/RequestContext"
import { stateByCode } from "@service/market-warehouse/States"
import { type Publication, type SourceCoverage, WarehouseReader } from "@service/market-warehouse/WarehouseReader"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import {
  type CorpusBasis,
  type CoverageDeclaration,
  type EvidenceCategory,
  evidenceCategoryLabels,
  type InterpretedRequest,
  type Normalization,
  type PageInfo,
  type ProvenanceEntry,
  SCHEMA_VERSION,
  type SemanticWarning
} from "./Envelope.js"
import { CONTRACT_VERSION, type CursorPayload, openCursor, openRecordRef, sealCursor, sealRecordRef } from "./internal/refs.js"
import { decodeSupplierRows, SUPPLIER_COLUMNS, type SupplierDbRow } from "./internal/supplierRows.js"
import { defaultPageSize } from "./Limits.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import { narrow, probeSelectivity } from "./SupplierNarrowing.js"
import type { GetSupplierInput, SearchSuppliersInput, SupplierRow } from "./Suppliers.js"

/** @since 0.1.0 @category models */
export interface EnvelopeOf<R> {
  readonly schemaVersion: typeof SCHEMA_VERSION
  readonly requestId: string
  readonly operation: string
  readonly interpretedRequest: InterpretedRequest
  readonly results: R
  readonly page: PageInfo | null
  readonly coverage: ReadonlyArray<CoverageDeclaration>
  readonly corpusBasis: CorpusBasis
  readonly semanticWarnings: ReadonlyArray<SemanticWarning>
  readonly provenance: ReadonlyArray<ProvenanceEntry>
  readonly diagnostics: { readonly elapsedMs: number; readonly rowsExamined: number; readonly truncated: boolean }
}

/**
 * What a query module hands the envelope builder. Everything not given takes the neutral value.
 *
 * @since 0.1.0 @category models
 */
export interface EnvelopeParts<R> {
  readonly operation: string
  readonly publication: Publication
  readonly request: Readonly<Record<string, unknown>>
  readonly results: R
  readonly startedAt: number
  readonly normalizations?: ReadonlyArray<Normalization>
  readonly queryInterpretation?: InterpretedRequest["query_interpretation"]
  readonly page?: PageInfo | null
  readonly categories?: ReadonlyArray<EvidenceCategory>
  readonly warnings?: ReadonlyArray<SemanticWarning>
  readonly provenance?: ReadonlyArray<ProvenanceEntry>
  readonly rowsExamined?: number
  readonly truncated?: boolean
  /** Coverage rows the caller already read for this publication (saves the query). */
  readonly coverageRows?: ReadonlyArray<SourceCoverage>
  /**
   * The answer is empty: the envelope then says so with `zero_results_with_coverage` when the corpus
   * does hold visible rows of the categories read, so an empty answer is told apart from a missing market.
   */
  readonly empty?: boolean
}

/** @since 0.1.0 @category models */
export interface ObservedValue {
  readonly value: string
  readonly label: string | null
  readonly visibleRows: number
}

/** @since 0.1.0 @category models */
export type Facet = "states" | "scian_codes" | "evidence_categories"

/** @since 0.1.0 @category constants */
export const facets: ReadonlyArray<Facet> = ["states", "scian_codes", "evidence_categories"]

/**
 * @since 0.1.0 @category tags
 */
export class MarketData extends Context.Tag("@service/market-contract/MarketData")<
  MarketData,
  {
    readonly searchSuppliers: (
      input: SearchSuppliersInput
    ) => Effect.Effect<EnvelopeOf<ReadonlyArray<SupplierRow>>, MarketDataRefusal, RequestContext>
    readonly getSupplier: (
      input: GetSupplierInput
    ) => Effect.Effect<EnvelopeOf<SupplierRow>, MarketDataRefusal, RequestContext>
    /** Corpus-observed value lists, each read from the active publication. */
    readonly observedValues: (
      requested: ReadonlyArray<Facet>
    ) => Effect.Effect<
      { readonly publication: Publication; readonly values: Partial<Record<Facet, ReadonlyArray<ObservedValue>>> },
      MarketDataRefusal
    >
    /** The abstracted coverage block of the active publication, for every evidence category. */
    readonly coverage: Effect.Effect<
      { readonly publication: Publication; readonly coverage: ReadonlyArray<CoverageDeclaration> },
      MarketDataRefusal
    >
    /** The corpus basis every envelope reports for a publication. */
    readonly corpusBasis: (publication: Publication) => CorpusBasis
    /**
     * The active publication, refused with `serving_projection_unavailable` or `serving_projection_stale`
     * when there is none or it is past its freshness bound: where every query module starts.
     */
    readonly servingPublication: Effect.Effect<Publication, MarketDataRefusal>
    /** The warehouse's read client, for this package's query modules. */
    readonly sql: SqlClient.SqlClient
    /** Builds the envelope around results a query module computed. */
    readonly envelope: <R>(parts: EnvelopeParts<R>) => Effect.Effect<EnvelopeOf<R>, never, RequestContext>
  }
>() {}

const isoDate = (d: Date) => d.toISOString()

/**
 * Groups per-source coverage into the abstracted declaration: by category, counting only rows licensed for
 * display, naming no source.
 */
const abstractCoverage = (
  publication: Publication,
  rows: ReadonlyArray<SourceCoverage>,
  categories: ReadonlyArray<EvidenceCategory>
): ReadonlyArray<CoverageDeclaration> =>
  categories.map((category) => {
    const mine = rows.filter((r) => r.evidenceCategory === category)
    const licensed = mine.filter((r) => r.licensedForDisplay)
    const dates = licensed.flatMap((r) => [r.oldestRetrieval, r.newestRetrieval]).filter((d): d is string => d !== null)
    dates.sort()
    return {
      evidenceCategory: category,
      evidenceCategoryLabel: evidenceCategoryLabels[category],
      licensedForDisplay: licensed.length > 0,
      visibleRows: licensed.reduce((sum, r) => sum + r.visibleRows, 0),
      sourceCount: new Set(licensed.map((r) => r.sourceSlug)).size,
      freshness: {
        oldestRetrieval: dates[0] ?? null,
        newestRetrieval: dates[dates.length - 1] ?? null,
        publishedAt: isoDate(publication.publishedAt)
      }
    }
  })

const allCategories: ReadonlyArray<EvidenceCategory> = [
  "supplier_or_organization_evidence",
  "government_contracting",
  "administrative_risk",
  "authorization_or_permit"
]

const observationWarning: SemanticWarning = {
  code: "observation_not_company",
  message:
    "Each supplier result is one published observation, not a consolidated company and not proof of capability."
}

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const corpus = yield* WarehouseReader
  const crypto = yield* Crypto
  const provideCrypto = Effect.provideService(Crypto, crypto)

  /** The active publication, refusing when there is none or it is past its freshness bound. */
  const servingPublication = Effect.gen(function*() {
    const active = yield* corpus.active
    if (Option.isNone(active)) {
      return yield* refuse(
        "serving_projection_unavailable",
        "No market corpus is published yet, so there is nothing to read.",
        "Retry later; an operator must load and publish a corpus first (service corpus publish)."
      )
    }
    const publication = active.value
    if (publication.freshForSeconds !== null) {
      const now = yield* Clock.currentTimeMillis
      if (now > publication.publishedAt.getTime() + publication.freshForSeconds * 1000) {
        return yield* refuse(
          "serving_projection_stale",
          "The published corpus is older than its declared freshness bound.",
          "Retry later, after the corpus is republished."
        )
      }
    }
    return publication
  })

  const corpusBasis = (publication: Publication): CorpusBasis => ({
    snapshotId: publication.snapshotId,
    publishedAt: isoDate(publication.publishedAt),
    contractVersion: CONTRACT_VERSION,
    freshUntil: publication.freshForSeconds === null
      ? null
      : isoDate(new Date(publication.publishedAt.getTime() + publication.freshForSeconds * 1000))
  })

  const envelope = <R>(parts: EnvelopeParts<R>): Effect.Effect<EnvelopeOf<R>, never, RequestContext> =>
    Effect.gen(function*() {
      const { requestId } = yield* RequestContext
      const coverageRows = parts.coverageRows ?? (yield* corpus.coverage(parts.publication.snapshotId))
      const now = yield* Clock.currentTimeMillis
      const categories = parts.categories ?? allCategories
      const visible = coverageRows
        .filter((r) => categories.includes(r.evidenceCategory) && r.licensedForDisplay)
        .reduce((sum, r) => sum + r.visibleRows, 0)
      const warnings: ReadonlyArray<SemanticWarning> = parts.empty === true && visible > 0
        ? [...(parts.warnings ?? []), {
          code: "zero_results_with_coverage",
          message:
            "Nothing matched, and the corpus does hold published rows of this kind: this empty answer is an answer, not a missing market."
        }]
        : parts.warnings ?? []
      return {
        schemaVersion: SCHEMA_VERSION,
        requestId,
        operation: parts.operation,
        interpretedRequest: {
          request: parts.request,
          normalizations: parts.normalizations ?? [],
          ...(parts.queryInterpretation === undefined ? {} : { query_interpretation: parts.queryInterpretation })
        },
        results: parts.results,
        page: parts.page ?? null,
        coverage: abstractCoverage(parts.publication, coverageRows, categories),
        corpusBasis: corpusBasis(parts.publication),
        semanticWarnings: warnings,
        provenance: parts.provenance ?? [],
        diagnostics: {
          elapsedMs: Math.max(0, now - parts.startedAt),
          rowsExamined: parts.rowsExamined ?? 0,
          truncated: parts.truncated ?? false
        }
      }
    })

  /** Seals one fresh record_ref per row for this response and builds the abstracted row. */
  const projectSupplier = (row: SupplierDbRow) =>
    Effect.gen(function*() {
      const recordRef = yield* sealRecordRef({ k: "supplier", i: row.id, s: row.snapshot_id, f: row.fingerprint }).pipe(
        provideCrypto,
        Effect.orDie
      )
      const state = row.state_code === null ? undefined : stateByCode(row.state_code)
      const supplier: SupplierRow = {
        evidence_category: "supplier_or_organization_evidence",
        evidence_category_label: evidenceCategoryLabels.supplier_or_organization_evidence,
        record_ref: recordRef,
        record_fingerprint: row.fingerprint,
        name: row.name,
        legal_name: row.legal_name,
        rfc: row.rfc,
        scian: row.scian_code === null ? null : { code: row.scian_code, title: row.scian_title },
        state: row.state_code === null ? null : { code: row.state_code, name: state?.name ?? row.state_code },
        municipality: row.municipality_code === null
          ? null
          : { code: row.municipality_code, name: row.municipality_name ?? row.municipality_code },
        employment_band: row.employment_band,
        establishment_type: row.establishment_type,
        incorporated_on: row.incorporated_on,
        contact_presence: {
          has_phone: row.has_phone,
          has_email: row.has_email,
          has_website: row.has_website,
          channel_count: Number(row.has_phone) + Number(row.has_email) + Number(row.has_website)
        }
      }
      const provenance: ProvenanceEntry = {
        record_ref: recordRef,
        evidence_category: "supplier_or_organization_evidence",
        corpusSnapshot: row.snapshot_id,
        statement: "Read from the published corpus snapshot; a publication of record, not a verification of current facts."
      }
      return { supplier, provenance }
    })

  const licensedSources = sql`o.source_slug IN (SELECT slug FROM market.sources WHERE licensed_for_display)`

  const searchSuppliers = (input: SearchSuppliersInput) =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      const publication = yield* servingPublication
      const limit = input.limit ?? defaultPageSize
      const narrowed = yield* narrow(sql, publication.snapshotId, input)
      const { conditions, tsquery } = narrowed

      let last: CursorPayload["last"] | undefined
      if (input.cursor !== undefined) {
        const opened = yield* openCursor(input.cursor, {
          op: "search_suppliers",
          filterDigest: narrowed.filterDigest,
          snapshotId: publication.snapshotId
        }).pipe(provideCrypto)
        last = opened.last
      }

      // A text query alone must be selective (not asked again when resuming a page).
      let rowsExamined = input.cursor === undefined ? yield* probeSelectivity(sql, narrowed) : 0

      const rank = tsquery === undefined ? undefined : sql`ts_rank_cd(o.search_tsv, ${tsquery})::float8`
      const keyset = last === undefined
        ? []
        : rank !== undefined
        ? [sql`(${rank} < ${last.rank ?? 0} OR (${rank} = ${last.rank ?? 0} AND o.id > ${last.id}::bigint))`]
        : [sql`(o.name_norm, o.id) > (${last.name ?? ""}, ${last.id}::bigint)`]
      const order = rank === undefined ? sql`o.name_norm, o.id` : sql`${rank} DESC, o.id`
      const raw = yield* sql`
        SELECT ${sql.literal(SUPPLIER_COLUMNS)}${rank === undefined ? sql`` : sql`, ${rank} AS rank`}
        FROM market.supplier_observations o
        WHERE ${sql.and([...conditions, ...keyset])}
        ORDER BY ${order}
        LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeSupplierRows), Effect.orDie)
      rowsExamined += raw.length
      const hasMore = raw.length > limit
      const pageRows = raw.slice(0, limit)
      const projected = yield* Effect.forEach(pageRows, projectSupplier)
      const lastRow = pageRows[pageRows.length - 1]
      const nextCursor = hasMore && lastRow !== undefined
        ? yield* sealCursor({
          op: "search_suppliers",
          snap: publication.snapshotId,
          fd: narrowed.filterDigest,
          last: rank === undefined
            ? { id: lastRow.id, name: lastRow.name_norm }
            : { id: lastRow.id, rank: lastRow.rank ?? 0 }
        }).pipe(provideCrypto, Effect.orDie)
        : null

      const coverageRows = yield* corpus.coverage(publication.snapshotId)

      return yield* envelope({
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
        page: { limit, returned: projected.length, hasMore, nextCursor },
        categories: ["supplier_or_organization_evidence"],
        coverageRows,
        warnings: projected.length > 0 ? [observationWarning] : [],
        empty: projected.length === 0,
        rowsExamined,
        truncated: hasMore
      })
    }).pipe(Effect.withSpan("MarketData.searchSuppliers"))

  const getSupplier = (input: GetSupplierInput) =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      const ref = yield* openRecordRef(input.record_ref).pipe(provideCrypto)
      const publication = yield* servingPublication
      // The id the ref was sealed with, or (after a republish) the same observation by fingerprint.
      const rows = yield* sql`
        SELECT ${sql.literal(SUPPLIER_COLUMNS)} FROM market.supplier_observations o
        WHERE o.snapshot_id = ${publication.snapshotId} AND ${licensedSources}
          AND (o.id = ${ref.i}::bigint OR o.fingerprint = ${ref.f})
        ORDER BY (o.id = ${ref.i}::bigint) DESC LIMIT 1`.pipe(Effect.flatMap(decodeSupplierRows), Effect.orDie)
      const row = rows[0]
      if (row === undefined) {
        return yield* refuse(
          "invalid_record_ref",
          "This record_ref points to an observation that is not in the published corpus any more.",
          "Search again and use a record_ref from the new response."
        )
      }
      const { provenance, supplier } = yield* projectSupplier(row)
      return yield* envelope({
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
    }).pipe(Effect.withSpan("MarketData.getSupplier"))

  const observedValues = (requested: ReadonlyArray<Facet>) =>
    Effect.gen(function*() {
      const publication = yield* servingPublication
      const values: Partial<Record<Facet, ReadonlyArray<ObservedValue>>> = {}
      if (requested.includes("states")) {
        const rows = yield* sql<{ state_code: string; n: number }>`
          SELECT o.state_code, count(*)::int AS n FROM market.supplier_observations o
          WHERE o.snapshot_id = ${publication.snapshotId} AND ${licensedSources} AND o.state_code IS NOT NULL
          GROUP BY o.state_code ORDER BY o.state_code`.pipe(Effect.orDie)
        values.states = rows.map((r) => ({
          value: r.state_code,
          label: stateByCode(r.state_code)?.name ?? null,
          visibleRows: r.n
        }))
      }
      if (requested.includes("scian_codes")) {
        const rows = yield* sql<{ scian_code: string; scian_title: string | null; n: number }>`
          SELECT o.scian_code, max(o.scian_title) AS scian_title, count(*)::int AS n FROM market.supplier_observations o
          WHERE o.snapshot_id = ${publication.snapshotId} AND ${licensedSources} AND o.scian_code IS NOT NULL
          GROUP BY o.scian_code ORDER BY o.scian_code`.pipe(Effect.orDie)
        values.scian_codes = rows.map((r) => ({ value: r.scian_code, label: r.scian_title, visibleRows: r.n }))
      }
      if (requested.includes("evidence_categories")) {
        const rows = yield* corpus.coverage(publication.snapshotId)
        values.evidence_categories = abstractCoverage(publication, rows, allCategories).map((c) => ({
          value: c.evidenceCategory,
          label: c.evidenceCategoryLabel,
          visibleRows: c.visibleRows
        }))
      }
      return { publication, values }
    })

  const coverage = Effect.gen(function*() {
    const publication = yield* servingPublication
    const rows = yield* corpus.coverage(publication.snapshotId)
    return { publication, coverage: abstractCoverage(publication, rows, allCategories) }
  })

  return MarketData.of({
    searchSuppliers,
    getSupplier,
    observedValues,
    coverage,
    corpusBasis,
    servingPublication,
    sql,
    envelope: (parts) => envelope(parts)
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<MarketData, never, SqlClient.SqlClient | WarehouseReader | Crypto> = Layer.effect(
  MarketData,
  make
)
