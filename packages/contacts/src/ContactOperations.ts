/**
 * Contact research on every surface (decision 0063). So far the quote:
 *
 * - `contact_quote` (HTTP `POST /workspaces/<slug>/contacts/quote`, MCP `service_contact_quote`, CLI
 *   `service contacts quote <collection-id> --record-ids …`): what unlocking the selected records would cost,
 *   free, calling no provider and returning no contact coordinate.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { codec } from "./ContactsRefusal.js"
import { MAX_RECORDS, Quote, Quotes } from "./Quotes.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const readScopes: ReadonlyArray<Scope> = ["commercial:read"]

const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

const QuoteInput = Schema.Struct({
  collection_id: Id.annotations({ description: "The CRM collection the records belong to." }),
  record_ids: Schema.Array(Id).pipe(Schema.minItems(1), Schema.maxItems(MAX_RECORDS)).annotations({
    description: `The contacts of the collection to quote, 1 to ${MAX_RECORDS}.`
  })
}).annotations({ ...strict, identifier: "ContactQuoteInput" })

/** @since 0.1.0 @category operations */
export const contactQuote = Operation.make({
  name: "contact_quote",
  title: "Quote a contact unlock",
  description:
    "Free: what unlocking the contact research of the selected CRM records would cost (per account, zero when already unlocked), the balance, and a quote_token (valid 10 minutes) with its idempotency_key for the unlock. Calls no provider and returns no contact coordinate.",
  refusals: codec,
  refuses: ["collection_not_found", "records_not_in_collection"],
  scopes: readScopes,
  annotations: { readOnly: true, destructive: false, idempotent: false, openWorld: false },
  metered: false,
  paginates: false,
  http: { method: "POST", path: "/contacts/quote", input: { kind: "body" } },
  cli: { words: ["quote"], positional: "collection_id" },
  input: QuoteInput,
  modelInput: QuoteInput,
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
export const operations = [contactQuote] as const

/** What running the contact operations needs. @since 0.1.0 @category models */
export type Requirements = Quotes | Caller

/** @since 0.1.0 @category groups */
export const group: Operation.Group<Requirements> = Operation.group<Requirements>({
  name: "contact",
  title: "Contacts",
  description: "Contact research over selected CRM records: a free quote, then a paid unlock that never spends twice.",
  refusals: codec,
  operations,
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "contact" },
  cli: { word: "contacts", description: "Quote (and, to come, unlock) contact research over CRM records." }
})
