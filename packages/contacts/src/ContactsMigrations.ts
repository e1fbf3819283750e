/**
 * The `contacts` schema's migrations: what a workspace has unlocked, and every unlock under its idempotency key.
 *
 * @since 0.1.0
 */
import unlocked from "./migrations/0001_unlocked.js"
import unlocks from "./migrations/0002_unlocks.js"
import memberSpend from "./migrations/0003_member_spend.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "contacts",
  dependsOn: ["core"],
  migrations: {
    "0001_unlocked": unlocked,
    "0002_unlocks": unlocks,
    "0003_member_spend": memberSpend
  }
} as const
