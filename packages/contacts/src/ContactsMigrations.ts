/**
 * The `contacts` schema's migrations: what a workspace has unlocked.
 *
 * @since 0.1.0
 */
import unlocked from "./migrations/0001_unlocked.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "contacts",
  dependsOn: ["core"],
  migrations: {
    "0001_unlocked": unlocked
  }
} as const
