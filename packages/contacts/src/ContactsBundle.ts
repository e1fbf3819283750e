/**
 * The contacts bundle: contact research quotes over the CRM and the credit ledger, with the `contacts`
 * migrations and the contact operation group. Listed after the door bundle, which provides the CRM.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import * as ContactOperations from "./ContactOperations.js"
import * as ContactsMigrations from "./ContactsMigrations.js"
import * as Quotes from "./Quotes.js"

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "contacts",
  layer: Quotes.layer,
  migrations: [ContactsMigrations.migrations],
  groups: [ContactOperations.group]
})
