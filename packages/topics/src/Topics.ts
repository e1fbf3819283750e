/**
 * The topics service: topics per workspace with their governance, search, suggested edits, tags, relations,
 * the topic graph, the event timeline and share links, over SQL. Every status move asks
 * `Governance.transition`; every change is written with its timeline event (and, for propose, approve and
 * archive, its catalog event in the workspace ledger) in one transaction.
 *
 * Who may call is the operations' business (`authorize`, scopes); the service takes an {@link Actor} saying
 * who acts, whether they hold owner or admin authority, and through which kind of surface.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { EventLedger } from "@service/events/EventLedger"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import * as Anchors from "./Anchors.js"
import * as Governance from "./Governance.js"

const DAY_MS = 86_400_000

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * Who acts: the person (null for a faceless key), whether they hold owner or admin authority, and whether
 * a person or an agent made the call.
 *
 * @since 0.1.0 @category models
 */
export interface Actor {
  readonly personId: string | null
  readonly authority: boolean
  readonly via: Governance.Via
}

/** @since 0.1.0 @category models */
export const GovernanceView = Schema.Struct({
  authoritative: Schema.Boolean.annotations({ description: "True for reviewed knowledge: an owner or admin approved it." }),
  approved_by: Schema.NullOr(Schema.String).annotations({ description: "The person who last approved it." }),
  approved_at: Schema.NullOr(Schema.String).annotations({ description: "When it was last approved (ISO 8601 UTC)." }),
  review_due_at: Schema.NullOr(Schema.String).annotations({
    description: "When reviewed knowledge is due for another review (approved_at plus review_interval_days); null without an interval."
  }),
  stale: Schema.Boolean.annotations({ description: "Reviewed knowledge past its review_due_at." }),
  drifted: Schema.Boolean.annotations({
    description: "Reviewed knowledge whose anchored files changed or vanished since its approval: check it against the code before trusting it."
  })
}).annotations({ identifier: "TopicGovernance" })

/** A topic as every read shows it. @since 0.1.0 @category models */
export const TopicView = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  body: Schema.String,
  tags: Schema.Array(Schema.String),
  patterns: Schema.Array(Schema.String),
  status: Governance.TopicStatus,
  trust: Governance.Trust.annotations({ description: "reviewed, proposed or draft: how far an agent may rely on it." }),
  classification: Schema.Struct({ status: Governance.TopicStatus }),
  governance: GovernanceView,
  review_interval_days: Schema.NullOr(Schema.Number),
  version: Schema.Number.annotations({ description: "Counts content changes; a suggested edit records the version it was based on." }),
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Topic" })
/** @since 0.1.0 @category models */
export type TopicView = typeof TopicView.Type

/** @since 0.1.0 @category models */
export const EditStatus = Schema.Literal("open", "merged", "closed")
/** @since 0.1.0 @category models */
export type EditStatus = typeof EditStatus.Type

/** @since 0.1.0 @category models */
export const EditView = Schema.Struct({
  id: Schema.String,
  topic_id: Schema.String,
  summary: Schema.String,
  patch: Governance.Patch,
  base_version: Schema.Number,
  status: EditStatus,
  opened_by: Schema.NullOr(Schema.String),
  opened_via: Governance.Via,
  decided_by: Schema.NullOr(Schema.String),
  decided_at: Schema.NullOr(Schema.String),
  approved_via: Schema.NullOr(Governance.Via).annotations({ description: "human or agent: how the merge was made; null unless merged." }),
  created_at: Schema.String
}).annotations({ identifier: "SuggestedEdit" })
/** @since 0.1.0 @category models */
export type EditView = typeof EditView.Type

/** @since 0.1.0 @category models */
export const RelationView = Schema.Struct({
  id: Schema.String,
  from_topic: Schema.String,
  to_topic: Schema.String,
  type: Governance.RelationType,
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String
}).annotations({ identifier: "TopicRelation" })
/** @since 0.1.0 @category models */
export type RelationView = typeof RelationView.Type

/** @since 0.1.0 @category models */
export const Graph = Schema.Struct({
  nodes: Schema.Array(Schema.Struct({
    id: Schema.String,
    title: Schema.String,
    status: Governance.TopicStatus,
    trust: Governance.Trust,
    tags: Schema.Array(Schema.String)
  })),
  edges: Schema.Array(Schema.Struct({ id: Schema.String, from: Schema.String, to: Schema.String, type: Governance.RelationType }))
}).annotations({ identifier: "TopicGraph" })
/** @since 0.1.0 @category models */
export type Graph = typeof Graph.Type

/** @since 0.1.0 @category models */
export const EventKind = Schema.Literal(
  "created",
  "updated",
  "proposed",
  "approved",
  "rejected",
  "archived",
  "deleted",
  "edit_opened",
  "edit_merged",
  "edit_closed",
  "relation_added",
  "relation_deleted",
  "shared",
  "unshared",
  "tag_renamed",
  "tag_removed"
)
/** @since 0.1.0 @category models */
export type EventKind = typeof EventKind.Type

/** @since 0.1.0 @category models */
export const EventView = Schema.Struct({
  id: Schema.String,
  topic_id: Schema.String,
  kind: EventKind,
  actor: Governance.Via,
  actor_person_id: Schema.NullOr(Schema.String),
  data: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  occurred_at: Schema.String
}).annotations({ identifier: "TopicEvent" })
/** @since 0.1.0 @category models */
export type EventView = typeof EventView.Type

/** @since 0.1.0 @category models */
export const TagView = Schema.Struct({
  name: Schema.String,
  description: Schema.NullOr(Schema.String),
  topic_count: Schema.Number.annotations({ description: "Topics carrying the tag." })
}).annotations({ identifier: "Tag" })
/** @since 0.1.0 @category models */
export type TagView = typeof TagView.Type

/** @since 0.1.0 @category models */
export const ShareLink = Schema.Struct({
  topic_id: Schema.String,
  token: Schema.String.annotations({ description: "Shown once; only its SHA-256 is kept." }),
  path: Schema.String.annotations({ description: "The public page's path on the host: /api/v1/s/<token> (and /api/v1/s/<token>/raw for the markdown)." }),
  url: Schema.optional(Schema.String).annotations({ description: "The page's full URL, when the server knows its public address." }),
  created_at: Schema.String
}).annotations({ identifier: "ShareLink" })

/**
 * The path of a share link's public page on the host, where `ShareRoutes` serves it.
 *
 * @since 0.1.0 @category share links
 */
