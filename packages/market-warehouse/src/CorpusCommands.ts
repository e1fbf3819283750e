/**
 * `service corpus ...`: operator commands that load, publish and inspect the market corpus, declared with the
 * market bundle. They work on the database directly (DATABASE_URL, or the embedded database in SERVICE_DATA_DIR),
 * not through the HTTP API:
 *
 * ```text
 * service corpus load <kind> <files...> [--retrieved-on YYYY-MM-DD] [--snapshot ID] [--publish] [--json]
 * service corpus publish [--snapshot ID] [--fresh-for-days N]
 * service corpus status [--json]
 * service corpus generate --scale N [--seed S] [--publish] [--json]
 * ```
 *
 * The embedded database is single-process: stop a running server on the same SERVICE_DATA_DIR first.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as OperatorCommand from "@service/core/OperatorCommand"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { statSync } from "node:fs"
import * as Catalogs from "./Catalogs.js"
import { Corpus, type Publication, type SnapshotSummary } from "./Corpus.js"
import * as Generator from "./Generator.js"
import type * as Loader from "./Loader.js"
import { loadFile } from "./Loader.js"
import * as Parsers from "./Parsers.js"

/** What the corpus commands need: the warehouse's services over the configured database. @since 0.1.0 @category models */
export type Requirements = Corpus | SqlClient.SqlClient | Crypto

const isoDate = (date: Date) => date.toISOString().slice(0, 10)

/** Any failure of the warehouse (a file that does not parse, a snapshot that is not loading), in its own words. */
const asFailure = (error: unknown): OperatorCommand.OperatorFailure =>
  error instanceof OperatorCommand.OperatorFailure
    ? error
    : OperatorCommand.unexpected(
      typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)
    )

/**
 * What a `corpus load` did, per file: rows accepted and rejected (with the first reasons), records written per
 * kind, currency spellings mapped.
 *
 * @since 0.1.0 @category formatting
 */
export const loadSummary = (
  snapshotId: string,
  reports: ReadonlyArray<Loader.LoadReport>,
  published: Publication | undefined
): string => {
  const lines: Array<string> = [`snapshot ${snapshotId}`]
  for (const r of reports) {
    const records = Object.entries(r.records).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")
    lines.push(
      `${r.file} (${r.kind} -> ${r.sourceSlug}, retrieved ${r.retrievedOn}): ${r.accepted} accepted, ${r.rejected} rejected, ${r.inserted} new records`
    )
    if (records.length > 0) lines.push(`  records: ${records}`)
    for (const m of r.currencyMappings) lines.push(`  currency ${m.reported} loaded as ${m.code} (${m.count} records)`)
    for (const reject of r.rejects.slice(0, 5)) lines.push(`  rejected line ${reject.line}: ${reject.reason}`)
    if (r.rejects.length > 5) lines.push(`  ... ${r.rejects.length - 5} more rejects (service corpus status)`)
  }
  lines.push(published === undefined ? "not published yet: service corpus publish" : `published at ${published.publishedAt.toISOString()}`)
  return lines.join("\n")
}

/**
 * Snapshots with their rows per source and kind, loads and first rejects.
 *
 * @since 0.1.0 @category formatting
 */
export const statusSummary = (
  snapshots: ReadonlyArray<SnapshotSummary>,
  details: ReadonlyArray<{
    readonly snapshot: SnapshotSummary
    readonly counts: ReadonlyArray<{ readonly recordKind: string; readonly sourceSlug: string; readonly rows: number }>
    readonly rejects: ReadonlyArray<{ readonly fileName: string; readonly line: number; readonly reason: string }>
  }>
): string => {
  if (snapshots.length === 0) return "no snapshots yet: service corpus load <kind> <files...>"
  const lines: Array<string> = []
  for (const d of details) {
    const s = d.snapshot
    lines.push(`${s.id}  ${s.status}${s.publishedAt === null ? "" : `  published ${s.publishedAt.toISOString()}`}`)
    for (const c of d.counts) lines.push(`  ${c.recordKind.padEnd(21)} ${c.sourceSlug.padEnd(16)} ${c.rows}`)
    for (const l of s.loads) lines.push(`  load ${l.fileName}: ${l.accepted} accepted, ${l.rejected} rejected`)
    for (const r of d.rejects) lines.push(`  reject ${r.fileName}:${r.line} ${r.reason}`)
  }
  const retired = snapshots.filter((s) => s.status === "retired").length
  if (retired > 0) lines.push(`${retired} retired snapshot(s)`)
  return lines.join("\n")
}

