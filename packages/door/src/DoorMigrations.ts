/**
 * The `door` schema's migrations.
 *
 * @since 0.1.0
 */
import door from "./migrations/0001_door.js"
import webhookSources from "./migrations/0002_webhook_sources.js"
import erasureAndRetention from "./migrations/0003_erasure_and_retention.js"
import refusedRequests from "./migrations/0004_refused_requests.js"
import queueNotify from "./migrations/0005_queue_notify.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "door",
  dependsOn: ["core", "crm", "events"],
  migrations: {
    "0001_door": door,
    "0002_webhook_sources": webhookSources,
    "0003_erasure_and_retention": erasureAndRetention,
    "0004_refused_requests": refusedRequests,
    "0005_queue_notify": queueNotify
  }
} as const