export const sharePagePath = (token: string): `/api/v1/s/${string}` => `/api/v1/s/${token}`
/** @since 0.1.0 @category models */
export type ShareLink = typeof ShareLink.Type

/** What a topic create carries. @since 0.1.0 @category models */
export interface CreateInput {
  readonly title: string
  readonly body: string
  readonly tags?: ReadonlyArray<string> | undefined
  readonly patterns?: ReadonlyArray<string> | undefined
  readonly status?: Governance.InitialStatus | undefined
  readonly review_interval_days?: number | null | undefined
}

/** What a topic update may change. @since 0.1.0 @category models */
export interface UpdateInput {
  readonly title?: string | undefined
  readonly body?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly patterns?: ReadonlyArray<string> | undefined
  readonly review_interval_days?: number | null | undefined
}

/** Filters of the topic list. @since 0.1.0 @category models */
export interface ListInput {
  readonly limit: number
  readonly offset: number
  readonly tags?: ReadonlyArray<string> | undefined
  readonly status?: Governance.TopicStatus | undefined
  readonly minTrust?: Governance.Trust | undefined
}

/** Filters of the search. @since 0.1.0 @category models */
export interface SearchInput {
  readonly query: string
  readonly limit: number
  readonly tags?: ReadonlyArray<string> | undefined
  readonly stale?: boolean | undefined
  readonly minTrust?: Governance.Trust | undefined
}

/**
 * How many of the most recently updated matches a search ranks (decision 0059). Past it, older matches are not
 * considered and the result says so (`complete: false`).
 *
 * @since 0.1.0
 * @category constants
 */
export const searchWindow = 1000

/**
 * A search's hits, best first, and how much of the match set was ranked: `ranked` matches, all of them when
 * `complete`, else the `searchWindow` most recently updated.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchResult {
  readonly hits: ReadonlyArray<{ readonly topic: TopicView; readonly score: number }>
  readonly ranked: number
  readonly complete: boolean
}

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category errors */
export class TopicNotFound extends Data.TaggedError("TopicNotFound")<{ readonly id: string }> {}
/** @since 0.1.0 @category errors */
export class EditNotFound extends Data.TaggedError("EditNotFound")<{ readonly id: string }> {}
/** @since 0.1.0 @category errors */
export class EditNotOpen extends Data.TaggedError("EditNotOpen")<{ readonly id: string; readonly status: EditStatus }> {}
/** The topic changed the same fields since the edit was opened. @since 0.1.0 @category errors */
export class EditConflict extends Data.TaggedError("EditConflict")<{
  readonly id: string
  readonly fields: ReadonlyArray<Governance.PatchField>
}> {}
/** @since 0.1.0 @category errors */
export class RelationNotFound extends Data.TaggedError("RelationNotFound")<{ readonly id: string }> {}
/** @since 0.1.0 @category errors */
export class TagNotFound extends Data.TaggedError("TagNotFound")<{ readonly name: string }> {}
/** @since 0.1.0 @category errors */
export class ShareNotFound extends Data.TaggedError("ShareNotFound")<{ readonly topicId: string }> {}

type Move = "propose" | "approve" | "reject" | "archive"

// -----------------------------------------------------------------------------
// Service
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category tags */
export class Topics extends Context.Tag("@service/topics/Topics")<Topics, {
  readonly create: (workspaceId: string, actor: Actor, input: CreateInput) => Effect.Effect<TopicView>
  readonly get: (workspaceId: string, id: string) => Effect.Effect<TopicView, TopicNotFound>
  readonly update: (
    workspaceId: string,
    actor: Actor,
    id: string,
    input: UpdateInput
  ) => Effect.Effect<TopicView, TopicNotFound | Governance.TransitionRefused>
  readonly remove: (workspaceId: string, actor: Actor, id: string) => Effect.Effect<void, TopicNotFound | Governance.TransitionRefused>
  /** Propose, approve, reject or archive, through the state table. */
  readonly move: (
    workspaceId: string,
    actor: Actor,
    id: string,
    trigger: Move
  ) => Effect.Effect<TopicView, TopicNotFound | Governance.TransitionRefused>
  /** Drifted reviewed knowledge first (decision 0058), then most trusted and freshest; archived only with `status: "archived"`. */
  readonly list: (
    workspaceId: string,
    input: ListInput
  ) => Effect.Effect<{ readonly topics: ReadonlyArray<TopicView>; readonly total: number; readonly has_more: boolean }>
  /** Full text over title and body, weighted by trust; archived never. */
  readonly search: (
    workspaceId: string,
    input: SearchInput
  ) => Effect.Effect<SearchResult>
  readonly openEdit: (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    input: { readonly summary: string; readonly patch: Governance.Patch }
  ) => Effect.Effect<EditView, TopicNotFound | Governance.TransitionRefused>
  readonly listEdits: (
    workspaceId: string,
    topicId: string,
    status?: EditStatus | undefined
  ) => Effect.Effect<ReadonlyArray<EditView>, TopicNotFound>
  readonly mergeEdit: (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    editId: string
  ) => Effect.Effect<
    { readonly edit: EditView; readonly topic: TopicView },
    TopicNotFound | EditNotFound | EditNotOpen | EditConflict | Governance.TransitionRefused
  >
  readonly closeEdit: (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    editId: string
  ) => Effect.Effect<EditView, TopicNotFound | EditNotFound | EditNotOpen>
  /** Idempotent: the same relation again returns the existing one. */
  readonly addRelation: (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    input: { readonly to: string; readonly type: Governance.RelationType }
  ) => Effect.Effect<RelationView, TopicNotFound>
  readonly listRelations: (workspaceId: string, topicId: string) => Effect.Effect<ReadonlyArray<RelationView>, TopicNotFound>
  readonly deleteRelation: (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    relationId: string
  ) => Effect.Effect<void, RelationNotFound>
  /** Every topic not archived, and the relations between them. */
  readonly graph: (workspaceId: string) => Effect.Effect<Graph>
  /** Newest first; `before` is the id of the last event of the previous page. */
  readonly events: (
    workspaceId: string,
    input: { readonly topicId?: string | undefined; readonly limit: number; readonly before?: string | undefined }
  ) => Effect.Effect<{ readonly events: ReadonlyArray<EventView>; readonly next_cursor: string | null }>
  readonly listTags: (
    workspaceId: string,
    input: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly tags: ReadonlyArray<TagView>; readonly total: number; readonly has_more: boolean }>
  /** Idempotent: an existing tag keeps its name and takes the new description when one is given. */
  readonly createTag: (
    workspaceId: string,
    input: { readonly name: string; readonly description?: string | undefined }
  ) => Effect.Effect<TagView>
  /** Renames (rewriting every topic carrying the tag, in one transaction) and/or describes a tag. */
  readonly updateTag: (
    workspaceId: string,
    actor: Actor,
    name: string,
    input: { readonly name?: string | undefined; readonly description?: string | undefined }
  ) => Effect.Effect<TagView, TagNotFound>
  /** Deletes a tag and detaches it from every topic; returns how many topics carried it. */
  readonly deleteTag: (workspaceId: string, actor: Actor, name: string) => Effect.Effect<{ readonly detached: number }, TagNotFound>
  /** A new public read-only link (any previous one of the topic stops working). */
  readonly share: (workspaceId: string, actor: Actor, topicId: string) => Effect.Effect<ShareLink, TopicNotFound>
  readonly unshare: (workspaceId: string, actor: Actor, topicId: string) => Effect.Effect<void, TopicNotFound | ShareNotFound>
  /** The topic a valid, unrevoked token opens; none for an unknown or revoked token or an archived topic. */
  readonly sharedTopic: (token: string) => Effect.Effect<Option.Option<TopicView>>
}>() {}

