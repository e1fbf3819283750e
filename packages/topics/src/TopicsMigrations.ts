/**
 * The `topics` schema's migrations. The topic timeline's catalog events go to the `events` ledger.
 *
 * @since 0.1.0
 */
import topics from "./migrations/0001_topics.js"
import anchors from "./migrations/0002_anchors.js"
import searchWindow from "./migrations/0003_search_window.js"

/** @since 0.1.0 @category migrations */
export const migrations = {
  name: "topics",
  dependsOn: ["core", "events"],
  migrations: {
    "0001_topics": topics,
    "0002_anchors": anchors,
    "0003_search_window": searchWindow
  }
} as const
