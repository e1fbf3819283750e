import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A paused Destination (its circuit open after sustained failure) tries one delivery at `probe_at`; the others
  // wait for it (decision 0061).
  yield* sql`ALTER TABLE events.destinations ADD COLUMN probe_at timestamptz`
})
