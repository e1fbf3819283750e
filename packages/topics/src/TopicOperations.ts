/**
 * Topics on every surface, under `/workspaces/<slug>` on HTTP (`/topics...`), as `service topics ...` on the
 * CLI and as `service_topics_*` MCP tools: CRUD, list, search, timeline, graph, the governance moves,
 * suggested edits, relations and share links.
 *
 * Who may call (decision 0057): reads need `topics:write` or `context:read`, writes `topics:write`.
 * Approve, reject, and merging or closing a suggested edit need an owner or admin person (`authorize`); a
 * faceless key or a member gets 403 before anything runs. Deleting a relation needs a person. Changing,
 * archiving or deleting reviewed knowledge needs an owner or admin (the state table decides, per topic).
 *
 * On MCP: read, search, list, create, propose, approve, reject, suggested edits and relations (add, list),
 * match-files and the audit. Direct updates, archive, delete, relation delete, sharing and the linked
 * repository with its file index are for people (HTTP, CLI).
 *
 * Anchors (decision 0058): `PUT /repository` links the workspace's repository and `PUT /repository/index`
 * loads its default branch's file index (owner or admin person). Create and update answer
 * `anchor_validation` for their patterns; `POST /topics/match-files` and `GET /topics/audit` read them.
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson, requirePerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import { PublicAddress } from "@service/core/PublicAddress"
import type { Caller, RequestContext } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Anchors from "./Anchors.js"
import * as Governance from "./Governance.js"
import {
  caller,
  CommaTags,
  limitNumber,
  limitText,
  ModelTags,
  offsetNumber,
  offsetText,
  readScopes,
  strict,
  TopicId,
  topicNotFound,
  transitionRefused,
  writeScopes
} from "./internal/common.js"
import { EditStatus, EditView, EventView, Graph, RelationView, searchWindow, ShareLink, Topics, TopicView } from "./Topics.js"
import { codec, refuse } from "./TopicsRefusal.js"

const TopicRef = Schema.Struct({ topic: TopicId }).annotations({ ...strict, identifier: "TopicRef" })

const fromCreate = { operation: "topics_create", path: ["id"], field: "topic" } as const
const createExample = { title: "Release checklist", body: "Tag, build, publish the changelog.", tags: ["releases"] }

const ReviewInterval = Schema.Number.pipe(Schema.int(), Schema.between(1, 3650)).annotations({
  description: "Days reviewed knowledge stays fresh after each approval; past it, the topic is stale until approved again."
})

const Summary = Governance.trimmed(1, 500, "What the edit changes and why, one or two sentences.")

// -----------------------------------------------------------------------------
// Reads
// -----------------------------------------------------------------------------

const ListFields = {
  status: Schema.optional(Governance.TopicStatus).annotations({
    description: "Only topics with this status; archived topics are listed only with status=archived."
  }),
  min_trust: Schema.optional(Governance.Trust).annotations({ description: "Only topics at least this trusted: reviewed > proposed > draft." })
}

const ListInput = Schema.Struct({
  ...ListFields,
  tags: Schema.optional(CommaTags),
  limit: Schema.optional(limitText(200)).annotations({ description: "Topics per page, 1 to 200 (default 50)." }),
  offset: Schema.optional(offsetText).annotations({ description: "Topics to skip (default 0)." })
}).annotations({ ...strict, identifier: "TopicListInput" })

const ListModelInput = Schema.Struct({
  ...ListFields,
  tags: Schema.optional(ModelTags),
  limit: Schema.optional(limitNumber(200)).annotations({ description: "Topics per page, 1 to 200 (default 50)." }),
  offset: Schema.optional(offsetNumber).annotations({ description: "Topics to skip (default 0)." })
}).annotations({ ...strict, identifier: "TopicListModelInput" })

const TopicPage = Schema.Struct({
  topics: Schema.Array(TopicView),
  total: Schema.Number,
  has_more: Schema.Boolean
}).annotations({ identifier: "TopicPage" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: writeScopes, annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const topicsList = kit.make({
  name: "topics_list",
  title: "List topics",
  description:
    "The workspace's topics, most relevant first: reviewed knowledge whose anchored files changed since its approval (drifted) first, then fresh reviewed knowledge, reviewed knowledge due for review, proposed, drafts; newest first within each. Filter by tags (any of), status, min_trust; archived topics only with status=archived.",
  refuses: [],
  scopes: readScopes,
  paginates: true,
  http: { method: "GET", path: "/topics", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: ListInput,
  modelInput: ListModelInput,
  output: TopicPage,
  capability: {
    question: "What does this workspace know, most trusted first?",
    requires: "Nothing; optionally tags, status, min_trust, limit and offset.",
    example: { min_trust: "reviewed", limit: 10 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).list(workspaceId, {
        limit: input.limit ?? 50,
        offset: input.offset ?? 0,
        tags: input.tags,
        status: input.status,
        minTrust: input.min_trust
      })
    })
})

const SearchFields = {
  query: Governance.trimmed(1, 500, "Words to look for in titles and bodies; any may match, more matches rank higher."),
  min_trust: Schema.optional(Governance.Trust).annotations({ description: "Only topics at least this trusted: reviewed > proposed > draft." })
}

const SearchInput = Schema.Struct({
  ...SearchFields,
  tags: Schema.optional(CommaTags),
  limit: Schema.optional(limitText(200)).annotations({ description: "Results, 1 to 200 (default 50)." }),
  stale: Schema.optional(Schema.BooleanFromString).annotations({
    description: "true: only reviewed knowledge past its review interval; false: everything else."
  })
}).annotations({ ...strict, identifier: "TopicSearchInput" })

const SearchModelInput = Schema.Struct({
  ...SearchFields,
  tags: Schema.optional(ModelTags),
  limit: Schema.optional(limitNumber(200)).annotations({ description: "Results, 1 to 200 (default 50)." }),
  stale: Schema.optional(Schema.Boolean).annotations({
    description: "true: only reviewed knowledge past its review interval; false: everything else."
  })
}).annotations({ ...strict, identifier: "TopicSearchModelInput" })

const SearchHits = Schema.Struct({
  topics: Schema.Array(Schema.Struct({
    ...TopicView.fields,
    score: Schema.Number.annotations({ description: "Text relevance weighted by trust; higher first." })
  })),
  ranked: Schema.Number.annotations({
    description: `How many matches were ranked: all of them, or the ${searchWindow.toLocaleString("en")} most recently updated.`
  }),
  complete: Schema.Boolean.annotations({
    description: `False when more than ${searchWindow.toLocaleString("en")} topics matched: older matches were not ranked; add words, tags or min_trust to narrow.`
  })
}).annotations({ identifier: "TopicSearchResults" })

/** @since 0.1.0 @category operations */
export const topicsSearch = kit.make({
  name: "topics_search",
  title: "Search topics",
  description:
    `Full-text search over titles and bodies, ranked by relevance weighted by trust (fresh reviewed knowledge outranks stale, proposed and draft text). Archived topics are never returned. Each result carries trust and governance. When more than ${searchWindow.toLocaleString("en")} topics match, the ${searchWindow.toLocaleString("en")} most recently updated are ranked and complete is false.`,
  refuses: [],
  scopes: readScopes,
  http: { method: "GET", path: "/topics/search", input: { kind: "query" } },
  cli: { words: ["search"], positional: "query" },
  input: SearchInput,
  modelInput: SearchModelInput,
  output: SearchHits,
  capability: {
    question: "What does the workspace know about this?",
    requires: "query; optionally tags, limit, stale and min_trust.",
    example: { query: "release checklist", min_trust: "proposed", limit: 5 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      const result = yield* (yield* Topics).search(workspaceId, {
        query: input.query,
        limit: input.limit ?? 50,
        tags: input.tags,
        stale: input.stale,
        minTrust: input.min_trust
      })
      return { topics: result.hits.map((hit) => ({ ...hit.topic, score: hit.score })), ranked: result.ranked, complete: result.complete }
    })
})

