/**
 * The read port of the warehouse: the narrow view a reader of published market data needs (the contract's
 * operations, the research belt), and nothing of loading or publishing. Every read resolves the active
 * publication first (the corpus basis of an answer: snapshot id, publication time, freshness bound), then
 * reads the coverage computed when that snapshot was published.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type { EvidenceCategory } from "./EvidenceCategory.js"
import type { RecordKind } from "./internal/kinds.js"
import * as Publications from "./internal/publications.js"

/** @since 0.1.0 @category models */
export type { RecordKind } from "./internal/kinds.js"

/**
 * The one snapshot reads are served from: what an answer reports as its corpus basis.
 *
 * @since 0.1.0 @category models
 */
export interface Publication {
  readonly snapshotId: string
  readonly publishedAt: Date
  /** How long after `publishedAt` the publication stays fresh; null when it has no bound. */
  readonly freshForSeconds: number | null
}

/**
 * Coverage of one source and record kind in a published snapshot. Rows of sources not licensed for display
 * are counted in `rowCount` but not in `visibleRows`.
 *
 * @since 0.1.0 @category models
 */
export interface SourceCoverage {
  readonly sourceSlug: string
  readonly recordKind: RecordKind
  readonly evidenceCategory: EvidenceCategory
  readonly licensedForDisplay: boolean
  readonly rowCount: number
  readonly visibleRows: number
  readonly oldestRetrieval: string | null
  readonly newestRetrieval: string | null
}

/** @since 0.1.0 @category tags */
export class WarehouseReader extends Context.Tag("@service/market-warehouse/WarehouseReader")<
  WarehouseReader,
  {
    /** The active publication, or none before anything is published. */
    readonly active: Effect.Effect<Option.Option<Publication>>
    /**
     * The newest snapshot being loaded (when it began, how many files it holds), read when nothing is published
     * so a refusal can say the corpus is on its way.
     */
    readonly loading: Effect.Effect<Option.Option<{ readonly startedAt: Date; readonly filesLoaded: number }>>
    /** Coverage per source and record kind of a published snapshot. */
    readonly coverage: (snapshotId: string) => Effect.Effect<ReadonlyArray<SourceCoverage>>
  }
>() {}

/**
 * A snapshot's coverage is written once, when it is published, and never changes: it is read once per
 * snapshot and held (the last few snapshots), so an answer's envelope costs no statement for it.
 *
 * @since 0.1.0 @category constructors
 */
export const make: Effect.Effect<Context.Tag.Service<WarehouseReader>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const coverage = yield* Cache.makeWith({
    capacity: 8,
    lookup: (snapshotId: string) => Publications.coverage(sql, snapshotId),
    // A failed read (an outage) is not held: the next call reads again.
    timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.infinity : Duration.zero)
  })
  return WarehouseReader.of({
    active: Publications.active(sql),
    loading: Publications.loading(sql),
    coverage: (snapshotId) => coverage.get(snapshotId)
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<WarehouseReader, never, SqlClient.SqlClient> = Layer.effect(WarehouseReader, make)
