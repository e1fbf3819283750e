/**
 * The governance rules of topics, pure: statuses, the trust signal every read carries, the one state table
 * every move goes through ({@link transition}), tag names, and suggested-edit patches (JSON Merge Patch,
 * RFC 7396, over `title`, `body`, `tags` and `patterns`) with their conflict check. The service and the
 * operations only ask these functions; none of them repeats a rule (docs/decisions/0057-topics.md).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

// -----------------------------------------------------------------------------
// Statuses and trust
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export const TopicStatus = Schema.Literal("draft", "proposed", "reviewed", "archived")
/** @since 0.1.0 @category models */
export type TopicStatus = typeof TopicStatus.Type

/** The statuses a topic may be created with. @since 0.1.0 @category models */
export const InitialStatus = Schema.Literal("draft", "proposed")
/** @since 0.1.0 @category models */
export type InitialStatus = typeof InitialStatus.Type

/** @since 0.1.0 @category models */
export const Trust = Schema.Literal("reviewed", "proposed", "draft")
/** @since 0.1.0 @category models */
export type Trust = typeof Trust.Type

/**
 * A topic created without a status is a draft: nothing becomes knowledge, or even a candidate, unless
 * someone asks for it.
 *
 * @since 0.1.0 @category governance
 */
export const initialStatus = (requested: InitialStatus | undefined): InitialStatus => requested ?? "draft"

/**
 * The trust signal of a status. Archived knowledge is no longer vouched for, so it reads as `draft`.
 *
 * @since 0.1.0 @category governance
 */
export const trustOf = (status: TopicStatus): Trust => (status === "archived" ? "draft" : status)

const trustRank: Record<Trust, number> = { reviewed: 2, proposed: 1, draft: 0 }

/**
 * Whether `trust` is at least `minimum` (`reviewed` > `proposed` > `draft`).
 *
 * @since 0.1.0 @category governance
 */
export const atLeast = (trust: Trust, minimum: Trust): boolean => trustRank[trust] >= trustRank[minimum]

/**
 * The statuses whose trust is at least `minimum` (archived never qualifies above draft).
 *
 * @since 0.1.0 @category governance
 */
export const statusesAtLeast = (minimum: Trust): ReadonlyArray<TopicStatus> =>
  TopicStatus.literals.filter((status) => status !== "archived" && atLeast(trustOf(status), minimum))

// -----------------------------------------------------------------------------
// The state table
// -----------------------------------------------------------------------------

/**
 * What moves a topic. `edit` is a direct update, `merge` a suggested edit merged in, `delete` removal.
 *
 * @since 0.1.0 @category models
 */
export const Trigger = Schema.Literal("propose", "approve", "reject", "archive", "edit", "merge", "delete")
/** @since 0.1.0 @category models */
export type Trigger = typeof Trigger.Type

/**
 * Who may pull a trigger beyond the scope: `anyone` holding it, `authority` (an owner or admin person)
 * always, or authority only when the topic is reviewed knowledge.
 *
 * @since 0.1.0 @category models
 */
export type Condition = "anyone" | "authority" | "authority_when_reviewed"

/** One row of the table. @since 0.1.0 @category models */
export interface Rule {
  readonly from: ReadonlyArray<TopicStatus>
  /** `same`: the status does not change; `deleted`: the topic is gone. */
  readonly to: TopicStatus | "same" | "deleted"
  readonly condition: Condition
}

/**
 * The state table. Approve also re-approves reviewed knowledge (resetting its review clock); archived
 * topics only leave by deletion. Changing reviewed knowledge directly, archiving or deleting it needs an
 * owner or admin; anyone else suggests an edit.
 *
 * @since 0.1.0 @category governance
 */
export const table: { readonly [K in Trigger]: Rule } = {
  propose: { from: ["draft"], to: "proposed", condition: "anyone" },
  approve: { from: ["draft", "proposed", "reviewed"], to: "reviewed", condition: "authority" },
  reject: { from: ["proposed"], to: "draft", condition: "authority" },
  archive: { from: ["draft", "proposed", "reviewed"], to: "archived", condition: "authority_when_reviewed" },
  edit: { from: ["draft", "proposed", "reviewed"], to: "same", condition: "authority_when_reviewed" },
  merge: { from: ["draft", "proposed", "reviewed"], to: "same", condition: "authority" },
  delete: { from: ["draft", "proposed", "reviewed", "archived"], to: "deleted", condition: "authority_when_reviewed" }
}

/**
 * A move the table does not allow: from that status at all (`illegal`), or not for this caller
 * (`authority`).
 *
 * @since 0.1.0 @category errors
 */
