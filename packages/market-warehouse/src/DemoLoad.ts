/**
 * Loads and publishes the demo corpus when nothing is published, one file at a time with progress, so a
 * runtime can serve while it loads. A load stopped halfway (process killed) is resumed by the next start:
 * the unpublished demo snapshot it left is reused, files whose load was recorded are skipped, and the
 * others are loaded again (loads are upserts, so a file cut off mid-way is simply rewritten).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Catalogs from "./Catalogs.js"
import { Corpus, type Publication, type SnapshotNotLoading } from "./Corpus.js"
import * as DemoCorpus from "./DemoCorpus.js"
import { LoadFailed, loadFile } from "./Loader.js"
import * as Parsers from "./Parsers.js"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as NodePath from "node:path"

/** @since 0.1.0 @category models */
export type RecordKindCounts = Readonly<Record<"supplier_observation" | "opportunity" | "award" | "risk_mark" | "permit", number>>

/** @since 0.1.0 @category models */
export type DemoLoadEvent =
  | { readonly _tag: "Started"; readonly snapshotId: string; readonly total: number; readonly alreadyLoaded: number }
  | { readonly _tag: "FileLoaded"; readonly file: string; readonly done: number; readonly total: number; readonly accepted: number }
  | { readonly _tag: "Publishing"; readonly snapshotId: string }

/** @since 0.1.0 @category models */
export interface DemoLoaded {
  readonly publication: Publication
  /** Distinct rows per record kind in the published snapshot (a record seen in two files counts once). */
  readonly rows: RecordKindCounts
  readonly files: number
}

const demoFileNames = new Set(DemoCorpus.files.map((file) => NodePath.basename(file.path)))

const retrievedOnOf = (file: (typeof DemoCorpus.files)[number], path: string) =>
  Effect.gen(function*() {
    const parser = Parsers.byKind(file.kind)
    if (parser === undefined) return yield* new LoadFailed({ file: file.path, reason: `no parser for ${file.kind}` })
    if (file.retrievedOn !== undefined) return { parser, retrievedOn: file.retrievedOn }
    const stated = parser.publishedAsOf === undefined
      ? Option.none<string>()
      : yield* parser.publishedAsOf(path).pipe(Effect.orElseSucceed(() => Option.none<string>()))
    if (Option.isNone(stated)) return yield* new LoadFailed({ file: file.path, reason: "no retrieval date" })
    return { parser, retrievedOn: stated.value }
  })

/** The newest unpublished snapshot holding nothing but demo files: what a stopped demo load left behind. */
const resumableSnapshot = Effect.gen(function*() {
  const corpus = yield* Corpus
  const snapshots = yield* corpus.snapshots
  const found = snapshots.find((s) => s.status === "loading" && s.loads.every((load) => demoFileNames.has(load.fileName)))
  return Option.fromNullable(found)
})

/**
 * Loads the demo corpus and publishes it unless a publication is active; `onEvent` hears each step.
 *
 * @since 0.1.0 @category loaders
 */