const snapshot = Schema.optional(
  Schema.String.annotations({ description: "Snapshot id to write into or publish (default: the newest loading snapshot)." })
)

const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
}

/** @since 0.1.0 @category commands */
export const load = OperatorCommand.make({
  word: "load",
  description: "Load source files into the loading snapshot (streamed, idempotent, every reject logged).",
  access: "database",
  positional: ["kind", "files"],
  input: Schema.Struct({
    kind: Schema.Literal(...Parsers.all.map((parser) => parser.kind)).annotations({
      description: `The source format: ${Parsers.all.map((p) => `${p.kind} (${p.description})`).join("; ")}.`
    }),
    files: Schema.Array(Schema.String).pipe(Schema.minItems(1)).annotations({ description: "The files to load, in order." }),
    retrieved_on: Schema.optional(
      Schema.String.pipe(Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a date, YYYY-MM-DD" })).annotations({
        description:
          "When the files were retrieved from their publisher, YYYY-MM-DD (default: the date the file says it is current to, else its modification date)."
      })
    ),
    snapshot,
    publish: Schema.optional(Schema.Boolean.annotations({ description: "Publish the snapshot after loading." }))
  }),
  run: (input, context) =>
    Effect.gen(function*() {
      const parser = Parsers.byKind(input.kind)
      if (parser === undefined) return yield* OperatorCommand.usage(`unknown kind ${input.kind}`)
      const missing = input.files.filter((file) => !isFile(file))
      if (missing.length > 0) return yield* OperatorCommand.usage(`No such file: ${missing.join(", ")}`)
      const corpus = yield* Corpus
      yield* Catalogs.ensureLoaded
      const snapshotId = input.snapshot ?? (yield* corpus.loadingSnapshot)
      const reports: Array<Loader.LoadReport> = []
      for (const file of input.files) {
        const total = yield* parser.countDataRows(file).pipe(Effect.option)
        const bar = context.progress(file.split("/").pop() ?? file, total)
        const statedAsOf = parser.publishedAsOf === undefined
          ? Option.none<string>()
          : yield* parser.publishedAsOf(file).pipe(Effect.orElseSucceed(() => Option.none<string>()))
        const report = yield* loadFile(parser, file, {
          snapshotId,
          retrievedOn: input.retrieved_on ?? Option.getOrElse(statedAsOf, () => isoDate(statSync(file).mtime)),
          onProgress: ({ rows }) => bar.update(rows)
        })
        yield* bar.finish(`${report.accepted} accepted, ${report.rejected} rejected`)
        reports.push(report)
      }
      const published = input.publish === true ? Option.some(yield* corpus.publish(snapshotId)) : Option.none()
      return {
        json: { snapshotId, reports, published: Option.getOrNull(published) },
        text: loadSummary(snapshotId, reports, Option.getOrUndefined(published))
      }
    }).pipe(Effect.mapError(asFailure))
})

/** @since 0.1.0 @category commands */
export const publish = OperatorCommand.make({
  word: "publish",
  description: "Make a loading snapshot the active serving projection (atomically).",
  access: "database",
  input: Schema.Struct({
    snapshot,
    fresh_for_days: Schema.optional(
      Schema.Int.pipe(Schema.positive()).annotations({
        description: "Declare how long the publication stays fresh; past it reads answer serving_projection_stale."
      })
    )
  }),
  run: (input) =>
    Effect.gen(function*() {
      const corpus = yield* Corpus
      const snapshots = yield* corpus.snapshots
      const snapshotId = input.snapshot ?? snapshots.find((s) => s.status === "loading")?.id
      if (snapshotId === undefined) return yield* OperatorCommand.usage("there is no loading snapshot to publish")
      if (input.fresh_for_days !== undefined) {
        yield* corpus.setFreshness(snapshotId, input.fresh_for_days * 86_400).pipe(Effect.mapError((error) => OperatorCommand.usage(error.message)))
      }
      const publication = yield* corpus.publish(snapshotId).pipe(Effect.mapError((error) => OperatorCommand.usage(error.message)))
      return {
        json: { snapshotId: publication.snapshotId, publishedAt: publication.publishedAt.toISOString() },
        text: `published ${publication.snapshotId} at ${publication.publishedAt.toISOString()}`
      }
    })
})