export class TransitionRefused extends Data.TaggedError("TransitionRefused")<{
  readonly from: TopicStatus
  readonly trigger: Trigger
  readonly reason: "illegal" | "authority"
  /** The statuses the trigger accepts, for the refusal's message. */
  readonly accepted: ReadonlyArray<TopicStatus>
}> {}

/**
 * Where `trigger` takes a topic in status `from`, for a caller with or without owner/admin authority:
 * the one place the state table is enforced.
 *
 * @since 0.1.0 @category governance
 */
export const transition = (
  from: TopicStatus,
  trigger: Trigger,
  authority: boolean
): Either.Either<TopicStatus | "deleted", TransitionRefused> => {
  const rule = table[trigger]
  if (!rule.from.includes(from)) return Either.left(new TransitionRefused({ from, trigger, reason: "illegal", accepted: rule.from }))
  const needsAuthority = rule.condition === "authority" || (rule.condition === "authority_when_reviewed" && from === "reviewed")
  if (needsAuthority && !authority) {
    return Either.left(new TransitionRefused({ from, trigger, reason: "authority", accepted: rule.from }))
  }
  return Either.right(rule.to === "same" ? from : rule.to)
}

// -----------------------------------------------------------------------------
// Tags
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category constants */
export const TAG_MAX_LENGTH = 50

const tagPattern = /^[\p{L}\p{N}][\p{L}\p{N}._-]*$/u

/**
 * A tag as stored: trimmed, lower-cased, each run of whitespace one dash.
 *
 * @since 0.1.0 @category tags
 */
export const normalizeTag = (raw: string): string => raw.trim().toLowerCase().replace(/\s+/g, "-")

/**
 * Whether a normalized name is a valid tag: 1 to 50 characters, letters, digits, `.`, `_` and `-`,
 * starting with a letter or digit.
 *
 * @since 0.1.0 @category tags
 */
export const isValidTag = (name: string): boolean => name.length >= 1 && name.length <= TAG_MAX_LENGTH && tagPattern.test(name)

/**
 * A tag name: decoding normalizes, then checks the charset and length.
 *
 * @since 0.1.0 @category tags
 */
export const TagName = Schema.transform(
  Schema.String,
  Schema.String.pipe(
    Schema.filter(isValidTag, {
      message: () => `a tag is 1 to ${TAG_MAX_LENGTH} letters, digits, ".", "_" or "-" (spaces become dashes), starting with a letter or digit`
    })
  ),
  { strict: true, decode: normalizeTag, encode: (name) => name }
).annotations({
  identifier: "TagName",
  description: "A tag: lower-cased, whitespace runs become dashes; letters, digits, '.', '_' and '-', up to 50 characters."
})

/**
 * A list of tags, each normalized, at most 20. A plain array (not a transformation) so the CLI reads it as a
 * repeatable flag; repeats are dropped where the list is written ({@link uniqueTags}).
 *
 * @since 0.1.0 @category tags
 */
export const TagList = Schema.Array(TagName).pipe(Schema.maxItems(20)).annotations({
  description: "Tags, up to 20; each is normalized and repeats are dropped."
})

/**
 * The tags without repeats, first occurrence kept.
 *
 * @since 0.1.0 @category tags
 */
export const uniqueTags = (tags: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(tags)]

/**
 * A string trimmed on decoding, then held to `min`..`max` characters. The description sits on the outer
 * schema so JSON Schema (MCP tools, OpenAPI) shows it.
 *
 * @since 0.1.0 @category models
 */
export const trimmed = (min: number, max: number, description: string) =>
  Schema.transform(Schema.String, Schema.String.pipe(Schema.minLength(min), Schema.maxLength(max)), {
    strict: true,
    decode: (value) => value.trim(),
    encode: (value) => value
  }).annotations({ description })

// -----------------------------------------------------------------------------
// Topic fields
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export const Title = trimmed(1, 200, "The topic's title, 1 to 200 characters (trimmed).")
/** @since 0.1.0 @category models */
export const Body = Schema.String.pipe(Schema.maxLength(100_000)).annotations({
  description: "The topic's text (markdown), up to 100,000 characters."
})
/** @since 0.1.0 @category models */
export const Pattern = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(300)).annotations({
  description: "A repository path pattern (glob) the topic is about."
})
/** @since 0.1.0 @category models */
export const Patterns = Schema.Array(Pattern).pipe(Schema.maxItems(50)).annotations({
  description: "Repository path patterns (globs) the topic covers, up to 50."
})

/** The fields a suggested edit may change. @since 0.1.0 @category models */
export const PatchField = Schema.Literal("title", "body", "tags", "patterns")
/** @since 0.1.0 @category models */
export type PatchField = typeof PatchField.Type

