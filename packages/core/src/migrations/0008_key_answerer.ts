import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A faceless key acts as nobody, but somebody answers for it: its creator, until a removal hands it to a remaining
  // owner or admin (issue 32 row 1, decision 0091). Removing the person who answers for a key revokes it.
  yield* sql`ALTER TABLE core.credentials ADD COLUMN answered_by text REFERENCES core.persons(id) ON DELETE SET NULL`
  yield* sql`UPDATE core.credentials SET answered_by = created_by WHERE person_id IS NULL AND kind = 'api_key'`
  yield* sql`CREATE INDEX credentials_answered_by_idx ON core.credentials (workspace_id, answered_by) WHERE answered_by IS NOT NULL`
})
