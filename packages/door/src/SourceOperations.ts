/**
 * The door's workspace operations: templates, Sources (create, list, read, update, archive, rotate the
 * secret), mapping confirmation and reprocessing. Served on HTTP under `/workspaces/<slug>/door` and as
 * `service door ...` on the CLI; not on MCP, where the spec's door tools are `arrival_read` and
 * `arrival_send_test` (ArrivalOperations).
 *
 * Who may call (decision 0056): every operation needs the `commercial:read` scope; changing a Source needs a
 * person with the owner or admin role behind the credential (a person-owned API key or bearer token stands
 * for that person's session).
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import { Crm } from "@service/crm/Crm"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { codec, refuse } from "./DoorApiRefusal.js"
import { Intake, ReprocessCounts } from "./Intake.js"
import * as Mappings from "./Mappings.js"
import { ROTATION_OVERLAP_MS, type Source, type SourceDetail, Sources, SourceStatus } from "./Sources.js"
import * as Templates from "./Templates.js"

/** The scope every door operation needs. @since 0.1.0 @category constants */
/** Reading the door: a commercial reader or its administrator. */
export const doorScopes: ReadonlyArray<Scope> = ["commercial:read", "door:admin"]
/** Changing the door. */
export const doorAdminScopes: ReadonlyArray<Scope> = ["door:admin"]

/** The door address of a Source, under the API base. @since 0.1.0 @category naming */
export const doorPath = (sourceId: string): string => `/api/v1/door/${sourceId}`

const SourceId = Schema.String.pipe(Schema.pattern(/^src_[0-9a-f]{24}$/)).annotations({
  description: "A Source id (src_ followed by 24 hexadecimal digits).",
  examples: ["src_0123456789abcdef01234567"]
})
const Name = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({
  description: "A name people recognise, 1 to 120 characters."
})
const PipelineId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
  description: "A Pipeline of this workspace: new contacts from this Source open an opportunity there."
})
const StageId = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
  description: "A stage of that Pipeline, where new opportunities start."
})

/** A Source as the routes show it. @since 0.1.0 @category models */
export const SourceView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.Literal("cloudevents", "webhook"),
  template: Schema.NullOr(Schema.String),
  status: SourceStatus,
  pipeline_id: Schema.NullOr(Schema.String),
  stage_id: Schema.NullOr(Schema.String),
  door_path: Schema.String.annotations({ description: "Where senders POST, under the API's base address." })
}).annotations({ identifier: "Source" })
/** @since 0.1.0 @category models */
export type SourceView = typeof SourceView.Type

/** @since 0.1.0 @category models */
export const viewOf = (source: Source): SourceView => ({
  id: source.id,
  name: source.name,
  type: source.type,
  template: source.template,
  status: source.status,
  pipeline_id: source.pipeline_id,
  stage_id: source.stage_id,
  door_path: doorPath(source.id)
})

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const notFound = (id: string) =>
  refuse("source_not_found", `No Source ${id} in this workspace.`, "List the workspace's Sources and use one of their ids.", {
    field: "source_id"
  })

const archived = (id: string) =>
  refuse("source_archived", `Source ${id} is archived; it no longer changes.`, "Create a new Source instead.", { field: "source_id" })

const callerWorkspace = Effect.map(Caller, (caller) => caller.workspace)

/**
 * The Pipeline and stage a Source routes new contacts to: both or neither, and the stage must belong to the
 * Pipeline in this workspace.
 */
