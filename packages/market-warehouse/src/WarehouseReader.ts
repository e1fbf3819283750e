/**
 * The read port of the warehouse: the narrow view a reader of published market data needs (the contract's
 * operations, the research belt), and nothing of loading or publishing. Every read resolves the active
 * publication first (the corpus basis of an answer: snapshot id, publication time, freshness bound), then
 * reads the coverage computed when that snapshot was published.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Notifications } from "@service/core/Notifications"
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
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
 * How long the active publication is held when no notification says it changed: the bound for a node whose
 * `LISTEN` connection was lost, or that reads from a replica which had not yet replayed the publication when the
 * notification arrived.
 */
const activeFallbackMillis = 10_000

/**
 * A snapshot's coverage is written once, when it is published, and never changes: it is read once per
 * snapshot and held (the last few snapshots), so an answer's envelope costs no statement for it. The active
 * publication is held until a publication changes it (decision 0079): the snapshots table's trigger notifies every
 * node, and `Corpus.publish` tells its own process at once; without `Notifications` it is read on every call.
 *
 * @since 0.1.0 @category constructors
 */
export const make: Effect.Effect<Context.Tag.Service<WarehouseReader>, never, SqlClient.SqlClient | Scope.Scope> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const coverage = yield* Cache.makeWith({
    capacity: 8,
    lookup: (snapshotId: string) => Publications.coverage(sql, snapshotId),
    // A failed read (an outage) is not held: the next call reads again.
    timeToLive: (exit) => (Exit.isSuccess(exit) ? Duration.infinity : Duration.zero)
  })
  const read = Publications.active(sql)
  const notifications = yield* Effect.serviceOption(Notifications)
  let held: { readonly value: Option.Option<Publication>; readonly until: number } | undefined
  // Bumped by every change: a read that ran across one may have seen the old publication, so it is not held.
  let generation = 0
  if (Option.isSome(notifications)) {
    yield* notifications.value.subscribe(Publications.channel, () => {
      generation++
      held = undefined
    })
  }
  const active = Option.isNone(notifications) ? read : Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (held !== undefined && held.until > now) return held.value
    const started = generation
    const value = yield* read
    if (generation === started) held = { value, until: now + activeFallbackMillis }
    return value
  })
  return WarehouseReader.of({
    active,
    loading: Publications.loading(sql),
    coverage: (snapshotId) => coverage.get(snapshotId)
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<WarehouseReader, never, SqlClient.SqlClient> = Layer.scoped(WarehouseReader, make)
