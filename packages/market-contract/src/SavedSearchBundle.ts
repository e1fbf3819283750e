/**
 * The saved-searches bundle: saved market-data searches that alert through the event ledger, with the `alerts`
 * migrations and their operation group. Listed after the events bundle, whose ledger it records in.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import * as SavedSearches from "./SavedSearches.js"
import * as SavedSearchErasers from "./SavedSearchErasers.js"
import * as SavedSearchMigrations from "./SavedSearchMigrations.js"
import * as SavedSearchOperations from "./SavedSearchOperations.js"
import * as SavedSearchWorkers from "./SavedSearchWorkers.js"

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "saved_searches",
  layer: SavedSearches.layer,
  migrations: [SavedSearchMigrations.migrations],
  groups: [SavedSearchOperations.group],
  workers: SavedSearchWorkers.workers,
  erasers: SavedSearchErasers.erasers
})
