import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA events`
  // Append-only: one row per step, in the order recorded (the id), never updated.
  yield* sql`CREATE TABLE events.ledger (
    id bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    subject text,
    payload jsonb NOT NULL,
    occurred_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX ledger_workspace_idx ON events.ledger (workspace_id, id)`
  yield* sql`CREATE INDEX ledger_subject_idx ON events.ledger (workspace_id, subject, id) WHERE subject IS NOT NULL`
})
