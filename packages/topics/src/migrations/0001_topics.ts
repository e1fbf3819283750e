import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA topics`
  // The `simple` configuration: no stemming or stop words, so Spanish and English text match the same way
  // on PostgreSQL and PGlite. Title weighs more than body.
  yield* sql`CREATE TABLE topics.topics (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    title text NOT NULL,
    body text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}',
    patterns text[] NOT NULL DEFAULT '{}',
    status text NOT NULL CHECK (status IN ('draft', 'proposed', 'reviewed', 'archived')),
    version integer NOT NULL,
    review_interval_days integer CHECK (review_interval_days > 0),
    approved_by text,
    approved_at timestamptz,
    created_by text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    search tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('simple', title), 'A') || setweight(to_tsvector('simple', body), 'B')
    ) STORED
  )`
  yield* sql`CREATE INDEX topics_workspace_idx ON topics.topics (workspace_id, status, updated_at DESC)`
  yield* sql`CREATE INDEX topics_search_idx ON topics.topics USING GIN (search)`
  yield* sql`CREATE INDEX topics_tags_idx ON topics.topics USING GIN (tags)`
  // The registry of tags; topics carry their tags by name, so a rename rewrites them.
  yield* sql`CREATE TABLE topics.tags (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    description text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, name)
  )`
  // The values of the patched fields when the edit was opened (base): a merge compares them to the topic now.
  yield* sql`CREATE TABLE topics.suggested_edits (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    topic_id text NOT NULL REFERENCES topics.topics(id) ON DELETE CASCADE,
    summary text NOT NULL,
    patch jsonb NOT NULL,
    base jsonb NOT NULL,
    base_version integer NOT NULL,
    status text NOT NULL CHECK (status IN ('open', 'merged', 'closed')),
    opened_by text,
    opened_via text NOT NULL CHECK (opened_via IN ('human', 'agent')),
    decided_by text,
    decided_at timestamptz,
    approved_via text CHECK (approved_via IN ('human', 'agent')),
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX suggested_edits_topic_idx ON topics.suggested_edits (topic_id, created_at)`
  yield* sql`CREATE TABLE topics.relations (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    from_topic text NOT NULL REFERENCES topics.topics(id) ON DELETE CASCADE,
    to_topic text NOT NULL REFERENCES topics.topics(id) ON DELETE CASCADE,
    type text NOT NULL CHECK (type IN ('depends_on', 'related_to', 'supersedes', 'contradicts')),
    created_by text,
    created_at timestamptz NOT NULL,
    UNIQUE (from_topic, to_topic, type),
    CHECK (from_topic <> to_topic)
  )`
  yield* sql`CREATE INDEX relations_to_idx ON topics.relations (to_topic)`
  // The timeline outlives its topic (no foreign key): a deletion stays visible.
  yield* sql`CREATE TABLE topics.events (
    id bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    topic_id text NOT NULL,
    kind text NOT NULL,
    actor_person_id text,
    actor text NOT NULL CHECK (actor IN ('human', 'agent')),
    data jsonb NOT NULL,
    occurred_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX events_workspace_idx ON topics.events (workspace_id, id)`
  yield* sql`CREATE INDEX events_topic_idx ON topics.events (workspace_id, topic_id, id)`
  // Only the SHA-256 of a share token is kept; at most one active link per topic.
  yield* sql`CREATE TABLE topics.shares (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    topic_id text NOT NULL REFERENCES topics.topics(id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    created_by text,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
  )`
  yield* sql`CREATE UNIQUE INDEX shares_active_idx ON topics.shares (topic_id) WHERE revoked_at IS NULL`
})
