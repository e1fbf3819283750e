/**
 * The refusals of the saved-search operations on every transport: one codec, so HTTP, MCP and the CLI answer a
 * refusal with the same code, status and recovery. A search that refuses the saved criteria (too broad, an
 * unknown state...) is `criteria_refused`, carrying the search's own explanation.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "saved_searches",
  identifier: "SavedSearches",
  rules: {
    criteria_refused: {
      status: 400,
      retryable: false,
      action: "narrow_query",
      description: "the search refuses these criteria (too broad, not selective, an unknown value): the search's own explanation follows"
    },
    saved_search_not_found: { status: 404, retryable: false, action: "list_saved_searches", description: "no saved search with that id in this workspace" },
    saved_search_limit: { status: 409, retryable: false, action: "delete_a_saved_search", description: "the workspace holds the most saved searches it may" }
  },
  outage: {
    code: "saved_searches_unavailable",
    store: "the saved searches",
    description: "the market data or the saved searches cannot be read right now (nothing published yet, or an outage)"
  }
})

/**
 * A refusal of a saved-search operation.
 *
 * @since 0.1.0 @category errors
 */
export class SavedSearchRefusal extends Schema.TaggedError<SavedSearchRefusal>("@service/market-contract/SavedSearchRefusal")(
  "SavedSearchRefusal",
  defined.fields
) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(SavedSearchRefusal)
