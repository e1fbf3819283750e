/**
 * The `core` schema's migrations, in the structural format the storage migration runner applies.
 *
 * @since 0.1.0
 */
import accounts from "./migrations/0001_accounts.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "core",
  dependsOn: ["storage"],
  migrations: {
    "0001_accounts": accounts
  }
} as const
