import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Spending is a role (issue 32 row 2, decision 0092): owners and admins spend; members only where an owner set a
  // monthly cap of credits per member. NULL: members do not spend.
  yield* sql`ALTER TABLE core.workspaces ADD COLUMN member_spend_cap integer CHECK (member_spend_cap IS NULL OR member_spend_cap > 0)`
})
