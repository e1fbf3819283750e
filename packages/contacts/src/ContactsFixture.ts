/**
 * The contacts bundle's conformance fixture: a CRM contact in a collection, which the quote example selects (and
 * the unlock example, through the quote, unlocks).
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import { Crm } from "@service/crm/Crm"
import * as Effect from "effect/Effect"

/** @since 0.1.0 @category fixtures */
export const fixture: Bundle.Fixture<Crm> = {
  seed: ({ workspace }) =>
    Effect.gen(function*() {
      if (workspace.isTest) return {}
      const crm = yield* Crm
      const applied = yield* crm.applyContact(workspace.id, { name: "Conformance contact", email: "conformance@example.com" })
      if (applied._tag !== "Created") return yield* Effect.dieMessage(`the conformance contact was not created: ${applied._tag}`)
      const collection = yield* crm.createCollection(workspace.id, { name: "Conformance", contactIds: [applied.contact.id] })
      return { contact_quote: { collection_id: collection.id, record_ids: [applied.contact.id] } }
    })
}
