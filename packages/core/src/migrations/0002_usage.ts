import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Metered usage, one row per workspace, operation and UTC day: a counter, not an event log.
  yield* sql`CREATE TABLE core.usage (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    operation text NOT NULL,
    day date NOT NULL,
    units bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, day, operation)
  )`
  // Fixed-window rate limits, stored so every node of a scaled-out deployment counts the same calls.
  yield* sql`CREATE TABLE core.rate_windows (
    workspace_id text NOT NULL,
    window_start timestamptz NOT NULL,
    calls integer NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace_id, window_start)
  )`
})
