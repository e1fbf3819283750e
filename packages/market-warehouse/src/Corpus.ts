/**
 * Corpus snapshots and publications: a load writes into a new snapshot; publishing makes it the one active
 * serving projection atomically and computes its coverage. Reads always see exactly one snapshot.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Notifications } from "@service/core/Notifications"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { EvidenceCategory } from "./EvidenceCategory.js"
import { type RecordKind, recordKinds } from "./internal/kinds.js"
import * as Publications from "./internal/publications.js"
import { exonerationStatuses } from "./RiskStatus.js"
import type { Publication, SourceCoverage } from "./WarehouseReader.js"

/** @since 0.1.0 @category models */
export class SourceDefinition extends Schema.Class<SourceDefinition>("SourceDefinition")({
  slug: Schema.String.pipe(Schema.pattern(/^[a-z0-9_]{2,40}$/)),
  label: Schema.String,
  publisher: Schema.String,
  licence: Schema.String,
  licensedForDisplay: Schema.Boolean,
  evidenceCategory: EvidenceCategory
}) {}

/** @since 0.1.0 @category models */
export type { Publication, SourceCoverage } from "./WarehouseReader.js"

/** @since 0.1.0 @category errors */
export class SnapshotNotLoading extends Data.TaggedError("SnapshotNotLoading")<{
  readonly snapshotId: string
  readonly status: string | null
}> {
  override get message(): string {
    return this.status === null
      ? `Snapshot ${this.snapshotId} does not exist.`
      : `Snapshot ${this.snapshotId} is ${this.status}; only a loading snapshot can be written or published.`
  }
}

/** @since 0.1.0 @category models */
export interface SnapshotOptions {
  readonly base?: "active" | "empty" | undefined
  /** How long a publication of this snapshot stays fresh; past it, reads answer serving_projection_stale. */
  readonly freshForSeconds?: number | undefined
}

/** @since 0.1.0 @category models */
export interface SnapshotSummary {
  readonly id: string
  readonly status: "loading" | "active" | "retired"
  readonly createdAt: Date
  readonly publishedAt: Date | null
  readonly loads: ReadonlyArray<{
    readonly sourceSlug: string
    readonly fileName: string
    readonly accepted: number
    readonly rejected: number
  }>
}

/** @since 0.1.0 @category tags */
export class Corpus extends Context.Tag("@service/market-warehouse/Corpus")<
  Corpus,
  {
    readonly registerSource: (source: SourceDefinition) => Effect.Effect<void>
    /**
     * A new loading snapshot. By default it starts as a copy of the active publication (`base: "active"`), so a
     * load adds to what is published; `base: "empty"` starts from nothing.
     */
    readonly beginSnapshot: (options?: SnapshotOptions) => Effect.Effect<string>
    /** The snapshot a load should write into: the newest one still loading, or a new one based on the active one. */
    readonly loadingSnapshot: Effect.Effect<string>
    readonly assertLoading: (snapshotId: string) => Effect.Effect<void, SnapshotNotLoading>
    readonly publish: (snapshotId: string) => Effect.Effect<Publication, SnapshotNotLoading>
    /** Sets (or clears, with null) how long a publication of the snapshot stays fresh. */
    readonly setFreshness: (snapshotId: string, freshForSeconds: number | null) => Effect.Effect<void, SnapshotNotLoading>
    readonly active: Effect.Effect<Option.Option<Publication>>
    readonly coverage: (snapshotId: string) => Effect.Effect<ReadonlyArray<SourceCoverage>>
    readonly recordLoad: (load: {
      readonly snapshotId: string
      readonly sourceSlug: string
      readonly fileName: string
      readonly retrievedOn: string
      readonly accepted: number
      readonly rejected: number
      readonly report?: unknown
    }) => Effect.Effect<void>
    readonly recordRejects: (
      snapshotId: string,
      sourceSlug: string,
      fileName: string,
      rejects: ReadonlyArray<{ readonly line: number; readonly reason: string }>
    ) => Effect.Effect<void>
    readonly snapshots: Effect.Effect<ReadonlyArray<SnapshotSummary>>
    /** Rows per record kind and source in a snapshot (counted live, so it works before publishing). */
    readonly counts: (
      snapshotId: string
    ) => Effect.Effect<ReadonlyArray<{ readonly recordKind: RecordKind; readonly sourceSlug: string; readonly rows: number }>>
    /** The first rejected rows of a snapshot's loads, by file and line. */
    readonly rejects: (
      snapshotId: string,
      limit: number
    ) => Effect.Effect<ReadonlyArray<{ readonly fileName: string; readonly line: number; readonly reason: string }>>
  }