/** @since 0.1.0 @category commands */
export const status = OperatorCommand.make({
  word: "status",
  description: "Snapshots, rows per source and record kind, load counts and rejects.",
  // Only reads: an embedded database that does not exist yet is refused instead of being created.
  access: "existing-database",
  input: Schema.Struct({}),
  run: () =>
    Effect.gen(function*() {
      const corpus = yield* Corpus
      const snapshots = yield* corpus.snapshots
      const current = snapshots.filter((s) => s.status !== "retired")
      const details = yield* Effect.forEach(current, (s) =>
        Effect.all({ counts: corpus.counts(s.id), rejects: corpus.rejects(s.id, 10) }).pipe(
          Effect.map((d) => ({ snapshot: s, ...d }))
        ))
      return { json: { snapshots: snapshots.map((s) => ({ ...s })), details }, text: statusSummary(snapshots, details) }
    })
})

/** @since 0.1.0 @category commands */
export const generate = OperatorCommand.make({
  word: "generate",
  description: "Generate and load a deterministic synthetic corpus derived from the real samples.",
  access: "database",
  input: Schema.Struct({
    scale: Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(10)).annotations({
      description:
        "Size relative to the full synthetic corpus: 1 = 1,000,000 supplier observations, 2,000,000 awards, 200,000 opportunities, 100,000 risk marks, 50,000 permits."
    }),
    seed: Schema.optional(Schema.Int.annotations({ description: "Seed: the same seed and scale give the same corpus (default 42)." })),
    publish: Schema.optional(Schema.Boolean.annotations({ description: "Publish the snapshot after generating." }))
  }),
  run: (input, context) =>
    Effect.gen(function*() {
      const corpus = yield* Corpus
      yield* Catalogs.ensureLoaded
      // A generated corpus is loaded on its own: mixing it into the published real data would blur coverage.
      const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
      const bars = new Map<string, OperatorCommand.Progress>()
      const barOf = (kind: string, total: number) => {
        const bar = bars.get(kind) ?? context.progress(kind, Option.some(total), "records")
        bars.set(kind, bar)
        return bar
      }
      const result = yield* Generator.generate({
        scale: input.scale,
        seed: input.seed ?? 42,
        snapshotId,
        onProgress: ({ kind, rows, total }) => barOf(kind, total).update(rows)
      })
      for (const load of result.loads) {
        yield* barOf(load.kind, load.rows).finish(`${load.rows.toLocaleString("en")} records in ${(load.millis / 1000).toFixed(1)} s (${
          Math.round(load.rows / Math.max(load.millis / 1000, 0.001)).toLocaleString("en")
        }/s)`)
      }
      const published = input.publish === true ? Option.some(yield* corpus.publish(snapshotId)) : Option.none()
      return {
        json: { ...result, loads: result.loads.map(({ report: _report, ...load }) => load), published: Option.getOrNull(published) },
        text: [
          `snapshot ${snapshotId} (seed ${result.seed}, scale ${result.scale})`,
          ...result.loads.map((l) => `  ${l.kind.padEnd(21)} ${l.rows.toLocaleString("en").padStart(10)}  ${(l.millis / 1000).toFixed(1)} s`),
          `  total ${(result.millis / 1000).toFixed(1)} s`,
          Option.isSome(published) ? `published at ${published.value.publishedAt.toISOString()}` : "not published yet: service corpus publish"
        ].join("\n")
      }
    }).pipe(Effect.mapError(asFailure))
})

/** @since 0.1.0 @category commands */
export const operators = OperatorCommand.group({
  word: "corpus",
  description: "Operator commands on the market corpus (direct database access).",
  commands: [load, publish, status, generate]
})
