/**
 * Topics' part of a person's erasure (decision 0071): topics are authored knowledge, not records of the person,
 * so they stay; where their text (title, body, suggested edits, the timeline) holds one of the person's values,
 * the value is replaced by `[erased]`. Share pages render topics as they are now, so they follow.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category erasers */
export const topics = Erasure.scrubbing({
  store: "topics.topics",
  table: "topics.topics",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "title", kind: "text" }, { name: "body", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const suggestedEdits = Erasure.scrubbing({
  store: "topics.suggested_edits",
  table: "topics.suggested_edits",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "summary", kind: "text" }, { name: "patch", kind: "jsonb" }, { name: "base", kind: "jsonb" }]
})

/** @since 0.1.0 @category erasers */
export const timeline = Erasure.scrubbing({
  store: "topics.events",
  table: "topics.events",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "data", kind: "jsonb" }]
})

/** A tag's description (issue 32 row 6); its name is its key and stays. @since 0.1.0 @category erasers */
export const tags = Erasure.scrubbing({
  store: "topics.tags",
  table: "topics.tags",
  key: "name",
  workspace: "workspace_id",
  columns: [{ name: "description", kind: "text" }]
})

/** The linked repository's name and branches, typed by a person (found by the declaration-driven seeds). @since 0.1.0 @category erasers */
export const repository = Erasure.scrubbing({
  store: "topics.repositories",
  table: "topics.repositories",
  key: "workspace_id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }, { name: "url", kind: "text" }, { name: "default_branch", kind: "text" }, { name: "index_branch", kind: "text" }]
})

/**
 * File paths of the linked repository's index, of an index upload in progress and of topics' anchors, where a path
 * names the person (a file called after them; found by the declaration-driven seeds, which put the person in
 * `topics_repository_index_load`'s nested `files[].path`). A path is a key, and scrubbing could make two paths one, so
 * such a row is dropped: the index forgets the file and the topic its anchor. The next index load brings back what
 * the repository itself still holds. @since 0.1.0 @category erasers
 */
export const filePaths = Erasure.make<SqlClient.SqlClient>({
  store: "topics.files",
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const workspaces = sql`SELECT ${subject.workspaceId}::text UNION ALL SELECT id FROM core.workspaces WHERE test_of = ${subject.workspaceId}`
      const Paths = Schema.Array(Schema.Struct({ path: Schema.String }))
      // Each table with the rows of the workspace and its test workspaces (an upload's files by their upload).
      const stores = [
        { table: "topics.files", within: sql`workspace_id IN (${workspaces})` },
        { table: "topics.index_upload_files", within: sql`upload_id IN (SELECT id FROM topics.index_uploads WHERE workspace_id IN (${workspaces}))` },
        { table: "topics.anchors", within: sql`workspace_id IN (${workspaces})` }
      ]
      let dropped = 0
      for (const { table, within } of stores) {
        const rows = yield* sql`SELECT path FROM ${sql(table)} WHERE ${within} AND path ~* ${match.candidate}`.pipe(Effect.flatMap(Schema.decodeUnknown(Paths)))
        const paths = [...new Set(rows.map((row) => row.path).filter((path) => match.test(path)))]
        if (paths.length > 0) dropped += (yield* sql`DELETE FROM ${sql(table)} WHERE ${within} AND path IN ${sql.in(paths)} RETURNING path`).length
      }
      return dropped
    }).pipe(Effect.orDie)
})

/** @since 0.1.0 @category erasers */
export const erasers = [topics, suggestedEdits, timeline, tags, repository, filePaths] as const
