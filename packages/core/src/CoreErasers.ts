/**
 * Core's part of a person's erasure (decision 0071, issue 32 row 6): text people write into the workspace's own
 * settings may name the erased person, so it is scrubbed by content like any authored text: API key names, and the
 * names of the workspace's test (sandbox) workspaces.
 *
 * @since 0.1.0
 */
import * as Erasure from "./Erasure.js"

/** @since 0.1.0 @category erasers */
export const keyNames = Erasure.scrubbing({
  store: "core.credentials",
  table: "core.credentials",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "label", kind: "text" }]
})

/** A test workspace hangs off the real one (`test_of`): its name is the real workspace's text. @since 0.1.0 @category erasers */
export const testWorkspaceNames = Erasure.scrubbing({
  store: "core.workspaces",
  table: "core.workspaces",
  key: "id",
  workspace: "test_of",
  columns: [{ name: "name", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const erasers = [keyNames, testWorkspaceNames] as const