const EventsFields = {
  topic: Schema.optional(TopicId).annotations({ description: "Only this topic's events." }),
  before: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9]{1,18}$/))).annotations({
    description: "next_cursor of the previous page, for older events."
  })
}

const EventsInput = Schema.Struct({
  ...EventsFields,
  limit: Schema.optional(limitText(200)).annotations({ description: "Events per page, 1 to 200 (default 50)." })
}).annotations({ ...strict, identifier: "TopicEventsInput" })

const EventsModelInput = Schema.Struct({
  ...EventsFields,
  limit: Schema.optional(limitNumber(200)).annotations({ description: "Events per page, 1 to 200 (default 50)." })
}).annotations({ ...strict, identifier: "TopicEventsModelInput" })

const EventPage = Schema.Struct({
  events: Schema.Array(EventView),
  next_cursor: Schema.NullOr(Schema.String).annotations({ description: "Pass as before for older events; null on the last page." })
}).annotations({ identifier: "TopicEventPage" })

/** @since 0.1.0 @category operations */
export const topicsEvents = kit.make({
  name: "topics_events",
  title: "Topic timeline",
  description:
    "Every change to the workspace's topics, newest first: created, updated, proposed, approved, rejected, archived, deleted, edit_opened, edit_merged, edit_closed, relation_added, relation_deleted, shared, unshared, tag_renamed, tag_removed; each with who acted (human or agent).",
  refuses: [],
  scopes: readScopes,
  paginates: true,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/topics/events", input: { kind: "query" } },
  cli: { words: ["events"], follow: { items: "events", keys: ["id"] } },
  input: EventsInput,
  modelInput: EventsModelInput,
  output: EventPage,
  capability: {
    question: "What changed in the workspace's knowledge, and who changed it?",
    requires: "Nothing; optionally topic, limit and before.",
    example: { limit: 20 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).events(workspaceId, { topicId: input.topic, limit: input.limit ?? 50, before: input.before })
    })
})

const NoInput = Schema.Struct({}).annotations({ ...strict, identifier: "NoInput" })

/** @since 0.1.0 @category operations */
export const topicsGraph = kit.make({
  name: "topics_graph",
  title: "Topic graph",
  description: "Every topic not archived as a node (id, title, status, trust, tags) and the typed relations between them as edges.",
  refuses: [],
  scopes: readScopes,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/topics/graph", input: { kind: "query" } },
  cli: { words: ["graph"] },
  input: NoInput,
  output: Graph,
  capability: { question: "How do the workspace's topics relate?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).graph(workspaceId)
    })
})

// -----------------------------------------------------------------------------
// Create, read, update, delete
// -----------------------------------------------------------------------------

