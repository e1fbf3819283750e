import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Search ranks the most recently updated matches (decision 0059): this index walks a workspace's topics in that
  // order, whatever their status, and stops once the window is full.
  yield* sql`CREATE INDEX topics_recent_idx ON topics.topics (workspace_id, updated_at DESC, id)`
})
