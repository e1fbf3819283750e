import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A test workspace names the workspace it was made from; there no credits are spent (spec: event intake).
  yield* sql`ALTER TABLE core.workspaces ADD COLUMN test_of text REFERENCES core.workspaces(id) ON DELETE CASCADE`
})