/** A topic as a create or update answers it: with the advisory check of its patterns. */
const TopicWritten = Schema.Struct({
  ...TopicView.fields,
  anchor_validation: Schema.optional(Anchors.AnchorValidation)
}).annotations({ identifier: "TopicWritten" })

/**
 * The topic with `anchor_validation` for `patterns` when there is something to say (decision 0058). Run
 * after the write, outside its transaction: the check is advisory and never undoes or blocks it.
 */
const withValidation = (workspaceId: string, topic: TopicView, patterns: ReadonlyArray<string> | undefined) =>
  Effect.gen(function*() {
    if (patterns === undefined) return topic
    const validation = yield* (yield* Anchors.Anchors).validate(workspaceId, patterns)
    return Option.match(validation, {
      onNone: (): typeof TopicWritten.Type => topic,
      onSome: (anchor_validation): typeof TopicWritten.Type => ({ ...topic, anchor_validation })
    })
  })

const CreateInput = Schema.Struct({
  title: Governance.Title,
  body: Schema.optionalWith(Governance.Body, { default: () => "" }),
  tags: Schema.optional(Governance.TagList),
  patterns: Schema.optional(Governance.Patterns),
  status: Schema.optional(Governance.InitialStatus).annotations({
    description: "draft (the default) or proposed (put up for review at once). Reviewed only through approval."
  }),
  review_interval_days: Schema.optional(Schema.NullOr(ReviewInterval))
}).annotations({ ...strict, identifier: "TopicCreateInput" })

/** @since 0.1.0 @category operations */
export const topicsCreate = kit.make({
  name: "topics_create",
  title: "Create a topic",
  description:
    "Writes a topic: a note that becomes knowledge only when an owner or admin approves it. Starts as draft unless status is proposed. Unregistered tags are registered (normalized: lower case, spaces to dashes). With patterns and a linked repository, anchor_validation checks each against the file index (ok, overbroad, zero); advisory, never blocking.",
  refuses: [],
  annotations: Operation.write,
  http: { method: "POST", path: "/topics", input: { kind: "body" } },
  cli: { words: ["create"] },
  input: CreateInput,
  output: TopicWritten,
  capability: {
    question: "How do I write down something the workspace should know?",
    requires: "title; optionally body, tags, patterns, status (draft or proposed) and review_interval_days.",
    example: createExample
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      const topic = yield* (yield* Topics).create(workspaceId, actor, input)
      return yield* withValidation(workspaceId, topic, input.patterns)
    })
})

/** @since 0.1.0 @category operations */
export const topicsRead = kit.make({
  name: "topics_read",
  title: "Read a topic",
  description: "One topic with its trust (reviewed, proposed, draft), classification.status and governance (approval, review due date, staleness).",
  refuses: ["topic_not_found"],
  scopes: readScopes,
  http: { method: "GET", path: "/topics/:topic", input: { kind: "path", params: { topic: "topic" } } },
  cli: { words: ["show"], positional: "topic" },
  input: TopicRef,
  output: TopicView,
  capability: {
    question: "What does this topic say, and how far can I trust it?",
    requires: "topic.",
    example: { topic: "<topic>" },
    exampleFrom: fromCreate
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).get(workspaceId, input.topic).pipe(Effect.catchTag("TopicNotFound", () => topicNotFound(input.topic)))
    })
})

const UpdateInput = Schema.Struct({
  topic: TopicId,
  title: Schema.optional(Governance.Title),
  body: Schema.optional(Governance.Body),
  tags: Schema.optional(Governance.TagList),
  patterns: Schema.optional(Governance.Patterns),
  review_interval_days: Schema.optional(Schema.NullOr(ReviewInterval))
}).pipe(
  Schema.filter(({ topic: _topic, ...changes }) =>
    Object.values(changes).some((value) => value !== undefined) ||
    "send at least one of title, body, tags, patterns, review_interval_days"
  )
).annotations({ ...strict, identifier: "TopicUpdateInput" })

/** @since 0.1.0 @category operations */
export const topicsUpdate = kit.make({
  name: "topics_update",
  title: "Update a topic",
  description:
    "Changes a draft or proposed topic's title, body, tags, patterns or review interval. Reviewed knowledge changes directly only for an owner or admin (and is approved again by them); others open a suggested edit. New patterns come back with anchor_validation, as on create.",
  refuses: ["topic_not_found", "invalid_transition", "reviewed_needs_suggested_edit"],
  annotations: Operation.idempotentWrite,
  surfaces: { mcp: false },
  http: { method: "PATCH", path: "/topics/:topic", input: { kind: "body", params: { topic: "topic" } } },
  cli: { words: ["update"], positional: "topic" },
  input: UpdateInput,
  output: TopicWritten,
  capability: {
    question: "How do I fix a draft?",
    requires: "topic and the fields to change.",
    example: { topic: "<topic>", body: "Tag, build, publish the changelog, announce." },
    exampleFrom: fromCreate
  },
  run: ({ topic, ...changes }) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      const updated = yield* (yield* Topics).update(workspaceId, actor, topic, changes).pipe(
        Effect.catchTags({ TopicNotFound: () => topicNotFound(topic), TransitionRefused: transitionRefused })
      )
      return yield* withValidation(workspaceId, updated, changes.patterns)
    })
})

const Deleted = Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({ identifier: "TopicDeleted" })

