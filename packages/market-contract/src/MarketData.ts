/**
 * The market-data service: every operation reads the one active publication through the abstracted
 * projection and answers with the envelope.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createHash } from "node:crypto"
import { Corpus, type Publication, type SourceCoverage } from "./Corpus.js"
import {
  type CorpusBasis,
  type CoverageDeclaration,
  type EvidenceCategory,
  evidenceCategoryLabels,
  type InterpretedRequest,
  type Normalization,
  type PageInfo,
  type ProvenanceEntry,
  type QueryMode,
  SCHEMA_VERSION,
  type SemanticWarning
} from "./Envelope.js"
import { foldText } from "./internal/text.js"
import { CONTRACT_VERSION, type CursorPayload, openCursor, openRecordRef, sealCursor, sealRecordRef } from "./internal/refs.js"
import { parseRfc } from "./internal/rfc.js"
import { resolveState, stateByCode } from "./internal/states.js"
import { decodeSupplierRows, SUPPLIER_COLUMNS, type SupplierDbRow } from "./internal/supplierRows.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
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

/** The default and maximum page sizes of search-shaped operations. */
const DEFAULT_LIMIT = 20
const MAX_LIMIT = 50

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
    /** Builds an envelope around results computed elsewhere (capabilities). */
    readonly envelope: <R>(parts: {
      readonly operation: string
      readonly publication: Publication
      readonly request: Readonly<Record<string, unknown>>
      readonly results: R
      readonly startedAt: number
    }) => Effect.Effect<EnvelopeOf<R>, never, RequestContext>
  }
>() {}

