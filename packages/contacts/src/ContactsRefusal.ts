/**
 * The refusals of the contact quote and unlock operations on every transport: one codec, so HTTP, MCP and the CLI
 * answer a refusal with the same code, status and recovery.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export const ContactsCode = Schema.Literal("invalid_field_value", "collection_not_found", "records_not_in_collection", "contacts_unavailable")
/** @since 0.1.0 @category models */
export type ContactsCode = typeof ContactsCode.Type

/** What the caller can do next. @since 0.1.0 @category models */
export const RecoveryAction = Schema.Literal("fix_arguments", "choose_a_collection", "choose_records_of_the_collection", "retry_later")
/** @since 0.1.0 @category models */
export type RecoveryAction = typeof RecoveryAction.Type

/**
 * A refusal of a contact operation.
 *
 * @since 0.1.0 @category errors
 */
export class ContactsRefusal extends Schema.TaggedError<ContactsRefusal>("@service/contacts/ContactsRefusal")("ContactsRefusal", {
  ...Refusal.standardFields(ContactsCode)
}) {}

const rules: { readonly [K in ContactsCode]: Refusal.RefusalRule & { readonly action: RecoveryAction } } = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or out of range" },
  collection_not_found: { status: 404, retryable: false, action: "choose_a_collection", description: "no collection with that id in this workspace" },
  records_not_in_collection: {
    status: 400,
    retryable: false,
    action: "choose_records_of_the_collection",
    description: "some record ids are not contacts of the collection"
  },
  contacts_unavailable: { status: 503, retryable: true, action: "retry_later", description: "the CRM or the credit ledger cannot be read right now" }
}

/**
 * Builds a refusal with the rule's own recovery.
 *
 * @since 0.1.0 @category constructors
 */
export const refuse = Refusal.standardRefuse((fields: Refusal.Standard<ContactsCode>) => new ContactsRefusal(fields))

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "contacts",
  identifier: "Contacts",
  tag: "ContactsRefusal",
  is: (u: unknown): u is ContactsRefusal => u instanceof ContactsRefusal,
  codes: ContactsCode,
  actions: RecoveryAction,
  rules,
  make: (fields) => new ContactsRefusal(fields),
  invalidInputCode: "invalid_field_value",
  outage: {
    code: "contacts_unavailable",
    why: "The CRM or the credit ledger cannot be read right now.",
    suggestedCorrection: "Retry in a few seconds; nothing was spent."
  }
})
