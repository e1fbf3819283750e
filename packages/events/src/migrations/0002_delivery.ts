import * as SqlClient from "@effect/sql/SqlClient"
import { columns as queueColumns, indexSql } from "@service/core/WorkQueue"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Where catalog events go: MCP subscriptions (kind `subscription`, created by an agent for the person behind
  // it, id derived from its key) and people's Destinations (kind `destination`, created by an owner or admin).
  // One row, one address, one secret (two during a renewal's overlap).
  yield* sql`CREATE TABLE events.destinations (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('subscription', 'destination')),
    owner_key text NOT NULL,
    created_by text,
    description text,
    url text NOT NULL,
    events text[] NOT NULL,
    subject text,
    secret text NOT NULL,
    previous_secret text,
    previous_until timestamptz,
    state text NOT NULL CHECK (state IN ('active', 'disabled', 'expired', 'stopped', 'paused')),
    state_reason text,
    state_at timestamptz NOT NULL,
    expires_at timestamptz,
    refresh_before timestamptz,
    consecutive_failures integer NOT NULL DEFAULT 0,
    failing_since timestamptz,
    last_delivery_at timestamptz,
    last_error text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX destinations_active_idx ON events.destinations (workspace_id) WHERE state = 'active'`
  // An address passes the challenge once per owner and is not challenged again for 24 hours.
  yield* sql`CREATE TABLE events.verified_addresses (
    owner_key text NOT NULL,
    url text NOT NULL,
    verified_at timestamptz NOT NULL,
    PRIMARY KEY (owner_key, url)
  )`
  // One row per (destination, ledger entry), written in the ledger entry's transaction: an event recorded is an
  // event scheduled. The queue's columns carry the retry schedule; `outcome` is what finally happened.
  yield* sql.unsafe(`CREATE TABLE events.deliveries (
    id text PRIMARY KEY,
    destination_id text NOT NULL REFERENCES events.destinations(id) ON DELETE CASCADE,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    ledger_id bigint NOT NULL REFERENCES events.ledger(id) ON DELETE CASCADE,
    outcome text NOT NULL DEFAULT 'pending'
      CHECK (outcome IN ('pending', 'delivered', 'gone', 'too_large', 'failed', 'expired', 'stopped', 'disabled')),
    replay boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL,
    settled_at timestamptz,
    ${queueColumns}
  )`)
  // A replay is a new delivery of the same event (same webhook-id); only the first is unique.
  yield* sql`CREATE UNIQUE INDEX deliveries_once_idx ON events.deliveries (destination_id, ledger_id) WHERE NOT replay`
  yield* sql.unsafe(indexSql("events.deliveries", "deliveries_due_idx"))
  yield* sql`CREATE INDEX deliveries_destination_idx ON events.deliveries (destination_id, created_at DESC, id)`
  // Every attempt, for the delivery log: what was sent when, what came back, how long it took, what is next.
  yield* sql`CREATE TABLE events.delivery_attempts (
    delivery_id text NOT NULL REFERENCES events.deliveries(id) ON DELETE CASCADE,
    attempt integer NOT NULL,
    destination_id text NOT NULL,
    started_at timestamptz NOT NULL,
    status integer,
    latency_ms integer NOT NULL,
    result text NOT NULL,
    error text,
    next_attempt_at timestamptz,
    PRIMARY KEY (delivery_id, attempt)
  )`
  yield* sql`CREATE INDEX delivery_attempts_destination_idx ON events.delivery_attempts (destination_id, started_at DESC)`
})
