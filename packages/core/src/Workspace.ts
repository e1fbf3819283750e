/**
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { WorkspaceId, WorkspaceSlug } from "./Ids.js"

/**
 * A tenant. Every query is scoped by its id.
 *
 * @since 0.1.0 @category models
 */
export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: WorkspaceId,
  slug: WorkspaceSlug,
  name: Schema.String
}) {}
