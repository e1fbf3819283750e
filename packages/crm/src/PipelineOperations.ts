/**
 * Pipelines, their stages and the opportunities that move through them, on every surface. Pipelines and stages
 * are the workspace's sales process: an owner or admin creates, renames, reorders and archives them (recorded
 * as `pipeline.created` and `pipeline.updated`); an archived Pipeline or stage takes no new opportunities, and
 * what it holds stays readable. Opportunities are listed (by Pipeline, stage, company, contact or outcome),
 * opened by hand (`opportunity.created`), read and closed as won or lost (`opportunity.moved` and
 * `opportunity.closed`).
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import { Caller } from "@service/core/RequestContext"
import { EventLedger } from "@service/events/EventLedger"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { CrmNotFound } from "./Crm.js"
import { Crm, OpportunityView, Pipeline } from "./Crm.js"
import { refuse } from "./CrmRefusal.js"
import {
  badCursor,
  CompanyId,
  ContactId,
  kit,
  NextCursor,
  notFound,
  nowIso,
  OpportunityId,
  pageInputs,
  PipelineId,
  refuseMissing,
  StageId,
  strict,
  Text,
  transactional,
  writeScopes
} from "./internal/kit.js"
import * as Summaries from "./internal/summaries.js"

const write = { readOnly: false, destructive: false, idempotent: false, openWorld: false } as const
const idempotent = { ...write, idempotent: true } as const

type Change = "created" | "renamed" | "archived" | "stage_added" | "stage_renamed" | "stages_reordered" | "stage_archived"

const recordPipeline = (pipeline: Pipeline, change: Change, stageId: string | null) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const ledger = yield* EventLedger
    yield* ledger.record({
      workspaceId: caller.workspace.id,
      name: change === "created" ? "pipeline.created" : "pipeline.updated",
      subject: `pipeline/${pipeline.id}`,
      payload: { workspace_id: caller.workspace.id, occurred_at: yield* nowIso, pipeline_id: pipeline.id, name: pipeline.name, change, stage_id: stageId }
    })
  })

const StageName = Text(80, "The stage's name.")

const CreateInput = Schema.Struct({
  name: Text(120, "The Pipeline's name."),
  stages: Schema.Array(StageName).pipe(Schema.minItems(1), Schema.maxItems(20)).annotations({
    description: "The open stages, in order (a deal starts in the first)."
  }),
  won_stage: Schema.optional(StageName).annotations({ description: "The name of the stage that closes a deal as won (default Won)." }),
  lost_stage: Schema.optional(StageName).annotations({ description: "The name of the stage that closes a deal as lost (default Lost)." })
}).annotations({ ...strict, identifier: "PipelineCreateInput" })

const PipelineView = Pipeline.annotations({ identifier: "Pipeline" })

/** @since 0.1.0 @category operations */
export const pipelineCreate = kit.make({
  name: "pipeline_create",
  title: "Create a Pipeline",
  description:
    "Creates a Pipeline: its open stages in order, then a won and a lost stage that close a deal. A door Source may route new contacts to one of its stages. Owner or admin. Records pipeline.created.",
  refuses: [],
  authorize: requireOwnerOrAdminPerson,
  annotations: write,
  scopes: writeScopes,
  http: { method: "POST", path: "/pipelines", input: { kind: "body" } },
  cli: { words: ["pipelines", "create"], summary: Summaries.pipeline },
  input: CreateInput,
  output: PipelineView,
  capability: {
    question: "How do I set up a sales process for the deals the door opens?",
    requires: "name and the open stages in order; optionally won_stage and lost_stage.",
    example: { name: "Ventas", stages: ["Nuevo", "Calificado", "Propuesta"] }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* crm.createPipeline(caller.workspace.id, {
        name: input.name,
        stages: [
          ...input.stages.map((name) => ({ name, outcome: "open" as const })),
          { name: input.won_stage ?? "Won", outcome: "won" as const },
          { name: input.lost_stage ?? "Lost", outcome: "lost" as const }
        ]
      }).pipe(Effect.catchTag("InvalidPipeline", (invalid) => refuse("invalid_field_value", `The Pipeline is not valid: ${invalid.reason}.`, "Send a name and at least one stage.")))
      yield* recordPipeline(pipeline, "created", null)
      return pipeline
    }))
})

const ListInput = Schema.Struct({
  include_archived: Schema.optional(Schema.BooleanFromString).annotations({ description: "Also list archived Pipelines (default false)." })
}).annotations({ ...strict, identifier: "PipelineListInput" })
const ListModelInput = Schema.Struct({
  include_archived: Schema.optional(Schema.Boolean).annotations({ description: "Also list archived Pipelines (default false)." })
}).annotations({ ...strict, identifier: "PipelineListModelInput" })

