/**
 * `service corpus ...`: operator commands that load, publish and inspect the market corpus. They work on the
 * database directly (DATABASE_URL, or the embedded database in SERVICE_DATA_DIR), not through the HTTP API:
 *
 * ```text
 * service corpus load <kind> <files...> [--retrieved-on YYYY-MM-DD] [--snapshot ID] [--publish] [--json]
 * service corpus publish [--snapshot ID] [--fresh-for-days N]
 * service corpus status [--json]
 * service corpus generate --scale N [--seed S] [--publish]
 * ```
 *
 * The embedded database is single-process: stop a running server on the same SERVICE_DATA_DIR first.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as App from "@service/app/App"
import * as LocalKeys from "@service/core/LocalKeys"
import * as Catalogs from "@service/market-warehouse/Catalogs"
import { Corpus } from "@service/market-warehouse/Corpus"
import * as Generator from "@service/market-warehouse/Generator"
import * as Loader from "@service/market-warehouse/Loader"
import * as Parsers from "@service/market-warehouse/Parsers"
import * as WarehouseLayer from "@service/market-warehouse/WarehouseLayer"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { statSync } from "node:fs"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"
import * as Progress from "./Progress.js"

const layerWith = (database: typeof Database.layerFromConfig) =>
  WarehouseLayer.layer.pipe(
    Layer.provideMerge(LocalKeys.layer),
    Layer.provideMerge(Migrations.layer(App.migrations)),
    Layer.provideMerge(database)
  )

/** The warehouse services over the configured database, migrated with every bundle's migrations. @since 0.1.0 @category layers */
export const layer = layerWith(Database.layerFromConfig)

/**
 * {@link layer} for commands that only read: an embedded database that does not exist yet is refused with a
 * clear message instead of being created (with its data folder).
 *
 * @since 0.1.0 @category layers
 */
export const readOnlyLayer = layerWith(Database.layerFromConfigWith({ createIfMissing: false }))

const withCorpus = <A, E, R>(effect: Effect.Effect<A, E, R>, services: typeof layer = layer) =>
  effect.pipe(
    Effect.provide(services),
    Effect.catchAll((error) =>
      Failure.isFailure(error)
        ? Effect.fail(error)
        : Effect.fail(Failure.unexpected(error instanceof Error ? error.message : String(error)))
    )
  )

const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON."))

const isoDate = (date: Date) => date.toISOString().slice(0, 10)

const snapshotOption = Options.text("snapshot").pipe(
  Options.withDescription("Snapshot id to write into or publish (default: the newest loading snapshot)."),
  Options.optional
)

const load = Command.make(
  "load",
  {
    kind: Args.choice(Parsers.kinds.map((k) => [k, k] as const), { name: "kind" }).pipe(
      Args.withDescription(`The source format: ${Parsers.all.map((p) => `${p.kind} (${p.description})`).join("; ")}.`)
    ),
    files: Args.file({ name: "files", exists: "yes" }).pipe(Args.atLeast(1)),
    retrievedOn: Options.text("retrieved-on").pipe(
      Options.withDescription(
        "When the files were retrieved from their publisher, YYYY-MM-DD (default: the date the file says it is current to, else its modification date)."
      ),
      Options.optional
    ),
    snapshot: snapshotOption,
    publish: Options.boolean("publish").pipe(Options.withDescription("Publish the snapshot after loading.")),
    json
  },
  (opts) =>
    withCorpus(Effect.gen(function*() {
      const parser = Parsers.byKind(opts.kind)
      if (parser === undefined) return yield* Effect.fail(Failure.unexpected(`unknown kind ${opts.kind}`))
      const retrievedOn = Option.getOrUndefined(opts.retrievedOn)
      if (retrievedOn !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(retrievedOn)) {
        return yield* Effect.fail(Failure.usage("--retrieved-on must be a date, YYYY-MM-DD"))
      }
      const corpus = yield* Corpus
      yield* Catalogs.ensureLoaded
      const snapshotId = Option.isSome(opts.snapshot) ? opts.snapshot.value : yield* corpus.loadingSnapshot
      const reports: Array<Loader.LoadReport> = []
      for (const file of opts.files) {
        const total = yield* parser.countDataRows(file).pipe(Effect.option)
        const bar = Progress.make(file.split("/").pop() ?? file, Option.getOrUndefined(total))
        const statedAsOf = parser.publishedAsOf === undefined
          ? Option.none<string>()
          : yield* parser.publishedAsOf(file).pipe(Effect.orElseSucceed(() => Option.none<string>()))
        const report = yield* Loader.loadFile(parser, file, {
          snapshotId,
          retrievedOn: retrievedOn ?? Option.getOrElse(statedAsOf, () => isoDate(statSync(file).mtime)),
          onProgress: ({ rows }) => bar.update(rows)
        })
        yield* bar.finish(`${report.accepted} accepted, ${report.rejected} rejected`)
        reports.push(report)
      }
      const published = opts.publish ? Option.some(yield* corpus.publish(snapshotId)) : Option.none()
      yield* Console.log(
        opts.json
          ? Format.json({ snapshotId, reports, published: Option.getOrNull(published) })
          : Format.loadSummary(snapshotId, reports, Option.getOrUndefined(published))
      )
    }))
).pipe(Command.withDescription("Load source files into the loading snapshot (streamed, idempotent, every reject logged)."))

