/**
 * Anchors and health (decision 0058): a workspace links one repository and loads its default branch's file
 * index (paths and content hashes). Topic patterns are globs over those paths:
 *
 * - `validate` checks a topic's patterns against the index on every create and update (`anchor_validation`),
 *   advisory only;
 * - `baseline` records, when a topic is approved, the files its patterns match with their hashes;
 * - a reviewed topic **drifts** when one of those files has another hash in the index now, or is gone;
 * - `matchFiles` answers which topics cover given paths, `audit` reports the workspace's context health.
 *
 * The glob dialect is small and documented here ({@link compile}) rather than borrowed: `*`, `?` and `**`
 * are all patterns use, and one dialect that the SQL prefix filter ({@link staticPrefix}) understands
 * exactly is easier to keep right than a general matcher with options.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as Governance from "./Governance.js"

// -----------------------------------------------------------------------------
// Globs
// -----------------------------------------------------------------------------

/**
 * A repository path as the index keeps it: relative, `/`-separated, without a leading `./` or `/`.
 *
 * @since 0.1.0 @category globs
 */
export const normalizePath = (path: string): string => path.trim().replace(/^(?:\.\/|\/)+/, "")

const escapeRegExp = (text: string): string => text.replace(/[.+^${}()|[\]\\]/g, "\\$&")

const hasGlob = (segment: string): boolean => segment.includes("*") || segment.includes("?")

/**
 * A pattern as a regular expression over whole paths. The dialect:
 *
 * - `*` matches any characters within one path segment (never `/`), dotfiles included;
 * - `?` matches one character other than `/`;
 * - `**` as a whole segment matches any number of segments, none included (`docs/**` is everything under
 *   `docs/`, `**\/*.md` every markdown file);
 * - a trailing `/` means the files under a folder (`src/auth/` is `src/auth/**`);
 * - everything else, `{`, `[` and `!` included, is literal.
 *
 * @since 0.1.0 @category globs
 */
export const compile = (pattern: string): RegExp => {
  const normalized = normalizePath(pattern)
  const segments = (normalized.endsWith("/") ? `${normalized}**` : normalized).split("/")
  const source = segments.map((segment, index) => {
    const last = index === segments.length - 1
    if (segment === "**") return last ? ".*" : "(?:[^/]*/)*"
    const body = [...segment].map((char) => (char === "*" ? "[^/]*" : char === "?" ? "[^/]" : escapeRegExp(char))).join("")
    return last ? body : `${body}/`
  }).join("")
  return new RegExp(`^${source}$`)
}

/**
 * The literal folder prefix of a pattern (the segments before the first one with a wildcard, with their
 * trailing `/`), or the whole pattern when it has none: every path it matches starts with it, so SQL can
 * narrow the index with `LIKE prefix%` before the expression runs.
 *
 * @since 0.1.0 @category globs
 */
export const staticPrefix = (pattern: string): string => {
  const segments = normalizePath(pattern).split("/")
  const at = segments.findIndex(hasGlob)
  return at === -1 ? segments.join("/") : segments.slice(0, at).map((segment) => `${segment}/`).join("")
}

/** @since 0.1.0 @category globs */
export const matches = (pattern: string, path: string): boolean => compile(pattern).test(normalizePath(path))

// -----------------------------------------------------------------------------
// Thresholds
// -----------------------------------------------------------------------------

/** A pattern matching more files than this is overbroad. @since 0.1.0 @category constants */
export const overbroadFiles = 50
/** ...or more than this share of an index of at least {@link overbroadMinIndex} files. @since 0.1.0 @category constants */
export const overbroadShare = 0.2
/** Below this many files a share says little: a small index is judged by {@link overbroadFiles} alone. @since 0.1.0 @category constants */
export const overbroadMinIndex = 100
/** Paths shown per pattern. @since 0.1.0 @category constants */
export const sampleSize = 5
/** The most files one load may hold, across its pages. @since 0.1.0 @category constants */
export const maxIndexFiles = 200_000
/** The most files one request carries; larger loads are sent in pages. @since 0.1.0 @category constants */
export const maxPageFiles = 10_000

/** @since 0.1.0 @category models */
export const PatternStatus = Schema.Literal("ok", "overbroad", "zero")
/** @since 0.1.0 @category models */
export type PatternStatus = typeof PatternStatus.Type

/**
 * `zero` for no match, `overbroad` above the thresholds, `ok` otherwise.
 *
 * @since 0.1.0 @category validation
 */
