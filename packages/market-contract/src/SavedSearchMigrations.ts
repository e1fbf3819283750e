/**
 * The `alerts` schema's migrations: saved market-data searches and what each matched last.
 *
 * @since 0.1.0
 */
import savedSearches from "./migrations/0001_saved_searches.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "alerts",
  dependsOn: ["core"],
  migrations: {
    "0001_saved_searches": savedSearches
  }
} as const