/** @since 0.1.0 @category operations */
export const topicsDelete = kit.make({
  name: "topics_delete",
  title: "Delete a topic",
  description:
    "Deletes a topic with its suggested edits, relations and share links; its timeline stays. Reviewed knowledge only for an owner or admin.",
  refuses: ["topic_not_found", "reviewed_needs_owner"],
  annotations: Operation.destructive,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/topics/:topic", input: { kind: "path", params: { topic: "topic" } } },
  cli: { words: ["delete"], positional: "topic" },
  input: TopicRef,
  output: Deleted,
  capability: { question: "How do I remove a topic?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      yield* (yield* Topics).remove(workspaceId, actor, input.topic).pipe(
        Effect.catchTags({ TopicNotFound: () => topicNotFound(input.topic), TransitionRefused: transitionRefused })
      )
      return { id: input.topic, deleted: true } as const
    })
})

// -----------------------------------------------------------------------------
// Governance moves
// -----------------------------------------------------------------------------

type Move = "propose" | "approve" | "reject" | "archive"

const moveRun = (trigger: Move) => (input: { readonly topic: string }) =>
  Effect.gen(function*() {
    const { workspaceId, actor } = yield* caller
    return yield* (yield* Topics).move(workspaceId, actor, input.topic, trigger).pipe(
      Effect.catchTags({ TopicNotFound: () => topicNotFound(input.topic), TransitionRefused: transitionRefused })
    )
  })

const moveHttp = (path: `/${string}`) => ({ method: "POST", path, input: { kind: "body", params: { topic: "topic" } } } as const)

