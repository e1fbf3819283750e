/**
 * Contact research on every surface (decisions 0063, 0064):
 *
 * - `contact_quote` (HTTP `POST /workspaces/<slug>/contacts/quote`, MCP `service_contact_quote`, CLI
 *   `service contacts quote <collection-id> --record-ids …`): what unlocking the selected records would cost,
 *   free, calling no provider and returning no contact coordinate.
 * - `contact_unlock` (HTTP `POST /workspaces/<slug>/contacts/unlock`, MCP `service_contact_unlock`, CLI
 *   `service contacts unlock <collection-id> --record-ids … --confirm --max-credits N --quote-token T
 *   --idempotency-key K`): the paid research, needing `commercial:activate`, never spending twice for one key.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import { codec } from "./ContactsRefusal.js"
import { Quote, QuoteRequest, Quotes } from "./Quotes.js"
import { Unlock, UnlockRequest, Unlocks } from "./Unlocks.js"

const readScopes: ReadonlyArray<Scope> = ["commercial:read"]
// Only this scope: no other (not commercial:read, not an owner's role) implies the right to spend.
const activateScopes: ReadonlyArray<Scope> = ["commercial:activate"]

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: readScopes, annotations: { readOnly: true, destructive: false, idempotent: false, openWorld: false } })

/** @since 0.1.0 @category operations */
export const contactQuote = kit.make({
  name: "contact_quote",
  title: "Quote a contact unlock",
  description:
    "Free: what unlocking the contact research of the selected CRM records would cost (per account, zero when already unlocked), the balance, and a quote_token (valid 10 minutes) with its idempotency_key for the unlock. Calls no provider and returns no contact coordinate.",
  refuses: ["collection_not_found", "records_not_in_collection"],
  http: { method: "POST", path: "/contacts/quote", input: { kind: "body" } },
  cli: { words: ["quote"], positional: "collection_id" },
  input: QuoteRequest,
  output: Quote,
  capability: {
    question: "What would it cost to unlock contact details for these CRM records?",
    requires: "collection_id and record_ids (contacts of that collection).",
    example: { collection_id: "<collection_id>", record_ids: ["<contact_id>"] }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return yield* (yield* Quotes).quote(caller, input)
    })
})

/** @since 0.1.0 @category operations */
export const contactUnlock = kit.make({
  name: "contact_unlock",
  title: "Unlock contacts (spends credits)",
  description:
    "SPENDS insight credits. Researches the contact details of the quoted CRM records, after the user accepted the quote: send its record_ids, confirm: true, the approved max_credits, its quote_token and its idempotency_key. Refused before any spend when the price rose above max_credits, the balance no longer covers it, the token expired or belongs to another quote. Already unlocked accounts cost nothing; failed accounts are refunded. Retrying with the same idempotency_key answers the first result and never spends or researches again. Needs the commercial:activate scope.",
  refuses: ["confirmation_required", "quote_mismatch", "quote_expired", "price_changed", "insufficient_credits", "spending_not_allowed", "spending_cap_reached", "unlock_in_progress"],
  scopes: activateScopes,
  // Spends (not read-only, not undoable), calls an outside provider, and is idempotent only under its key.
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: true },
  http: { method: "POST", path: "/contacts/unlock", input: { kind: "body" } },
  // Every row's outcome shows, even when all were found (the generic table drops a column that never varies).
  cli: { words: ["unlock"], positional: "collection_id", table: { rows: "accounts", columns: ["record_id", "name", "outcome", "credits"] } },
  input: UnlockRequest,
  output: Unlock,
  capability: {
    question: "Unlock the contact details of CRM records I was quoted for (spends credits).",
    requires: "A quote (contact_quote) the user accepted: its record_ids, quote_token and idempotency_key, confirm: true and max_credits.",
    example: {
      collection_id: "<collection_id>",
      record_ids: ["<contact_id>"],
      confirm: true,
      max_credits: 5,
      quote_token: "<quote_token>",
      idempotency_key: "<idempotency_key>"
    },
    exampleFrom: {
      operation: "contact_quote",
      path: ["quote_token"],
      field: "quote_token",
      also: [{ path: ["idempotency_key"], field: "idempotency_key" }, { path: ["total_credits"], field: "max_credits" }]
    }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return yield* (yield* Unlocks).unlock(caller, input)
    })
})

/** @since 0.1.0 @category operations */
export const operations = [contactQuote, contactUnlock] as const

/** What running the contact operations needs. @since 0.1.0 @category models */
export type Requirements = Quotes | Unlocks | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "contact",
  title: "Contacts",
  description: "Contact research over selected CRM records: a free quote, then a paid unlock that never spends twice.",
  operations,
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "contact" },
  cli: { word: "contacts", description: "Quote, then unlock (spends credits), contact research over CRM records." }
})