export const classify = (count: number, indexSize: number): PatternStatus =>
  count === 0
    ? "zero"
    : count > overbroadFiles || (indexSize >= overbroadMinIndex && count > indexSize * overbroadShare)
    ? "overbroad"
    : "ok"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export const PatternReport = Schema.Struct({
  pattern: Schema.String,
  status: PatternStatus.annotations({
    description: `ok (1 to ${overbroadFiles} files), overbroad (more than ${overbroadFiles} files, or more than ${
      overbroadShare * 100
    }% of an index of at least ${overbroadMinIndex}) or zero (no file).`
  }),
  matches: Schema.Number.annotations({ description: "Files of the index the pattern matches." }),
  samples: Schema.Array(Schema.String).annotations({ description: `Up to ${sampleSize} matching paths, in path order.` }),
  warnings: Schema.Array(Schema.String)
}).annotations({ identifier: "AnchorPatternReport" })
/** @since 0.1.0 @category models */
export type PatternReport = typeof PatternReport.Type

const Checked = Schema.Struct({
  repository: Schema.String,
  branch: Schema.String,
  indexed_files: Schema.Number,
  index_loaded_at: Schema.String,
  patterns: Schema.Array(PatternReport),
  warnings: Schema.Array(Schema.String)
})

const Skipped = Schema.Struct({
  skipped: Schema.String.annotations({ description: "Why the patterns were not checked (a repository is linked, but no file index was loaded)." })
})

/**
 * The patterns of a write checked against the linked repository's index. Advisory: the write happened.
 *
 * @since 0.1.0 @category models
 */
export const AnchorValidation = Schema.Union(Checked, Skipped).annotations({
  identifier: "AnchorValidation",
  description:
    "Each pattern against the linked repository's default-branch index: ok, overbroad or zero, with samples and warnings. Advisory; the write happened. Omitted without patterns or without a linked repository; {skipped} when no index was loaded."
})
/** @since 0.1.0 @category models */
export type AnchorValidation = typeof AnchorValidation.Type

/** @since 0.1.0 @category models */
export const RepositoryView = Schema.Struct({
  name: Schema.String,
  url: Schema.NullOr(Schema.String),
  default_branch: Schema.String,
  linked_at: Schema.String,
  index: Schema.NullOr(Schema.Struct({
    branch: Schema.String,
    commit: Schema.NullOr(Schema.String),
    files: Schema.Number,
    loaded_at: Schema.String
  })).annotations({ description: "The last completed load; null until one is loaded." })
}).annotations({ identifier: "TopicsRepository" })
/** @since 0.1.0 @category models */
export type RepositoryView = typeof RepositoryView.Type

/** @since 0.1.0 @category models */
export const IndexFile = Schema.Struct({ path: Schema.String, hash: Schema.String })
/** @since 0.1.0 @category models */
export type IndexFile = typeof IndexFile.Type

/** @since 0.1.0 @category models */
export const IndexLoad = Schema.Union(
  Schema.Struct({
    status: Schema.Literal("loaded"),
    branch: Schema.String,
    files: Schema.Number.annotations({ description: "Files in the index now." }),
    loaded_at: Schema.String,
    drifted: Schema.Number.annotations({ description: "Reviewed topics whose anchored files changed since their approval." })
  }),
  Schema.Struct({
    status: Schema.Literal("staged"),
    upload: Schema.String.annotations({ description: "Send it with the next page; the page with complete=true replaces the index." }),
    staged: Schema.Number.annotations({ description: "Files staged so far." })
  })
).annotations({ identifier: "TopicsIndexLoad" })
/** @since 0.1.0 @category models */
export type IndexLoad = typeof IndexLoad.Type

/** @since 0.1.0 @category models */
export const TopicRef = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: Governance.TopicStatus,
  trust: Governance.Trust
}).annotations({ identifier: "TopicRef" })

/** @since 0.1.0 @category models */
export const FileMatch = Schema.Struct({
  ...TopicRef.fields,
  patterns: Schema.Array(Schema.String).annotations({ description: "The topic's patterns that matched." }),
  paths: Schema.Array(Schema.String).annotations({ description: "The given paths the topic covers." })
}).annotations({ identifier: "TopicFileMatch" })
/** @since 0.1.0 @category models */
export type FileMatch = typeof FileMatch.Type