const routeOf = (
  workspaceId: string,
  input: { readonly pipeline_id?: string | null | undefined; readonly stage_id?: string | null | undefined }
) =>
  Effect.gen(function*() {
    const { pipeline_id, stage_id } = input
    if (pipeline_id === undefined && stage_id === undefined) return undefined
    if (pipeline_id === null && (stage_id === null || stage_id === undefined)) return null
    if (typeof pipeline_id !== "string" || typeof stage_id !== "string") {
      return yield* refuse("invalid_field_value", "pipeline_id and stage_id go together.", "Send both, or send both as null to clear them.", {
        field: typeof pipeline_id === "string" ? "stage_id" : "pipeline_id"
      })
    }
    const crm = yield* Crm
    yield* crm.checkStage(workspaceId, pipeline_id, stage_id).pipe(
      Effect.mapError(() =>
        refuse("pipeline_not_found", `Stage ${stage_id} of Pipeline ${pipeline_id} is not in this workspace.`, "Use a Pipeline of this workspace and one of its stages.", {
          field: "stage_id"
        })
      )
    )
    return { pipelineId: pipeline_id, stageId: stage_id }
  })

// -----------------------------------------------------------------------------
// Templates
// -----------------------------------------------------------------------------

/** A template as the template list shows it. @since 0.1.0 @category models */
export const TemplateView = Schema.Struct({
  name: Templates.TemplateName,
  label: Schema.String,
  verification: Templates.VerificationKind.annotations({
    description:
      "hmac and static-token: the tool signs with its own secret, pasted in as signing_secret; standard-webhooks: the tool's Standard Webhooks secret, pasted in as signing_secret; secret-address: the tool does not sign, so it posts to the Source's secret address."
  }),
  needs_signing_secret: Schema.Boolean,
  signature_headers: Schema.Array(Schema.String),
  person_events: Schema.Array(Schema.String).annotations({
    description: "Notice types that carry a person; other types are answered `ignored: unsupported_event`. Empty: every notice does."
  }),
  mapped_fields: Schema.Array(Templates.PersonField).annotations({ description: "The person fields the template reads." })
}).annotations({ identifier: "Template" })