/** @since 0.1.0 @category operations */
export const topicsPropose = kit.make({
  name: "topics_propose",
  title: "Propose a topic",
  description: "Puts a draft up for review (draft to proposed). An owner or admin then approves or rejects it.",
  refuses: ["topic_not_found", "invalid_transition"],
  annotations: Operation.write,
  http: moveHttp("/topics/:topic/propose"),
  cli: { words: ["propose"], positional: "topic" },
  input: TopicRef,
  output: TopicView,
  capability: { question: "How do I ask for a draft to become knowledge?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: moveRun("propose")
})

/** @since 0.1.0 @category operations */
export const topicsApprove = kit.make({
  name: "topics_approve",
  title: "Approve a topic",
  description:
    "Makes a draft or proposed topic reviewed knowledge, or re-approves reviewed knowledge (restarting its review interval). Owner or admin person only.",
  refuses: ["topic_not_found", "invalid_transition"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.idempotentWrite,
  http: moveHttp("/topics/:topic/approve"),
  cli: { words: ["approve"], positional: "topic" },
  input: TopicRef,
  output: TopicView,
  capability: { question: "How does a topic become reviewed knowledge?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: moveRun("approve")
})

/** @since 0.1.0 @category operations */
export const topicsReject = kit.make({
  name: "topics_reject",
  title: "Reject a proposed topic",
  description: "Sends a proposed topic back to draft. Owner or admin person only.",
  refuses: ["topic_not_found", "invalid_transition"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  http: moveHttp("/topics/:topic/reject"),
  cli: { words: ["reject"], positional: "topic" },
  input: TopicRef,
  output: TopicView,
  capability: {
    question: "How do I send a proposal back?",
    requires: "topic.",
    example: { topic: "<topic>" },
    exampleFrom: { operation: "topics_propose", path: ["id"], field: "topic" }
  },
  run: moveRun("reject")
})

/** @since 0.1.0 @category operations */
export const topicsArchive = kit.make({
  name: "topics_archive",
  title: "Archive a topic",
  description: "Archives a topic: hidden from the list (unless status=archived), search, the graph and share pages. Reviewed knowledge only for an owner or admin.",
  refuses: ["topic_not_found", "invalid_transition", "reviewed_needs_owner"],
  annotations: Operation.destructive,
  surfaces: { mcp: false },
  http: moveHttp("/topics/:topic/archive"),
  cli: { words: ["archive"], positional: "topic" },
  input: TopicRef,
  output: TopicView,
  capability: { question: "How do I retire a topic?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: moveRun("archive")
})

// -----------------------------------------------------------------------------
// Suggested edits
// -----------------------------------------------------------------------------

const EditId = Schema.String.pipe(Schema.pattern(/^edit_[0-9a-f]{24}$/)).annotations({
  description: "A suggested edit id (edit_ followed by 24 hexadecimal digits)."
})

const editNotFound = (id: string) =>
  refuse("suggested_edit_not_found", `No suggested edit ${id} on this topic.`, "List the topic's suggested edits and use one of their ids.", {
    field: "edit_id"
  })

const EditsListInput = Schema.Struct({
  topic: TopicId,
  status: Schema.optional(EditStatus).annotations({ description: "Only edits with this status: open, merged or closed." })
}).annotations({ ...strict, identifier: "SuggestedEditListInput" })

/** @since 0.1.0 @category operations */
export const topicsEditsList = kit.make({
  name: "topics_edits_list",
  title: "List suggested edits",
  description: "A topic's suggested edits, newest first, each with its patch, the version it was based on, its status and how it was decided.",
  refuses: ["topic_not_found"],
  scopes: readScopes,
  http: { method: "GET", path: "/topics/:topic/proposals", input: { kind: "path", params: { topic: "topic" } } },
  cli: { words: ["edits", "list"], positional: "topic" },
  input: EditsListInput,
  output: Schema.Struct({ suggested_edits: Schema.Array(EditView) }).annotations({ identifier: "SuggestedEditList" }),
  capability: { question: "What changes are waiting on this topic?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      const edits = yield* (yield* Topics).listEdits(workspaceId, input.topic, input.status).pipe(
        Effect.catchTag("TopicNotFound", () => topicNotFound(input.topic))
      )
      return { suggested_edits: edits }
    })
})

const EditOpenInput = Schema.Struct({
  topic: TopicId,
  summary: Summary,
  patch: Governance.Patch
}).annotations({ ...strict, identifier: "SuggestedEditOpenInput" })

/** @since 0.1.0 @category operations */
export const topicsEditOpen = kit.make({
  name: "topics_edit_open",
  title: "Suggest an edit",
  description:
    "Opens a suggested edit: a summary and a JSON Merge Patch (RFC 7396) over title, body, tags and patterns (null empties tags or patterns). An owner or admin merges or closes it; it merges only if the topic has not changed the same fields since.",
  refuses: ["topic_not_found", "invalid_transition"],
  annotations: Operation.write,
  http: { method: "POST", path: "/topics/:topic/proposals", input: { kind: "body", params: { topic: "topic" } } },
  cli: { words: ["edits", "open"], positional: "topic" },
  input: EditOpenInput,
  output: EditView,
  capability: {
    question: "How do I propose a change to reviewed knowledge?",
    requires: "topic, summary and patch.",
    example: { topic: "<topic>", summary: "Add the announcement step.", patch: { body: "Tag, build, publish the changelog, announce." } },
    exampleFrom: fromCreate
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      return yield* (yield* Topics).openEdit(workspaceId, actor, input.topic, { summary: input.summary, patch: input.patch }).pipe(
        Effect.catchTags({ TopicNotFound: () => topicNotFound(input.topic), TransitionRefused: transitionRefused })
      )
    })
})

const EditRef = Schema.Struct({ topic: TopicId, edit_id: EditId }).annotations({ ...strict, identifier: "SuggestedEditRef" })

const editHttp = (path: `/${string}`) =>
  ({ method: "POST", path, input: { kind: "body", params: { topic: "topic", id: "edit_id" } } } as const)

const notOpen = (edit: { readonly id: string; readonly status: string }) =>
  refuse("suggested_edit_not_open", `Suggested edit ${edit.id} is already ${edit.status}.`, "List the topic's open suggested edits.", {
    field: "edit_id"
  })

/** @since 0.1.0 @category operations */
export const topicsEditMerge = kit.make({
  name: "topics_edit_merge",
  title: "Merge a suggested edit",
  description:
    "Applies an open suggested edit to the topic and records approved_via (human, or agent through MCP). Refused, changing nothing, when the topic changed the same fields since the edit was opened. Merging into reviewed knowledge approves the new text. Owner or admin person only.",
  refuses: ["topic_not_found", "suggested_edit_not_found", "suggested_edit_not_open", "suggested_edit_conflict", "invalid_transition"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  http: editHttp("/topics/:topic/proposals/:id/merge"),
  cli: { words: ["edits", "merge"], positional: "edit_id" },
  input: EditRef,
  output: Schema.Struct({ suggested_edit: EditView, topic: TopicView }).annotations({ identifier: "SuggestedEditMerged" }),
  capability: {
    question: "How do I accept a suggested edit?",
    requires: "topic and edit_id.",
    example: { topic: "<topic>", edit_id: "<edit_id>" },
    exampleFrom: { operation: "topics_edit_open", path: ["id"], field: "edit_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      const merged = yield* (yield* Topics).mergeEdit(workspaceId, actor, input.topic, input.edit_id).pipe(
        Effect.catchTags({
          TopicNotFound: () => topicNotFound(input.topic),
          EditNotFound: () => editNotFound(input.edit_id),
          EditNotOpen: notOpen,
          TransitionRefused: transitionRefused,
          EditConflict: (conflict) =>
            refuse(
              "suggested_edit_conflict",
              `The topic changed ${conflict.fields.join(", ")} since the edit was opened; nothing was merged.`,
              "Read the topic again and open a new suggested edit over its current text.",
              { conflictingFields: conflict.fields }
            )
        })
      )
      return { suggested_edit: merged.edit, topic: merged.topic }
    })
})

/** @since 0.1.0 @category operations */
export const topicsEditReject = kit.make({
  name: "topics_edit_reject",
  title: "Close a suggested edit",
  description: "Closes an open suggested edit without applying it. Owner or admin person only.",
  refuses: ["topic_not_found", "suggested_edit_not_found", "suggested_edit_not_open"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  http: editHttp("/topics/:topic/proposals/:id/reject"),
  cli: { words: ["edits", "reject"], positional: "edit_id" },
  input: EditRef,
  output: EditView,
  capability: {
    question: "How do I turn down a suggested edit?",
    requires: "topic and edit_id.",
    example: { topic: "<topic>", edit_id: "<edit_id>" },
    exampleFrom: { operation: "topics_edit_open", path: ["id"], field: "edit_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      return yield* (yield* Topics).closeEdit(workspaceId, actor, input.topic, input.edit_id).pipe(
        Effect.catchTags({
          TopicNotFound: () => topicNotFound(input.topic),
          EditNotFound: () => editNotFound(input.edit_id),
          EditNotOpen: notOpen
        })
      )
    })
})

// -----------------------------------------------------------------------------
// Relations
// -----------------------------------------------------------------------------

const RelationId = Schema.String.pipe(Schema.pattern(/^rel_[0-9a-f]{24}$/)).annotations({
  description: "A relation id (rel_ followed by 24 hexadecimal digits)."
})

const RelationAddInput = Schema.Struct({
  topic: TopicId,
  to_topic: TopicId.annotations({ description: "The related topic." }),
  type: Governance.RelationType.annotations({
    description: "depends_on (read the other first), related_to (see also), supersedes (replaces the other), contradicts (they disagree)."
  })
}).annotations({ ...strict, identifier: "TopicRelationAddInput" })

/** @since 0.1.0 @category operations */
export const topicsRelationAdd = kit.make({
  name: "topics_relation_add",
  title: "Relate two topics",
  description: "Adds a typed relation from this topic to another: depends_on, related_to, supersedes or contradicts. The same relation again returns the existing one.",
  refuses: ["topic_not_found"],
  annotations: Operation.idempotentWrite,
  http: { method: "POST", path: "/topics/:topic/relations", input: { kind: "body", params: { topic: "topic" } } },
  cli: { words: ["relations", "add"], positional: "topic" },
  input: RelationAddInput,
  output: RelationView,
  capability: {
    question: "How do I say one topic depends on, replaces or contradicts another?",
    requires: "topic, to_topic and type.",
    example: { topic: "<topic>", to_topic: "<to_topic>", type: "related_to" },
    exampleFrom: fromCreate
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      if (input.to_topic === input.topic) {
        return yield* refuse("invalid_field_value", "A topic cannot relate to itself.", "Use another topic as to_topic.", { field: "to_topic" })
      }
      return yield* (yield* Topics).addRelation(workspaceId, actor, input.topic, { to: input.to_topic, type: input.type }).pipe(
        Effect.catchTag("TopicNotFound", (missing) => topicNotFound(missing.id))
      )
    })
})

/** @since 0.1.0 @category operations */
export const topicsRelationsList = kit.make({
  name: "topics_relations_list",
  title: "List a topic's relations",
  description: "The relations from and to a topic.",
  refuses: ["topic_not_found"],
  scopes: readScopes,
  http: { method: "GET", path: "/topics/:topic/relations", input: { kind: "path", params: { topic: "topic" } } },
  cli: { words: ["relations", "list"], positional: "topic" },
  input: TopicRef,
  output: Schema.Struct({ relations: Schema.Array(RelationView) }).annotations({ identifier: "TopicRelationList" }),
  capability: { question: "What is this topic related to?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      const relations = yield* (yield* Topics).listRelations(workspaceId, input.topic).pipe(
        Effect.catchTag("TopicNotFound", () => topicNotFound(input.topic))
      )
      return { relations }
    })
})

