/**
 * The contacts bundle: contact research quoted and unlocked over the CRM and the credit ledger, with the
 * `contacts` migrations and the contact operation group. Listed after the door bundle, which provides the CRM;
 * the {@link ContactProvider} comes from the host.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import * as ContactOperations from "./ContactOperations.js"
import * as ContactsFixture from "./ContactsFixture.js"
import * as ContactsMigrations from "./ContactsMigrations.js"
import * as ContactsWorkers from "./ContactsWorkers.js"
import * as Layer from "effect/Layer"
import * as ContactsErasers from "./ContactsErasers.js"
import * as Quotes from "./Quotes.js"
import * as Unlocks from "./Unlocks.js"

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "contacts",
  // Needs a ContactProvider from the host (the app layer gives the sandbox unless told otherwise).
  layer: Unlocks.layer.pipe(Layer.provideMerge(Quotes.layer)),
  migrations: [ContactsMigrations.migrations],
  groups: [ContactOperations.group],
  workers: ContactsWorkers.workers,
  fixture: ContactsFixture.fixture,
  erasers: ContactsErasers.erasers
})