// -----------------------------------------------------------------------------
// Rows
// -----------------------------------------------------------------------------

const JsonList = Schema.parseJson(Schema.Array(Schema.String))

const TopicRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  title: Schema.String,
  body: Schema.String,
  tags: JsonList,
  patterns: JsonList,
  status: Governance.TopicStatus,
  version: Schema.Number,
  review_interval_days: Schema.NullOr(Schema.Number),
  approved_by: Schema.NullOr(Schema.String),
  approved_at: Schema.NullOr(Schema.String),
  created_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String,
  drifted: Schema.Boolean
})
type TopicRow = typeof TopicRow.Type

const decodeTopics = Schema.decodeUnknown(Schema.Array(TopicRow))
const decodeScored = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...TopicRow.fields, score: Schema.Number, matched: Schema.Number })))
const decodeCount = Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number })))

const Base = Schema.Struct({
  title: Schema.optional(Schema.String),
  body: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(Schema.String)),
  patterns: Schema.optional(Schema.Array(Schema.String))
})

const EditRow = Schema.Struct({
  id: Schema.String,
  topic_id: Schema.String,
  summary: Schema.String,
  patch: Schema.parseJson(Governance.Patch),
  base: Schema.parseJson(Base),
  base_version: Schema.Number,
  status: EditStatus,
  opened_by: Schema.NullOr(Schema.String),
  opened_via: Governance.Via,
  decided_by: Schema.NullOr(Schema.String),
  decided_at: Schema.NullOr(Schema.String),
  approved_via: Schema.NullOr(Governance.Via),
  created_at: Schema.String
})
type EditRow = typeof EditRow.Type
const decodeEdits = Schema.decodeUnknown(Schema.Array(EditRow))
const encodePatch = Schema.encode(Governance.Patch)

const decodeRelations = Schema.decodeUnknown(Schema.Array(RelationView))
const decodeEvents = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ ...EventView.fields, data: Schema.parseJson(EventView.fields.data) }))
)
const decodeTags = Schema.decodeUnknown(Schema.Array(TagView))
const decodeTagRows = Schema.decodeUnknown(Schema.Array(Schema.Struct({ name: Schema.String, description: Schema.NullOr(Schema.String) })))
const decodeIds = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String })))

const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const topicColumns = `t.id, t.workspace_id, t.title, t.body, to_json(t.tags)::text AS tags, to_json(t.patterns)::text AS patterns,
  t.status, t.version, t.review_interval_days, t.approved_by, ${iso("t.approved_at")} AS approved_at, t.created_by,
  ${iso("t.created_at")} AS created_at, ${iso("t.updated_at")} AS updated_at, ${Anchors.driftedExpression} AS drifted`

const editColumns = `e.id, e.topic_id, e.summary, e.patch::text AS patch, e.base::text AS base, e.base_version, e.status, e.opened_by,
  e.opened_via, e.decided_by, ${iso("e.decided_at")} AS decided_at, e.approved_via, ${iso("e.created_at")} AS created_at`