const TemplateList = Schema.Struct({ templates: Schema.Array(TemplateView) }).annotations({ identifier: "TemplateList" })
const NoInput = Schema.Struct({}).annotations({ ...strict, identifier: "NoInput" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: doorScopes, annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const templates = kit.make({
  name: "templates",
  title: "List door templates",
  description:
    "The third-party tools a webhook Source can take notices from unchanged: how each is verified, whether it needs the tool's signing secret, the notice types that carry a person and the person fields read.",
  refuses: [],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/templates", input: { kind: "query" } },
  cli: { words: ["templates"] },
  input: NoInput,
  output: TemplateList,
  capability: { question: "Which tools can send notices to the door as they are?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.succeed({
      templates: Templates.templates.map((t) => ({
        name: t.name,
        label: t.label,
        verification: t.verification,
        needs_signing_secret: t.verification !== "secret-address",
        signature_headers: t.signatureHeaders,
        person_events: t.personEvents,
        mapped_fields: Templates.PersonField.literals.filter((field) => (t.defaultMapping[field] ?? []).length > 0)
      }))
    })
})

// -----------------------------------------------------------------------------
// Sources
// -----------------------------------------------------------------------------

const CreateInput = Schema.Struct({
  name: Name,
  type: Schema.optional(Schema.Literal("cloudevents", "webhook")).annotations({
    description: "cloudevents (default): signed CloudEvents 1.0. webhook: any tool's notice as it is, read through a mapping."
  }),
  template: Schema.optional(Templates.TemplateName).annotations({ description: "For webhook Sources: the tool that sends (see the template list)." }),
  verification: Schema.optional(Schema.Literal("standard-webhooks", "secret-address")).annotations({
    description:
      "For webhook Sources without a template: standard-webhooks (default; a whsec_ secret is returned) or secret-address (a token is returned; the address is the authentication)."
  }),
  signing_secret: Schema.optional(Schema.String.pipe(Schema.minLength(8), Schema.maxLength(512))).annotations({
    description: "For templates whose tool signs: the tool's own signing secret, as the tool shows it. Stored sealed, never shown again."
  }),
  pipeline_id: Schema.optional(PipelineId),
  stage_id: Schema.optional(StageId)
}).annotations({ ...strict, identifier: "CreateSourceInput" })

const CreatedSource = Schema.Struct({
  source: SourceView,
  secret: Schema.NullOr(Schema.String).annotations({
    description: "The whsec_ secret senders sign with. Shown this once: store it now."
  }),
  token: Schema.NullOr(Schema.String).annotations({
    description: "The secret-address token. Shown this once; only a fingerprint is kept."
  }),
  secret_address_path: Schema.NullOr(Schema.String).annotations({
    description: "door_path followed by the token: where a tool that does not sign posts. Shown this once."
  })
}).annotations({ identifier: "CreatedSource" })

const inputInvalid = (invalid: { readonly field: string; readonly why: string }) =>
  refuse("invalid_field_value", invalid.why, "Fix the named field following the template list and retry.", {
    field: invalid.field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  })

/** @since 0.1.0 @category operations */
export const sourcesCreate = kit.make({
  name: "sources_create",
  title: "Create a Source",
  description:
    "Creates a door Source. A cloudevents Source (the default) answers its whsec_ secret once. A webhook Source takes a tool's own notices: with a template that signs, send the tool's signing_secret; with a template that does not sign, or verification secret-address, the answer carries the secret-address token once. Optionally route new contacts to a Pipeline and stage. Owner or admin.",
  refuses: ["pipeline_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/sources", input: { kind: "body" } },
  cli: { words: ["sources", "create"] },
  input: CreateInput,
  output: CreatedSource,
  capability: {
    question: "How do I give a system its own signed address into the CRM?",
    requires: "A name; optionally type webhook with a template, and a Pipeline and stage.",
    example: { name: "Website contact form" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const route = yield* routeOf(workspace.id, input)
      const sources = yield* Sources
      const created = yield* sources.create(workspace.id, {
        name: input.name,
        type: input.type,
        template: input.template,
        verification: input.verification,
        signingSecret: input.signing_secret === undefined ? undefined : Redacted.make(input.signing_secret),
        pipelineId: route?.pipelineId,
        stageId: route?.stageId
      }).pipe(Effect.catchTag("SourceInputInvalid", inputInvalid))
      const token = created.token === undefined ? null : Redacted.value(created.token)
      return {
        source: viewOf(created.source),
        secret: created.secret === undefined ? null : Redacted.value(created.secret),
        token,
        secret_address_path: token === null ? null : `${doorPath(created.source.id)}/${token}`
      }
    })
})

const ListInput = Schema.Struct({
  status: Schema.optional(SourceStatus).annotations({ description: "Only Sources with this status." })
}).annotations({ ...strict, identifier: "ListSourcesInput" })

/** @since 0.1.0 @category operations */
export const sourcesList = kit.make({
  name: "sources_list",
  title: "List Sources",
  description: "The workspace's door Sources, newest first, optionally of one status (active, paused, archived).",
  refuses: [],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/sources", input: { kind: "query" } },
  cli: { words: ["sources", "list"] },
  input: ListInput,
  output: Schema.Struct({ sources: Schema.Array(SourceView) }).annotations({ identifier: "SourceList" }),
  capability: { question: "Which Sources does this workspace have?", requires: "Nothing.", example: {} },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      return { sources: (yield* sources.list(workspace.id, input.status)).map(viewOf) }
    })
})

const SourceRef = Schema.Struct({ source_id: SourceId }).annotations({ ...strict, identifier: "SourceRef" })