/** @since 0.1.0 @category operations */
export const pipelineList = kit.make({
  name: "pipeline_list",
  title: "List Pipelines",
  description: "The workspace's Pipelines with their stages in order (each stage's id, outcome and whether it is archived). Free.",
  refuses: [],
  http: { method: "GET", path: "/pipelines", input: { kind: "query" } },
  cli: { words: ["pipelines", "list"], summary: Summaries.pipelines },
  input: ListInput,
  modelInput: ListModelInput,
  output: Schema.Struct({ pipelines: Schema.Array(PipelineView) }).annotations({ identifier: "PipelineList" }),
  capability: {
    question: "Which Pipelines and stages does the workspace have?",
    requires: "Nothing; optionally include_archived.",
    example: {}
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const all = yield* crm.pipelines(caller.workspace.id)
      return { pipelines: input.include_archived === true ? all : all.filter((p) => !p.archived) }
    })
})

const missing = <A, R>(effect: Effect.Effect<A, CrmNotFound, R>) => Effect.catchTag(effect, "CrmNotFound", (m) => refuseMissing(m))

/** @since 0.1.0 @category operations */
export const pipelineRename = kit.make({
  name: "pipeline_rename",
  title: "Rename a Pipeline",
  description: "Gives a Pipeline a new name. Owner or admin. Records pipeline.updated (renamed).",
  refuses: ["pipeline_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: idempotent,
  scopes: writeScopes,
  http: { method: "POST", path: "/pipelines/:pipeline_id/rename", input: { kind: "body", params: { pipeline_id: "pipeline_id" } } },
  cli: { words: ["pipelines", "rename"], positional: "pipeline_id" },
  input: Schema.Struct({ pipeline_id: PipelineId, name: Text(120, "The new name.") }).annotations({ ...strict, identifier: "PipelineRenameInput" }),
  output: PipelineView,
  capability: { question: "How do I rename a Pipeline?", requires: "pipeline_id and name.", example: { pipeline_id: "<pipeline_id>", name: "Ventas 2027" } },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* missing(crm.renamePipeline(caller.workspace.id, input.pipeline_id, input.name))
      yield* recordPipeline(pipeline, "renamed", null)
      return pipeline
    }))
})

/** @since 0.1.0 @category operations */
export const pipelineArchive = kit.make({
  name: "pipeline_archive",
  title: "Archive a Pipeline",
  description:
    "Archives a Pipeline: it takes no new opportunities (by hand or from a door Source routed to it) and is left out of pipeline_list; its opportunities stay readable and can still close. Owner or admin. Records pipeline.updated (archived).",
  refuses: ["pipeline_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: { ...idempotent, destructive: true },
  scopes: writeScopes,
  http: { method: "POST", path: "/pipelines/:pipeline_id/archive", input: { kind: "body", params: { pipeline_id: "pipeline_id" } } },
  cli: { words: ["pipelines", "archive"], positional: "pipeline_id" },
  input: Schema.Struct({ pipeline_id: PipelineId }).annotations({ ...strict, identifier: "PipelineRef" }),
  output: PipelineView,
  capability: { question: "How do I retire a Pipeline?", requires: "pipeline_id.", example: { pipeline_id: "<pipeline_id>" } },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* missing(crm.archivePipeline(caller.workspace.id, input.pipeline_id))
      yield* recordPipeline(pipeline, "archived", null)
      return pipeline
    }))
})

/** @since 0.1.0 @category operations */
export const stageAdd = kit.make({
  name: "stage_add",
  title: "Add a stage",
  description: "Adds a stage to a Pipeline, at a position (0 is first; default last). Owner or admin. Records pipeline.updated (stage_added).",
  refuses: ["pipeline_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: write,
  scopes: writeScopes,
  http: { method: "POST", path: "/pipelines/:pipeline_id/stages", input: { kind: "body", params: { pipeline_id: "pipeline_id" } } },
  cli: { words: ["stages", "add"], positional: "pipeline_id" },
  input: Schema.Struct({
    pipeline_id: PipelineId,
    name: StageName,
    outcome: Schema.optional(Schema.Literal("open", "won", "lost")).annotations({ description: "open (default), or won or lost to close deals." }),
    position: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, 50))).annotations({
      description: "Where it goes: 0 is first; default last."
    })
  }).annotations({ ...strict, identifier: "StageAddInput" }),
  output: PipelineView,
  capability: {
    question: "How do I add a step to a Pipeline?",
    requires: "pipeline_id and name; optionally outcome and position.",
    example: { pipeline_id: "<pipeline_id>", name: "Negociación", position: 1 }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* missing(crm.addStage(caller.workspace.id, input.pipeline_id, {
        name: input.name,
        outcome: input.outcome ?? "open",
        position: input.position
      }))
      // The new stage sits where it was put: at `position`, clamped to the end.
      const last = pipeline.stages.length - 1
      const added = pipeline.stages[Math.min(input.position ?? last, last)]
      yield* recordPipeline(pipeline, "stage_added", added?.id ?? null)
      return pipeline
    }))
})

