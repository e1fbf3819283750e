/**
 * The refusals of the saved-search operations on every transport: one codec, so HTTP, MCP and the CLI answer a
 * refusal with the same code, status and recovery. A search that refuses the saved criteria (too broad, an
 * unknown state...) is `criteria_refused`, carrying the search's own explanation.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const SavedSearchCode = Schema.Literal(
  "invalid_field_value",
  "criteria_refused",
  "saved_search_not_found",
  "saved_search_limit",
  "saved_searches_unavailable"
)
/** @since 0.1.0 @category models */
export type SavedSearchCode = typeof SavedSearchCode.Type

/** What the caller can do next. @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal("fix_arguments", "narrow_query", "list_saved_searches", "delete_a_saved_search", "retry_later")
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

/**
 * A refusal of a saved-search operation.
 *
 * @since 0.1.0 @category errors
 */
export class SavedSearchRefusal extends Schema.TaggedError<SavedSearchRefusal>("@service/market-contract/SavedSearchRefusal")(
  "SavedSearchRefusal",
  { ...Refusal.standardFields(SavedSearchCode) }
) {}

const rules: { readonly [K in SavedSearchCode]: Refusal.RefusalRule & { readonly action: RecoveryAction } } = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or out of range" },
  criteria_refused: {
    status: 400,
    retryable: false,
    action: "narrow_query",
    description: "the search refuses these criteria (too broad, not selective, an unknown value): the search's own explanation follows"
  },
  saved_search_not_found: { status: 404, retryable: false, action: "list_saved_searches", description: "no saved search with that id in this workspace" },
  saved_search_limit: { status: 409, retryable: false, action: "delete_a_saved_search", description: "the workspace holds the most saved searches it may" },
  saved_searches_unavailable: {
    status: 503,
    retryable: true,
    action: "retry_later",
    description: "the market data or the saved searches cannot be read right now (nothing published yet, or an outage)"
  }
}

/**
 * Builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category constructors
 */
export const refuse = Refusal.standardRefuse((fields: Refusal.Standard<SavedSearchCode>) => new SavedSearchRefusal(fields))

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "saved_searches",
  identifier: "SavedSearches",
  tag: "SavedSearchRefusal",
  is: (u: unknown): u is SavedSearchRefusal => u instanceof SavedSearchRefusal,
  codes: SavedSearchCode,
  actions: RecoveryAction,
  rules,
  make: (fields) => new SavedSearchRefusal(fields),
  invalidInputCode: "invalid_field_value",
  outage: {
    code: "saved_searches_unavailable",
    why: "The saved searches cannot be read right now.",
    suggestedCorrection: "Retry in a few seconds; nothing was changed."
  }
})
