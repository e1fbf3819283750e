/**
 * The refusals of the contact quote and unlock operations on every transport: one codec, so HTTP, MCP and the CLI
 * answer a refusal with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

const defined = Refusal.define({
  key: "contacts",
  identifier: "Contacts",
  rules: {
    collection_not_found: { status: 404, retryable: false, action: "choose_a_collection", description: "no collection with that id in this workspace" },
    records_not_in_collection: {
      status: 400,
      retryable: false,
      action: "choose_records_of_the_collection",
      description: "some record ids are not contacts of the collection"
    },
    confirmation_required: {
      status: 400,
      retryable: false,
      action: "confirm_with_the_user",
      description: "the unlock spends credits and was sent without confirm: true"
    },
    quote_mismatch: {
      status: 409,
      retryable: false,
      action: "request_a_new_quote",
      description: "the quote_token was issued for another workspace, caller, selection or idempotency_key"
    },
    quote_expired: { status: 410, retryable: false, action: "request_a_new_quote", description: "the quote_token is older than 10 minutes" },
    price_changed: {
      status: 409,
      retryable: false,
      action: "request_a_new_quote",
      description: "the price, recomputed now, is above the max_credits the user approved"
    },
    spending_not_allowed: {
      status: 422,
      retryable: false,
      action: "ask_an_owner_or_admin",
      description: "only the workspace's owners and admins spend, unless an owner lets members spend"
    },
    spending_cap_reached: {
      status: 402,
      retryable: false,
      action: "ask_an_owner_or_admin",
      description: "the unlock would take the member past the workspace's monthly cap for members"
    },
    insufficient_credits: { status: 402, retryable: false, action: "add_credits", description: "the balance no longer covers the price" },
    unlock_in_progress: {
      status: 409,
      retryable: true,
      action: "retry_later",
      description: "an unlock with this idempotency_key is still being researched; retry with the same key"
    }
  },
  outage: {
    code: "contacts_unavailable",
    store: "the CRM or the credit ledger",
    description: "the CRM or the credit ledger cannot be read right now",
    suggestedCorrection: "Retry in a few seconds; nothing was spent."
  }
})

/**
 * A refusal of a contact operation.
 *
 * @since 0.1.0 @category errors
 */
export class ContactsRefusal extends Schema.TaggedError<ContactsRefusal>("@service/contacts/ContactsRefusal")("ContactsRefusal", defined.fields) {}

/**
 * The codec, and `refuse`, which builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category codecs
 */
export const { codec, refuse } = defined.codecFor(ContactsRefusal)
