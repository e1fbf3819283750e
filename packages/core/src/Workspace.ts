/**
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { WorkspaceId, WorkspaceSlug } from "./Ids.js"

/**
 * A tenant. Every query is scoped by its id. A test workspace (`testOf` names the workspace it was made
 * from) spends no credits, sends nothing and calls no provider.
 *
 * @since 0.1.0 @category models
 */
export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: WorkspaceId,
  slug: WorkspaceSlug,
  name: Schema.String,
  testOf: Schema.optionalWith(Schema.NullOr(WorkspaceId), { default: () => null })
}) {
  /** Whether this is a test workspace. */
  get isTest(): boolean {
    return this.testOf !== null
  }
}
