import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * One compact risk summary per RFC and snapshot, computed at publish time from the marks of sources licensed
 * for display, so supplier, award and permit rows carry it through one keyed join instead of a second call.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE market.risk_summaries (
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    rfc text NOT NULL,
    mark_count integer NOT NULL,
    kinds text[] NOT NULL,
    any_active boolean NOT NULL,
    has_exoneration boolean NOT NULL,
    PRIMARY KEY (snapshot_id, rfc)
  )`
})
