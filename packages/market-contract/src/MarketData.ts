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
import { TimedReadClient } from "@service/storage/Database"
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type { Facet } from "./Capabilities.js"
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
import { tsqueryOf } from "./internal/narrowing.js"
import { CONTRACT_VERSION } from "./internal/refs.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import { licensedRows } from "./internal/visibility.js"

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
export { type Facet, facets } from "./Capabilities.js"

/**
 * @since 0.1.0 @category tags
 */
export class MarketData extends Context.Tag("@service/market-contract/MarketData")<
  MarketData,
  {
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
    /**
     * Whether `query` compiles to a tsquery with searchable words under `appliedMode` (not only stop words or
     * punctuation). Answered once per query and mode, then from memory: the text configuration is the
     * migrations', so the answer never changes.
     */
    readonly hasSearchableWords: (query: string, appliedMode: QueryMode) => Effect.Effect<boolean>
    /**
     * The read client with a statement timeout set per connection, for counts and aggregates; absent where the
     * database gives none (then the timeout is set per transaction).
     */
    readonly timed: Context.Tag.Service<TimedReadClient> | undefined
    /** Builds the envelope around results a query module computed. */
    readonly envelope: <R>(parts: EnvelopeParts<R>) => Effect.Effect<EnvelopeOf<R>, never, RequestContext>
    /** Gives an effect the service's Crypto (record refs and cursors are sealed with it). */
    readonly provideCrypto: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, Crypto>>
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

const amountScopeLabels: Readonly<Record<string, string>> = {
  supplier_contract: "Amount of one supplier's contract",
  award_group_published_total: "Total the publisher gave for an award group (several suppliers)"
}

const markKindLabels: Readonly<Record<string, string>> = {
  efos: "Listed as issuing simulated operations (SAT 69-B)",
  sancion: "Sanction or disqualification (SFP)"
}

const allCategories: ReadonlyArray<EvidenceCategory> = [
  "supplier_or_organization_evidence",
  "government_contracting",
  "administrative_risk",
  "authorization_or_permit"
]

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const timed = Option.getOrUndefined(yield* Effect.serviceOption(TimedReadClient))
  const corpus = yield* WarehouseReader
  const crypto = yield* Crypto
  const provideCrypto = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Crypto>> =>
    Effect.provideService(self, Crypto, crypto)
  // A statement per text read saved: repeated words (a page and the pages after it) are common. A failed lookup
  // is not kept.
  const searchableWords = yield* Cache.makeWith({
    capacity: 4096,
    lookup: (key: readonly [string, QueryMode]) =>
      sql<{ words: boolean }>`SELECT numnode(${tsqueryOf(sql, key[0], key[1])}) > 0 AS words`.pipe(
        Effect.map((rows) => rows[0]?.words === true),
        Effect.orDie
      ),
    timeToLive: (exit) => Exit.isSuccess(exit) ? Duration.infinity : Duration.zero
  })

  /** The active publication, refusing when there is none or it is past its freshness bound. */
  const servingPublication = Effect.gen(function*() {
    const active = yield* corpus.active
    if (Option.isNone(active)) {
      // A load under way (the demo corpus on a first start, or an operator's) is said so: the caller only waits.
      const loading = yield* corpus.loading
      return yield* Option.match(loading, {
        onNone: () =>
          refuse(
            "serving_projection_unavailable",
            "No market corpus is published yet, so there is nothing to read.",
            "Retry later; an operator must load and publish a corpus first (service corpus publish)."
          ),
        onSome: ({ filesLoaded, startedAt }) =>
          refuse(
            "serving_projection_unavailable",
            `The market corpus is being loaded (${filesLoaded} ${filesLoaded === 1 ? "file" : "files"} so far, ` +
              `since ${startedAt.toISOString()}); nothing is published yet.`,
            "Retry in a few seconds (the Retry-After header says when): the corpus is published when its load ends."
          )
      })
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


  // Value lists change only when a publication does: computed once per (snapshot, facet) and kept for the
  // active publication only, so capabilities does not count the corpus on every call.
  const facetCache = yield* Ref.make<{ readonly snapshotId: string; readonly values: Map<Facet, ReadonlyArray<ObservedValue>> }>({
    snapshotId: "",
    values: new Map()
  })

  const countsBy = (table: string, column: string, snapshotId: string) =>
    sql<{ value: string; n: number }>`
      SELECT ${sql.literal(`t.${column}`)} AS value, count(*)::int AS n FROM ${sql.literal(table)} t
      WHERE t.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "t")} AND ${sql.literal(`t.${column}`)} IS NOT NULL
      GROUP BY 1 ORDER BY 1`.pipe(Effect.orDie)

  const computeFacet = (facet: Facet, publication: Publication): Effect.Effect<ReadonlyArray<ObservedValue>> => {
    const snapshotId = publication.snapshotId
    switch (facet) {
      case "states":
        return Effect.map(countsBy("market.supplier_observations", "state_code", snapshotId), (rows) =>
          rows.map((r) => ({ value: r.value, label: stateByCode(r.value)?.name ?? null, visibleRows: r.n })))
      case "scian_codes":
        return Effect.map(
          sql<{ scian_code: string; scian_title: string | null; n: number }>`
            SELECT o.scian_code, max(o.scian_title) AS scian_title, count(*)::int AS n FROM market.supplier_observations o
            WHERE o.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "o")} AND o.scian_code IS NOT NULL
            GROUP BY o.scian_code ORDER BY o.scian_code`.pipe(Effect.orDie),
          (rows) => rows.map((r) => ({ value: r.scian_code, label: r.scian_title, visibleRows: r.n }))
        )
      case "evidence_categories":
        return Effect.map(corpus.coverage(snapshotId), (rows) =>
          abstractCoverage(publication, rows, allCategories).map((c) => ({
            value: c.evidenceCategory,
            label: c.evidenceCategoryLabel,
            visibleRows: c.visibleRows
          })))
      case "procedure_types":
        // Opportunities and awards share the vocabulary; the counts add both.
        return Effect.map(
          sql<{ value: string; n: number }>`
            SELECT value, sum(n)::int AS n FROM (
              SELECT t.procedure_type AS value, count(*) AS n FROM market.opportunities t
              WHERE t.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "t")} AND t.procedure_type IS NOT NULL GROUP BY 1
              UNION ALL
              SELECT t.procedure_type AS value, count(*) AS n FROM market.awards t
              WHERE t.snapshot_id = ${snapshotId} AND ${licensedRows(sql, "t")} AND t.procedure_type IS NOT NULL GROUP BY 1
            ) u GROUP BY value ORDER BY value`.pipe(Effect.orDie),
          (rows) => rows.map((r) => ({ value: r.value, label: null, visibleRows: r.n }))
        )
      case "currencies":
        return Effect.map(countsBy("market.awards", "currency", snapshotId), (rows) =>
          rows.map((r) => ({ value: r.value, label: null, visibleRows: r.n })))
      case "amount_scopes":
        return Effect.map(countsBy("market.awards", "amount_scope", snapshotId), (rows) =>
          rows.map((r) => ({ value: r.value, label: amountScopeLabels[r.value] ?? null, visibleRows: r.n })))
      case "mark_kinds":
        return Effect.map(countsBy("market.risk_marks", "kind", snapshotId), (rows) =>
          rows.map((r) => ({ value: r.value, label: markKindLabels[r.value] ?? null, visibleRows: r.n })))
    }
  }

  const observedValues = (requested: ReadonlyArray<Facet>) =>
    Effect.gen(function*() {
      const publication = yield* servingPublication
      const cached = yield* Ref.get(facetCache)
      const known = cached.snapshotId === publication.snapshotId ? cached.values : new Map<Facet, ReadonlyArray<ObservedValue>>()
      const values: Partial<Record<Facet, ReadonlyArray<ObservedValue>>> = {}
      for (const facet of requested) {
        const hit = known.get(facet)
        const list = hit ?? (yield* computeFacet(facet, publication))
        if (hit === undefined) known.set(facet, list)
        values[facet] = list
      }
      yield* Ref.set(facetCache, { snapshotId: publication.snapshotId, values: known })
      return { publication, values }
    })

  const coverage = Effect.gen(function*() {
    const publication = yield* servingPublication
    const rows = yield* corpus.coverage(publication.snapshotId)
    return { publication, coverage: abstractCoverage(publication, rows, allCategories) }
  })

  return MarketData.of({
    observedValues,
    coverage,
    corpusBasis,
    servingPublication,
    sql,
    hasSearchableWords: (query, appliedMode) => searchableWords.get(Data.tuple(query, appliedMode)),
    timed,
    envelope: (parts) => envelope(parts),
    provideCrypto
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<MarketData, never, SqlClient.SqlClient | WarehouseReader | Crypto> = Layer.effect(
  MarketData,
  make
)
