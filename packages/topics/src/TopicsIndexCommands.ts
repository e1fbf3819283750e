/**
 * `service topics-index ...`: operator commands that read a local git checkout and call the topics API of a
 * running server (decision 0058), declared with the topics bundle. They are not operations: their input comes from
 * git, not from flags.
 *
 * ```text
 * service topics-index load  [--repo <dir>] [--branch <name>] [--json]
 * service topics-index drift [--repo <dir>] --base <ref> [--min-trust reviewed|proposed|draft] [--json]
 * ```
 *
 * `load` lists the branch's files with their blob ids (`git ls-tree -r`) and loads them as the workspace's file
 * index (`topics_repository_index_load`, in pages of {@link pageFiles}); the branch defaults to the linked
 * repository's default branch. `drift` lists the files changed since `base` (`git diff --name-only
 * <base>...HEAD`), asks `topics_match_files` which topics anchor them, prints those topics and exits 1 when there
 * is any, 0 otherwise: a CI job can run it on a pull request. Both use the CLI's `--base-url`, `--api-key` and
 * `--workspace`.
 *
 * @since 0.1.0
 */
import * as OperatorCommand from "@service/core/OperatorCommand"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import { statSync } from "node:fs"

/** Files per request of a load (the server takes up to 10,000; paths are rarely long, pages stay well under its body limit). @since 0.1.0 @category constants */
export const pageFiles = 5_000
/** Paths per match-files request (the server takes up to 5,000). @since 0.1.0 @category constants */
export const pagePaths = 2_000

// -----------------------------------------------------------------------------
// git
// -----------------------------------------------------------------------------

const isDirectory = (dir: string): boolean => {
  try {
    return statSync(dir).isDirectory()
  } catch {
    return false
  }
}

/** Runs git in `dir` and returns its stdout: nothing beyond what every machine with a checkout has. */
const git = (dir: string, args: ReadonlyArray<string>): Effect.Effect<string, OperatorCommand.OperatorFailure> =>
  isDirectory(dir)
    ? Effect.async<string, OperatorCommand.OperatorFailure>((resume) => {
      const child = execFile("git", ["-C", dir, ...args], { maxBuffer: 1024 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
        if (error === null) return resume(Effect.succeed(stdout))
        const reason = stderr.trim() === "" ? error.message : stderr.trim()
        resume(Effect.fail(OperatorCommand.usage(`git ${args.join(" ")} failed in ${dir}: ${reason}`)))
      })
      return Effect.sync(() => void child.kill())
    })
    : Effect.fail(OperatorCommand.usage(`--repo ${dir} is not a directory.`))

/** `git ls-tree -r -z` output: `<mode> <type> <object>\t<path>` records; blobs only (submodules are commits). */
const parseTree = (output: string): ReadonlyArray<{ readonly path: string; readonly hash: string }> =>
  output.split("\0").flatMap((record) => {
    const tab = record.indexOf("\t")
    if (tab === -1) return []
    const [, type, hash] = record.slice(0, tab).split(" ")
    return type === "blob" && hash !== undefined ? [{ path: record.slice(tab + 1), hash }] : []
  })

// -----------------------------------------------------------------------------
// API
// -----------------------------------------------------------------------------

/** Calls an operation and decodes its answer with `schema`. */
const callAs = <A, I>(context: OperatorCommand.Context, name: string, input: Readonly<Record<string, unknown>>, schema: Schema.Schema<A, I>) =>
  Effect.flatMap(context.call(name, input), (output) =>
    Schema.decodeUnknown(schema)(output).pipe(
      Effect.mapError(() =>
        OperatorCommand.unexpected(`The answer of ${name} is not what this command line expects (is the server the same version?).`)
      )
    ))

const RepositoryRead = Schema.Struct({
  repository: Schema.NullOr(Schema.Struct({ name: Schema.String, default_branch: Schema.String }))
})

const IndexLoad = Schema.Union(
  Schema.Struct({ status: Schema.Literal("loaded"), branch: Schema.String, files: Schema.Number, loaded_at: Schema.String, drifted: Schema.Number }),
  Schema.Struct({ status: Schema.Literal("staged"), upload: Schema.String, staged: Schema.Number })
)

const Match = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  trust: Schema.String,
  patterns: Schema.Array(Schema.String),
  paths: Schema.Array(Schema.String)
})
type Match = typeof Match.Type

const Matches = Schema.Struct({ topics: Schema.Array(Match) })

// -----------------------------------------------------------------------------
// Commands
// -----------------------------------------------------------------------------

const repo = Schema.optional(Schema.String.annotations({ description: "The git checkout to read (default: the current directory)." }))