/** @since 0.1.0 @category operations */
export const stageRename = kit.make({
  name: "stage_rename",
  title: "Rename a stage",
  description: "Gives a stage a new name. Owner or admin. Records pipeline.updated (stage_renamed).",
  refuses: ["stage_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: idempotent,
  scopes: writeScopes,
  http: { method: "POST", path: "/stages/:stage_id/rename", input: { kind: "body", params: { stage_id: "stage_id" } } },
  cli: { words: ["stages", "rename"], positional: "stage_id" },
  input: Schema.Struct({ stage_id: StageId, name: StageName }).annotations({ ...strict, identifier: "StageRenameInput" }),
  output: PipelineView,
  capability: { question: "How do I rename a stage?", requires: "stage_id and name.", example: { stage_id: "<stage_id>", name: "Contactado" } },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* missing(crm.renameStage(caller.workspace.id, input.stage_id, input.name))
      yield* recordPipeline(pipeline, "stage_renamed", input.stage_id)
      return pipeline
    }))
})

/** @since 0.1.0 @category operations */
export const stagesReorder = kit.make({
  name: "stages_reorder",
  title: "Reorder stages",
  description: "Puts a Pipeline's stages in a new order: name every stage of it (archived ones included) once. Owner or admin. Records pipeline.updated (stages_reordered).",
  refuses: ["pipeline_not_found", "stage_not_found", "invalid_stage_order"],
  authorize: requireOwnerOrAdminPerson,
  annotations: idempotent,
  scopes: writeScopes,
  http: { method: "POST", path: "/pipelines/:pipeline_id/reorder", input: { kind: "body", params: { pipeline_id: "pipeline_id" } } },
  cli: { words: ["stages", "reorder"], positional: "pipeline_id" },
  input: Schema.Struct({
    pipeline_id: PipelineId,
    stage_ids: Schema.Array(StageId).pipe(Schema.minItems(1), Schema.maxItems(60)).annotations({ description: "Every stage id of the Pipeline, in the new order." })
  }).annotations({ ...strict, identifier: "StagesReorderInput" }),
  output: PipelineView,
  capability: {
    question: "How do I change the order of a Pipeline's stages?",
    requires: "pipeline_id and stage_ids: all of its stages in the new order.",
    example: { pipeline_id: "<pipeline_id>", stage_ids: ["<stage_id>"] }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* crm.reorderStages(caller.workspace.id, input.pipeline_id, input.stage_ids).pipe(
        Effect.catchTags({
          CrmNotFound: (m) => refuseMissing(m),
          InvalidPipeline: (invalid) =>
            refuse("invalid_stage_order", `The order is not valid: ${invalid.reason}.`, "Send every stage id of the Pipeline (pipeline_list shows them) once, in the new order.", {
              field: "stage_ids"
            })
        })
      )
      yield* recordPipeline(pipeline, "stages_reordered", null)
      return pipeline
    }))
})

/** @since 0.1.0 @category operations */
export const stageArchive = kit.make({
  name: "stage_archive",
  title: "Archive a stage",
  description:
    "Archives a stage: it takes no new opportunities. An open stage still holding opportunities, or a Pipeline's last open stage, is refused (stage_in_use): move them first. Owner or admin. Records pipeline.updated (stage_archived).",
  refuses: ["stage_not_found", "stage_in_use"],
  authorize: requireOwnerOrAdminPerson,
  annotations: { ...idempotent, destructive: true },
  scopes: writeScopes,
  http: { method: "POST", path: "/stages/:stage_id/archive", input: { kind: "body", params: { stage_id: "stage_id" } } },
  cli: { words: ["stages", "archive"], positional: "stage_id" },
  input: Schema.Struct({ stage_id: StageId }).annotations({ ...strict, identifier: "StageRef" }),
  output: PipelineView,
  capability: { question: "How do I retire a stage?", requires: "stage_id.", example: { stage_id: "<stage_id>" } },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* crm.archiveStage(caller.workspace.id, input.stage_id).pipe(
        Effect.catchTags({
          CrmNotFound: (m) => refuseMissing(m),
          StageInUse: (inUse) => refuse("stage_in_use", `The stage cannot be archived: ${inUse.reason}.`, "Move its opportunities to another stage (opportunity_move), then archive it.", { field: "stage_id" })
        })
      )
      yield* recordPipeline(pipeline, "stage_archived", input.stage_id)
      return pipeline
    }))
})

