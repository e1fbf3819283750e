import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Failed sign-ins per client address (behind trusted proxies, as the door reads it), whatever account was tried:
  // one address guessing many accounts waits too (issue 32 row 5, decision 0093).
  yield* sql`CREATE TABLE identity.sign_in_address_failures (
    address text PRIMARY KEY,
    failures integer NOT NULL,
    locked_until timestamptz,
    last_failed_at timestamptz NOT NULL
  )`
})
