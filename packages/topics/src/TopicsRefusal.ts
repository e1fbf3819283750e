/**
 * The refusals of the topics and tags operations: one codec, so every transport answers a refusal with the
 * same code, status and recovery. A faceless or member principal refused by an operation's `authorize` gets
 * the platform's 403 before anything runs; the codes here are the domain's own.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const TopicsCode = Schema.Literal(
  "invalid_field_value",
  "topic_not_found",
  "suggested_edit_not_found",
  "relation_not_found",
  "tag_not_found",
  "share_not_found",
  "invalid_transition",
  "reviewed_needs_suggested_edit",
  "reviewed_needs_owner",
  "suggested_edit_not_open",
  "suggested_edit_conflict",
  "repository_not_linked",
  "topics_unavailable"
)
/** @since 0.1.0 @category models */
export type TopicsCode = typeof TopicsCode.Type

/** What the caller can do next. @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal(
  "fix_arguments",
  "list_topics",
  "list_suggested_edits",
  "list_relations",
  "list_tags",
  "share_topic",
  "read_topic",
  "suggest_edit",
  "ask_owner_or_admin",
  "open_new_suggested_edit",
  "link_repository",
  "retry_later"
)
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

/**
 * A refusal of a topics or tags operation.
 *
 * @since 0.1.0 @category errors
 */
export class TopicsRefusal extends Schema.TaggedError<TopicsRefusal>("@service/topics/TopicsRefusal")("TopicsRefusal", {
  ...Refusal.standardFields(TopicsCode),
  /** The fields a suggested edit and the topic both changed. */
  conflictingFields: Schema.optional(Schema.Array(Schema.String))
}) {}

const rules: { readonly [K in TopicsCode]: Refusal.RefusalRule & { readonly action: RecoveryAction } } = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or out of range" },
  topic_not_found: { status: 404, retryable: false, action: "list_topics", description: "no topic with that id in this workspace" },
  suggested_edit_not_found: {
    status: 404,
    retryable: false,
    action: "list_suggested_edits",
    description: "no suggested edit with that id on this topic"
  },
  relation_not_found: { status: 404, retryable: false, action: "list_relations", description: "no relation with that id on this topic" },
  tag_not_found: { status: 404, retryable: false, action: "list_tags", description: "no tag with that name in this workspace" },
  share_not_found: { status: 404, retryable: false, action: "share_topic", description: "the topic has no active share link" },
  invalid_transition: {
    status: 409,
    retryable: false,
    action: "read_topic",
    description: "the topic's status does not allow this move (see the state table)"
  },
  reviewed_needs_suggested_edit: {
    status: 409,
    retryable: false,
    action: "suggest_edit",
    description: "reviewed knowledge changes through a suggested edit unless an owner or admin edits it"
  },
  reviewed_needs_owner: {
    status: 409,
    retryable: false,
    action: "ask_owner_or_admin",
    description: "only an owner or admin may archive or delete reviewed knowledge"
  },
  suggested_edit_not_open: {
    status: 409,
    retryable: false,
    action: "list_suggested_edits",
    description: "the suggested edit was already merged or closed"
  },
  suggested_edit_conflict: {
    status: 409,
    retryable: false,
    action: "open_new_suggested_edit",
    description: "the topic changed the same fields since the edit was opened; nothing was merged"
  },
  repository_not_linked: {
    status: 409,
    retryable: false,
    action: "link_repository",
    description: "the workspace has no linked repository to load a file index for"
  },
  topics_unavailable: { status: 503, retryable: true, action: "retry_later", description: "the topics store cannot be reached right now" }
}

/**
 * Builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category constructors
 */
export const refuse = (
  code: TopicsCode,
  why: string,
  suggestedCorrection: string,
  extra: {
    readonly field?: string
    readonly allowedValues?: ReadonlyArray<string>
    readonly conflictingFields?: ReadonlyArray<string>
  } = {}
): TopicsRefusal => new TopicsRefusal({ code, why, suggestedCorrection, ...extra })

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "topics",
  identifier: "Topics",
  tag: "TopicsRefusal",
  is: (u: unknown): u is TopicsRefusal => u instanceof TopicsRefusal,
  codes: TopicsCode,
  actions: RecoveryAction,
  rules,
  make: (fields) => new TopicsRefusal(fields),
  invalidInputCode: "invalid_field_value",
  outage: {
    code: "topics_unavailable",
    why: "The topics store cannot be reached right now.",
    suggestedCorrection: "Retry in a few seconds; nothing was changed."
  },
  list: { wire: "conflicting_fields", read: (refusal) => refusal.conflictingFields }
})
