/**
 * The tag registry on every surface: `GET/POST /workspaces/<slug>/tags`, `PATCH/DELETE .../tags/<name>`,
 * `service tags ...` on the CLI, and the list as the `service_tags_list` MCP tool. Names are normalized
 * (lower case, whitespace runs to dashes). Renaming and deleting need an owner or admin person.
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import type { Caller, RequestContext } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Governance from "./Governance.js"
import { caller, limitNumber, limitText, offsetNumber, offsetText, readScopes, strict, writeScopes } from "./internal/common.js"
import { Topics, TagView } from "./Topics.js"
import { codec, refuse } from "./TopicsRefusal.js"

const Description = Schema.String.pipe(Schema.maxLength(500)).annotations({ description: "What the tag means, up to 500 characters." })

const tagNotFound = (name: string) =>
  refuse("tag_not_found", `No tag ${name} in this workspace.`, "List the workspace's tags and use one of their names.", { field: "tag" })

const ListInput = Schema.Struct({
  limit: Schema.optional(limitText(200)).annotations({ description: "Tags per page, 1 to 200 (default 50)." }),
  offset: Schema.optional(offsetText).annotations({ description: "Tags to skip (default 0)." })
}).annotations({ ...strict, identifier: "TagListInput" })

const ListModelInput = Schema.Struct({
  limit: Schema.optional(limitNumber(200)).annotations({ description: "Tags per page, 1 to 200 (default 50)." }),
  offset: Schema.optional(offsetNumber).annotations({ description: "Tags to skip (default 0)." })
}).annotations({ ...strict, identifier: "TagListModelInput" })

const TagPage = Schema.Struct({
  tags: Schema.Array(TagView),
  total: Schema.Number,
  has_more: Schema.Boolean
}).annotations({ identifier: "TagPage" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: writeScopes, annotations: Operation.idempotentWrite })

/** @since 0.1.0 @category operations */
export const tagsList = kit.make({
  name: "tags_list",
  title: "List tags",
  description: "The workspace's tags, most used first, each with its description and how many topics carry it.",
  refuses: [],
  scopes: readScopes,
  annotations: Operation.readOnly,
  paginates: true,
  http: { method: "GET", path: "/tags", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: ListInput,
  modelInput: ListModelInput,
  output: TagPage,
  capability: { question: "Which tags does the workspace use?", requires: "Nothing; optionally limit and offset.", example: { limit: 20 } },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).listTags(workspaceId, { limit: input.limit ?? 50, offset: input.offset ?? 0 })
    })
})

const CreateInput = Schema.Struct({
  name: Governance.TagName,
  description: Schema.optional(Description)
}).annotations({ ...strict, identifier: "TagCreateInput" })

/** @since 0.1.0 @category operations */
export const tagsCreate = kit.make({
  name: "tags_create",
  title: "Create a tag",
  description: "Registers a tag (name normalized). Idempotent: an existing tag keeps its name and takes the description when one is given.",
  refuses: [],
  surfaces: { mcp: false },
  http: { method: "POST", path: "/tags", input: { kind: "body" } },
  cli: { words: ["create"], positional: "name" },
  input: CreateInput,
  output: TagView,
  capability: {
    question: "How do I add a tag with a description?",
    requires: "name; optionally description.",
    example: { name: "releases", description: "How we ship." }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId } = yield* caller
      return yield* (yield* Topics).createTag(workspaceId, input)
    })
})

const UpdateInput = Schema.Struct({
  tag: Governance.TagName.annotations({ description: "The tag to change (from the path)." }),
  name: Schema.optional(Governance.TagName).annotations({
    description: "A new name: every topic carrying the tag is rewritten, in one transaction. An existing name merges the two tags."
  }),
  description: Schema.optional(Description)
}).pipe(
  Schema.filter((input) => input.name !== undefined || input.description !== undefined || "send name, description or both")
).annotations({ ...strict, identifier: "TagUpdateInput" })

/** @since 0.1.0 @category operations */
export const tagsUpdate = kit.make({
  name: "tags_update",
  title: "Rename or describe a tag",
  description: "Renames a tag, rewriting every topic that carries it in one transaction, and/or changes its description. Owner or admin person only.",
  refuses: ["tag_not_found"],
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "PATCH", path: "/tags/:name", input: { kind: "body", params: { name: "tag" } } },
  cli: { words: ["update"], positional: "tag" },
  input: UpdateInput,
  output: TagView,
  capability: {
    question: "How do I rename a tag everywhere?",
    requires: "tag and a new name and/or description.",
    example: { tag: "<tag>", name: "shipping" },
    exampleFrom: { operation: "tags_create", path: ["name"], field: "tag" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      return yield* (yield* Topics).updateTag(workspaceId, actor, input.tag, { name: input.name, description: input.description }).pipe(
        Effect.catchTag("TagNotFound", () => tagNotFound(input.tag))
      )
    })
})

const TagRef = Schema.Struct({ tag: Governance.TagName }).annotations({ ...strict, identifier: "TagRef" })

/** @since 0.1.0 @category operations */
export const tagsDelete = kit.make({
  name: "tags_delete",
  title: "Delete a tag",
  description: "Deletes a tag and detaches it from every topic, in one transaction. Owner or admin person only.",
  refuses: ["tag_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.destructive,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/tags/:name", input: { kind: "path", params: { name: "tag" } } },
  cli: { words: ["delete"], positional: "tag" },
  input: TagRef,
  output: Schema.Struct({ name: Schema.String, deleted: Schema.Literal(true), detached: Schema.Number }).annotations({ identifier: "TagDeleted" }),
  capability: {
    question: "How do I drop a tag from every topic?",
    requires: "tag.",
    example: { tag: "<tag>" },
    exampleFrom: { operation: "tags_create", path: ["name"], field: "tag" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const { workspaceId, actor } = yield* caller
      const { detached } = yield* (yield* Topics).deleteTag(workspaceId, actor, input.tag).pipe(
        Effect.catchTag("TagNotFound", () => tagNotFound(input.tag))
      )
      return { name: input.tag, deleted: true, detached } as const
    })
})

/** @since 0.1.0 @category operations */
export const operations = [tagsList, tagsCreate, tagsUpdate, tagsDelete] as const

/** What running the tag operations needs. @since 0.1.0 @category models */
export type Requirements = Topics | Caller | RequestContext

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "tags",
  title: "Tags",
  description: "The workspace's tag registry: normalized names, descriptions and usage counts.",
  operations,
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "tags" },
  cli: { word: "tags", description: "Tags: list, describe, rename, delete." }
})
