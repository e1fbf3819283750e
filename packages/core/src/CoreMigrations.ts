/**
 * The `core` schema's migrations, in the structural format the storage migration runner applies.
 *
 * @since 0.1.0
 */
import accounts from "./migrations/0001_accounts.js"
import usage from "./migrations/0002_usage.js"
import credits from "./migrations/0003_credits.js"
import dropUsage from "./migrations/0004_drop_usage.js"
import testWorkspaces from "./migrations/0005_test_workspaces.js"
import keyListing from "./migrations/0006_key_listing.js"
import credentialNotify from "./migrations/0007_credential_notify.js"
import keyAnswerer from "./migrations/0008_key_answerer.js"
import spending from "./migrations/0009_spending.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "core",
  dependsOn: ["storage"],
  migrations: {
    "0001_accounts": accounts,
    "0002_usage": usage,
    "0003_credits": credits,
    "0004_drop_usage": dropUsage,
    "0005_test_workspaces": testWorkspaces,
    "0006_key_listing": keyListing,
    "0007_credential_notify": credentialNotify,
    "0008_key_answerer": keyAnswerer,
    "0009_spending": spending
  }
} as const