/** @since 0.1.0 @category commands */
export const load = OperatorCommand.make({
  word: "load",
  description: "Load the linked repository's file index (paths and blob ids) from a local git checkout.",
  access: "api",
  input: Schema.Struct({
    repo,
    branch: Schema.optional(
      Schema.String.annotations({
        description: "The branch to index (default: the linked repository's default branch; the server accepts only that one)."
      })
    )
  }),
  run: (input, context) =>
    Effect.gen(function*() {
      const dir = input.repo ?? "."
      const linked = (yield* callAs(context, "topics_repository_read", {}, RepositoryRead)).repository
      if (linked === null) {
        return yield* OperatorCommand.usage(
          "The workspace has no linked repository: service topics repository link --name <name> --default-branch <branch>"
        )
      }
      const branch = input.branch ?? linked.default_branch
      const commit = (yield* git(dir, ["rev-parse", "--verify", "--end-of-options", `${branch}^{commit}`])).trim()
      const files = parseTree(yield* git(dir, ["ls-tree", "-r", "-z", "--full-tree", commit]))
      let upload: string | undefined
      let last: typeof IndexLoad.Type | undefined
      // Every page but the last is staged; the last one replaces the index in one transaction on the server.
      for (let start = 0; start === 0 || start < files.length; start += pageFiles) {
        const page = files.slice(start, start + pageFiles)
        const complete = start + pageFiles >= files.length
        last = yield* callAs(context, "topics_repository_index_load", {
          branch,
          commit,
          files: page,
          complete,
          ...(upload === undefined ? {} : { upload })
        }, IndexLoad)
        if (last.status === "staged") upload = last.upload
      }
      if (last === undefined || last.status !== "loaded") return yield* OperatorCommand.unexpected("The load did not complete.")
      return {
        json: { repository: linked.name, commit, ...last },
        text: `loaded ${last.files.toLocaleString("en")} files of ${linked.name} ${branch} at ${commit.slice(0, 12)}; ${last.drifted} reviewed ${
          last.drifted === 1 ? "topic" : "topics"
        } drifted since approval`
      }
    })
})

/** The topics of several match-files answers, each once, with the union of its paths. */
const merge = (answers: ReadonlyArray<ReadonlyArray<Match>>): ReadonlyArray<Match> => {
  const byId = new Map<string, Match>()
  for (const topic of answers.flat()) {
    const seen = byId.get(topic.id)
    byId.set(
      topic.id,
      seen === undefined ? topic : {
        ...seen,
        patterns: [...new Set([...seen.patterns, ...topic.patterns])],
        paths: [...new Set([...seen.paths, ...topic.paths])].sort()
      }
    )
  }
  return [...byId.values()].sort((a, b) => b.paths.length - a.paths.length || a.id.localeCompare(b.id))
}

/** @since 0.1.0 @category commands */
export const drift = OperatorCommand.make({
  word: "drift",
  description: "List the topics anchoring files changed since --base; exit 1 when there is any (for CI).",
  access: "api",
  input: Schema.Struct({
    repo,
    base: Schema.String.annotations({ description: "The ref to compare with, e.g. origin/main: files changed on HEAD since it." }),
    min_trust: Schema.optional(
      Schema.Literal("reviewed", "proposed", "draft").annotations({
        description: "Only topics at least this trusted (default: every topic not archived)."
      })
    )
  }),
  run: (input, context) =>
    Effect.gen(function*() {
      // --no-renames: a moved file counts at its old path (which a topic may anchor) and its new one.
      const changed = (yield* git(input.repo ?? ".", ["diff", "--name-only", "--no-renames", "-z", `${input.base}...HEAD`]))
        .split("\0")
        .filter((path) => path !== "")
      const pages = Array.from({ length: Math.ceil(changed.length / pagePaths) }, (_, i) => changed.slice(i * pagePaths, (i + 1) * pagePaths))
      const answers = yield* Effect.forEach(pages, (paths) =>
        Effect.map(
          callAs(context, "topics_match_files", { paths, ...(input.min_trust === undefined ? {} : { min_trust: input.min_trust }) }, Matches),
          (answer) => answer.topics
        ))
      const topics = merge(answers)
      return {
        json: { base: input.base, changed_files: changed.length, topics },
        text: topics.length === 0
          ? `${changed.length} ${changed.length === 1 ? "file" : "files"} changed since ${input.base}; no topic anchors them`
          : [
            `${topics.length} ${topics.length === 1 ? "topic anchors" : "topics anchor"} files changed since ${input.base}:`,
            ...topics.flatMap((topic) => [
              `  ${topic.id}  ${topic.trust.padEnd(8)}  ${topic.title}`,
              ...topic.paths.slice(0, 10).map((path) => `      ${path}`),
              ...(topic.paths.length > 10 ? [`      ... and ${topic.paths.length - 10} more`] : [])
            ])
          ].join("\n"),
        // Exit 1 for a CI job: the topics are printed, only the exit code is left to give.
        failed: topics.length > 0 ? `${topics.length} topics anchor files changed since ${input.base}` : undefined
      }
    })
})

/** @since 0.1.0 @category commands */
export const operators = OperatorCommand.group({
  word: "topics-index",
  description: "Operator commands that read a local git checkout: load the file index, check drift for CI.",
  commands: [load, drift]
})
