/**
 * Saved searches on every surface (decision 0062):
 *
 * - `saved_searches_create` (HTTP `POST /workspaces/<slug>/saved-searches`, MCP `service_saved_searches_create`,
 *   CLI `service saved-searches create`): saves a search of opportunities, awards or risk marks; the next
 *   publication that adds matching records records `search.matched` in the ledger.
 * - `saved_searches_list` (`GET .../saved-searches`): the workspace's saved searches with what they last matched.
 * - `saved_searches_delete` (`DELETE .../saved-searches/<id>`): it alerts no more.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import { Caller, type RequestContext } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { readScopes, strict } from "./internal/fields.js"
import { Kind, MAX_PER_WORKSPACE, MAX_TRACKED, SavedSearches, SavedSearchView } from "./SavedSearches.js"
import { codec } from "./SavedSearchRefusal.js"

const SavedSearchId = Schema.String.pipe(Schema.pattern(/^srch_[0-9a-f]{24}$/)).annotations({ description: "A saved search id (srch_…)." })

const CreateInput = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({ description: "What the search is for, shown in alerts." }),
  kind: Kind.annotations({ description: "Which search: opportunities (search_opportunities), awards (search_awards) or risks (search_risks)." }),
  criteria: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "That search's input without limit and cursor, e.g. {\"buyer\": \"GACM\"} for opportunities."
  })
}).annotations({ ...strict, identifier: "SavedSearchCreateInput" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: ["saved_searches:write"], annotations: Operation.write })

/** @since 0.1.0 @category operations */
export const savedSearchesCreate = kit.make({
  name: "saved_searches_create",
  title: "Save a search that alerts",
  description:
    `Saves a market-data search (opportunities, awards or risks) for the workspace. It runs once now (what it matches is the baseline), and each new publication that adds matching records records search.matched in the event ledger, delivered to the workspace's subscriptions and Destinations. Compares up to ${MAX_TRACKED} records per search; at most ${MAX_PER_WORKSPACE} saved searches per workspace. Free.`,
  refuses: ["criteria_refused", "saved_search_limit", "saved_searches_unavailable"],
  http: { method: "POST", path: "/saved-searches", input: { kind: "body" } },
  cli: { words: ["create"] },
  input: CreateInput,
  output: SavedSearchView,
  capability: {
    question: "How do I hear when new tenders (or awards, or risk marks) matching my search are published?",
    requires: "name, kind and the search's criteria (without limit and cursor); subscribe to search.matched to receive the alerts.",
    example: { name: "GACM tenders", kind: "opportunities", criteria: { buyer: "GACM" } }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return yield* (yield* SavedSearches).create(caller, input)
    })
})

const ListInput = Schema.Struct({}).annotations({ ...strict, identifier: "SavedSearchListInput" })

/** @since 0.1.0 @category operations */
export const savedSearchesList = kit.make({
  name: "saved_searches_list",
  title: "List saved searches",
  description: "The workspace's saved searches, newest first, with how many records each matched at its last comparison and with which publication. Free.",
  refuses: [],
  annotations: Operation.readOnly,
  scopes: [...readScopes, "saved_searches:write"],
  http: { method: "GET", path: "/saved-searches", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: ListInput,
  output: Schema.Struct({ saved_searches: Schema.Array(SavedSearchView) }).annotations({ identifier: "SavedSearches" }),
  capability: { question: "Which searches does this workspace watch?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return { saved_searches: yield* (yield* SavedSearches).list(caller.workspace.id) }
    })
})

const DeleteInput = Schema.Struct({ id: SavedSearchId }).annotations({ ...strict, identifier: "SavedSearchDeleteInput" })

/** @since 0.1.0 @category operations */
export const savedSearchesDelete = kit.make({
  name: "saved_searches_delete",
  title: "Delete a saved search",
  description: "Deletes a saved search of the workspace: it alerts no more. Alerts already recorded stay in the ledger.",
  refuses: ["saved_search_not_found"],
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  http: { method: "DELETE", path: "/saved-searches/:id", input: { kind: "path", params: { id: "id" } } },
  cli: { words: ["delete"], positional: "id" },
  input: DeleteInput,
  output: Schema.Struct({ deleted: Schema.String }).annotations({ identifier: "DeletedSavedSearch" }),
  capability: {
    question: "How do I stop an alert?",
    requires: "id of a saved search.",
    example: { id: "<id>" },
    exampleFrom: { operation: "saved_searches_create", path: ["id"], field: "id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      yield* (yield* SavedSearches).remove(caller.workspace.id, input.id)
      return { deleted: input.id }
    })
})

/** @since 0.1.0 @category operations */
export const operations = [savedSearchesCreate, savedSearchesList, savedSearchesDelete] as const

/** What running the saved-search operations needs. @since 0.1.0 @category models */
export type Requirements = SavedSearches | Caller | RequestContext

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "savedSearches",
  title: "Saved searches",
  description: "Market-data searches the workspace watches: a new publication that adds matching records is a search.matched event.",
  operations,
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "saved_searches" },
  cli: { word: "saved-searches", description: "Market-data searches that alert when a publication adds matches." }
})
