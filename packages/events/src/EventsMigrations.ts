/**
 * The `events` schema's migrations.
 *
 * @since 0.1.0
 */
import ledger from "./migrations/0001_ledger.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "events",
  dependsOn: ["core"],
  migrations: {
    "0001_ledger": ledger
  }
} as const