const digest = (value: unknown): string =>
  createHash("sha256").update(JSON.stringify(value)).digest("base64url").slice(0, 22)

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
  const corpus = yield* Corpus
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

  const envelope = <R>(parts: {
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
  }): Effect.Effect<EnvelopeOf<R>, never, RequestContext> =>
    Effect.gen(function*() {
      const { requestId } = yield* RequestContext
      const coverageRows = parts.coverageRows ?? (yield* corpus.coverage(parts.publication.snapshotId))
      const now = yield* Clock.currentTimeMillis
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
        coverage: abstractCoverage(parts.publication, coverageRows, parts.categories ?? allCategories),
        corpusBasis: corpusBasis(parts.publication),
        semanticWarnings: parts.warnings ?? [],
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
      const normalizations: Array<Normalization> = []
      const limit = input.limit ?? DEFAULT_LIMIT
      if (limit > MAX_LIMIT) {
        return yield* refuse("invalid_field_value", `limit ${limit} exceeds ${MAX_LIMIT}.`, `Use a limit from 1 to ${MAX_LIMIT}.`, {
          field: "limit"
        })
      }

      const query = input.query?.trim()
      const hasNarrowing = query !== undefined || input.state !== undefined || input.scian_codes !== undefined ||
        input.source_slugs !== undefined || input.rfc !== undefined
      if (!hasNarrowing) {
        return yield* refuse(
          "query_too_broad",
          "A supplier search needs at least one narrowing dimension; listing the whole market is not offered.",
          "Add at least one of: query, state, scian_codes, rfc."
        )
      }

      // State: any name, code or alias resolves to the INEGI code.
      let stateCode: string | undefined
      const recognizedAliases: Array<string> = []
      if (input.state !== undefined) {
        const resolved = resolveState(input.state)
        if (resolved._tag === "Unknown") {
          return yield* refuse(
            "unknown_state",
            `"${input.state}" is not a Mexican state name, code or known alias.`,
            resolved.suggestions.length > 0
              ? `Did you mean ${resolved.suggestions.map((s) => `"${s}"`).join(" or ")}? Send that as state.`
              : "Send a state name (Jalisco), alias (CDMX, Edomex, NL) or INEGI code (01-32).",
            { field: "state" }
          )
        }
        stateCode = resolved.code
        if (resolved.name !== input.state) {
          normalizations.push({
            field: "state",
            from: input.state,
            to: `${resolved.code} ${resolved.name}`,
            reason: resolved.matchedBy === "alias"
              ? "recognized state alias"
              : resolved.matchedBy === "code"
              ? "INEGI state code"
              : "state name matched ignoring accents and case"
          })
          if (resolved.matchedBy === "alias") recognizedAliases.push(input.state)
        }
      }

      let rfc: string | undefined
      if (input.rfc !== undefined) {
        const normalized = parseRfc(input.rfc)
        if (normalized === undefined) {
          return yield* refuse(
            "invalid_field_value",
            `"${input.rfc}" is not a well-formed RFC.`,
            "An RFC has 12 characters for a company (3 letters, YYMMDD, 3-character homoclave) or 13 for a person (4 letters).",
            { field: "rfc" }
          )
        }
        if (normalized !== input.rfc) {
          normalizations.push({ field: "rfc", from: input.rfc, to: normalized, reason: "RFC upper-cased, separators removed" })
        }
        rfc = normalized
      }

      if (input.source_slugs !== undefined) {
        const known = yield* sql<{ slug: string }>`SELECT slug FROM market.sources WHERE licensed_for_display`.pipe(
          Effect.orDie
        )
        const unknown = input.source_slugs.filter((s) => !known.some((k) => k.slug === s))
        if (unknown.length > 0) {
          return yield* refuse(
            "unknown_filter_value",
            `source_slugs names ${unknown.length} source(s) that are not published for display.`,
            "Use the source slugs listed in the operator documentation (docs/market-data.md), or drop source_slugs.",
            { field: "source_slugs" }
          )
        }
      }

      const requestedMode: QueryMode | null = input.query_mode ?? null
      const appliedMode: QueryMode = requestedMode === null || requestedMode === "auto" ? "all_terms" : requestedMode
      const tsquery = query === undefined
        ? undefined
        : appliedMode === "exact_phrase"
        ? sql`phraseto_tsquery('market.es', ${query})`
        : appliedMode === "any_terms"
        ? sql`replace(plainto_tsquery('market.es', ${query})::text, '&', '|')::tsquery`
        : sql`plainto_tsquery('market.es', ${query})`
      if (tsquery !== undefined) {
        const probe = yield* sql<{ empty: boolean }>`SELECT numnode(${tsquery}) = 0 AS empty`.pipe(Effect.orDie)
        if (probe[0]?.empty === true) {
          return yield* refuse(
            "invalid_field_value",
            "The query holds no searchable words (only very common words or punctuation).",
            "Use distinctive words such as a name or an activity (\"cantera\", \"minera\").",
            { field: "query" }
          )
        }
      }

      const scianCodes = input.scian_codes === undefined ? undefined : [...new Set(input.scian_codes)].sort()
      const filters = {
        query: query ?? null,
        mode: query === undefined ? null : appliedMode,
        state: stateCode ?? null,
        scian_codes: scianCodes ?? null,
        rfc: rfc ?? null,
        source_slugs: input.source_slugs === undefined ? null : [...input.source_slugs].sort()
      }
      const filterDigest = digest(filters)

      let last: CursorPayload["last"] | undefined
      if (input.cursor !== undefined) {
        const opened = yield* openCursor(input.cursor, {
          op: "search_suppliers",
          filterDigest,
          snapshotId: publication.snapshotId
        }).pipe(provideCrypto)
        last = opened.last
      }

      const conditions = [
        sql`o.snapshot_id = ${publication.snapshotId}`,
        licensedSources,
        ...(stateCode === undefined ? [] : [sql`o.state_code = ${stateCode}`]),
        ...(rfc === undefined ? [] : [sql`o.rfc = ${rfc}`]),
        ...(scianCodes === undefined ? [] : [sql.or(scianCodes.map((code) => sql`o.scian_code LIKE ${`${code}%`}`))]),
        ...(input.source_slugs === undefined ? [] : [sql`o.source_slug IN ${sql.in(input.source_slugs)}`]),
        ...(tsquery === undefined ? [] : [sql`o.search_tsv @@ ${tsquery}`])
      ]

      // A text query alone must be selective: a bounded probe reads at most one page more than the maximum.
      const textOnly = query !== undefined && stateCode === undefined && rfc === undefined && scianCodes === undefined &&
        input.source_slugs === undefined
      let rowsExamined = 0
      if (textOnly && input.cursor === undefined) {
        const probe = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (
            SELECT 1 FROM market.supplier_observations o WHERE ${sql.and(conditions)} LIMIT ${MAX_LIMIT + 1}) t`.pipe(
          Effect.orDie
        )
        const matched = probe[0]?.n ?? 0
        rowsExamined += matched
        if (matched > MAX_LIMIT) {
          return yield* refuse(
            "query_not_selective",
            `The words "${query}" alone match more observations than one page can hold.`,
            "Keep the words and add a structured filter (state, scian_codes or rfc), or use more specific words."
          )
        }
      }

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
          fd: filterDigest,
          last: rank === undefined
            ? { id: lastRow.id, name: lastRow.name_norm }
            : { id: lastRow.id, rank: lastRow.rank ?? 0 }
        }).pipe(provideCrypto, Effect.orDie)
        : null

      const coverageRows = yield* corpus.coverage(publication.snapshotId)
      const visible = coverageRows
        .filter((r) => r.evidenceCategory === "supplier_or_organization_evidence" && r.licensedForDisplay)
        .reduce((sum, r) => sum + r.visibleRows, 0)
      const warnings: Array<SemanticWarning> = []
      if (projected.length > 0) warnings.push(observationWarning)
      if (projected.length === 0 && visible > 0) {
        warnings.push({
          code: "zero_results_with_coverage",
          message:
            "No observation matched, and the corpus does hold published supplier observations: this empty page is an answer, not a missing market."
        })
      }

      return yield* envelope({
        operation: "search_suppliers",
        publication,
        startedAt,
        request: {
          ...(query === undefined ? {} : { query }),
          ...(stateCode === undefined ? {} : { state: stateCode }),
          ...(scianCodes === undefined ? {} : { scian_codes: scianCodes }),
          ...(rfc === undefined ? {} : { rfc }),
          // Source identifiers never leave the layer, not even echoed back.
          ...(input.source_slugs === undefined ? {} : { source_filter: { sources: input.source_slugs.length } }),
          limit,
          ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
        },
        normalizations,
        ...(query === undefined ? {} : {
          queryInterpretation: {
            requested_mode: requestedMode,
            applied_mode: appliedMode,
            normalized_terms: foldText(query).split(" ").filter((t) => t.length > 0),
            recognized_state_aliases: recognizedAliases,
            filters: [
              ...(stateCode === undefined ? [] : ["state"]),
              ...(scianCodes === undefined ? [] : ["scian_codes"]),
              ...(rfc === undefined ? [] : ["rfc"]),
              ...(input.source_slugs === undefined ? [] : ["source_slugs"])
            ],
            warning: requestedMode === null
              ? "auto mode: every word must match (Spanish stemming, accents ignored)"
              : null
          }
        }),
        results: projected.map((p) => p.supplier),
        provenance: projected.map((p) => p.provenance),
        page: { limit, returned: projected.length, hasMore, nextCursor },
        categories: ["supplier_or_organization_evidence"],
        coverageRows,
        warnings,
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
    envelope: (parts) => envelope(parts)
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<MarketData, never, SqlClient.SqlClient | Corpus | Crypto> = Layer.effect(
  MarketData,
  make
)
