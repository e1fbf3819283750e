import * as SqlClient from "@effect/sql/SqlClient"
import { columns as queueColumns, indexSql } from "@service/core/WorkQueue"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA door`
  yield* sql`CREATE TABLE door.sources (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    type text NOT NULL CHECK (type IN ('cloudevents', 'webhook')),
    template text,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'paused', 'archived')),
    secret_sealed text,
    previous_secret_sealed text,
    previous_valid_until timestamptz,
    pipeline_id text,
    stage_id text,
    created_at timestamptz NOT NULL
  )`
  // Every request to a known Source, as received (body and headers), then what became of it.
  yield* sql.unsafe(`CREATE TABLE door.arrivals (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    source_id text NOT NULL REFERENCES door.sources(id) ON DELETE CASCADE,
    received_at timestamptz NOT NULL,
    webhook_id text,
    event_key text,
    event_type text,
    content_type text,
    headers jsonb NOT NULL,
    body text,
    status text NOT NULL CHECK (status IN ('received', 'accepted', 'pending_decision', 'set_aside', 'no_person', 'unmapped', 'failed', 'rejected')),
    status_detail text,
    contact_id text,
    opportunity_id text,
    ${queueColumns}
  )`)
  yield* sql`CREATE UNIQUE INDEX arrivals_webhook_id_idx ON door.arrivals (source_id, webhook_id) WHERE webhook_id IS NOT NULL AND status <> 'rejected'`
  yield* sql`CREATE UNIQUE INDEX arrivals_event_key_idx ON door.arrivals (source_id, event_key) WHERE event_key IS NOT NULL AND status <> 'rejected'`
  yield* sql`CREATE INDEX arrivals_source_idx ON door.arrivals (source_id, received_at DESC)`
  yield* sql.unsafe(indexSql("door.arrivals", "arrivals_queue_idx"))
})
