/**
 * `service topics-index ...`: operator commands that read a local git checkout and talk to the topics API
 * (decision 0058). They are not derivable from the declarations: the input comes from git, not from flags.
 *
 * ```text
 * service topics-index load  --repo <dir> [--branch <name>] [--json]
 * service topics-index drift --repo <dir> --base <ref> [--min-trust reviewed|proposed|draft] [--json]
 * ```
 *
 * `load` lists the branch's files with their blob ids (`git ls-tree -r`) and loads them as the workspace's
 * file index (`PUT /repository/index`, in pages of {@link pageFiles}); the branch defaults to the linked
 * repository's default branch. `drift` lists the files changed since `base` (`git diff --name-only
 * <base>...HEAD`), asks `POST /topics/match-files` which topics anchor them, prints those topics and exits 1
 * when there is any, 0 otherwise: a CI job can run it on a pull request.
 *
 * Both use the root's `--base-url`, `--api-key` and `--workspace` (`Cli.Settings`), like every command.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as App from "@service/app/App"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { execFile } from "node:child_process"
import * as Cli from "./Cli.js"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"
import * as Remote from "./Remote.js"

/** Files per request of a load (the server takes up to 10,000; paths are rarely long, pages stay well under its body limit). @since 0.1.0 @category constants */
export const pageFiles = 5_000
/** Paths per match-files request (the server takes up to 5,000). @since 0.1.0 @category constants */
export const pagePaths = 2_000

// -----------------------------------------------------------------------------
// git
// -----------------------------------------------------------------------------

/**
 * Runs git in `dir` and returns its stdout. Through `node:child_process` rather than @effect/platform's
 * Command: the operator then needs nothing beyond what every command line already has.
 */
const git = (dir: string, args: ReadonlyArray<string>): Effect.Effect<string, Failure.Failure> =>
  Effect.async<string, Failure.Failure>((resume) => {
    const child = execFile("git", ["-C", dir, ...args], { maxBuffer: 1024 * 1024 * 1024, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resume(Effect.succeed(stdout))
      const reason = stderr.trim() === "" ? error.message : stderr.trim()
      resume(Effect.fail(Failure.usage(`git ${args.join(" ")} failed in ${dir}: ${reason}`)))
    })
    return Effect.sync(() => void child.kill())
  })

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

/** The declared operation `name` of the application's groups, for `Remote.call`. */
const target = (name: string) =>
  Effect.gen(function*() {
    for (const group of App.groups) {
      const operation = group.operations.find((candidate) => candidate.name === name)
      if (operation !== undefined) return { group, operation }
    }
    return yield* Effect.fail(Failure.unexpected(`This command line has no ${name} operation.`))
  })

const connection = Effect.gen(function*() {
  const settings = yield* Cli.Settings
  if (Option.isNone(settings.apiKey)) return yield* Effect.fail(Failure.missingApiKey)
  return { baseUrl: settings.baseUrl, apiKey: settings.apiKey.value, pathParams: { workspace: settings.workspace } }
})

/** Calls an operation by name with a checked input and decodes the answer with `schema`. */
const callAs = <A, I>(conn: Remote.Connection, name: string, input: unknown, schema: Schema.Schema<A, I>) =>
  Effect.gen(function*() {
    const op = yield* target(name)
    const checked = yield* Remote.check(op, input)
    const output = yield* Remote.call(conn, op, checked)
    return yield* Schema.decodeUnknown(schema)(output).pipe(
      Effect.mapError(() => Failure.unexpected(`The answer of ${name} is not what this command line expects (is the server the same version?).`, output))
    )
  })

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

const repo = Options.directory("repo", { exists: "yes" }).pipe(
  Options.withDescription("The git checkout to read (default: the current directory)."),
  Options.withDefault(".")
)

const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON."))

