/**
 * Saved searches' part of a person's erasure (decision 0071): a saved search's name or criteria that hold one of
 * the person's values (typed by a user) are scrubbed. Their snapshots keep only fingerprints of market records.
 *
 * @since 0.1.0
 */
import * as Erasure from "@service/core/Erasure"

/** @since 0.1.0 @category erasers */
export const savedSearches = Erasure.scrubbing({
  store: "alerts.saved_searches",
  table: "alerts.saved_searches",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }, { name: "criteria", kind: "jsonb" }]
})

/** @since 0.1.0 @category erasers */
export const erasers = [savedSearches] as const
