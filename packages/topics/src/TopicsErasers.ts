/**
 * Topics' part of a person's erasure (decision 0071): topics are authored knowledge, not records of the person,
 * so they stay; where their text (title, body, suggested edits, the timeline) holds one of the person's values,
 * the value is replaced by `[erased]`. Share pages render topics as they are now, so they follow.
 *
 * @since 0.1.0
 */
import * as Erasure from "@service/core/Erasure"

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

/** @since 0.1.0 @category erasers */
export const erasers = [topics, suggestedEdits, timeline, tags, repository] as const
