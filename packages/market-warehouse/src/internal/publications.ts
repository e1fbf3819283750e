/**
 * The two reads of published state that both the operator-facing `Corpus` and the contract's read port
 * (`WarehouseReader`) answer: the active publication and the coverage computed when a snapshot was published.
 * One implementation, so the two services cannot disagree.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { EvidenceCategory } from "../EvidenceCategory.js"
import type { Publication, SourceCoverage } from "../WarehouseReader.js"

const PublicationRow = Schema.Struct({
  id: Schema.String,
  published_at: Schema.DateFromSelf,
  fresh_for_seconds: Schema.NullOr(Schema.Number)
})

const CoverageRow = Schema.Struct({
  source_slug: Schema.String,
  record_kind: Schema.Literal("supplier_observation", "opportunity", "award", "risk_mark", "permit"),
  evidence_category: EvidenceCategory,
  licensed_for_display: Schema.Boolean,
  row_count: Schema.NumberFromString,
  visible_rows: Schema.NumberFromString,
  oldest_retrieval: Schema.NullOr(Schema.String),
  newest_retrieval: Schema.NullOr(Schema.String)
})

/** A `market.snapshots` row (id, published_at, fresh_for_seconds) as a publication. */
export const decodePublication = (row: unknown) =>
  Schema.decodeUnknown(PublicationRow)(row).pipe(
    Effect.map((r): Publication => ({ snapshotId: r.id, publishedAt: r.published_at, freshForSeconds: r.fresh_for_seconds }))
  )

/** The channel a change of the active publication is notified on (the snapshots table's trigger, `Corpus.publish`). */
export const channel = "market_publications"

/** The one active publication, or none before the first publish. */
export const active = (sql: SqlClient.SqlClient): Effect.Effect<Option.Option<Publication>> =>
  Effect.gen(function*() {
    const rows = yield* sql`SELECT id, published_at, fresh_for_seconds FROM market.snapshots WHERE status = 'active'`
    if (rows.length === 0) return Option.none<Publication>()
    return Option.some(yield* decodePublication(rows[0]))
  }).pipe(Effect.orDie)

const LoadingRow = Schema.Struct({ created_at: Schema.DateFromSelf, files: Schema.NumberFromString })

/** The newest snapshot still loading, when nothing is published: when it began and how many files it holds. */
export const loading = (sql: SqlClient.SqlClient): Effect.Effect<Option.Option<{ readonly startedAt: Date; readonly filesLoaded: number }>> =>
  sql`SELECT s.created_at, (SELECT count(*) FROM market.source_loads l WHERE l.snapshot_id = s.id)::text AS files
      FROM market.snapshots s WHERE s.status = 'loading' ORDER BY s.created_at DESC, s.id DESC LIMIT 1`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(LoadingRow))),
    Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => ({ startedAt: row.created_at, filesLoaded: row.files }))),
    Effect.orDie
  )

/** Coverage rows of a snapshot, per source and record kind (written by `Corpus.publish`). */
export const coverage = (sql: SqlClient.SqlClient, snapshotId: string): Effect.Effect<ReadonlyArray<SourceCoverage>> =>
  sql`SELECT source_slug, record_kind, evidence_category, licensed_for_display, row_count::text AS row_count,
             visible_rows::text AS visible_rows, oldest_retrieval::text AS oldest_retrieval,
             newest_retrieval::text AS newest_retrieval
      FROM market.coverage WHERE snapshot_id = ${snapshotId} ORDER BY evidence_category, source_slug, record_kind`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(CoverageRow))),
    Effect.map((rows) =>
      rows.map((row): SourceCoverage => ({
        sourceSlug: row.source_slug,
        recordKind: row.record_kind,
        evidenceCategory: row.evidence_category,
        licensedForDisplay: row.licensed_for_display,
        rowCount: row.row_count,
        visibleRows: row.visible_rows,
        oldestRetrieval: row.oldest_retrieval,
        newestRetrieval: row.newest_retrieval
      }))
    ),
    Effect.orDie
  )
