import * as SqlClient from "@effect/sql/SqlClient"
import { notifySql } from "@service/core/WorkQueue"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // An Arrival stored (or requeued) wakes the idle intake workers at once (decision 0081).
  for (const statement of notifySql("door.arrivals")) yield* sql.unsafe(statement)
})