/** The patchable content of a topic. @since 0.1.0 @category models */
export interface Content {
  readonly title: string
  readonly body: string
  readonly tags: ReadonlyArray<string>
  readonly patterns: ReadonlyArray<string>
}

/** The values of the patched fields when an edit was opened. @since 0.1.0 @category models */
export interface Base {
  readonly title?: string | undefined
  readonly body?: string | undefined
  readonly tags?: ReadonlyArray<string> | undefined
  readonly patterns?: ReadonlyArray<string> | undefined
}

// -----------------------------------------------------------------------------
// Suggested-edit patches
// -----------------------------------------------------------------------------

/**
 * A JSON Merge Patch (RFC 7396) over the topic's content: each member present replaces that field; `null`
 * removes it, which only the lists allow (they become empty); arrays are replaced whole, as the RFC says.
 * Unknown members are refused.
 *
 * @since 0.1.0 @category patches
 */
export const Patch = Schema.Struct({
  title: Schema.optional(Title),
  body: Schema.optional(Body),
  tags: Schema.optional(Schema.NullOr(TagList)),
  patterns: Schema.optional(Schema.NullOr(Patterns))
}).pipe(
  Schema.filter((patch) => Object.keys(patch).length > 0 || "the patch must change at least one of title, body, tags, patterns")
).annotations({
  parseOptions: { onExcessProperty: "error" },
  identifier: "TopicPatch",
  description: "A JSON Merge Patch (RFC 7396) over title, body, tags and patterns; null empties tags or patterns."
})
/** @since 0.1.0 @category patches */
export type Patch = typeof Patch.Type

/**
 * The fields a patch touches.
 *
 * @since 0.1.0 @category patches
 */
export const patchedFields = (patch: Patch): ReadonlyArray<PatchField> =>
  PatchField.literals.filter((field) => patch[field] !== undefined)

/**
 * The content after the patch.
 *
 * @since 0.1.0 @category patches
 */
export const applyPatch = (content: Content, patch: Patch): Content => ({
  title: patch.title ?? content.title,
  body: patch.body ?? content.body,
  tags: patch.tags === undefined ? content.tags : uniqueTags(patch.tags ?? []),
  patterns: patch.patterns === undefined ? content.patterns : patch.patterns ?? []
})

/**
 * The values of the patched fields, as the topic had them when the edit was opened: what a merge compares
 * against.
 *
 * @since 0.1.0 @category patches
 */
export const baseOf = (content: Content, patch: Patch): Base => {
  const base: { title?: string; body?: string; tags?: ReadonlyArray<string>; patterns?: ReadonlyArray<string> } = {}
  for (const field of patchedFields(patch)) {
    if (field === "title") base.title = content.title
    else if (field === "body") base.body = content.body
    else if (field === "tags") base.tags = content.tags
    else base.patterns = content.patterns
  }
  return base
}

const sameList = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((value, i) => value === b[i])

/**
 * The patched fields that changed since the edit was opened: a merge applies cleanly only when this is
 * empty (changes to other fields do not matter).
 *
 * @since 0.1.0 @category patches
 */
export const conflicts = (current: Content, base: Base): ReadonlyArray<PatchField> =>
  PatchField.literals.filter((field) => {
    switch (field) {
      case "title":
        return base.title !== undefined && base.title !== current.title
      case "body":
        return base.body !== undefined && base.body !== current.body
      case "tags":
        return base.tags !== undefined && !sameList(base.tags, current.tags)
      case "patterns":
        return base.patterns !== undefined && !sameList(base.patterns, current.patterns)
    }
  })

// -----------------------------------------------------------------------------
// Relations
// -----------------------------------------------------------------------------

/**
 * Relation types: `depends_on` (reading it needs the other first), `related_to` (see also), `supersedes`
 * (replaces the other), `contradicts` (the two disagree and a person should settle it).
 *
 * @since 0.1.0 @category relations
 */
export const RelationType = Schema.Literal("depends_on", "related_to", "supersedes", "contradicts")
/** @since 0.1.0 @category relations */
export type RelationType = typeof RelationType.Type

/**
 * Who acted: a person through the dashboard, the CLI or HTTP is `human`; a call through MCP (or the
 * in-process research belt) is an `agent` acting for whoever authorized it.
 *
 * @since 0.1.0 @category models
 */
export const Via = Schema.Literal("human", "agent")
/** @since 0.1.0 @category models */
export type Via = typeof Via.Type

/**
 * The `Via` of an entrypoint.
 *
 * @since 0.1.0 @category governance
 */
export const viaOf = (entrypoint: "http" | "mcp" | "cli" | "belt"): Via =>
  entrypoint === "mcp" || entrypoint === "belt" ? "agent" : "human"