export const ensureLoaded = (
  onEvent: (event: DemoLoadEvent) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Option.Option<DemoLoaded>, LoadFailed | SnapshotNotLoading, SqlClient.SqlClient | Corpus | Crypto> =>
  Effect.gen(function*() {
    const corpus = yield* Corpus
    const sql = yield* SqlClient.SqlClient
    if (Option.isSome(yield* corpus.active)) return Option.none()
    // Catalogs are loaded table by table when empty; one transaction keeps a stopped start from leaving a
    // half-filled table that would then count as loaded.
    yield* sql.withTransaction(Catalogs.ensureLoaded).pipe(
      Effect.catchTag("SqlError", (error) => new LoadFailed({ file: "catalogs", reason: error.message }))
    )
    const resumed = yield* resumableSnapshot
    const snapshotId = Option.isSome(resumed) ? resumed.value.id : yield* corpus.beginSnapshot({ base: "empty" })
    const loaded = new Set(Option.isSome(resumed) ? resumed.value.loads.map((load) => load.fileName) : [])
    const total = DemoCorpus.files.length
    yield* onEvent({ _tag: "Started", snapshotId, total, alreadyLoaded: loaded.size })
    let done = loaded.size
    for (const file of DemoCorpus.files) {
      const name = NodePath.basename(file.path)
      if (loaded.has(name)) continue
      const path = `${DemoCorpus.dataDirectory}${file.path}`
      const { parser, retrievedOn } = yield* retrievedOnOf(file, path)
      const report = yield* loadFile(parser, path, { snapshotId, retrievedOn })
      done += 1
      yield* onEvent({ _tag: "FileLoaded", file: name, done, total, accepted: report.accepted })
    }
    yield* onEvent({ _tag: "Publishing", snapshotId })
    const publication = yield* corpus.publish(snapshotId)
    const counts = yield* corpus.counts(snapshotId)
    const rows: Record<keyof RecordKindCounts, number> = {
      supplier_observation: 0,
      opportunity: 0,
      award: 0,
      risk_mark: 0,
      permit: 0
    }
    for (const count of counts) rows[count.recordKind] += count.rows
    return Option.some({ publication, rows, files: total })
  }).pipe(Effect.withSpan("DemoLoad.ensureLoaded", { captureStackTrace: false }))

/**
 * One line for the distinct rows of a load, for start-up logs.
 *
 * @since 0.1.0 @category formatting
 */
export const describeRows = (rows: RecordKindCounts): string =>
  `${rows.supplier_observation} supplier observations, ${rows.opportunity} opportunities, ${rows.award} awards, ` +
  `${rows.risk_mark} risk marks, ${rows.permit} permits`

/**
 * How a background demo load is doing, in words (none when nothing is loading), for readiness probes.
 *
 * @since 0.1.0 @category tags
 */
export class Progress extends Context.Tag("@service/market-warehouse/DemoLoad/Progress")<Progress, Ref.Ref<Option.Option<string>>>() {
  static readonly layer: Layer.Layer<Progress> = Layer.effect(Progress, Ref.make(Option.none<string>()))
}

/**
 * {@link ensureLoaded} in the background of a runtime that serves while it loads: progress kept in
 * {@link Progress} and logged one line per file, the publication logged, a failure logged (reads keep answering
 * `serving_projection_unavailable` until a corpus is published).
 *
 * @since 0.1.0 @category loaders
 */
export const loadInBackground: Effect.Effect<void, never, SqlClient.SqlClient | Corpus | Crypto | Progress> = Effect.gen(function*() {
  const progress = yield* Progress
  const corpus = yield* Corpus
  if (Option.isSome(yield* corpus.active)) return
  const started = Date.now()
  yield* Ref.set(progress, Option.some("the demo corpus is loading (reference catalogs first)"))
  const report = (event: DemoLoadEvent) => {
    switch (event._tag) {
      case "Started":
        return Effect.zipRight(
          Ref.set(progress, Option.some(`the demo corpus is loading (${event.alreadyLoaded} of ${event.total} files)`)),
          Effect.logInfo(
            event.alreadyLoaded > 0
              ? `Resuming the demo corpus load in ${event.snapshotId}: ${event.alreadyLoaded} of ${event.total} files were loaded before`
              : `Loading the demo corpus (${event.total} files) into ${event.snapshotId}`
          )
        )
      case "FileLoaded":
        return Effect.zipRight(
          Ref.set(progress, Option.some(`the demo corpus is loading (${event.done} of ${event.total} files)`)),
          Effect.logInfo(`Demo corpus ${event.done}/${event.total}: ${event.file} (${event.accepted} rows)`)
        )
      case "Publishing":
        return Ref.set(progress, Option.some("the demo corpus is being published"))
    }
  }
  yield* ensureLoaded(report).pipe(
    Effect.tap(Option.match({
      onNone: () => Effect.void,
      onSome: (loaded) =>
        Effect.logInfo(
          `Published the demo corpus ${loaded.publication.snapshotId} after ${Date.now() - started} ms: ${describeRows(loaded.rows)}. Ready.`
        )
    })),
    Effect.catchAllCause((cause) =>
      Effect.zipRight(
        Ref.set(progress, Option.some("the demo corpus load failed: see the server log")),
        Effect.logError("Could not load the demo corpus; reads answer serving_projection_unavailable until a corpus is published", cause)
      )
    ),
    Effect.ensuring(Ref.set(progress, Option.none()))
  )
})