/** A Source with what reading its notices needs. @since 0.1.0 @category models */
export const SourceDetailView = Schema.Struct({
  ...SourceView.fields,
  verification: Templates.VerificationKind,
  mapping: Schema.NullOr(Mappings.SourceMapping).annotations({
    description: "The confirmed mapping (webhook Sources): where the event type, notice id, list of people and person fields sit. Null until a person confirms one."
  }),
  example: Schema.NullOr(Schema.Unknown).annotations({
    description: "The first notice received, secrets redacted; deleted 30 days after it arrived."
  }),
  example_received_at: Schema.NullOr(Schema.String),
  proposal: Schema.NullOr(Mappings.MappingInput).annotations({ description: "A mapping derived from the example, to confirm or edit." }),
  undecided_fields: Schema.Array(Schema.String).annotations({ description: "Paths seen in notices that no mapping reads yet." })
}).annotations({ identifier: "SourceDetail" })

const detailView = (detail: SourceDetail): typeof SourceDetailView.Type => ({
  ...viewOf(detail.source),
  verification: detail.verification,
  mapping: detail.mapping,
  example: detail.example,
  example_received_at: detail.example_received_at,
  proposal: detail.proposal,
  undecided_fields: detail.undecided_fields
})

/** @since 0.1.0 @category operations */
export const sourceRead = kit.make({
  name: "source_read",
  title: "Read a Source",
  description:
    "One Source: its status, type, template, verification, Pipeline and stage, door address, and for webhook Sources the confirmed mapping, the example notice, the mapping proposal and the fields no mapping reads yet.",
  refuses: ["source_not_found"],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/sources/:source_id", input: { kind: "path", params: { source_id: "source_id" } } },
  cli: { words: ["sources", "show"], positional: "source_id" },
  input: SourceRef,
  output: SourceDetailView,
  capability: {
    question: "What is this Source, where do senders post, and how are its notices read?",
    requires: "source_id.",
    example: { source_id: "<source_id>" },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      const found = yield* sources.detail(workspace.id, input.source_id)
      if (Option.isNone(found)) return yield* notFound(input.source_id)
      return detailView(found.value)
    })
})

const UpdateInput = Schema.Struct({
  source_id: SourceId,
  name: Schema.optional(Name),
  status: Schema.optional(Schema.Literal("active", "paused")).annotations({
    description: "paused: the door answers 503 and stores nothing until the Source is active again."
  }),
  pipeline_id: Schema.optional(Schema.NullOr(PipelineId)),
  stage_id: Schema.optional(Schema.NullOr(StageId))
}).annotations({ ...strict, identifier: "UpdateSourceInput" })

/** @since 0.1.0 @category operations */
export const sourceUpdate = kit.make({
  name: "source_update",
  title: "Change a Source",
  description:
    "Renames a Source, pauses or resumes it, or changes the Pipeline and stage new contacts open an opportunity in (both null: none). Owner or admin.",
  refuses: ["source_not_found", "source_archived", "pipeline_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.idempotentWrite,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "PATCH", path: "/sources/:source_id", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["sources", "update"], positional: "source_id" },
  input: UpdateInput,
  output: SourceView,
  capability: {
    question: "How do I pause a Source or send its contacts to a Pipeline?",
    requires: "source_id and the fields to change.",
    example: { source_id: "<source_id>", status: "paused" },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      const found = yield* sources.get(workspace.id, input.source_id)
      if (Option.isNone(found)) return yield* notFound(input.source_id)
      if (found.value.status === "archived") return yield* archived(input.source_id)
      const route = yield* routeOf(workspace.id, input)
      const updated = yield* sources.update(workspace.id, input.source_id, { name: input.name, route }).pipe(
        Effect.catchTag("SourceNotFound", () => notFound(input.source_id))
      )
      if (input.status === undefined || input.status === updated.status) return viewOf(updated)
      return viewOf(
        yield* sources.setStatus(workspace.id, input.source_id, input.status).pipe(
          Effect.catchTag("SourceNotFound", () => notFound(input.source_id))
        )
      )
    })
})

const SourceAction = Schema.Struct({ source_id: SourceId }).annotations({ ...strict, identifier: "SourceAction" })

