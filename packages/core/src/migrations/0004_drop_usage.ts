import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Served calls are read from the credit ledger (a debit without a refund): a second counter written on
  // every call said the same thing.
  yield* sql`DROP TABLE core.usage`
})