const RelationRef = Schema.Struct({ topic: TopicId, relation_id: RelationId }).annotations({ ...strict, identifier: "TopicRelationRef" })

/** @since 0.1.0 @category operations */
export const topicsRelationDelete = kit.make({
  name: "topics_relation_delete",
  title: "Delete a relation",
  description: "Removes a relation of the topic. People only: a key without an owner is refused.",
  refuses: ["relation_not_found"],
  authorize: requirePerson,
  annotations: Operation.destructive,
  surfaces: { mcp: false },
  http: {
    method: "DELETE",
    path: "/topics/:topic/relations/:relationId",
    input: { kind: "path", params: { topic: "topic", relationId: "relation_id" } }
  },
  cli: { words: ["relations", "delete"], positional: "relation_id" },
  input: RelationRef,
  output: Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({ identifier: "TopicRelationDeleted" }),
  capability: {
    question: "How do I remove a relation?",
    requires: "topic and relation_id.",
    example: { topic: "<topic>", relation_id: "<relation_id>" },
    exampleFrom: { operation: "topics_relation_add", path: ["id"], field: "relation_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      yield* (yield* Topics).deleteRelation(workspaceId, actor, input.topic, input.relation_id).pipe(
        Effect.catchTag("RelationNotFound", () =>
          refuse("relation_not_found", `No relation ${input.relation_id} on this topic.`, "List the topic's relations and use one of their ids.", {
            field: "relation_id"
          }))
      )
      return { id: input.relation_id, deleted: true } as const
    })
})


// -----------------------------------------------------------------------------
// Anchors: match-files, the audit, the linked repository and its file index
// -----------------------------------------------------------------------------

const RepoPath = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)).annotations({
  description: "A file path relative to the repository root, / separated."
})

const MatchFilesInput = Schema.Struct({
  paths: Schema.Array(RepoPath).pipe(Schema.minItems(1), Schema.maxItems(5_000)).annotations({
    description: "Repository paths, 1 to 5,000 (for example the files a change touches)."
  }),
  min_trust: Schema.optional(Governance.Trust).annotations({ description: "Only topics at least this trusted: reviewed > proposed > draft." })
}).annotations({ ...strict, identifier: "TopicMatchFilesInput" })

/** @since 0.1.0 @category operations */
export const topicsMatchFiles = kit.make({
  name: "topics_match_files",
  title: "Match files to topics",
  description:
    "The topics (not archived) whose patterns match any of the given paths, most matched paths first, each with the patterns that matched and the paths it covers. Ask it before changing files: the knowledge anchored there may need updating.",
  refuses: [],
  scopes: readScopes,
  http: { method: "POST", path: "/topics/match-files", input: { kind: "body", maxBodyBytes: 6 * 1024 * 1024 } },
  cli: { words: ["match-files"] },
  input: MatchFilesInput,
  output: Schema.Struct({ topics: Schema.Array(Anchors.FileMatch) }).annotations({ identifier: "TopicFileMatches" }),
  capability: {
    question: "What does the workspace know about these files?",
    requires: "paths; optionally min_trust.",
    example: { paths: ["src/auth/session.ts"] }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return { topics: yield* (yield* Anchors.Anchors).matchFiles(workspaceId, input.paths, input.min_trust) }
    })
})

