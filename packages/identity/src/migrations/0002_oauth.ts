import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Everything the OAuth server (oidc-provider) keeps, one row per model and id: clients registered dynamically,
  // interactions, grants, authorization and device codes, access and refresh tokens. Bearer secrets are stored by
  // their SHA-256 only (the adapter hashes them); `consumed_at` makes single use atomic.
  yield* sql`CREATE TABLE identity.oauth_models (
    model text NOT NULL,
    id text NOT NULL,
    payload jsonb NOT NULL,
    grant_id text,
    user_code text,
    uid text,
    expires_at timestamptz,
    consumed_at timestamptz,
    PRIMARY KEY (model, id)
  )`
  yield* sql`CREATE INDEX oauth_models_grant_idx ON identity.oauth_models (grant_id) WHERE grant_id IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX oauth_models_user_code_idx ON identity.oauth_models (model, user_code) WHERE user_code IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX oauth_models_uid_idx ON identity.oauth_models (model, uid) WHERE uid IS NOT NULL`
  yield* sql`CREATE INDEX oauth_models_expires_idx ON identity.oauth_models (expires_at) WHERE expires_at IS NOT NULL`
  // What a person granted a client on the consent page: the workspace the tokens act in and the scopes ticked.
  yield* sql`CREATE TABLE identity.oauth_grants (
    grant_id text PRIMARY KEY,
    person_id text NOT NULL REFERENCES core.persons(id) ON DELETE CASCADE,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    client_id text NOT NULL,
    scopes text[] NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
  )`
  yield* sql`CREATE INDEX oauth_grants_person_idx ON identity.oauth_grants (person_id, workspace_id)`
})
