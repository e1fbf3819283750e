/**
 * The refusals of the topics operations on every transport: one codec, so HTTP, MCP and the CLI answer a refusal
 * with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "topics",
  identifier: "Topics",
  rules: {
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
    }
  },
  outage: { code: "topics_unavailable", store: "the topics store" }
})

/**
 * A refusal of a topics operation. `conflictingFields` names the fields a suggested edit and the topic both changed.
 *
 * @since 0.1.0 @category errors
 */
export class TopicsRefusal extends Schema.TaggedError<TopicsRefusal>("@service/topics/TopicsRefusal")("TopicsRefusal", {
  ...defined.fields,
  conflictingFields: Schema.optional(Schema.Array(Schema.String))
}) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(TopicsRefusal, { field: "conflictingFields", wire: "conflicting_fields" })