const Outcome = Schema.Literal("open", "won", "lost")

const opportunityListFields = {
  pipeline_id: Schema.optional(PipelineId).annotations({ description: "Only this Pipeline's opportunities." }),
  stage_id: Schema.optional(StageId).annotations({ description: "Only those in this stage." }),
  company_id: Schema.optional(CompanyId).annotations({ description: "Only those whose contact belongs to this company." }),
  contact_id: Schema.optional(ContactId).annotations({ description: "Only this contact's." }),
  outcome: Schema.optional(Outcome).annotations({ description: "Only open ones, or those closed won or lost." })
}

/** @since 0.1.0 @category operations */
export const opportunityList = kit.make({
  name: "opportunity_list",
  title: "List opportunities",
  description: "The workspace's opportunities, newest first, each with its stage's name and outcome and its contact's company; filter by Pipeline, stage, company, contact or outcome; page with cursor. Free.",
  refuses: [],
  paginates: true,
  http: { method: "GET", path: "/opportunities", input: { kind: "query" } },
  cli: { words: ["opportunities", "list"], summary: Summaries.opportunityPage },
  ...pageInputs(opportunityListFields, 100, 20, "OpportunityList"),
  output: Schema.Struct({ opportunities: Schema.Array(OpportunityView), next_cursor: NextCursor }).annotations({ identifier: "OpportunityPage" }),
  capability: {
    question: "Which deals are open, and where do they stand?",
    requires: "Nothing; optionally pipeline_id, stage_id, company_id, contact_id, outcome, limit and cursor.",
    example: { outcome: "open", limit: 10 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const page = yield* crm.listOpportunities(caller.workspace.id, {
        pipelineId: input.pipeline_id,
        stageId: input.stage_id,
        companyId: input.company_id,
        contactId: input.contact_id,
        outcome: input.outcome,
        limit: input.limit ?? 20,
        cursor: input.cursor
      }).pipe(Effect.catchTag("BadCursor", badCursor))
      return { opportunities: page.items, next_cursor: page.nextCursor }
    })
})

/** @since 0.1.0 @category operations */
export const opportunityRead = kit.make({
  name: "opportunity_read",
  title: "Read an opportunity",
  description: "One opportunity with its stage's name and outcome and its contact's company.",
  refuses: ["opportunity_not_found"],
  http: { method: "GET", path: "/opportunities/:opportunity_id", input: { kind: "path", params: { opportunity_id: "opportunity_id" } } },
  cli: { words: ["opportunities", "show"], positional: "opportunity_id" },
  input: Schema.Struct({ opportunity_id: OpportunityId }).annotations({ ...strict, identifier: "OpportunityRef" }),
  output: OpportunityView,
  capability: { question: "Where does this deal stand?", requires: "opportunity_id.", example: { opportunity_id: "<opportunity_id>" } },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const found = yield* crm.getOpportunity(caller.workspace.id, input.opportunity_id)
      if (Option.isNone(found)) return yield* notFound("opportunity", input.opportunity_id)
      return found.value
    })
})

const recordOpportunity = (name: "opportunity.created" | "opportunity.moved" | "opportunity.closed", o: OpportunityView, previous: string | null) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const ledger = yield* EventLedger
    yield* ledger.record({
      workspaceId: caller.workspace.id,
      name,
      subject: `opportunity/${o.id}`,
      payload: {
        workspace_id: caller.workspace.id,
        occurred_at: yield* nowIso,
        opportunity_id: o.id,
        contact_id: o.contact_id,
        pipeline_id: o.pipeline_id,
        stage_id: o.stage_id,
        previous_stage_id: previous
      }
    })
  })

