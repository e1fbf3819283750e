/**
 * Test workspaces (`POST /workspaces/<slug>/sandboxes`, CLI `service sandboxes create`): a copy of a
 * workspace's structure (its Pipelines and its Sources, with new secrets shown once) and none of its data or
 * members. The person who creates it is its owner and gets an API key for it, shown once, with the scopes of
 * the credential that asked. Up to 5 per workspace. In a test workspace no credits are spent, no email is
 * sent, no provider is called and nothing is delivered to a Destination (decision 0048).
 *
 * Forms do not exist in this service yet, so there are none to copy (decision 0056).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Accounts } from "@service/core/Accounts"
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Operation from "@service/core/Operation"
import { Caller } from "@service/core/RequestContext"
import { Crm } from "@service/crm/Crm"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { codec, refuse } from "./DoorApiRefusal.js"
import { doorAdminScopes, SourceView, viewOf } from "./SourceOperations.js"
import { Sources } from "./Sources.js"
import * as Templates from "./Templates.js"

const CreateInput = Schema.Struct({
  name: Schema.optional(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120))).annotations({
    description: "The test workspace's name; default the workspace's name followed by (test)."
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "CreateSandboxInput" })

const CopiedSource = Schema.Struct({
  source: SourceView,
  copied_from: Schema.String,
  secret: Schema.NullOr(Schema.String).annotations({ description: "The copy's new whsec_ secret, shown this once." }),
  token: Schema.NullOr(Schema.String).annotations({ description: "The copy's new secret-address token, shown this once." })
})

const Sandbox = Schema.Struct({
  workspace: Schema.Struct({
    id: Schema.String,
    slug: Schema.String,
    name: Schema.String,
    test_of: Schema.String
  }),
  api_key: Schema.String.annotations({
    description: "An API key of the test workspace for the person who created it, shown this once."
  }),
  pipelines: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, copied_from: Schema.String })),
  sources: Schema.Array(CopiedSource)
}).annotations({ identifier: "Sandbox" })

const isTemplate = Schema.is(Templates.TemplateName)

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: doorAdminScopes, annotations: Operation.write })

/** @since 0.1.0 @category operations */
export const sandboxesCreate = kit.make({
  name: "sandboxes_create",
  title: "Create a test workspace",
  description:
    "Creates a test workspace from this one: its Pipelines and active or paused Sources are copied (with new secrets, shown once), none of its contacts, Arrivals or members. You become its owner and get an API key for it, shown once. Up to 5 per workspace. Owner or admin.",
  refuses: ["test_workspace_not_allowed", "test_workspace_limit"],
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/sandboxes", input: { kind: "body" } },
  cli: { words: ["create"] },
  input: CreateInput,
  output: Sandbox,
  capability: {
    question: "Where can I try the door and the CRM without touching real data or spending credits?",
    requires: "Nothing; optionally a name.",
    example: {}
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const person = yield* Option.match(caller.person, {
        onNone: () => Effect.dieMessage("authorize let a call without a person through"),
        onSome: Effect.succeed
      })
      const parent = caller.workspace
      if (parent.isTest) {
        return yield* refuse(
          "test_workspace_not_allowed",
          "This is a test workspace; test workspaces are made from the real one.",
          "Call this with a credential of the real workspace."
        )
      }
      const accounts = yield* Accounts
      const slug = WorkspaceSlug.make(`${parent.slug.slice(0, 40)}-test-${randomBytes(3).toString("hex")}`)
      const workspace = yield* accounts.createWorkspace({ slug, name: input.name ?? `${parent.name} (test)`, testOf: parent }).pipe(
        Effect.catchTags({
          TestWorkspaceLimit: (limit) =>
            refuse("test_workspace_limit", limit.message, "Use one of the existing test workspaces."),
          // Three random bytes: a clash is a one-in-millions event; the caller may simply retry.
          WorkspaceSlugTaken: (taken) => Effect.die(taken)
        })
      )
      yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "owner" }).pipe(Effect.orDie)
      const key = yield* accounts.issueCredential({
        workspaceId: workspace.id,
        kind: "api_key",
        label: `test workspace key of ${person.displayName}`,
        personId: person.id,
        scopes: caller.scopes
      }).pipe(Effect.orDie)

      const crm = yield* Crm
      const pipelines: Array<{ id: string; name: string; copied_from: string }> = []
      const stageMap = new Map<string, { pipelineId: string; stageId: string }>()
      for (const pipeline of yield* crm.pipelines(parent.id)) {
        const copy = yield* crm.createPipeline(workspace.id, {
          name: pipeline.name,
          stages: pipeline.stages.map((stage) => ({ name: stage.name, outcome: stage.outcome }))
        }).pipe(Effect.orDie)
        pipelines.push({ id: copy.id, name: copy.name, copied_from: pipeline.id })
        pipeline.stages.forEach((stage, i) => {
          const copied = copy.stages[i]
          if (copied !== undefined) stageMap.set(`${pipeline.id}/${stage.id}`, { pipelineId: copy.id, stageId: copied.id })
        })
      }

      const sources = yield* Sources
      const copies: Array<typeof CopiedSource.Type> = []
      for (const source of yield* sources.list(parent.id)) {
        if (source.status === "archived") continue
        const route = source.pipeline_id === null || source.stage_id === null
          ? undefined
          : stageMap.get(`${source.pipeline_id}/${source.stage_id}`)
        const view = yield* sources.forIntake(source.id)
        if (Option.isNone(view)) continue
        const { mapping, signingSecret, verification } = view.value
        // A tool's own signing key cannot be re-issued here: the copy verifies with the same one.
        const created = yield* sources.create(workspace.id, {
          name: source.name,
          type: source.type,
          template: isTemplate(source.template) ? source.template : undefined,
          verification: source.type === "webhook" && source.template === null && verification !== "hmac" && verification !== "static-token"
            ? verification
            : undefined,
          signingSecret: signingSecret === null ? undefined : Redacted.make(signingSecret),
          pipelineId: route?.pipelineId,
          stageId: route?.stageId
        }).pipe(Effect.orDie)
        // A generic webhook Source's confirmed mapping is structure too.
        if (source.type === "webhook" && source.template === null && mapping !== null) {
          const { version: _version, ...confirmed } = mapping
          yield* sources.confirmMapping(workspace.id, created.source.id, confirmed).pipe(Effect.orDie)
        }
        copies.push({
          source: viewOf(created.source),
          copied_from: source.id,
          secret: created.secret === undefined ? null : Redacted.value(created.secret),
          token: created.token === undefined ? null : Redacted.value(created.token)
        })
      }
      return {
        workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name, test_of: parent.id },
        api_key: Redacted.value(key.secret),
        pipelines,
        sources: copies
      }
    }).pipe(
      // All or nothing: a failure halfway leaves no half-made test workspace behind.
      (effect) => Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)),
      Effect.catchTag("SqlError", Effect.die)
    )
})

/** What running the sandbox operation needs. @since 0.1.0 @category models */
export type Requirements = Accounts | Crm | Sources | SqlClient.SqlClient | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "sandboxes",
  title: "Test workspaces",
  description: "Copies of a workspace's structure where nothing is charged, sent or delivered.",
  operations: [sandboxesCreate],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "sandboxes" },
  cli: { word: "sandboxes", description: "Test workspaces: copies of this workspace's structure." }
})
