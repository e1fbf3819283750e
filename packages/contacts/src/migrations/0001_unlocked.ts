import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA IF NOT EXISTS contacts`
  // The CRM records whose contact research a workspace already paid for: a quote prices them at zero.
  yield* sql`CREATE TABLE contacts.unlocked (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    contact_id text NOT NULL,
    unlock_id text NOT NULL,
    unlocked_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, contact_id)
  )`
})
