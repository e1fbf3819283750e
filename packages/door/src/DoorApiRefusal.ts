/**
 * The refusals of the door's workspace operations (Sources, mappings, Arrivals, test workspaces) on every
 * transport: one codec, so HTTP, MCP and the CLI answer a refusal with the same code, status and recovery. The
 * intake route's own refusals are `DoorRefusal` (the spec's intake error table).
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "door",
  identifier: "Door",
  rules: {
    source_not_found: { status: 404, retryable: false, action: "list_sources", description: "no Source with that id in this workspace" },
    arrival_not_found: { status: 404, retryable: false, action: "list_arrivals", description: "no Arrival with that id in this workspace" },
    pipeline_not_found: {
      status: 404,
      retryable: false,
      action: "list_pipelines",
      description: "the Pipeline, or the stage within it, is not in this workspace"
    },
    source_archived: { status: 409, retryable: false, action: "create_source", description: "the Source is archived and can no longer change" },
    mapping_invalid: { status: 422, retryable: false, action: "fix_mapping", description: "the mapping has paths that cannot be read" },
    not_a_test_workspace: {
      status: 409,
      retryable: false,
      action: "use_test_workspace",
      description: "only a test workspace takes unsigned test Arrivals"
    },
    test_workspace_not_allowed: {
      status: 409,
      retryable: false,
      action: "use_workspace",
      description: "a test workspace cannot make test workspaces of its own"
    },
    test_workspace_limit: {
      status: 409,
      retryable: false,
      action: "remove_test_workspace",
      description: "the workspace already has its 5 test workspaces"
    }
  },
  outage: { code: "door_unavailable", store: "the door's store" }
})

/**
 * A refusal of a door workspace operation. `problems` lists what was wrong, one line each (a mapping's problems).
 *
 * @since 0.1.0 @category errors
 */
export class DoorApiRefusal extends Schema.TaggedError<DoorApiRefusal>("@service/door/DoorApiRefusal")("DoorApiRefusal", {
  ...defined.fields,
  problems: Schema.optional(Schema.Array(Schema.String))
}) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(DoorApiRefusal, { field: "problems", wire: "problems" })