>() {}

const SnapshotRow = Schema.Struct({
  id: Schema.String,
  status: Schema.Literal("loading", "active", "retired"),
  created_at: Schema.DateFromSelf,
  published_at: Schema.NullOr(Schema.DateFromSelf)
})

const LoadRow = Schema.Struct({
  snapshot_id: Schema.String,
  source_slug: Schema.String,
  file_name: Schema.String,
  accepted: Schema.Number,
  rejected: Schema.Number
})


/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const notifications = yield* Effect.serviceOption(Notifications)

  const registerSource = (source: SourceDefinition) =>
    sql`INSERT INTO market.sources (slug, label, publisher, licence, licensed_for_display, evidence_category)
        VALUES (${source.slug}, ${source.label}, ${source.publisher}, ${source.licence}, ${source.licensedForDisplay}, ${source.evidenceCategory})
        ON CONFLICT (slug) DO UPDATE SET label = EXCLUDED.label, publisher = EXCLUDED.publisher, licence = EXCLUDED.licence,
          licensed_for_display = EXCLUDED.licensed_for_display, evidence_category = EXCLUDED.evidence_category`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  /** Columns of a warehouse table other than its id, read from the catalog so copies follow migrations. */
  const columnsOf = (table: string) =>
    sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
      WHERE table_schema = 'market' AND table_name = ${table} AND column_name <> 'id' ORDER BY ordinal_position`.pipe(
      Effect.map((rows) => rows.map((r) => r.column_name))
    )

  const copyForward = (from: string, to: string) =>
    Effect.forEach(recordKinds, ({ table }) =>
      Effect.gen(function*() {
        const columns = yield* columnsOf(table)
        const target = columns.map((c) => `"${c}"`).join(", ")
        const source = columns.map((c) => (c === "snapshot_id" ? "$1" : `"${c}"`)).join(", ")
        yield* sql.unsafe(`INSERT INTO market.${table} (${target}) SELECT ${source} FROM market.${table} WHERE snapshot_id = $2`, [
          to,
          from
        ])
      }), { discard: true })

  const beginSnapshot = (options?: SnapshotOptions) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const id = `snap_${new Date(now).toISOString().slice(0, 10).replaceAll("-", "")}_${randomBytes(4).toString("hex")}`
      const base = options?.base === "empty"
        ? undefined
        : (yield* sql<{ id: string }>`SELECT id FROM market.snapshots WHERE status = 'active'`)[0]?.id
      yield* sql`INSERT INTO market.snapshots (id, status, created_at, fresh_for_seconds, base_snapshot_id)
                 VALUES (${id}, 'loading', ${new Date(now)}, ${options?.freshForSeconds ?? null}, ${base ?? null})`
      if (base !== undefined) yield* copyForward(base, id)
      return id
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("Corpus.beginSnapshot", { captureStackTrace: false }))

  const loadingSnapshot = Effect.gen(function*() {
    const rows = yield* sql<{ id: string }>`SELECT id FROM market.snapshots WHERE status = 'loading' ORDER BY created_at DESC, id DESC LIMIT 1`
    const first = rows[0]
    return first === undefined ? yield* beginSnapshot({ base: "active" }) : first.id
  }).pipe(Effect.orDie)

  const statusOf = (snapshotId: string) =>
    sql<{ status: string }>`SELECT status FROM market.snapshots WHERE id = ${snapshotId}`.pipe(
      Effect.map((rows) => rows[0]?.status ?? null),
      Effect.orDie
    )

  const assertLoading = (snapshotId: string) =>
    Effect.flatMap(statusOf(snapshotId), (status) =>
      status === "loading" ? Effect.void : Effect.fail(new SnapshotNotLoading({ snapshotId, status })))

  const computeCoverage = (snapshotId: string) =>
    Effect.forEach(recordKinds, ({ category, kind, table }) =>
      sql`INSERT INTO market.coverage (snapshot_id, source_slug, record_kind, evidence_category, licensed_for_display, row_count, visible_rows, oldest_retrieval, newest_retrieval)
          SELECT ${snapshotId}, o.source_slug, ${kind}, ${category},
                 s.licensed_for_display, count(*), CASE WHEN s.licensed_for_display THEN count(*) ELSE 0 END,
                 min(o.retrieved_on), max(o.retrieved_on)
          FROM ${sql(`market.${table}`)} o JOIN market.sources s ON s.slug = o.source_slug
          WHERE o.snapshot_id = ${snapshotId}
          GROUP BY o.source_slug, s.licensed_for_display
          ON CONFLICT (snapshot_id, source_slug, record_kind) DO UPDATE
            SET row_count = EXCLUDED.row_count, visible_rows = EXCLUDED.visible_rows,
                evidence_category = EXCLUDED.evidence_category, licensed_for_display = EXCLUDED.licensed_for_display,
                oldest_retrieval = EXCLUDED.oldest_retrieval, newest_retrieval = EXCLUDED.newest_retrieval`, {
      discard: true
    })

  /**
   * One summary per RFC of the snapshot's marks from sources licensed for display, rebuilt whole at each
   * publish (a snapshot copied forward starts with none), so rows read the flag through one keyed join.
   */
  const computeRiskSummaries = (snapshotId: string) =>
    Effect.zipRight(
      sql`DELETE FROM market.risk_summaries WHERE snapshot_id = ${snapshotId}`,
      sql`INSERT INTO market.risk_summaries (snapshot_id, rfc, mark_count, kinds, any_active, has_exoneration)
          SELECT ${snapshotId}, r.subject_rfc, count(*)::int, array_agg(DISTINCT r.kind ORDER BY r.kind),
                 bool_or(r.status NOT IN ${sql.in(exonerationStatuses)}),
                 bool_or(r.status IN ${sql.in(exonerationStatuses)})
          FROM market.risk_marks r JOIN market.sources s ON s.slug = r.source_slug
          WHERE r.snapshot_id = ${snapshotId} AND s.licensed_for_display AND r.subject_rfc IS NOT NULL
          GROUP BY r.subject_rfc`
    )

  /**
   * Fresh statistics first: right after a bulk load the planner has none and joins the award tables with
   * nested loops (minutes at a million rows instead of seconds).
   */
  const analyze = (snapshotId: string) =>
    Effect.forEach(recordKinds, ({ table }) => sql.unsafe(`ANALYZE market.${table}`), { discard: true }).pipe(
      Effect.withSpan("Corpus.analyze", { captureStackTrace: false, attributes: { snapshotId } })
    )

  /**
   * After the swap: VACUUM sets the visibility map of the freshly loaded pages (nothing else does until
   * autovacuum comes round), without which index-only scans (aggregates, counts, RFC totals) fetch every heap
   * row anyway. It cannot run in a transaction: a publish inside a caller's transaction skips it with a warning.
   */
  const vacuum = (snapshotId: string) =>
    Effect.forEach(recordKinds, ({ table }) => sql.unsafe(`VACUUM (ANALYZE) market.${table}`), { discard: true }).pipe(
      Effect.catchAll((cause) => Effect.logWarning("VACUUM after publish skipped", cause)),
      Effect.withSpan("Corpus.vacuum", { captureStackTrace: false, attributes: { snapshotId } })
    )

  /** Procedures count their awards once per publication; only changed counts are written. */
  const countAwards = (snapshotId: string) =>
    sql`UPDATE market.opportunities o SET award_count = coalesce(c.n, 0)
      FROM market.opportunities o2
      LEFT JOIN (SELECT source_slug, opportunity_source_record_id, count(*)::int AS n FROM market.awards
                 WHERE snapshot_id = ${snapshotId} AND opportunity_source_record_id IS NOT NULL
                 GROUP BY source_slug, opportunity_source_record_id) c
        ON c.source_slug = o2.source_slug AND c.opportunity_source_record_id = o2.source_record_id
      WHERE o.id = o2.id AND o2.snapshot_id = ${snapshotId} AND o.award_count <> coalesce(c.n, 0)`

  /**
   * Award counts and exact totals per source, currency, scope, month and procedure type, rebuilt whole at
   * each publish, for aggregates by year, month or procedure type over whole months.
   */
  const computeAwardMonthTotals = (snapshotId: string) =>
    Effect.zipRight(
      sql`DELETE FROM market.award_month_totals WHERE snapshot_id = ${snapshotId}`,
      sql`INSERT INTO market.award_month_totals
            (snapshot_id, source_slug, currency, amount_scope, award_month, procedure_type, award_count, total_amount)
          SELECT snapshot_id, source_slug, currency, amount_scope, date_trunc('month', award_date)::date, procedure_type,
                 count(*)::int, coalesce(sum(amount), 0)
          FROM market.awards WHERE snapshot_id = ${snapshotId}
          GROUP BY snapshot_id, source_slug, currency, amount_scope, date_trunc('month', award_date)::date, procedure_type`
    )

  /** Rows of retired publications are deleted; their snapshot records and load reports stay as history. */
  const collectRetired = Effect.forEach([...recordKinds.map(({ table }) => table), "risk_summaries", "award_month_totals"], (table) =>
    sql`DELETE FROM ${sql(`market.${table}`)} WHERE snapshot_id IN (SELECT id FROM market.snapshots WHERE status = 'retired')`, {
    discard: true
  })

  const publish = (snapshotId: string) =>
    Effect.gen(function*() {
      yield* assertLoading(snapshotId)
      const now = new Date(yield* Clock.currentTimeMillis)
      yield* analyze(snapshotId)
      yield* countAwards(snapshotId)
      yield* computeCoverage(snapshotId)
      yield* computeRiskSummaries(snapshotId)
      yield* computeAwardMonthTotals(snapshotId)
      yield* sql`UPDATE market.snapshots SET status = 'retired' WHERE status = 'active'`
      const rows = yield* sql`UPDATE market.snapshots SET status = 'active', published_at = ${now}
                              WHERE id = ${snapshotId} RETURNING id, published_at, fresh_for_seconds`
      return yield* Publications.decodePublication(rows[0]).pipe(Effect.orDie)
    }).pipe(
      sql.withTransaction,
      // Committed: this process's readers forget the old publication now; other nodes hear the trigger's NOTIFY.
      Effect.tap(() =>
        Option.match(notifications, {
          onNone: () => Effect.void,
          onSome: (n) => n.signal(Publications.channel, snapshotId)
        })
      ),
      // After the swap has committed: readers never wait on the clean-up.
      Effect.tap(() => collectRetired),
      Effect.tap(() => vacuum(snapshotId)),
      Effect.catchTag("SqlError", Effect.die),
      Effect.withSpan("Corpus.publish", { captureStackTrace: false, attributes: { snapshotId } })
    )

  const active = Publications.active(sql)
  const coverage = (snapshotId: string) => Publications.coverage(sql, snapshotId)

  const recordLoad: Context.Tag.Service<Corpus>["recordLoad"] = (load) =>
    sql`INSERT INTO market.source_loads (snapshot_id, source_slug, file_name, retrieved_on, accepted, rejected, report)
        VALUES (${load.snapshotId}, ${load.sourceSlug}, ${load.fileName}, ${load.retrievedOn}, ${load.accepted}, ${load.rejected},
                ${JSON.stringify(load.report ?? {})}::jsonb)
        ON CONFLICT (snapshot_id, source_slug, file_name) DO UPDATE
          SET accepted = EXCLUDED.accepted, rejected = EXCLUDED.rejected, retrieved_on = EXCLUDED.retrieved_on,
              report = EXCLUDED.report, loaded_at = now()`
      .pipe(Effect.asVoid, Effect.orDie)

  const recordRejects: Context.Tag.Service<Corpus>["recordRejects"] = (snapshotId, sourceSlug, fileName, rejects) =>
    rejects.length === 0 ? Effect.void : sql`INSERT INTO market.load_rejects ${
      sql.insert(rejects.map((r) => ({ snapshot_id: snapshotId, source_slug: sourceSlug, file_name: fileName, line: r.line, reason: r.reason })))
    } ON CONFLICT (snapshot_id, file_name, line) DO UPDATE SET reason = EXCLUDED.reason`.pipe(Effect.asVoid, Effect.orDie)

  const snapshots = Effect.gen(function*() {
    const snaps = yield* sql`SELECT id, status, created_at, published_at FROM market.snapshots ORDER BY created_at DESC, id DESC`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(SnapshotRow)))
    )
    const loads = yield* sql`SELECT snapshot_id, source_slug, file_name, accepted, rejected FROM market.source_loads ORDER BY file_name`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(LoadRow)))
    )
    return snaps.map((s): SnapshotSummary => ({
      id: s.id,
      status: s.status,
      createdAt: s.created_at,
      publishedAt: s.published_at,
      loads: loads.filter((l) => l.snapshot_id === s.id).map((l) => ({
        sourceSlug: l.source_slug,
        fileName: l.file_name,
        accepted: l.accepted,
        rejected: l.rejected
      }))
    }))
  }).pipe(Effect.orDie)

  const counts = (snapshotId: string) =>
    Effect.forEach(recordKinds, ({ kind, table }) =>
      sql<{ source_slug: string; rows: number }>`SELECT source_slug, count(*)::int AS rows FROM ${sql(`market.${table}`)}
        WHERE snapshot_id = ${snapshotId} GROUP BY source_slug ORDER BY source_slug`.pipe(
        Effect.map((rows) => rows.map((r) => ({ recordKind: kind, sourceSlug: r.source_slug, rows: r.rows })))
      )).pipe(Effect.map((lists) => lists.flat()), Effect.orDie)

  const rejects = (snapshotId: string, limit: number) =>
    sql<{ file_name: string; line: number; reason: string }>`SELECT file_name, line, reason FROM market.load_rejects
      WHERE snapshot_id = ${snapshotId} ORDER BY file_name, line LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map((r) => ({ fileName: r.file_name, line: r.line, reason: r.reason }))),
      Effect.orDie
    )

  const setFreshness = (snapshotId: string, freshForSeconds: number | null) =>
    Effect.zipRight(
      assertLoading(snapshotId),
      sql`UPDATE market.snapshots SET fresh_for_seconds = ${freshForSeconds} WHERE id = ${snapshotId}`.pipe(Effect.asVoid, Effect.orDie)
    )

  return Corpus.of({
    setFreshness,
    counts,
    rejects,
    registerSource,
    beginSnapshot,
    loadingSnapshot,
    assertLoading,
    publish,
    active,
    coverage,
    recordLoad,
    recordRejects,
    snapshots
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Corpus, never, SqlClient.SqlClient> = Layer.effect(Corpus, make)
