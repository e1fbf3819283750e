import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A request the door refused (bad signature or token, not an event it can store) keeps its size and digest,
  // never its body: an unauthenticated sender costs a bounded, small row.
  yield* sql`ALTER TABLE door.arrivals ADD COLUMN body_bytes integer`
  yield* sql`ALTER TABLE door.arrivals ADD COLUMN body_sha256 text`
})