const load = Command.make(
  "load",
  {
    repo,
    branch: Options.text("branch").pipe(
      Options.withDescription("The branch to index (default: the linked repository's default branch; the server accepts only that one)."),
      Options.optional
    ),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const conn = yield* connection
      const linked = (yield* callAs(conn, "topics_repository_read", {}, RepositoryRead)).repository
      if (linked === null) {
        return yield* Effect.fail(
          Failure.usage("The workspace has no linked repository: service topics repository link --name <name> --default-branch <branch>")
        )
      }
      const branch = Option.getOrElse(opts.branch, () => linked.default_branch)
      const commit = (yield* git(opts.repo, ["rev-parse", "--verify", "--end-of-options", `${branch}^{commit}`])).trim()
      const files = parseTree(yield* git(opts.repo, ["ls-tree", "-r", "-z", "--full-tree", commit]))
      let upload: string | undefined
      let last: typeof IndexLoad.Type | undefined
      // Every page but the last is staged; the last one replaces the index in one transaction on the server.
      for (let start = 0; start === 0 || start < files.length; start += pageFiles) {
        const page = files.slice(start, start + pageFiles)
        const complete = start + pageFiles >= files.length
        last = yield* callAs(conn, "topics_repository_index_load", {
          branch,
          commit,
          files: page,
          complete,
          ...(upload === undefined ? {} : { upload })
        }, IndexLoad)
        if (last.status === "staged") upload = last.upload
      }
      if (last === undefined || last.status !== "loaded") return yield* Effect.fail(Failure.unexpected("The load did not complete."))
      yield* Console.log(
        opts.json
          ? Format.json({ repository: linked.name, commit, ...last })
          : `loaded ${last.files.toLocaleString("en")} files of ${linked.name} ${branch} at ${commit.slice(0, 12)}; ${last.drifted} reviewed ${
            last.drifted === 1 ? "topic" : "topics"
          } drifted since approval`
      )
    })
).pipe(Command.withDescription("Load the linked repository's file index (paths and blob ids) from a local git checkout."))

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

const drift = Command.make(
  "drift",
  {
    repo,
    base: Options.text("base").pipe(Options.withDescription("The ref to compare with, e.g. origin/main: files changed on HEAD since it.")),
    minTrust: Options.choice("min-trust", ["reviewed", "proposed", "draft"]).pipe(
      Options.withDescription("Only topics at least this trusted (default: every topic not archived)."),
      Options.optional
    ),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const conn = yield* connection
      // --no-renames: a moved file counts at its old path (which a topic may anchor) and its new one.
      const changed = (yield* git(opts.repo, ["diff", "--name-only", "--no-renames", "-z", `${opts.base}...HEAD`]))
        .split("\0")
        .filter((path) => path !== "")
      const pages = Array.from({ length: Math.ceil(changed.length / pagePaths) }, (_, i) => changed.slice(i * pagePaths, (i + 1) * pagePaths))
      const answers = yield* Effect.forEach(pages, (paths) =>
        Effect.map(
          callAs(conn, "topics_match_files", { paths, ...Option.match(opts.minTrust, { onNone: () => ({}), onSome: (min_trust) => ({ min_trust }) }) }, Matches),
          (answer) => answer.topics
        ))
      const topics = merge(answers)
      yield* Console.log(
        opts.json
          ? Format.json({ base: opts.base, changed_files: changed.length, topics })
          : topics.length === 0
          ? `${changed.length} ${changed.length === 1 ? "file" : "files"} changed since ${opts.base}; no topic anchors them`
          : [
            `${topics.length} ${topics.length === 1 ? "topic anchors" : "topics anchor"} files changed since ${opts.base}:`,
            ...topics.flatMap((topic) => [
              `  ${topic.id}  ${topic.trust.padEnd(8)}  ${topic.title}`,
              ...topic.paths.slice(0, 10).map((path) => `      ${path}`),
              ...(topic.paths.length > 10 ? [`      ... and ${topic.paths.length - 10} more`] : [])
            ])
          ].join("\n")
      )
      // Exit 1 for a CI job: the topics are printed above, so only the exit code is left to give.
      if (topics.length > 0) {
        return yield* Effect.fail(
          new Failure.Reported({ failure: Failure.unexpected(`${topics.length} topics anchor files changed since ${opts.base}`) })
        )
      }
    })
).pipe(Command.withDescription("List the topics anchoring files changed since --base; exit 1 when there is any (for CI)."))

/**
 * The `topics-index` command group, for `Cli.Options.operators` (through `Cli.operator`).
 *
 * @since 0.1.0 @category commands
 */
export const command = Command.make("topics-index").pipe(
  Command.withDescription("Operator commands that read a local git checkout: load the file index, check drift for CI."),
  Command.withSubcommands([load, drift])
)
