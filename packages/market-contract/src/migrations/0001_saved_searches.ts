import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA IF NOT EXISTS alerts`
  // A workspace's saved market-data search: its kind and criteria (the search's own input, without paging), and
  // the publication it was last compared against.
  yield* sql`CREATE TABLE alerts.saved_searches (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('opportunities', 'awards', 'risks')),
    criteria jsonb NOT NULL,
    created_by text,
    created_at timestamptz NOT NULL,
    checked_publication_id text,
    checked_at timestamptz,
    matching integer NOT NULL DEFAULT 0,
    complete boolean NOT NULL DEFAULT true,
    deleted_at timestamptz
  )`
  yield* sql`CREATE INDEX saved_searches_workspace_idx ON alerts.saved_searches (workspace_id, created_at DESC, id) WHERE deleted_at IS NULL`
  // The records a saved search matched at its last comparison, by fingerprint (which survives reloads): a record
  // of the next publication that is not here was added.
  yield* sql`CREATE TABLE alerts.saved_search_matches (
    saved_search_id text NOT NULL REFERENCES alerts.saved_searches(id) ON DELETE CASCADE,
    fingerprint text NOT NULL,
    PRIMARY KEY (saved_search_id, fingerprint)
  )`
})
