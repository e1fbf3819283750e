import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA IF NOT EXISTS core`
  yield* sql`CREATE TABLE core.workspaces (
    id text PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE core.persons (
    id text PRIMARY KEY,
    display_name text NOT NULL,
    email text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE core.members (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    person_id text NOT NULL REFERENCES core.persons(id) ON DELETE CASCADE,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workspace_id, person_id)
  )`
  // API keys and bearer tokens share one table: only the SHA-256 of the secret is stored.
  yield* sql`CREATE TABLE core.credentials (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('api_key', 'bearer')),
    secret_sha256 text NOT NULL UNIQUE,
    label text NOT NULL,
    person_id text REFERENCES core.persons(id) ON DELETE CASCADE,
    scopes text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz,
    revoked_at timestamptz,
    CHECK (kind = 'api_key' OR person_id IS NOT NULL)
  )`
  yield* sql`CREATE INDEX credentials_workspace_idx ON core.credentials (workspace_id)`
})
