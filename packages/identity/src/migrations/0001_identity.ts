import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA IF NOT EXISTS identity`
  // A person's password as a PHC string: the function, its parameters, the salt and the hash.
  yield* sql`CREATE TABLE identity.passwords (
    person_id text PRIMARY KEY REFERENCES core.persons(id) ON DELETE CASCADE,
    hash text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  // Failed sign-ins per address (known or not, so a lockout says nothing about who exists).
  yield* sql`CREATE TABLE identity.sign_in_failures (
    email text PRIMARY KEY,
    failures integer NOT NULL,
    locked_until timestamptz,
    last_failed_at timestamptz NOT NULL
  )`
  // Only the hash of a session's secret is kept; the cookie carries the secret.
  yield* sql`CREATE TABLE identity.sessions (
    id text PRIMARY KEY,
    secret_sha256 text NOT NULL UNIQUE,
    person_id text NOT NULL REFERENCES core.persons(id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX sessions_person_idx ON identity.sessions (person_id)`
  yield* sql`CREATE TABLE identity.invitations (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    email text NOT NULL,
    role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    token_sha256 text NOT NULL UNIQUE,
    invited_by text REFERENCES core.persons(id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    accepted_by text REFERENCES core.persons(id) ON DELETE SET NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX invitations_workspace_idx ON identity.invitations (workspace_id, created_at DESC)`
})