/** @since 0.1.0 @category operations */
export const sourceArchive = kit.make({
  name: "source_archive",
  title: "Archive a Source",
  description: "Archives a Source for good: the door answers 410 to its senders from now on. Its Arrivals stay readable. Owner or admin.",
  refuses: ["source_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.destructive,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/sources/:source_id/archive", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["sources", "archive"], positional: "source_id" },
  input: SourceAction,
  output: SourceView,
  capability: {
    question: "How do I close a Source for good?",
    requires: "source_id.",
    example: { source_id: "<source_id>" },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      return viewOf(
        yield* sources.setStatus(workspace.id, input.source_id, "archived").pipe(
          Effect.catchTag("SourceNotFound", () => notFound(input.source_id))
        )
      )
    })
})

const Rotated = Schema.Struct({
  source: SourceView,
  secret: Schema.NullOr(Schema.String).annotations({
    description: "The new whsec_ secret, shown this once. The previous one keeps verifying for 24 hours."
  }),
  token: Schema.NullOr(Schema.String).annotations({
    description: "The new secret-address token, shown this once. The previous address stops working now."
  }),
  previous_valid_until: Schema.NullOr(Schema.String).annotations({ description: "Until when the previous secret verifies (ISO 8601 UTC)." })
}).annotations({ identifier: "RotatedSecret" })

/** @since 0.1.0 @category operations */
export const sourceRotateSecret = kit.make({
  name: "source_rotate_secret",
  title: "Rotate a Source's secret",
  description:
    "Issues a new secret for a Source, shown once. The previous whsec_ secret keeps verifying for 24 hours so senders can switch; a secret-address token stops working at once. A template Source verified with the tool's own key has nothing here to rotate: rotate it in the tool and create a new Source. Owner or admin.",
  refuses: ["source_not_found", "source_archived"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/sources/:source_id/rotate-secret", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["sources", "rotate-secret"], positional: "source_id" },
  input: SourceAction,
  output: Rotated,
  capability: {
    question: "How do I replace a Source's secret without losing requests?",
    requires: "source_id.",
    example: { source_id: "<source_id>" },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      const found = yield* sources.get(workspace.id, input.source_id)
      if (Option.isNone(found)) return yield* notFound(input.source_id)
      if (found.value.status === "archived") return yield* archived(input.source_id)
      const rotated = yield* sources.rotate(workspace.id, input.source_id).pipe(
        Effect.catchTags({ SourceNotFound: () => notFound(input.source_id), SourceInputInvalid: inputInvalid })
      )
      if ("token" in rotated) {
        return { source: viewOf(found.value), secret: null, token: Redacted.value(rotated.token), previous_valid_until: null }
      }
      const until = new Date((yield* Clock.currentTimeMillis) + ROTATION_OVERLAP_MS).toISOString()
      return { source: viewOf(found.value), secret: Redacted.value(rotated.secret), token: null, previous_valid_until: until }
    })
})

const ConfirmInput = Schema.Struct({
  source_id: SourceId,
  ...Mappings.MappingInput.fields
}).annotations({ ...strict, identifier: "ConfirmMappingInput" })

