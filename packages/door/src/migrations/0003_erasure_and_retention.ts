import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // An Arrival whose raw notice an erasure removed keeps its id and status (the audit trail) and says when.
  yield* sql`ALTER TABLE door.arrivals ADD COLUMN erased_at timestamptz`
  // An erasure finds the person's Arrivals by the contact they were applied to.
  yield* sql`CREATE INDEX arrivals_contact_idx ON door.arrivals (workspace_id, contact_id) WHERE contact_id IS NOT NULL`
  // The retention job reads only what it still has to delete, oldest first, in batches.
  yield* sql`CREATE INDEX arrivals_retention_idx ON door.arrivals (received_at) WHERE body IS NOT NULL`
  yield* sql`CREATE INDEX sources_example_retention_idx ON door.sources (example_at) WHERE example IS NOT NULL`
})