const relationColumns = `r.id, r.from_topic, r.to_topic, r.type, r.created_by, ${iso("r.created_at")} AS created_at`

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString("hex")}`

/**
 * The SHA-256 of a share token, hex: the only form a token is stored in.
 *
 * @since 0.1.0 @category share
 */
export const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

/**
 * A topic as every read shows it, at `nowMs`.
 *
 * @since 0.1.0 @category views
 */
export const viewOf = (row: TopicRow, nowMs: number): TopicView => {
  const due = row.status === "reviewed" && row.review_interval_days !== null && row.approved_at !== null
    ? Date.parse(row.approved_at) + row.review_interval_days * DAY_MS
    : null
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    tags: row.tags,
    patterns: row.patterns,
    status: row.status,
    trust: Governance.trustOf(row.status),
    classification: { status: row.status },
    governance: {
      authoritative: row.status === "reviewed",
      approved_by: row.approved_by,
      approved_at: row.approved_at,
      review_due_at: due === null ? null : new Date(due).toISOString(),
      stale: due !== null && due < nowMs,
      drifted: row.drifted
    },
    review_interval_days: row.review_interval_days,
    version: row.version,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at
  }
}

const editViewOf = (row: EditRow): EditView => ({
  id: row.id,
  topic_id: row.topic_id,
  summary: row.summary,
  patch: row.patch,
  base_version: row.base_version,
  status: row.status,
  opened_by: row.opened_by,
  opened_via: row.opened_via,
  decided_by: row.decided_by,
  decided_at: row.decided_at,
  approved_via: row.approved_via,
  created_at: row.created_at
})

const moveEvent: Record<Move, EventKind> = { propose: "proposed", approve: "approved", reject: "rejected", archive: "archived" }
// The moves the workspace ledger hears about (catalog events).
const ledgerName: Partial<Record<Move, string>> = { propose: "topic.proposed", approve: "topic.approved", archive: "topic.archived" }

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ledger = yield* EventLedger
  const anchors = yield* Anchors.Anchors
  const nowMs = Clock.currentTimeMillis

  // One transaction; a database failure is a defect (an outage the kernel reports as retryable).
  const transaction = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    sql.withTransaction(self).pipe(Effect.catchIf((e): e is SqlError => e instanceof SqlError, (e) => Effect.die(e)))

  const textArray = (values: ReadonlyArray<string>): Fragment =>
    sql`ARRAY(SELECT e.value FROM jsonb_array_elements_text(${JSON.stringify(values)}::jsonb) WITH ORDINALITY AS e(value, n) ORDER BY e.n)::text[]`

  /** Reviewed knowledge past its review interval at `now`. */
  const staleAt = (now: string): Fragment =>
    sql`COALESCE(t.status = 'reviewed' AND t.review_interval_days IS NOT NULL
      AND t.approved_at + make_interval(days => t.review_interval_days) < ${now}::timestamptz, false)`

  /**
   * How much a topic's trust weighs: fresh reviewed knowledge first, then reviewed knowledge due for review,
   * then proposed, then drafts (decision 0057).
   */
  const trustWeight = (now: string): Fragment =>
    sql`(CASE WHEN t.status = 'reviewed' AND NOT ${staleAt(now)} THEN 1.0
      WHEN t.status = 'reviewed' THEN 0.6 WHEN t.status = 'proposed' THEN 0.5 WHEN t.status = 'draft' THEN 0.3 ELSE 0.1 END)`

  const selectTopic = (workspaceId: string, id: string, lock: boolean) =>
    sql`SELECT ${sql.literal(topicColumns)} FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND t.id = ${id}
      ${lock ? sql.literal("FOR UPDATE") : sql.literal("")}`.pipe(
      Effect.flatMap(decodeTopics),
      Effect.orDie,
      Effect.flatMap((rows) => {
        const row = rows[0]
        return row === undefined ? Effect.fail(new TopicNotFound({ id })) : Effect.succeed(row)
      })
    )

  const view = (row: TopicRow) => Effect.map(nowMs, (now) => viewOf(row, now))

  // A row returned before its new baseline was written shows the old baseline's drift; a new baseline has none.
  const rebaselined = (row: TopicRow, baselined: boolean): TopicRow => baselined ? { ...row, drifted: false } : row

  const record = (
    workspaceId: string,
    topicId: string,
    kind: EventKind,
    actor: Actor,
    at: string,
    data: Readonly<Record<string, unknown>> = {}
  ) =>
    sql`INSERT INTO topics.events (workspace_id, topic_id, kind, actor_person_id, actor, data, occurred_at)
      VALUES (${workspaceId}, ${topicId}, ${kind}, ${actor.personId}, ${actor.via}, ${JSON.stringify(data)}::jsonb, ${at}::timestamptz)`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

  const registerTags = (workspaceId: string, tags: ReadonlyArray<string>, at: string) =>
    tags.length === 0 ? Effect.void : sql`INSERT INTO topics.tags (workspace_id, name, description, created_at)
      SELECT ${workspaceId}, tag, NULL, ${at}::timestamptz FROM unnest(${textArray(tags)}) AS tag
      ON CONFLICT (workspace_id, name) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

  const recordLedger = (workspaceId: string, name: string, row: TopicRow, actor: Actor, at: string) =>
    ledger.record({
      workspaceId,
      name,
      subject: `topic/${row.id}`,
      payload: { workspace_id: workspaceId, occurred_at: at, topic_id: row.id, status: row.status, actor: actor.via }
    })

  const guard = (row: TopicRow, trigger: Governance.Trigger, actor: Actor) =>
    Either.match(Governance.transition(row.status, trigger, actor.authority), {
      onLeft: (refused) => Effect.fail(refused),
      onRight: (to) => Effect.succeed(to)
    })

  const now = Effect.map(nowMs, (ms) => new Date(ms).toISOString())

  const create = (workspaceId: string, actor: Actor, input: CreateInput) =>
    transaction(Effect.gen(function*() {
      const at = yield* now
      const id = newId("tpc")
      const status = Governance.initialStatus(input.status)
      const tags = Governance.uniqueTags(input.tags ?? [])
      yield* registerTags(workspaceId, tags, at)
      const rows = yield* sql`INSERT INTO topics.topics AS t
          (id, workspace_id, title, body, tags, patterns, status, version, review_interval_days, created_by, created_at, updated_at)
        VALUES (${id}, ${workspaceId}, ${input.title}, ${input.body}, ${textArray(tags)}, ${textArray(input.patterns ?? [])}, ${status}, 1,
          ${input.review_interval_days ?? null}, ${actor.personId}, ${at}::timestamptz, ${at}::timestamptz)
        RETURNING ${sql.literal(topicColumns)}`.pipe(Effect.flatMap(decodeTopics), Effect.orDie)
      const row = rows[0]
      if (row === undefined) return yield* Effect.dieMessage("Topics: INSERT returned no row")
      yield* record(workspaceId, id, "created", actor, at, { status })
      if (status === "proposed") yield* recordLedger(workspaceId, "topic.proposed", row, actor, at)
      return yield* view(row)
    }))

  const get = (workspaceId: string, id: string) => Effect.flatMap(selectTopic(workspaceId, id, false), view)

  const writeContent = (
    workspaceId: string,
    row: TopicRow,
    content: Governance.Content,
    interval: number | null,
    approver: Actor | undefined,
    at: string
  ) =>
    sql`UPDATE topics.topics t SET title = ${content.title}, body = ${content.body}, tags = ${textArray(content.tags)},
        patterns = ${textArray(content.patterns)}, review_interval_days = ${interval}, version = version + 1, updated_at = ${at}::timestamptz,
        approved_by = ${approver === undefined ? row.approved_by : approver.personId},
        approved_at = ${approver === undefined ? row.approved_at : at}::timestamptz
      WHERE t.workspace_id = ${workspaceId} AND t.id = ${row.id}
      RETURNING ${sql.literal(topicColumns)}`.pipe(
      Effect.flatMap(decodeTopics),
      Effect.orDie,
      Effect.flatMap((rows) => (rows[0] === undefined ? Effect.dieMessage("Topics: UPDATE returned no row") : Effect.succeed(rows[0])))
    )

  const contentOf = (row: TopicRow): Governance.Content => ({ title: row.title, body: row.body, tags: row.tags, patterns: row.patterns })

  const update = (workspaceId: string, actor: Actor, id: string, input: UpdateInput) =>
    transaction(Effect.gen(function*() {
      const row = yield* selectTopic(workspaceId, id, true)
      yield* guard(row, "edit", actor)
      const at = yield* now
      const content: Governance.Content = {
        title: input.title ?? row.title,
        body: input.body ?? row.body,
        tags: input.tags === undefined ? row.tags : Governance.uniqueTags(input.tags),
        patterns: input.patterns ?? row.patterns
      }
      yield* registerTags(workspaceId, content.tags, at)
      const interval = input.review_interval_days === undefined ? row.review_interval_days : input.review_interval_days
      // An owner or admin editing reviewed knowledge vouches for the new text: it is approved again.
      const updated = yield* writeContent(workspaceId, row, content, interval, row.status === "reviewed" ? actor : undefined, at)
      // Approved again: the anchor baseline is the files the (new) patterns match now (decision 0058).
      if (row.status === "reviewed") yield* anchors.baseline(workspaceId, id, updated.patterns)
      const changed = Object.entries(input).filter(([, value]) => value !== undefined).map(([field]) => field)
      yield* record(workspaceId, id, "updated", actor, at, { fields: changed, version: updated.version })
      return yield* view(rebaselined(updated, row.status === "reviewed"))
    }))

  const remove = (workspaceId: string, actor: Actor, id: string) =>
    transaction(Effect.gen(function*() {
      const row = yield* selectTopic(workspaceId, id, true)
      yield* guard(row, "delete", actor)
      const at = yield* now
      yield* sql`DELETE FROM topics.topics WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(Effect.orDie)
      yield* record(workspaceId, id, "deleted", actor, at, { title: row.title, status: row.status })
    }))

  const move = (workspaceId: string, actor: Actor, id: string, trigger: Move) =>
    transaction(Effect.gen(function*() {
      const row = yield* selectTopic(workspaceId, id, true)
      const to = yield* guard(row, trigger, actor)
      if (to === "deleted") return yield* Effect.dieMessage("Topics: a move never deletes")
      const at = yield* now
      const approving = trigger === "approve"
      const rows = yield* sql`UPDATE topics.topics t SET status = ${to}, updated_at = ${at}::timestamptz,
          approved_by = ${approving ? actor.personId : row.approved_by}, approved_at = ${approving ? at : row.approved_at}::timestamptz
        WHERE t.workspace_id = ${workspaceId} AND t.id = ${id}
        RETURNING ${sql.literal(topicColumns)}`.pipe(Effect.flatMap(decodeTopics), Effect.orDie)
      const moved = rows[0]
      if (moved === undefined) return yield* Effect.dieMessage("Topics: UPDATE returned no row")
      // Drift is measured from here: the files the patterns match at approval, with their hashes (decision 0058).
      if (approving) yield* anchors.baseline(workspaceId, id, moved.patterns)
      yield* record(workspaceId, id, moveEvent[trigger], actor, at, { from: row.status, to })
      const name = ledgerName[trigger]
      if (name !== undefined) yield* recordLedger(workspaceId, name, moved, actor, at)
      return yield* view(rebaselined(moved, approving))
    }))

  const list = (workspaceId: string, input: ListInput) =>
    Effect.gen(function*() {
      const at = yield* now
      const where = sql.and([
        sql`t.workspace_id = ${workspaceId}`,
        input.status === undefined ? sql`t.status <> 'archived'` : sql`t.status = ${input.status}`,
        ...(input.tags === undefined || input.tags.length === 0 ? [] : [sql`t.tags && ${textArray(input.tags)}`]),
        ...(input.minTrust === undefined ? [] : [sql`t.status IN ${sql.in(Governance.statusesAtLeast(input.minTrust))}`])
      ])
      const rows = yield* sql`SELECT ${sql.literal(topicColumns)} FROM topics.topics t WHERE ${where}
        ORDER BY ${Anchors.driftedCondition(sql)} DESC, ${trustWeight(at)} DESC, t.updated_at DESC, t.id
        LIMIT ${input.limit} OFFSET ${input.offset}`.pipe(Effect.flatMap(decodeTopics), Effect.orDie)
      const count = yield* sql`SELECT count(*)::int AS n FROM topics.topics t WHERE ${where}`.pipe(Effect.flatMap(decodeCount), Effect.orDie)
      const total = count[0]?.n ?? 0
      const ms = yield* nowMs
      return { topics: rows.map((row) => viewOf(row, ms)), total, has_more: input.offset + rows.length < total }
    })

  const search = (workspaceId: string, input: SearchInput) =>
    Effect.gen(function*() {
      const at = yield* now
      // Any word may match (OR); documents matching more words, in the title, rank higher. Only the
      // `searchWindow` most recently updated matches are ranked (decision 0059): ranking every match of a common
      // word cost hundreds of milliseconds (bench/README.md, Topics search). One more is read to tell whether the
      // window was full. Only the page is read in full.
      // Written inline, not in a CTE, so the planner sees a constant query: it walks the recent-first index for a
      // common word and the GIN index for a rare one.
      const query = sql`(replace(plainto_tsquery('simple', ${input.query})::text, '&', '|')::tsquery)`
      const rows = yield* sql`WITH recent AS (
          SELECT t.id, t.updated_at FROM topics.topics t WHERE ${
        sql.and([
          sql`t.workspace_id = ${workspaceId}`,
          sql`t.status <> 'archived'`,
          sql`t.search @@ ${query}`,
          ...(input.tags === undefined || input.tags.length === 0 ? [] : [sql`t.tags && ${textArray(input.tags)}`]),
          ...(input.minTrust === undefined ? [] : [sql`t.status IN ${sql.in(Governance.statusesAtLeast(input.minTrust))}`]),
          // Only reviewed knowledge is stale; saying so lets the planner walk the status index.
          ...(input.stale === undefined ? [] : [input.stale ? sql`t.status = 'reviewed' AND ${staleAt(at)}` : sql`NOT ${staleAt(at)}`])
        ])
      }
          ORDER BY t.updated_at DESC, t.id LIMIT ${searchWindow + 1}),
        candidates AS (SELECT r.id, row_number() OVER (ORDER BY r.updated_at DESC, r.id) AS n, count(*) OVER () AS matched FROM recent r),
        ranked AS (
          SELECT t.id, t.updated_at, w.matched, (ts_rank_cd(t.search, ${query}) * ${trustWeight(at)})::float8 AS score
          FROM candidates w JOIN topics.topics t ON t.id = w.id
          WHERE w.n <= ${searchWindow}
          ORDER BY score DESC, t.updated_at DESC, t.id
          LIMIT ${input.limit})
        SELECT ${sql.literal(topicColumns)}, r.score, r.matched::int AS matched
        FROM ranked r JOIN topics.topics t ON t.id = r.id
        ORDER BY r.score DESC, r.updated_at DESC, r.id`.pipe(Effect.flatMap(decodeScored), Effect.orDie)
      const ms = yield* nowMs
      const matched = rows[0]?.matched ?? 0
      return {
        hits: rows.map(({ matched: _matched, score, ...row }) => ({ topic: viewOf(row, ms), score: Math.round(score * 10_000) / 10_000 })),
        ranked: Math.min(matched, searchWindow),
        complete: matched <= searchWindow
      }
    })

  // -- Suggested edits --------------------------------------------------------

  const selectEdit = (workspaceId: string, topicId: string, editId: string, lock: boolean) =>
    sql`SELECT ${sql.literal(editColumns)} FROM topics.suggested_edits e
      WHERE e.workspace_id = ${workspaceId} AND e.topic_id = ${topicId} AND e.id = ${editId}
      ${lock ? sql.literal("FOR UPDATE") : sql.literal("")}`.pipe(
      Effect.flatMap(decodeEdits),
      Effect.orDie,
      Effect.flatMap((rows) => {
        const row = rows[0]
        return row === undefined ? Effect.fail(new EditNotFound({ id: editId })) : Effect.succeed(row)
      })
    )

  const openEdit = (workspaceId: string, actor: Actor, topicId: string, input: { readonly summary: string; readonly patch: Governance.Patch }) =>
    transaction(Effect.gen(function*() {
      const row = yield* selectTopic(workspaceId, topicId, true)
      // Archived topics take no edits: the merge would be refused anyway.
      if (row.status === "archived") {
        return yield* new Governance.TransitionRefused({ from: row.status, trigger: "merge", reason: "illegal", accepted: Governance.table.merge.from })
      }
      const at = yield* now
      const id = newId("edit")
      const patch = yield* Effect.orDie(encodePatch(input.patch))
      const base = Governance.baseOf(contentOf(row), input.patch)
      const rows = yield* sql`INSERT INTO topics.suggested_edits AS e
          (id, workspace_id, topic_id, summary, patch, base, base_version, status, opened_by, opened_via, created_at)
        VALUES (${id}, ${workspaceId}, ${topicId}, ${input.summary}, ${JSON.stringify(patch)}::jsonb, ${JSON.stringify(base)}::jsonb,
          ${row.version}, 'open', ${actor.personId}, ${actor.via}, ${at}::timestamptz)
        RETURNING ${sql.literal(editColumns)}`.pipe(Effect.flatMap(decodeEdits), Effect.orDie)
      const edit = rows[0]
      if (edit === undefined) return yield* Effect.dieMessage("Topics: INSERT returned no row")
      yield* record(workspaceId, topicId, "edit_opened", actor, at, { edit_id: id, fields: Governance.patchedFields(input.patch) })
      return editViewOf(edit)
    }))

  const listEdits = (workspaceId: string, topicId: string, status?: EditStatus | undefined) =>
    Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, false)
      const rows = yield* sql`SELECT ${sql.literal(editColumns)} FROM topics.suggested_edits e
        WHERE e.workspace_id = ${workspaceId} AND e.topic_id = ${topicId} ${status === undefined ? sql`` : sql`AND e.status = ${status}`}
        ORDER BY e.created_at DESC, e.id`.pipe(Effect.flatMap(decodeEdits), Effect.orDie)
      return rows.map(editViewOf)
    })

  const decide = (workspaceId: string, edit: EditRow, status: "merged" | "closed", actor: Actor, at: string) =>
    sql`UPDATE topics.suggested_edits e SET status = ${status}, decided_by = ${actor.personId}, decided_at = ${at}::timestamptz,
        approved_via = ${status === "merged" ? actor.via : null}
      WHERE e.workspace_id = ${workspaceId} AND e.id = ${edit.id}
      RETURNING ${sql.literal(editColumns)}`.pipe(
      Effect.flatMap(decodeEdits),
      Effect.orDie,
      Effect.flatMap((rows) => (rows[0] === undefined ? Effect.dieMessage("Topics: UPDATE returned no row") : Effect.succeed(editViewOf(rows[0]))))
    )

  const mergeEdit = (workspaceId: string, actor: Actor, topicId: string, editId: string) =>
    transaction(Effect.gen(function*() {
      const row = yield* selectTopic(workspaceId, topicId, true)
      const edit = yield* selectEdit(workspaceId, topicId, editId, true)
      if (edit.status !== "open") return yield* new EditNotOpen({ id: editId, status: edit.status })
      yield* guard(row, "merge", actor)
      const current = contentOf(row)
      const conflicting = Governance.conflicts(current, edit.base)
      if (conflicting.length > 0) return yield* new EditConflict({ id: editId, fields: conflicting })
      const at = yield* now
      const content = Governance.applyPatch(current, edit.patch)
      yield* registerTags(workspaceId, content.tags, at)
      // Merging into reviewed knowledge is an approval of the new text by the merger.
      const updated = yield* writeContent(workspaceId, row, content, row.review_interval_days, row.status === "reviewed" ? actor : undefined, at)
      if (row.status === "reviewed") yield* anchors.baseline(workspaceId, topicId, updated.patterns)
      const decided = yield* decide(workspaceId, edit, "merged", actor, at)
      yield* record(workspaceId, topicId, "edit_merged", actor, at, {
        edit_id: editId,
        approved_via: actor.via,
        fields: Governance.patchedFields(edit.patch),
        version: updated.version
      })
      return { edit: decided, topic: yield* view(rebaselined(updated, row.status === "reviewed")) }
    }))

  const closeEdit = (workspaceId: string, actor: Actor, topicId: string, editId: string) =>
    transaction(Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, false)
      const edit = yield* selectEdit(workspaceId, topicId, editId, true)
      if (edit.status !== "open") return yield* new EditNotOpen({ id: editId, status: edit.status })
      const at = yield* now
      const decided = yield* decide(workspaceId, edit, "closed", actor, at)
      yield* record(workspaceId, topicId, "edit_closed", actor, at, { edit_id: editId })
      return decided
    }))

  // -- Relations and graph ----------------------------------------------------

  const addRelation = (
    workspaceId: string,
    actor: Actor,
    topicId: string,
    input: { readonly to: string; readonly type: Governance.RelationType }
  ) =>
    transaction(Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, false)
      yield* selectTopic(workspaceId, input.to, false)
      const at = yield* now
      const inserted = yield* sql`INSERT INTO topics.relations AS r (id, workspace_id, from_topic, to_topic, type, created_by, created_at)
        VALUES (${newId("rel")}, ${workspaceId}, ${topicId}, ${input.to}, ${input.type}, ${actor.personId}, ${at}::timestamptz)
        ON CONFLICT (from_topic, to_topic, type) DO NOTHING
        RETURNING ${sql.literal(relationColumns)}`.pipe(Effect.flatMap(decodeRelations), Effect.orDie)
      const created = inserted[0]
      if (created !== undefined) {
        yield* record(workspaceId, topicId, "relation_added", actor, at, { relation_id: created.id, to: input.to, type: input.type })
        return created
      }
      const existing = yield* sql`SELECT ${sql.literal(relationColumns)} FROM topics.relations r
        WHERE r.from_topic = ${topicId} AND r.to_topic = ${input.to} AND r.type = ${input.type}`.pipe(Effect.flatMap(decodeRelations), Effect.orDie)
      const found = existing[0]
      if (found === undefined) return yield* Effect.dieMessage("Topics: relation vanished")
      return found
    }))

  const listRelations = (workspaceId: string, topicId: string) =>
    Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, false)
      return yield* sql`SELECT ${sql.literal(relationColumns)} FROM topics.relations r
        WHERE r.workspace_id = ${workspaceId} AND (r.from_topic = ${topicId} OR r.to_topic = ${topicId})
        ORDER BY r.created_at, r.id`.pipe(Effect.flatMap(decodeRelations), Effect.orDie)
    })

  const deleteRelation = (workspaceId: string, actor: Actor, topicId: string, relationId: string) =>
    transaction(Effect.gen(function*() {
      const deleted = yield* sql`DELETE FROM topics.relations
        WHERE workspace_id = ${workspaceId} AND id = ${relationId} AND (from_topic = ${topicId} OR to_topic = ${topicId})
        RETURNING id`.pipe(Effect.flatMap(decodeIds), Effect.orDie)
      if (deleted.length === 0) return yield* new RelationNotFound({ id: relationId })
      yield* record(workspaceId, topicId, "relation_deleted", actor, yield* now, { relation_id: relationId })
    }))

  const graph = (workspaceId: string) =>
    Effect.gen(function*() {
      const nodes = yield* sql`SELECT ${sql.literal(topicColumns)} FROM topics.topics t
        WHERE t.workspace_id = ${workspaceId} AND t.status <> 'archived' ORDER BY t.created_at, t.id`.pipe(Effect.flatMap(decodeTopics), Effect.orDie)
      const edges = yield* sql`SELECT ${sql.literal(relationColumns)} FROM topics.relations r
        JOIN topics.topics a ON a.id = r.from_topic JOIN topics.topics b ON b.id = r.to_topic
        WHERE r.workspace_id = ${workspaceId} AND a.status <> 'archived' AND b.status <> 'archived'
        ORDER BY r.created_at, r.id`.pipe(Effect.flatMap(decodeRelations), Effect.orDie)
      return {
        nodes: nodes.map((row) => ({ id: row.id, title: row.title, status: row.status, trust: Governance.trustOf(row.status), tags: row.tags })),
        edges: edges.map((edge) => ({ id: edge.id, from: edge.from_topic, to: edge.to_topic, type: edge.type }))
      }
    })

  const events = (
    workspaceId: string,
    input: { readonly topicId?: string | undefined; readonly limit: number; readonly before?: string | undefined }
  ) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT id::text AS id, topic_id, kind, actor, actor_person_id, data::text AS data, ${sql.literal(iso("occurred_at"))} AS occurred_at
        FROM topics.events WHERE ${
        sql.and([
          sql`workspace_id = ${workspaceId}`,
          ...(input.topicId === undefined ? [] : [sql`topic_id = ${input.topicId}`]),
          ...(input.before === undefined ? [] : [sql`id < ${input.before}::bigint`])
        ])
      } ORDER BY topics.events.id DESC LIMIT ${input.limit + 1}`.pipe(Effect.flatMap(decodeEvents), Effect.orDie)
      const page = rows.slice(0, input.limit)
      const last = page[page.length - 1]
      return { events: page, next_cursor: rows.length > input.limit && last !== undefined ? last.id : null }
    })

  // -- Tags -------------------------------------------------------------------

  const tagWithCount = (workspaceId: string, name: string) =>
    sql`SELECT g.name, g.description,
        (SELECT count(*)::int FROM topics.topics t WHERE t.workspace_id = ${workspaceId} AND ${name} = ANY (t.tags)) AS topic_count
      FROM topics.tags g WHERE g.workspace_id = ${workspaceId} AND g.name = ${name}`.pipe(
      Effect.flatMap(decodeTags),
      Effect.orDie,
      Effect.flatMap((rows) => (rows[0] === undefined ? Effect.fail(new TagNotFound({ name })) : Effect.succeed(rows[0])))
    )

  const listTags = (workspaceId: string, input: { readonly limit: number; readonly offset: number }) =>
    Effect.gen(function*() {
      const tags = yield* sql`SELECT g.name, g.description, COALESCE(c.n, 0)::int AS topic_count
        FROM topics.tags g
        LEFT JOIN (SELECT tag, count(*) AS n FROM topics.topics t, unnest(t.tags) AS tag WHERE t.workspace_id = ${workspaceId} GROUP BY tag) c
          ON c.tag = g.name
        WHERE g.workspace_id = ${workspaceId}
        ORDER BY topic_count DESC, g.name
        LIMIT ${input.limit} OFFSET ${input.offset}`.pipe(Effect.flatMap(decodeTags), Effect.orDie)
      const count = yield* sql`SELECT count(*)::int AS n FROM topics.tags WHERE workspace_id = ${workspaceId}`.pipe(
        Effect.flatMap(decodeCount),
        Effect.orDie
      )
      const total = count[0]?.n ?? 0
      return { tags, total, has_more: input.offset + tags.length < total }
    })

  const createTag = (workspaceId: string, input: { readonly name: string; readonly description?: string | undefined }) =>
    Effect.gen(function*() {
      const at = yield* now
      yield* sql`INSERT INTO topics.tags (workspace_id, name, description, created_at)
        VALUES (${workspaceId}, ${input.name}, ${input.description ?? null}, ${at}::timestamptz)
        ON CONFLICT (workspace_id, name) DO UPDATE SET description = COALESCE(EXCLUDED.description, topics.tags.description)`.pipe(
        Effect.orDie
      )
      return yield* Effect.orDie(tagWithCount(workspaceId, input.name))
    })

  /** Topics carrying `tag`, rewritten with `rewrite` (an SQL expression over `t.tags`); their ids. */
  const rewriteTopics = (workspaceId: string, tag: string, rewrite: Fragment, at: string) =>
    sql`UPDATE topics.topics t SET tags = ${rewrite}, version = t.version + 1, updated_at = ${at}::timestamptz
      WHERE t.workspace_id = ${workspaceId} AND ${tag} = ANY (t.tags)
      RETURNING t.id`.pipe(Effect.flatMap(decodeIds), Effect.orDie)

  const updateTag = (
    workspaceId: string,
    actor: Actor,
    name: string,
    input: { readonly name?: string | undefined; readonly description?: string | undefined }
  ) =>
    transaction(Effect.gen(function*() {
      const found = yield* sql`SELECT name, description FROM topics.tags WHERE workspace_id = ${workspaceId} AND name = ${name} FOR UPDATE`.pipe(
        Effect.flatMap(decodeTagRows),
        Effect.orDie
      )
      const old = found[0]
      if (old === undefined) return yield* new TagNotFound({ name })
      const target = input.name ?? name
      const at = yield* now
      if (target === name) {
        if (input.description !== undefined) {
          yield* sql`UPDATE topics.tags SET description = ${input.description} WHERE workspace_id = ${workspaceId} AND name = ${name}`.pipe(
            Effect.orDie
          )
        }
        return yield* Effect.orDie(tagWithCount(workspaceId, name))
      }
      // Renaming onto an existing tag merges the two; the description given wins, then the target's, then the old one's.
      yield* sql`INSERT INTO topics.tags (workspace_id, name, description, created_at)
        VALUES (${workspaceId}, ${target}, ${input.description ?? old.description}, ${at}::timestamptz)
        ON CONFLICT (workspace_id, name) DO UPDATE
          SET description = COALESCE(${input.description ?? null}, topics.tags.description, ${old.description})`.pipe(Effect.orDie)
      const rewritten = yield* rewriteTopics(
        workspaceId,
        name,
        // Replace in place and drop a repeat when the topic already carried the new name.
        sql`ARRAY(SELECT u.tag FROM unnest(array_replace(t.tags, ${name}, ${target})) WITH ORDINALITY AS u(tag, n)
          GROUP BY u.tag ORDER BY min(u.n))`,
        at
      )
      yield* sql`DELETE FROM topics.tags WHERE workspace_id = ${workspaceId} AND name = ${name}`.pipe(Effect.orDie)
      yield* Effect.forEach(rewritten, ({ id }) => record(workspaceId, id, "tag_renamed", actor, at, { from: name, to: target }), {
        discard: true
      })
      return yield* Effect.orDie(tagWithCount(workspaceId, target))
    }))

  const deleteTag = (workspaceId: string, actor: Actor, name: string) =>
    transaction(Effect.gen(function*() {
      const deleted = yield* sql`DELETE FROM topics.tags WHERE workspace_id = ${workspaceId} AND name = ${name} RETURNING name AS id`.pipe(
        Effect.flatMap(decodeIds),
        Effect.orDie
      )
      if (deleted.length === 0) return yield* new TagNotFound({ name })
      const at = yield* now
      const detached = yield* rewriteTopics(workspaceId, name, sql`array_remove(t.tags, ${name})`, at)
      yield* Effect.forEach(detached, ({ id }) => record(workspaceId, id, "tag_removed", actor, at, { tag: name }), { discard: true })
      return { detached: detached.length }
    }))

  // -- Share links --------------------------------------------------------------

  const share = (workspaceId: string, actor: Actor, topicId: string) =>
    transaction(Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, true)
      const at = yield* now
      yield* sql`UPDATE topics.shares SET revoked_at = ${at}::timestamptz
        WHERE workspace_id = ${workspaceId} AND topic_id = ${topicId} AND revoked_at IS NULL`.pipe(Effect.orDie)
      const token = `shr_${randomBytes(24).toString("base64url")}`
      yield* sql`INSERT INTO topics.shares (id, workspace_id, topic_id, token_hash, created_by, created_at)
        VALUES (${newId("share")}, ${workspaceId}, ${topicId}, ${hashToken(token)}, ${actor.personId}, ${at}::timestamptz)`.pipe(Effect.orDie)
      yield* record(workspaceId, topicId, "shared", actor, at)
      return { topic_id: topicId, token, path: sharePagePath(token), created_at: at }
    }))

  const unshare = (workspaceId: string, actor: Actor, topicId: string) =>
    transaction(Effect.gen(function*() {
      yield* selectTopic(workspaceId, topicId, false)
      const at = yield* now
      const revoked = yield* sql`UPDATE topics.shares SET revoked_at = ${at}::timestamptz
        WHERE workspace_id = ${workspaceId} AND topic_id = ${topicId} AND revoked_at IS NULL RETURNING id`.pipe(
        Effect.flatMap(decodeIds),
        Effect.orDie
      )
      if (revoked.length === 0) return yield* new ShareNotFound({ topicId })
      yield* record(workspaceId, topicId, "unshared", actor, at)
    }))

  const sharedTopic = (token: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT ${sql.literal(topicColumns)} FROM topics.shares s JOIN topics.topics t ON t.id = s.topic_id
        WHERE s.token_hash = ${hashToken(token)} AND s.revoked_at IS NULL AND t.status <> 'archived'`.pipe(
        Effect.flatMap(decodeTopics),
        Effect.orDie
      )
      const row = rows[0]
      return row === undefined ? Option.none<TopicView>() : Option.some(yield* view(row))
    })

  return Topics.of({
    create,
    get,
    update,
    remove,
    move,
    list,
    search,
    openEdit,
    listEdits,
    mergeEdit,
    closeEdit,
    addRelation,
    listRelations,
    deleteRelation,
    graph,
    events,
    listTags,
    createTag,
    updateTag,
    deleteTag,
    share,
    unshare,
    sharedTopic
  })
})

/**
 * The topics service with the anchors it takes baselines from (and which the operations use too).
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Topics | Anchors.Anchors, never, SqlClient.SqlClient | EventLedger> = Layer.effect(Topics, make).pipe(
  Layer.provideMerge(Anchors.layer)
)