/** @since 0.1.0 @category operations */
export const mappingConfirm = kit.make({
  name: "mapping_confirm",
  title: "Confirm a Source's mapping",
  description:
    "Confirms how a webhook Source's notices are read: event_type (paths to the notice type), accepted_events (types that carry a person; empty: every notice), notice_id (paths to the tool's id, for duplicates), items (a path to a list of people, or null) and fields (paths to email, phone, name, first_name, last_name, company, website, role). Paths use the template path language (dotted names, [0], [field=value], header:<name>). Each confirmation raises the version. Owner or admin.",
  refuses: ["source_not_found", "source_archived", "mapping_invalid"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.write,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "PUT", path: "/sources/:source_id/mapping", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["mapping", "confirm"], positional: "source_id" },
  input: ConfirmInput,
  output: SourceDetailView,
  capability: {
    question: "How do I tell the door what each field of a tool's notice means?",
    requires: "source_id and the mapping (see the Source's proposal).",
    example: {
      source_id: "<source_id>",
      event_type: ["type"],
      accepted_events: [],
      notice_id: ["id"],
      items: null,
      fields: { email: ["data.email"], name: ["data.name"] }
    },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const sources = yield* Sources
      const found = yield* sources.get(workspace.id, input.source_id)
      if (Option.isNone(found)) return yield* notFound(input.source_id)
      if (found.value.status === "archived") return yield* archived(input.source_id)
      const { source_id, ...mapping } = input
      const detail = yield* sources.confirmMapping(workspace.id, source_id, mapping).pipe(
        Effect.catchTags({
          SourceNotFound: () => notFound(source_id),
          SourceInputInvalid: inputInvalid,
          MappingInvalid: (invalid) =>
            refuse("mapping_invalid", `The mapping has ${invalid.problems.length} path(s) that cannot be read.`, "Fix the paths listed in problems and confirm again.", {
              problems: invalid.problems
            })
        })
      )
      return detailView(detail)
    })
})

const ReprocessInput = Schema.Struct({
  source_id: SourceId,
  arrival_id: Schema.optional(Schema.String.pipe(Schema.pattern(/^arr_[0-9a-f]{24}$/))).annotations({
    description: "Only this Arrival; left out, every unmapped and no_person Arrival of the Source."
  })
}).annotations({ ...strict, identifier: "ReprocessInput" })

/** @since 0.1.0 @category operations */
export const reprocessUnmapped = kit.make({
  name: "reprocess_unmapped",
  title: "Reprocess unmapped Arrivals",
  description:
    "Reads a webhook Source's unmapped and no_person Arrivals again through its current mapping and queues them: requeued (put back on the queue), changed and unchanged (whether the reading differs from the last one), expired (raw notice deleted after 30 days; nothing to read), created (now name a person and will be applied to the CRM).",
  refuses: ["source_not_found", "arrival_not_found"],
  annotations: Operation.idempotentWrite,
  scopes: doorAdminScopes,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/sources/:source_id/reprocess-unmapped", input: { kind: "body", params: { source_id: "source_id" } } },
  cli: { words: ["sources", "reprocess"], positional: "source_id" },
  input: ReprocessInput,
  output: ReprocessCounts.annotations({ identifier: "ReprocessCounts" }),
  capability: {
    question: "I fixed the mapping: how do the notices it could not read get another try?",
    requires: "source_id; optionally one arrival_id.",
    example: { source_id: "<source_id>" },
    exampleFrom: { operation: "sources_list", path: ["sources", 0, "id"], field: "source_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* callerWorkspace
      const intake = yield* Intake
      return yield* intake.reprocess(workspace.id, input.source_id, input.arrival_id).pipe(
        Effect.catchTags({
          SourceNotFound: () => notFound(input.source_id),
          ArrivalNotFound: (missing) =>
            refuse("arrival_not_found", `No Arrival ${missing.id} of this Source.`, "List the Source's Arrivals and use one of their ids.", {
              field: "arrival_id"
            })
        })
      )
    })
})

/** Every Source operation, in the order the CLI and OpenAPI list them. @since 0.1.0 @category operations */
export const operations = [
  templates,
  sourcesCreate,
  sourcesList,
  sourceRead,
  sourceUpdate,
  sourceArchive,
  sourceRotateSecret,
  mappingConfirm,
  reprocessUnmapped
] as const

/** What running the Source operations needs. @since 0.1.0 @category models */
export type Requirements = Sources | Crm | Intake | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "door",
  title: "Door",
  description: "The intake door's Sources, templates and mappings.",
  operations,
  http: { prefix: "/workspaces/:workspace/door", workspaceScoped: true },
  mcp: { namespace: "door" },
  cli: { word: "door", description: "The intake door: Sources, templates and mappings." }
})
