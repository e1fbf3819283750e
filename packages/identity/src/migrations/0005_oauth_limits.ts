import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // When a device code was last polled and the interval its client must keep (RFC 8628 3.5: slow_down adds 5 s).
  yield* sql`ALTER TABLE identity.oauth_models ADD COLUMN polled_at timestamptz`
  yield* sql`ALTER TABLE identity.oauth_models ADD COLUMN poll_interval integer`
  // Requests per client address and kind in a fixed window (registrations, device codes started, user codes tried),
  // shared by every node (issue 32 rows 12 and 13, decision 0095).
  yield* sql`CREATE TABLE identity.oauth_limits (
    key text PRIMARY KEY,
    window_started_at timestamptz NOT NULL,
    hits integer NOT NULL
  )`
})