/** @since 0.1.0 @category models */
export const DriftedFile = Schema.Struct({
  path: Schema.String,
  change: Schema.Literal("changed", "removed"),
  approved_hash: Schema.String,
  current_hash: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DriftedFile" })
/** @since 0.1.0 @category models */
export type DriftedFile = typeof DriftedFile.Type

const driftedFilesShown = 20

/** @since 0.1.0 @category models */
export const Audit = Schema.Struct({
  index: Schema.NullOr(Schema.Struct({ repository: Schema.String, branch: Schema.String, files: Schema.Number, loaded_at: Schema.String }))
    .annotations({ description: "The index the anchors were checked against; null without one (then zero_match and overbroad are empty)." }),
  drifted: Schema.Array(Schema.Struct({
    ...TopicRef.fields,
    approved_at: Schema.NullOr(Schema.String),
    changed: Schema.Number.annotations({ description: "Anchored files changed or removed since the approval." }),
    files: Schema.Array(DriftedFile).annotations({ description: `The first ${driftedFilesShown}, in path order.` })
  })).annotations({ description: "Reviewed topics whose anchored files changed or vanished since their approval." }),
  stale: Schema.Array(Schema.Struct({ ...TopicRef.fields, review_due_at: Schema.String }))
    .annotations({ description: "Reviewed topics past their review interval." }),
  zero_match: Schema.Array(Schema.Struct({ ...TopicRef.fields, patterns: Schema.Array(Schema.String) }))
    .annotations({ description: "Topics with a pattern matching no file (the patterns named)." }),
  overbroad: Schema.Array(Schema.Struct({ ...TopicRef.fields, patterns: Schema.Array(Schema.String) }))
    .annotations({ description: "Topics with an overbroad pattern (the patterns named)." }),
  orphan_tags: Schema.Array(Schema.String).annotations({ description: "Registered tags no topic carries." }),
  awaiting_review: Schema.Array(Schema.Struct({ ...TopicRef.fields, open_edits: Schema.Number }))
    .annotations({ description: "Proposed topics, and topics with open suggested edits." })
}).annotations({ identifier: "TopicsAudit" })
/** @since 0.1.0 @category models */
export type Audit = typeof Audit.Type

/** What linking a repository carries. @since 0.1.0 @category models */
export interface LinkInput {
  readonly name: string
  readonly url?: string | undefined
  readonly default_branch: string
}

/** One request of a load. @since 0.1.0 @category models */
export interface LoadInput {
  readonly branch: string
  readonly commit?: string | undefined
  readonly files: ReadonlyArray<IndexFile>
  /** The staged upload this page continues. */
  readonly upload?: string | undefined
  /** False: stage the page and answer an upload id; true (the default): the load is complete. */
  readonly complete: boolean
}

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category errors */
export class RepositoryNotLinked extends Data.TaggedError("RepositoryNotLinked")<{}> {}
/** The index is the default branch's. @since 0.1.0 @category errors */
export class BranchMismatch extends Data.TaggedError("BranchMismatch")<{ readonly expected: string; readonly given: string }> {}
/** @since 0.1.0 @category errors */
export class UploadNotFound extends Data.TaggedError("UploadNotFound")<{ readonly upload: string }> {}
/** @since 0.1.0 @category errors */
export class IndexTooLarge extends Data.TaggedError("IndexTooLarge")<{ readonly files: number }> {}

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category tags */
export class Anchors extends Context.Tag("@service/topics/Anchors")<Anchors, {
  /** Links (or relinks) the repository; a different name, URL or default branch drops the old index and baselines. */
  readonly link: (workspaceId: string, input: LinkInput) => Effect.Effect<RepositoryView>
  readonly repository: (workspaceId: string) => Effect.Effect<Option.Option<RepositoryView>>
  /** Stages a page, or completes a load: the index is replaced whole, in one transaction. */
  readonly load: (
    workspaceId: string,
    input: LoadInput
  ) => Effect.Effect<IndexLoad, RepositoryNotLinked | BranchMismatch | UploadNotFound | IndexTooLarge>
  /** None without patterns or without a linked repository. */
  readonly validate: (workspaceId: string, patterns: ReadonlyArray<string>) => Effect.Effect<Option.Option<AnchorValidation>>
  /** Records the files `patterns` match now as the topic's baseline (run it in the approval's transaction). */
  readonly baseline: (workspaceId: string, topicId: string, patterns: ReadonlyArray<string>) => Effect.Effect<void>
  /** Topics not archived whose patterns match any of `paths`, most matched paths first. */
  readonly matchFiles: (
    workspaceId: string,
    paths: ReadonlyArray<string>,
    minTrust?: Governance.Trust | undefined
  ) => Effect.Effect<ReadonlyArray<FileMatch>>
  /** The anchored files of a topic that changed or vanished since its baseline. */
  readonly drift: (workspaceId: string, topicId: string) => Effect.Effect<ReadonlyArray<DriftedFile>>
  readonly audit: (workspaceId: string) => Effect.Effect<Audit>
}>() {}

/**
 * True for a reviewed topic (`t`) whose baseline differs from the index: for ranking drifted topics first.
 *
 * @since 0.1.0 @category sql
 */
export const driftedCondition = (sql: SqlClient.SqlClient): Fragment => sql.literal(driftedExpression)

/**
 * The same condition as SQL text, for column lists (every topic read carries `governance.drifted`).
 *
 * @since 0.1.0 @category sql
 */
export const driftedExpression = `(t.status = 'reviewed' AND EXISTS (SELECT 1 FROM topics.anchors a
    LEFT JOIN topics.files f ON f.workspace_id = a.workspace_id AND f.path = a.path
    WHERE a.topic_id = t.id AND f.hash IS DISTINCT FROM a.hash))`

const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const RepositoryRow = Schema.Struct({
  name: Schema.String,
  url: Schema.NullOr(Schema.String),
  default_branch: Schema.String,
  linked_at: Schema.String,
  index_branch: Schema.NullOr(Schema.String),
  index_commit: Schema.NullOr(Schema.String),
  index_files: Schema.NullOr(Schema.Number),
  index_loaded_at: Schema.NullOr(Schema.String)
})
type RepositoryRow = typeof RepositoryRow.Type
const decodeRepositories = Schema.decodeUnknown(Schema.Array(RepositoryRow))
const repositoryColumns = `r.name, r.url, r.default_branch, ${iso("r.linked_at")} AS linked_at, r.index_branch, r.index_commit, r.index_files,
  ${iso("r.index_loaded_at")} AS index_loaded_at`

const decodeFiles = Schema.decodeUnknown(Schema.Array(IndexFile))
const decodeCount = Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number })))
const decodeUploads = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String, branch: Schema.String })))
const decodePatterned = Schema.decodeUnknown(Schema.Array(Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: Governance.TopicStatus,
  patterns: Schema.parseJson(Schema.Array(Schema.String))
})))
const decodeDrift = Schema.decodeUnknown(Schema.Array(Schema.Struct({
  topic_id: Schema.String,
  path: Schema.String,
  approved_hash: Schema.String,
  current_hash: Schema.NullOr(Schema.String)
})))
const decodeTopicRows = Schema.decodeUnknown(Schema.Array(Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: Governance.TopicStatus,
  at: Schema.NullOr(Schema.String),
  open_edits: Schema.Number
})))
const decodeNames = Schema.decodeUnknown(Schema.Array(Schema.Struct({ name: Schema.String })))