const publish = Command.make(
  "publish",
  {
    snapshot: snapshotOption,
    freshForDays: Options.integer("fresh-for-days").pipe(
      Options.withDescription("Declare how long the publication stays fresh; past it reads answer serving_projection_stale."),
      Options.optional
    )
  },
  (opts) =>
    withCorpus(Effect.gen(function*() {
      const corpus = yield* Corpus
      const snapshots = yield* corpus.snapshots
      const snapshotId = Option.isSome(opts.snapshot)
        ? opts.snapshot.value
        : snapshots.find((s) => s.status === "loading")?.id
      if (snapshotId === undefined) return yield* Effect.fail(Failure.usage("there is no loading snapshot to publish"))
      if (Option.isSome(opts.freshForDays)) yield* corpus.setFreshness(snapshotId, opts.freshForDays.value * 86_400)
      const publication = yield* corpus.publish(snapshotId).pipe(
        Effect.mapError((error) => Failure.usage(error.message))
      )
      yield* Console.log(`published ${publication.snapshotId} at ${publication.publishedAt.toISOString()}`)
    }))
).pipe(Command.withDescription("Make a loading snapshot the active serving projection (atomically)."))

const status = Command.make("status", { json }, (opts) =>
  withCorpus(Effect.gen(function*() {
    const corpus = yield* Corpus
    const snapshots = yield* corpus.snapshots
    const current = snapshots.filter((s) => s.status !== "retired")
    const details = yield* Effect.forEach(current, (s) =>
      Effect.all({ counts: corpus.counts(s.id), rejects: corpus.rejects(s.id, 10) }).pipe(
        Effect.map((d) => ({ snapshot: s, ...d }))
      ))
    yield* Console.log(
      opts.json
        ? Format.json({ snapshots: snapshots.map((s) => ({ ...s })), details })
        : Format.statusSummary(snapshots, details)
    )
  }), readOnlyLayer)).pipe(Command.withDescription("Snapshots, rows per source and record kind, load counts and rejects."))

const generate = Command.make(
  "generate",
  {
    scale: Options.float("scale").pipe(
      Options.withDescription(
        "Size relative to the full synthetic corpus: 1 = 1,000,000 supplier observations, 2,000,000 awards, 200,000 opportunities, 100,000 risk marks, 50,000 permits."
      )
    ),
    seed: Options.integer("seed").pipe(Options.withDescription("Seed: the same seed and scale give the same corpus."), Options.withDefault(42)),
    publish: Options.boolean("publish").pipe(Options.withDescription("Publish the snapshot after generating.")),
    json
  },
  (opts) =>
    withCorpus(Effect.gen(function*() {
      if (!(opts.scale > 0 && opts.scale <= 10)) return yield* Effect.fail(Failure.usage("--scale must be above 0 and at most 10"))
      const corpus = yield* Corpus
      yield* Catalogs.ensureLoaded
      // A generated corpus is loaded on its own: mixing it into the published real data would blur coverage.
      const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
      const bars = new Map<string, Progress.ProgressBar>()
      const result = yield* Generator.generate({
        scale: opts.scale,
        seed: opts.seed,
        snapshotId,
        onProgress: ({ kind, rows, total }) => {
          const bar = bars.get(kind) ?? Progress.make(kind, total, "records")
          bars.set(kind, bar)
          return bar.update(rows)
        }
      })
      for (const load of result.loads) {
        const bar = bars.get(load.kind) ?? Progress.make(load.kind, load.rows, "records")
        yield* bar.finish(`${load.rows.toLocaleString("en")} records in ${(load.millis / 1000).toFixed(1)} s (${
          Math.round(load.rows / Math.max(load.millis / 1000, 0.001)).toLocaleString("en")
        }/s)`)
      }
      const published = opts.publish ? Option.some(yield* corpus.publish(snapshotId)) : Option.none()
      yield* Console.log(
        opts.json
          ? Format.json({ ...result, loads: result.loads.map(({ report: _report, ...load }) => load), published: Option.getOrNull(published) })
          : [
            `snapshot ${snapshotId} (seed ${result.seed}, scale ${result.scale})`,
            ...result.loads.map((l) => `  ${l.kind.padEnd(21)} ${l.rows.toLocaleString("en").padStart(10)}  ${(l.millis / 1000).toFixed(1)} s`),
            `  total ${(result.millis / 1000).toFixed(1)} s`,
            Option.isSome(published) ? `published at ${published.value.publishedAt.toISOString()}` : "not published yet: service corpus publish"
          ].join("\n")
      )
    }))
).pipe(Command.withDescription("Generate and load a deterministic synthetic corpus derived from the real samples."))

/**
 * The `corpus` command group.
 *
 * @since 0.1.0 @category commands
 */
export const command = Command.make("corpus").pipe(
  Command.withDescription("Operator commands on the market corpus (direct database access)."),
  Command.withSubcommands([load, publish, status, generate])
)
