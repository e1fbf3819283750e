/**
 * The `events` schema's migrations.
 *
 * @since 0.1.0
 */
import ledger from "./migrations/0001_ledger.js"
import delivery from "./migrations/0002_delivery.js"
import breaker from "./migrations/0003_breaker.js"
import queueNotify from "./migrations/0004_queue_notify.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "events",
  dependsOn: ["core"],
  migrations: {
    "0001_ledger": ledger,
    "0002_delivery": delivery,
    "0003_breaker": breaker,
    "0004_queue_notify": queueNotify
  }
} as const