/** @since 0.1.0 @category operations */
export const topicsAudit = kit.make({
  name: "topics_audit",
  title: "Context health audit",
  description:
    "The workspace's context health: drifted topics (reviewed, anchored files changed or removed since approval), stale topics (past their review interval), topics with a pattern matching no file or an overbroad one, registered tags no topic carries, and topics awaiting review (proposed, or with open suggested edits).",
  refuses: [],
  scopes: readScopes,
  http: { method: "GET", path: "/topics/audit", input: { kind: "query" } },
  cli: { words: ["audit"] },
  input: NoInput,
  output: Anchors.Audit,
  capability: { question: "Which of the workspace's knowledge needs attention?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Anchors.Anchors).audit(workspaceId)
    })
})

const BranchName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255), Schema.pattern(/^[^\s~^:?*[\\]+$/)).annotations({
  description: "A git branch name."
})

const RepositoryLinkInput = Schema.Struct({
  name: Governance.trimmed(1, 200, "The repository's name, e.g. acme/api."),
  url: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2_000))).annotations({
    description: "Where the repository lives (for people; never fetched)."
  }),
  default_branch: BranchName.annotations({ description: "The branch whose file index anchors the topics, e.g. main." })
}).annotations({ ...strict, identifier: "TopicsRepositoryLinkInput" })

/** @since 0.1.0 @category operations */
export const repositoryLink = kit.make({
  name: "topics_repository_link",
  title: "Link a repository",
  description:
    "Links the workspace's repository (one per workspace). Linking the same one again changes nothing; another name, URL or default branch drops the loaded file index and the anchor baselines. Owner or admin person only.",
  refuses: [],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.idempotentWrite,
  surfaces: { mcp: false },
  http: { method: "PUT", path: "/repository", input: { kind: "body" } },
  cli: { words: ["repository", "link"] },
  input: RepositoryLinkInput,
  output: Anchors.RepositoryView,
  capability: {
    question: "How do I anchor topics to a repository?",
    requires: "name and default_branch; optionally url.",
    example: { name: "acme/api", default_branch: "main" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Anchors.Anchors).link(workspaceId, input)
    })
})

/** @since 0.1.0 @category operations */
export const repositoryRead = kit.make({
  name: "topics_repository_read",
  title: "Read the linked repository",
  description: "The workspace's linked repository and its last loaded file index (branch, commit, files, when); null when none is linked.",
  refuses: [],
  scopes: readScopes,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/repository", input: { kind: "query" } },
  cli: { words: ["repository", "show"] },
  input: NoInput,
  output: Schema.Struct({ repository: Schema.NullOr(Anchors.RepositoryView) }).annotations({ identifier: "TopicsRepositoryRead" }),
  capability: { question: "Which repository anchors the workspace's topics?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return { repository: Option.getOrNull(yield* (yield* Anchors.Anchors).repository(workspaceId)) }
    })
})

const IndexLoadInput = Schema.Struct({
  branch: BranchName.annotations({ description: "The linked repository's default branch: the index is that branch's." }),
  commit: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{7,64}$/))).annotations({
    description: "The commit the index was read at, for people reading the repository status."
  }),
  files: Schema.Array(Schema.Struct({
    path: RepoPath,
    hash: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9:+\/=_-]{1,128}$/)).annotations({
      description: "The file's content hash: a git blob id, or any digest that changes with the content."
    })
  })).pipe(Schema.maxItems(Anchors.maxPageFiles)).annotations({
    description: `Files of this page, up to ${Anchors.maxPageFiles.toLocaleString("en")}; ${Anchors.maxIndexFiles.toLocaleString("en")} across a load.`
  }),
  upload: Schema.optional(Schema.String.pipe(Schema.pattern(/^upl_[0-9a-f]{24}$/))).annotations({
    description: "The upload a previous page answered: this page continues it."
  }),
  complete: Schema.optionalWith(Schema.Boolean, { default: () => true }).annotations({
    description: "false: stage this page and answer an upload id for the next; true (default): the load is complete and replaces the index."
  })
}).annotations({ ...strict, identifier: "TopicsIndexLoadInput" })