const viewOfRepository = (row: RepositoryRow): RepositoryView => ({
  name: row.name,
  url: row.url,
  default_branch: row.default_branch,
  linked_at: row.linked_at,
  index: row.index_branch === null || row.index_files === null || row.index_loaded_at === null
    ? null
    : { branch: row.index_branch, commit: row.index_commit, files: row.index_files, loaded_at: row.index_loaded_at }
})

const refOf = (row: { readonly id: string; readonly title: string; readonly status: Governance.TopicStatus }) => ({
  id: row.id,
  title: row.title,
  status: row.status,
  trust: Governance.trustOf(row.status)
})

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, "\\$&")

/** The last hash given for each path (a load may repeat a path; the index keeps one). */
const dedupe = (files: ReadonlyArray<IndexFile>): ReadonlyArray<IndexFile> =>
  [...new Map(files.map((file) => [normalizePath(file.path), file.hash])).entries()].map(([path, hash]) => ({ path, hash }))

const percent = (share: number): string => `${Math.round(share * 1000) / 10}%`

/** The first index in sorted `paths` not below `prefix`. */
const lowerBound = (paths: ReadonlyArray<string>, prefix: string): number => {
  let low = 0
  let high = paths.length
  while (low < high) {
    const middle = (low + high) >>> 1
    const path = paths[middle]
    if (path !== undefined && path < prefix) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * The paths starting with `prefix`, out of paths sorted in code unit order: a binary search, so an audit
 * over a large index reads only each pattern's own folder.
 */
const within = (paths: ReadonlyArray<string>, prefix: string): ReadonlyArray<string> => {
  if (prefix === "") return paths
  const start = lowerBound(paths, prefix)
  let end = start
  while (end < paths.length && (paths[end] ?? "").startsWith(prefix)) end++
  return paths.slice(start, end)
}

/**
 * One pattern against the candidates (sorted in code unit order, as `Array.prototype.sort` leaves them) of
 * an index of `indexSize` files.
 *
 * @since 0.1.0 @category validation
 */
export const report = (pattern: string, candidates: ReadonlyArray<string>, indexSize: number, branch: string): PatternReport => {
  const expression = compile(pattern)
  const matched = within(candidates, staticPrefix(pattern)).filter((path) => expression.test(path))
  const status = classify(matched.length, indexSize)
  const warnings: Array<string> = []
  if (/[[\]{}!]/.test(pattern)) warnings.push("Brackets, braces and ! are matched literally; only *, ? and ** are wildcards.")
  if (status === "zero") {
    const folder = normalizePath(pattern).replace(/\/+$/, "")
    // A folder named without a wildcard is the commonest zero: say how to anchor the files under it.
    if (!hasGlob(folder) && candidates.some((path) => path.startsWith(`${folder}/`))) {
      warnings.push(`Matches no file on ${branch}, but ${folder} is a folder: use ${folder}/** to anchor the files under it.`)
    } else {
      warnings.push(`Matches no file on ${branch}: check the path, or load a newer index.`)
    }
  }
  if (status === "overbroad") {
    warnings.push(
      `Matches ${matched.length} of the index's ${indexSize} files (${
        percent(matched.length / Math.max(indexSize, 1))
      }): a narrower pattern anchors the topic better and drifts less often.`
    )
  }
  return { pattern, status, matches: matched.length, samples: matched.slice(0, sampleSize), warnings }
}

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  // One transaction; a database failure is a defect (an outage the kernel reports as retryable).
  const transaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    sql.withTransaction(self).pipe(Effect.catchIf((e): e is SqlError => e instanceof SqlError, (e) => Effect.die(e)))

  const selectRepository = (workspaceId: string, lock: boolean) =>
    sql`SELECT ${sql.literal(repositoryColumns)} FROM topics.repositories r WHERE r.workspace_id = ${workspaceId}
      ${sql.literal(lock ? "FOR UPDATE" : "")}`.pipe(
      Effect.flatMap(decodeRepositories),
      Effect.orDie,
      Effect.map((rows) => Option.fromNullable(rows[0]))
    )

  /**
   * The indexed paths (and hashes) some pattern may match, narrowed in SQL by the patterns' prefixes; the
   * whole index without patterns.
   */
  const candidates = (workspaceId: string, patterns: ReadonlyArray<string>) => {
    const prefixes = patterns.map(staticPrefix)
    const narrow = prefixes.length === 0 || prefixes.some((prefix) => prefix === "")
      ? []
      : [sql.or(prefixes.map((prefix) => sql`f.path LIKE ${`${escapeLike(prefix)}%`}`))]
    return sql`SELECT f.path, f.hash FROM topics.files f WHERE ${sql.and([sql`f.workspace_id = ${workspaceId}`, ...narrow])}
`.pipe(
      Effect.flatMap(decodeFiles),
      Effect.orDie,
      // Sorted here, not by SQL: the binary search needs JavaScript's order, whatever the database collation.
      Effect.map((files) => [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
    )
  }

  const link = (workspaceId: string, input: LinkInput) =>
    transaction(Effect.gen(function*() {
      const at = yield* now
      const url = input.url ?? null
      const existing = yield* selectRepository(workspaceId, true)
      const same = Option.exists(existing, (row) => row.name === input.name && row.url === url && row.default_branch === input.default_branch)
      if (!same) {
        // Another repository or branch: its index and every baseline taken against it no longer apply.
        yield* sql`DELETE FROM topics.files WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
        yield* sql`DELETE FROM topics.anchors WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
        yield* sql`DELETE FROM topics.index_uploads WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
        yield* sql`INSERT INTO topics.repositories (workspace_id, name, url, default_branch, linked_at)
          VALUES (${workspaceId}, ${input.name}, ${url}, ${input.default_branch}, ${at}::timestamptz)
          ON CONFLICT (workspace_id) DO UPDATE SET name = EXCLUDED.name, url = EXCLUDED.url, default_branch = EXCLUDED.default_branch,
            linked_at = EXCLUDED.linked_at, index_branch = NULL, index_commit = NULL, index_files = NULL, index_loaded_at = NULL`.pipe(Effect.orDie)
      }
      const row = yield* selectRepository(workspaceId, false)
      return yield* Option.match(row, { onNone: () => Effect.dieMessage("Anchors: repository vanished"), onSome: (r) => Effect.succeed(viewOfRepository(r)) })
    }))

  const repository = (workspaceId: string) => Effect.map(selectRepository(workspaceId, false), Option.map(viewOfRepository))

  const insertFiles = (table: "files" | "upload", owner: string, files: ReadonlyArray<IndexFile>, at: string) =>
    files.length === 0 ? Effect.void : (table === "files"
      ? sql`INSERT INTO topics.files (workspace_id, path, hash, loaded_at)
          SELECT ${owner}, x.path, x.hash, ${at}::timestamptz FROM jsonb_to_recordset(${JSON.stringify(files)}::jsonb) AS x(path text, hash text)
          ON CONFLICT (workspace_id, path) DO UPDATE SET hash = EXCLUDED.hash`
      : sql`INSERT INTO topics.index_upload_files (upload_id, path, hash)
          SELECT ${owner}, x.path, x.hash FROM jsonb_to_recordset(${JSON.stringify(files)}::jsonb) AS x(path text, hash text)
          ON CONFLICT (upload_id, path) DO UPDATE SET hash = EXCLUDED.hash`).pipe(Effect.asVoid, Effect.orDie)

  const count = (query: Effect.Effect<ReadonlyArray<unknown>, SqlError>) =>
    query.pipe(Effect.flatMap(decodeCount), Effect.orDie, Effect.map((rows) => rows[0]?.n ?? 0))

  const load = (workspaceId: string, input: LoadInput) =>
    transaction(Effect.gen(function*() {
      const repo = yield* selectRepository(workspaceId, true)
      if (Option.isNone(repo)) return yield* new RepositoryNotLinked()
      if (input.branch !== repo.value.default_branch) {
        return yield* new BranchMismatch({ expected: repo.value.default_branch, given: input.branch })
      }
      const at = yield* now
      const files = dedupe(input.files)
      let upload: string | undefined = input.upload
      if (upload !== undefined) {
        const found = yield* sql`SELECT id, branch FROM topics.index_uploads WHERE workspace_id = ${workspaceId} AND id = ${upload}`.pipe(
          Effect.flatMap(decodeUploads),
          Effect.orDie
        )
        if (found[0] === undefined || found[0].branch !== input.branch) return yield* new UploadNotFound({ upload })
      } else if (!input.complete) {
        upload = `upl_${randomBytes(12).toString("hex")}`
        yield* sql`DELETE FROM topics.index_uploads WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
        yield* sql`INSERT INTO topics.index_uploads (id, workspace_id, branch, created_at)
          VALUES (${upload}, ${workspaceId}, ${input.branch}, ${at}::timestamptz)`.pipe(Effect.orDie)
      }
      if (!input.complete && upload !== undefined) {
        yield* insertFiles("upload", upload, files, at)
        const staged = yield* count(sql`SELECT count(*)::int AS n FROM topics.index_upload_files WHERE upload_id = ${upload}`)
        if (staged > maxIndexFiles) return yield* new IndexTooLarge({ files: staged })
        return { status: "staged" as const, upload, staged }
      }
      // Complete: the index is replaced whole, so a path missing from this load is gone from the branch.
      yield* sql`DELETE FROM topics.files WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
      if (upload !== undefined) {
        yield* sql`INSERT INTO topics.files (workspace_id, path, hash, loaded_at)
          SELECT ${workspaceId}, u.path, u.hash, ${at}::timestamptz FROM topics.index_upload_files u WHERE u.upload_id = ${upload}`.pipe(Effect.orDie)
        yield* sql`DELETE FROM topics.index_uploads WHERE id = ${upload}`.pipe(Effect.orDie)
      }
      yield* insertFiles("files", workspaceId, files, at)
      const total = yield* count(sql`SELECT count(*)::int AS n FROM topics.files WHERE workspace_id = ${workspaceId}`)
      if (total > maxIndexFiles) return yield* new IndexTooLarge({ files: total })
      yield* sql`UPDATE topics.repositories SET index_branch = ${input.branch}, index_commit = ${input.commit ?? null}, index_files = ${total},
        index_loaded_at = ${at}::timestamptz WHERE workspace_id = ${workspaceId}`.pipe(Effect.orDie)
      const drifted = yield* count(sql`SELECT count(*)::int AS n FROM topics.topics t
        WHERE t.workspace_id = ${workspaceId} AND ${driftedCondition(sql)}`)
      return { status: "loaded" as const, branch: input.branch, files: total, loaded_at: at, drifted }
    }))

  const validate = (workspaceId: string, patterns: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      if (patterns.length === 0) return Option.none<AnchorValidation>()
      const repo = yield* selectRepository(workspaceId, false)
      if (Option.isNone(repo)) return Option.none<AnchorValidation>()
      const { name, index_branch, index_files, index_loaded_at } = repo.value
      if (index_branch === null || index_files === null || index_loaded_at === null) {
        return Option.some<AnchorValidation>({
          skipped: `No file index of ${name} has been loaded yet: load one (service topics-index load) to check patterns against it.`
        })
      }
      const paths = (yield* candidates(workspaceId, patterns)).map((file) => file.path)
      const reports = patterns.map((pattern) => report(pattern, paths, index_files, index_branch))
      const zero = reports.filter((r) => r.status === "zero").length
      const overbroad = reports.filter((r) => r.status === "overbroad").length
      const warnings = [
        ...(zero === 0 ? [] : [`${zero} of ${reports.length} patterns match no file: the topic is not anchored by them.`]),
        ...(overbroad === 0 ? [] : [`${overbroad} of ${reports.length} patterns are overbroad.`])
      ]
      return Option.some<AnchorValidation>({
        repository: name,
        branch: index_branch,
        indexed_files: index_files,
        index_loaded_at,
        patterns: reports,
        warnings
      })
    })

  const baseline = (workspaceId: string, topicId: string, patterns: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM topics.anchors WHERE workspace_id = ${workspaceId} AND topic_id = ${topicId}`.pipe(Effect.orDie)
      if (patterns.length === 0) return
      const expressions = patterns.map(compile)
      const anchored = (yield* candidates(workspaceId, patterns)).filter((file) => expressions.some((e) => e.test(file.path)))
      if (anchored.length === 0) return
      yield* sql`INSERT INTO topics.anchors (workspace_id, topic_id, path, hash)
        SELECT ${workspaceId}, ${topicId}, x.path, x.hash FROM jsonb_to_recordset(${JSON.stringify(anchored)}::jsonb) AS x(path text, hash text)`
        .pipe(Effect.orDie)
    })

  const patterned = (workspaceId: string, minTrust?: Governance.Trust | undefined) =>
    sql`SELECT t.id, t.title, t.status, to_json(t.patterns)::text AS patterns FROM topics.topics t
      WHERE ${
      sql.and([
        sql`t.workspace_id = ${workspaceId}`,
        sql`t.status <> 'archived'`,
        sql`cardinality(t.patterns) > 0`,
        ...(minTrust === undefined ? [] : [sql`t.status IN ${sql.in(Governance.statusesAtLeast(minTrust))}`])
      ])
    } ORDER BY t.id`.pipe(Effect.flatMap(decodePatterned), Effect.orDie)

  const matchFiles = (workspaceId: string, paths: ReadonlyArray<string>, minTrust?: Governance.Trust | undefined) =>
    Effect.gen(function*() {
      const given = [...new Set(paths.map(normalizePath))].sort()
      const topics = yield* patterned(workspaceId, minTrust)
      const found: Array<FileMatch> = []
      for (const topic of topics) {
        const hits = topic.patterns.map((pattern) => ({ pattern, expression: compile(pattern) }))
          .map(({ expression, pattern }) => ({ pattern, paths: given.filter((path) => expression.test(path)) }))
          .filter((hit) => hit.paths.length > 0)
        if (hits.length === 0) continue
        const covered = given.filter((path) => hits.some((hit) => hit.paths.includes(path)))
        found.push({ ...refOf(topic), patterns: hits.map((hit) => hit.pattern), paths: covered })
      }
      return found.sort((a, b) => b.paths.length - a.paths.length || a.id.localeCompare(b.id))
    })

  const driftRows = (workspaceId: string, topicId?: string | undefined) =>
    sql`SELECT a.topic_id, a.path, a.hash AS approved_hash, f.hash AS current_hash FROM topics.anchors a
      JOIN topics.topics t ON t.id = a.topic_id
      LEFT JOIN topics.files f ON f.workspace_id = a.workspace_id AND f.path = a.path
      WHERE ${
      sql.and([
        sql`a.workspace_id = ${workspaceId}`,
        sql`t.status = 'reviewed'`,
        sql`f.hash IS DISTINCT FROM a.hash`,
        ...(topicId === undefined ? [] : [sql`a.topic_id = ${topicId}`])
      ])
    } ORDER BY a.topic_id, a.path`.pipe(
      Effect.flatMap(decodeDrift),
      Effect.orDie,
      Effect.map((rows) =>
        rows.map((row) => ({
          topic_id: row.topic_id,
          file: {
            path: row.path,
            change: row.current_hash === null ? "removed" as const : "changed" as const,
            approved_hash: row.approved_hash,
            current_hash: row.current_hash
          }
        }))
      )
    )

  const drift = (workspaceId: string, topicId: string) =>
    Effect.map(driftRows(workspaceId, topicId), (rows) => rows.map((row) => row.file))

  const audit = (workspaceId: string) =>
    Effect.gen(function*() {
      const at = yield* now
      const repo = yield* selectRepository(workspaceId, false)
      const index = Option.flatMap(repo, (row) => Option.fromNullable(viewOfRepository(row).index).pipe(Option.map((i) => ({ ...i, repository: row.name }))))

      const driftedFiles = yield* driftRows(workspaceId)
      const reviewed = yield* sql`SELECT t.id, t.title, t.status, ${sql.literal(iso("t.approved_at"))} AS at, 0 AS open_edits
        FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND t.status = 'reviewed' ORDER BY t.approved_at, t.id`.pipe(
        Effect.flatMap(decodeTopicRows),
        Effect.orDie
      )
      const drifted = reviewed.flatMap((topic) => {
        const files = driftedFiles.filter((row) => row.topic_id === topic.id).map((row) => row.file)
        return files.length === 0
          ? []
          : [{ ...refOf(topic), approved_at: topic.at, changed: files.length, files: files.slice(0, driftedFilesShown) }]
      })

      // The same rule as the reads' `governance.stale` (decision 0057): reviewed, past approved_at + interval.
      const stale = yield* sql`SELECT t.id, t.title, t.status,
          ${sql.literal(iso("(t.approved_at + make_interval(days => t.review_interval_days))"))} AS at, 0 AS open_edits
        FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND t.status = 'reviewed' AND t.review_interval_days IS NOT NULL
          AND t.approved_at + make_interval(days => t.review_interval_days) < ${at}::timestamptz
        ORDER BY t.approved_at, t.id`.pipe(Effect.flatMap(decodeTopicRows), Effect.orDie)

      const zeroMatch: Array<{ id: string; title: string; status: Governance.TopicStatus; trust: Governance.Trust; patterns: Array<string> }> = []
      const overbroad: Array<{ id: string; title: string; status: Governance.TopicStatus; trust: Governance.Trust; patterns: Array<string> }> = []
      if (Option.isSome(index)) {
        const paths = (yield* candidates(workspaceId, [])).map((file) => file.path)
        for (const topic of yield* patterned(workspaceId)) {
          const statuses = topic.patterns.map((pattern) => ({ pattern, status: report(pattern, paths, paths.length, index.value.branch).status }))
          const zero = statuses.filter((s) => s.status === "zero").map((s) => s.pattern)
          const broad = statuses.filter((s) => s.status === "overbroad").map((s) => s.pattern)
          if (zero.length > 0) zeroMatch.push({ ...refOf(topic), patterns: zero })
          if (broad.length > 0) overbroad.push({ ...refOf(topic), patterns: broad })
        }
      }

      const orphans = yield* sql`SELECT g.name FROM topics.tags g WHERE g.workspace_id = ${workspaceId}
        AND NOT EXISTS (SELECT 1 FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND g.name = ANY (t.tags))
        ORDER BY g.name`.pipe(Effect.flatMap(decodeNames), Effect.orDie)

      const awaiting = yield* sql`SELECT t.id, t.title, t.status, NULL AS at,
          (SELECT count(*)::int FROM topics.suggested_edits e WHERE e.topic_id = t.id AND e.status = 'open') AS open_edits
        FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND t.status <> 'archived'
          AND (t.status = 'proposed' OR EXISTS (SELECT 1 FROM topics.suggested_edits e WHERE e.topic_id = t.id AND e.status = 'open'))
        ORDER BY t.updated_at, t.id`.pipe(Effect.flatMap(decodeTopicRows), Effect.orDie)

      return {
        index: Option.getOrNull(
          Option.map(index, (i) => ({ repository: i.repository, branch: i.branch, files: i.files, loaded_at: i.loaded_at }))
        ),
        drifted,
        stale: stale.flatMap((topic) => (topic.at === null ? [] : [{ ...refOf(topic), review_due_at: topic.at }])),
        zero_match: zeroMatch,
        overbroad,
        orphan_tags: orphans.map((tag) => tag.name),
        awaiting_review: awaiting.map((topic) => ({ ...refOf(topic), open_edits: topic.open_edits }))
      }
    })

  return Anchors.of({ link, repository, load, validate, baseline, matchFiles, drift, audit })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Anchors, never, SqlClient.SqlClient> = Layer.effect(Anchors, make)