/** @since 0.1.0 @category operations */
export const opportunityCreate = kit.make({
  name: "opportunity_create",
  title: "Open an opportunity",
  description:
    "Opens a deal for a contact in a Pipeline, in a given stage or its first open one. An archived Pipeline or stage takes none. Records opportunity.created.",
  refuses: ["contact_not_found", "pipeline_not_found", "stage_not_found"],
  annotations: write,
  scopes: writeScopes,
  http: { method: "POST", path: "/opportunities", input: { kind: "body" } },
  cli: { words: ["opportunities", "create"] },
  input: Schema.Struct({
    contact_id: ContactId,
    pipeline_id: PipelineId,
    stage_id: Schema.optional(StageId).annotations({ description: "Where it starts (default the Pipeline's first open stage)." }),
    title: Text(200, "What the deal is, e.g. Suministro de papelería 2027.")
  }).annotations({ ...strict, identifier: "OpportunityCreateInput" }),
  output: OpportunityView,
  capability: {
    question: "How do I open a deal for a contact?",
    requires: "contact_id, pipeline_id and title; optionally stage_id.",
    example: { contact_id: "<contact_id>", pipeline_id: "<pipeline_id>", title: "Suministro 2027" }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const pipeline = yield* crm.getPipeline(caller.workspace.id, input.pipeline_id)
      if (Option.isNone(pipeline) || pipeline.value.archived) return yield* notFound("pipeline", input.pipeline_id)
      const first = pipeline.value.stages.find((s) => s.outcome === "open" && !s.archived)
      const stageId = input.stage_id ?? first?.id
      if (stageId === undefined) return yield* notFound("stage", "(first open stage)")
      const opened = yield* missing(crm.openOpportunity(caller.workspace.id, {
        contactId: input.contact_id,
        pipelineId: input.pipeline_id,
        stageId,
        title: input.title
      }))
      const view = yield* crm.getOpportunity(caller.workspace.id, opened.id)
      if (Option.isNone(view)) return yield* Effect.dieMessage("an opened opportunity vanished")
      yield* recordOpportunity("opportunity.created", view.value, null)
      return view.value
    }))
})

/** @since 0.1.0 @category operations */
export const opportunityClose = kit.make({
  name: "opportunity_close",
  title: "Close an opportunity",
  description:
    "Closes a deal as won or lost: moves it to its Pipeline's first live stage with that outcome. Records opportunity.moved and opportunity.closed; closing it as it already stands changes nothing.",
  refuses: ["opportunity_not_found", "stage_not_found"],
  annotations: idempotent,
  scopes: writeScopes,
  http: { method: "POST", path: "/opportunities/:opportunity_id/close", input: { kind: "body", params: { opportunity_id: "opportunity_id" } } },
  cli: { words: ["opportunities", "close"], positional: "opportunity_id" },
  input: Schema.Struct({
    opportunity_id: OpportunityId,
    outcome: Schema.Literal("won", "lost").annotations({ description: "won or lost." })
  }).annotations({ ...strict, identifier: "OpportunityCloseInput" }),
  output: OpportunityView,
  capability: {
    question: "We won (or lost) this deal: how do I record it?",
    requires: "opportunity_id and outcome (won or lost).",
    example: { opportunity_id: "<opportunity_id>", outcome: "won" }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const current = yield* crm.getOpportunity(caller.workspace.id, input.opportunity_id)
      if (Option.isNone(current)) return yield* notFound("opportunity", input.opportunity_id)
      if (current.value.outcome === input.outcome) return current.value
      const pipeline = yield* crm.getPipeline(caller.workspace.id, current.value.pipeline_id)
      const target = Option.flatMap(pipeline, (p) => Option.fromNullable(p.stages.find((s) => s.outcome === input.outcome && !s.archived)))
      if (Option.isNone(target)) {
        return yield* refuse(
          "stage_not_found",
          `The opportunity's Pipeline has no live ${input.outcome} stage.`,
          `Add a ${input.outcome} stage to the Pipeline (stage_add), then close it again.`,
          { field: "outcome" }
        )
      }
      const moved = yield* missing(crm.moveOpportunity(caller.workspace.id, input.opportunity_id, target.value.id))
      const view = yield* crm.getOpportunity(caller.workspace.id, input.opportunity_id)
      if (Option.isNone(view)) return yield* Effect.dieMessage("a closed opportunity vanished")
      yield* recordOpportunity("opportunity.moved", view.value, moved.previousStageId)
      yield* recordOpportunity("opportunity.closed", view.value, moved.previousStageId)
      return view.value
    }))
})

/** The Pipeline and opportunity operations, in the order the group lists them. @since 0.1.0 @category operations */
export const pipelineOperations = [pipelineCreate, pipelineList, pipelineRename, pipelineArchive, stageAdd, stageRename, stagesReorder, stageArchive] as const

/** @since 0.1.0 @category operations */
export const opportunityOperations = [opportunityList, opportunityCreate, opportunityRead, opportunityClose] as const