/** @since 0.1.0 @category operations */
export const repositoryIndexLoad = kit.make({
  name: "topics_repository_index_load",
  title: "Load the file index",
  description:
    "Loads the linked repository's default-branch file index: paths and content hashes, replacing the previous index whole in one transaction. Larger loads go in pages (complete=false answers an upload id; the page with complete=true ends it). Answers how many reviewed topics drifted. `service topics-index load` reads it from a local git checkout. Owner or admin person only.",
  refuses: ["repository_not_linked"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.idempotentWrite,
  surfaces: { mcp: false },
  http: { method: "PUT", path: "/repository/index", input: { kind: "body", maxBodyBytes: 12 * 1024 * 1024 } },
  cli: { words: ["repository", "index"] },
  input: IndexLoadInput,
  output: Anchors.IndexLoad,
  capability: {
    question: "How do I tell the service which files the default branch has?",
    requires: "branch and files; upload and complete for a load in pages.",
    example: { branch: "main", files: [{ path: "src/auth/session.ts", hash: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad" }] }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Anchors.Anchors).load(workspaceId, input).pipe(
        Effect.catchTags({
          RepositoryNotLinked: () =>
            refuse("repository_not_linked", "The workspace has no linked repository.", "Link one first: PUT /repository with name and default_branch."),
          BranchMismatch: (mismatch) =>
            refuse(
              "invalid_field_value",
              `The index is the default branch's (${mismatch.expected}), not ${mismatch.given}.`,
              `Load ${mismatch.expected}, or link the repository again with another default_branch.`,
              { field: "branch", allowedValues: [mismatch.expected] }
            ),
          UploadNotFound: (missing) =>
            refuse(
              "invalid_field_value",
              `No upload ${missing.upload} is open for this workspace (another load started, or it completed).`,
              "Start the load again without upload.",
              { field: "upload" }
            ),
          IndexTooLarge: (large) =>
            refuse(
              "invalid_field_value",
              `The load holds ${large.files} files; an index holds at most ${Anchors.maxIndexFiles}.`,
              "Load fewer files (for example without vendored or generated folders).",
              { field: "files" }
            )
        })
      )
    })
})

// -----------------------------------------------------------------------------
// Share links
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category operations */
export const topicsShare = kit.make({
  name: "topics_share",
  title: "Share a topic",
  description:
    "Creates a public read-only link to the topic, /api/v1/s/<token> (and /api/v1/s/<token>/raw), shown once with its full URL; any previous link of the topic stops working. Archived topics are not shown publicly.",
  refuses: ["topic_not_found"],
  annotations: Operation.write,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/topics/:topic/share", input: { kind: "body", params: { topic: "topic" } } },
  cli: { words: ["share"], positional: "topic" },
  input: TopicRef,
  output: ShareLink,
  capability: { question: "How do I show a topic to someone outside the workspace?", requires: "topic.", example: { topic: "<topic>" }, exampleFrom: fromCreate },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      const link = yield* (yield* Topics).share(workspaceId, actor, input.topic).pipe(Effect.catchTag("TopicNotFound", () => topicNotFound(input.topic)))
      // The full URL where the host says where it is reached (SERVICE_PUBLIC_URL or the address it listens on).
      const address = yield* Effect.serviceOption(PublicAddress)
      if (Option.isNone(address)) return link
      return { ...link, url: `${(yield* address.value.get).base}${link.path}` }
    })
})

/** @since 0.1.0 @category operations */
export const topicsUnshare = kit.make({
  name: "topics_unshare",
  title: "Revoke a topic's share link",
  description: "The topic's public link stops working at once.",
  refuses: ["topic_not_found", "share_not_found"],
  annotations: Operation.destructive,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/topics/:topic/share", input: { kind: "path", params: { topic: "topic" } } },
  cli: { words: ["unshare"], positional: "topic" },
  input: TopicRef,
  output: Schema.Struct({ topic_id: Schema.String, revoked: Schema.Literal(true) }).annotations({ identifier: "ShareRevoked" }),
  capability: {
    question: "How do I stop sharing a topic?",
    requires: "topic.",
    example: { topic: "<topic>" },
    exampleFrom: { operation: "topics_share", path: ["topic_id"], field: "topic" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      yield* (yield* Topics).unshare(workspaceId, actor, input.topic).pipe(
        Effect.catchTags({
          TopicNotFound: () => topicNotFound(input.topic),
          ShareNotFound: () =>
            refuse("share_not_found", `Topic ${input.topic} has no active share link.`, "Nothing to revoke; share the topic to create one.", {
              field: "topic"
            })
        })
      )
      return { topic_id: input.topic, revoked: true } as const
    })
})

/**
 * Every topic operation. `/topics/search`, `/topics/events`, `/topics/graph`, `/topics/match-files` and
 * `/topics/audit` come before `/topics/:topic`: routes match in declaration order.
 *
 * @since 0.1.0 @category operations
 */
export const operations = [
  topicsList,
  topicsSearch,
  topicsEvents,
  topicsGraph,
  topicsMatchFiles,
  topicsAudit,
  repositoryLink,
  repositoryRead,
  repositoryIndexLoad,
  topicsCreate,
  topicsRead,
  topicsUpdate,
  topicsDelete,
  topicsPropose,
  topicsApprove,
  topicsReject,
  topicsArchive,
  topicsEditsList,
  topicsEditOpen,
  topicsEditMerge,
  topicsEditReject,
  topicsRelationAdd,
  topicsRelationsList,
  topicsRelationDelete,
  topicsShare,
  topicsUnshare
] as const

/** What running the topic operations needs. @since 0.1.0 @category models */
export type Requirements = Topics | Anchors.Anchors | Caller | RequestContext

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "topics",
  title: "Topics",
  description: "Topics and their governance: notes that become reviewed knowledge once an owner or admin approves them.",
  operations,
  http: {
    prefix: "/workspaces/:workspace",
    workspaceScoped: true,
    // Old CLIs still call `watchers`: served, with Deprecation and a Link to the `topics` path.
    aliases: [{ segment: "watchers", canonical: "topics", since: "2026-11-25T00:00:00Z" }]
  },
  mcp: { namespace: "topics" },
  cli: { word: "topics", description: "Topics: knowledge with a trust signal, suggested edits, relations and share links." }
})
