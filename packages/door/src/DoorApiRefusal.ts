/**
 * The refusals of the door's workspace routes, MCP tools and CLI commands (Sources, mappings, Arrivals, test
 * workspaces): one codec, so every transport answers a refusal with the same code, status and recovery. The
 * door itself (`POST /door/<source_id>`) answers with `DoorRefusal`, the spec's intake error table.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const DoorApiCode = Schema.Literal(
  "invalid_field_value",
  "source_not_found",
  "arrival_not_found",
  "pipeline_not_found",
  "source_archived",
  "mapping_invalid",
  "not_a_test_workspace",
  "test_workspace_not_allowed",
  "test_workspace_limit",
  "door_unavailable"
)
/** @since 0.1.0 @category models */
export type DoorApiCode = typeof DoorApiCode.Type

/** What the caller can do next. @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal(
  "fix_arguments",
  "list_sources",
  "list_arrivals",
  "list_pipelines",
  "create_source",
  "fix_mapping",
  "use_test_workspace",
  "use_workspace",
  "remove_test_workspace",
  "retry_later"
)
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

/**
 * A refusal of a door operation.
 *
 * @since 0.1.0 @category errors
 */
export class DoorApiRefusal extends Schema.TaggedError<DoorApiRefusal>("@service/door/DoorApiRefusal")("DoorApiRefusal", {
  ...Refusal.standardFields(DoorApiCode),
  /** What was wrong, one line each (a mapping's problems). */
  problems: Schema.optional(Schema.Array(Schema.String))
}) {}

const rules: { readonly [K in DoorApiCode]: Refusal.RefusalRule & { readonly action: RecoveryAction } } = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or out of range" },
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
  },
  door_unavailable: { status: 503, retryable: true, action: "retry_later", description: "the door's store cannot be reached right now" }
}

/**
 * Builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category constructors
 */
export const refuse = (
  code: DoorApiCode,
  why: string,
  suggestedCorrection: string,
  extra: { readonly field?: string; readonly allowedValues?: ReadonlyArray<string>; readonly problems?: ReadonlyArray<string> } = {}
): DoorApiRefusal => new DoorApiRefusal({ code, why, suggestedCorrection, ...extra })

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "door",
  identifier: "Door",
  tag: "DoorApiRefusal",
  is: (u: unknown): u is DoorApiRefusal => u instanceof DoorApiRefusal,
  codes: DoorApiCode,
  actions: RecoveryAction,
  rules,
  make: (fields) => new DoorApiRefusal(fields),
  invalidInputCode: "invalid_field_value",
  outage: {
    code: "door_unavailable",
    why: "The door's store cannot be reached right now.",
    suggestedCorrection: "Retry in a few seconds; nothing was changed."
  },
  list: { wire: "problems", read: (refusal) => refusal.problems }
})
