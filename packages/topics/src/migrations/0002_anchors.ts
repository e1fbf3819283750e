import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // At most one linked repository per workspace. The index columns describe the last completed load; null
  // until one is loaded (validation then answers `skipped`).
  yield* sql`CREATE TABLE topics.repositories (
    workspace_id text PRIMARY KEY REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    url text,
    default_branch text NOT NULL,
    linked_at timestamptz NOT NULL,
    index_branch text,
    index_commit text,
    index_files integer,
    index_loaded_at timestamptz
  )`
  // The default branch's file index: replaced whole by each completed load, in one transaction.
  yield* sql`CREATE TABLE topics.files (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    path text NOT NULL,
    hash text NOT NULL,
    loaded_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, path)
  )`
  // A load too large for one request is staged page by page; only its last page replaces the index. One
  // upload per workspace at a time: starting another drops it.
  yield* sql`CREATE TABLE topics.index_uploads (
    id text PRIMARY KEY,
    workspace_id text NOT NULL UNIQUE REFERENCES core.workspaces(id) ON DELETE CASCADE,
    branch text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE topics.index_upload_files (
    upload_id text NOT NULL REFERENCES topics.index_uploads(id) ON DELETE CASCADE,
    path text NOT NULL,
    hash text NOT NULL,
    PRIMARY KEY (upload_id, path)
  )`
  // The anchor baseline: the files a topic's patterns matched, with their hashes, when it was last approved.
  // A topic drifts when one of them has another hash in the index now, or is gone from it.
  yield* sql`CREATE TABLE topics.anchors (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    topic_id text NOT NULL REFERENCES topics.topics(id) ON DELETE CASCADE,
    path text NOT NULL,
    hash text NOT NULL,
    PRIMARY KEY (topic_id, path)
  )`
  yield* sql`CREATE INDEX anchors_workspace_path_idx ON topics.anchors (workspace_id, path)`
})
