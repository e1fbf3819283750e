import * as SqlClient from "@effect/sql/SqlClient"
import { notifySql } from "@service/core/WorkQueue"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A delivery scheduled (or replayed, or resumed) wakes the idle delivery workers at once (decision 0081).
  for (const statement of notifySql("events.deliveries")) yield* sql.unsafe(statement)
})
