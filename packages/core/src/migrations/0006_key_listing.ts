import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // What a key list shows without the secret: its first characters, when it was last used, and who made it (a
  // faceless key has no owner, but an owner or admin created it).
  yield* sql`ALTER TABLE core.credentials ADD COLUMN prefix text`
  yield* sql`ALTER TABLE core.credentials ADD COLUMN last_used_at timestamptz`
  yield* sql`ALTER TABLE core.credentials ADD COLUMN created_by text REFERENCES core.persons(id) ON DELETE SET NULL`
  // One person per email address, compared without case; people made without one (faceless demo owners) stay apart.
  yield* sql`CREATE UNIQUE INDEX persons_email_idx ON core.persons (lower(email)) WHERE email IS NOT NULL`
})
