import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // What each member spent on unlocks per UTC month (debits less refunds), against the workspace's cap for members
  // (decision 0092). One row per member and month, locked by the unlock that charges it, so two unlocks of one member
  // cannot pass the cap together.
  yield* sql`CREATE TABLE contacts.member_spend (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    person_id text NOT NULL,
    period text NOT NULL,
    credits integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, person_id, period)
  )`
})
