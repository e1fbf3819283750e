/**
 * What the conformance suite needs to run every CRM example, seeded in one workspace through the `Crm` service:
 * contacts (one at a business domain, so it has a company), a Pipeline and an opportunity for each example that
 * changes one (renaming, archiving, adding, reordering and archiving stages, closing), and collections to read,
 * grow, shrink and delete. Each destructive example gets its own record, so the order the suite runs them in
 * does not matter.
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import * as Effect from "effect/Effect"
import { Crm } from "./Crm.js"

const pipeline = (name: string) => ({
  name,
  stages: [
    { name: "Nuevo", outcome: "open" as const },
    { name: "Calificado", outcome: "open" as const },
    { name: "Ganado", outcome: "won" as const },
    { name: "Perdido", outcome: "lost" as const }
  ]
})

/**
 * Seeds the CRM examples in `workspaceId` and returns the values that name them, by operation.
 *
 * @since 0.1.0 @category fixtures
 */
export const seed = (workspaceId: string): Effect.Effect<Bundle.Examples, never, Crm> =>
  Effect.gen(function*() {
    const crm = yield* Crm
    const contact = (name: string, email: string) =>
      Effect.flatMap(crm.applyContact(workspaceId, { name, email }), (outcome) =>
        outcome._tag === "Created" ? Effect.succeed(outcome.contact) : Effect.dieMessage(`the CRM fixture's ${name} was not created: ${outcome._tag}`))
    const buyer = yield* contact("Conformance buyer", "buyer@conformance-compras.example.com")
    const other = yield* contact("Conformance colleague", "colleague@conformance-compras.example.com")
    const made = yield* Effect.all([
      crm.createPipeline(workspaceId, pipeline("Conformance main")),
      crm.createPipeline(workspaceId, pipeline("Conformance rename")),
      crm.createPipeline(workspaceId, pipeline("Conformance archive")),
      crm.createPipeline(workspaceId, pipeline("Conformance stages")),
      crm.createPipeline(workspaceId, pipeline("Conformance reorder")),
      crm.createPipeline(workspaceId, pipeline("Conformance stage archive"))
    ]).pipe(Effect.orDie)
    const [main, renamed, archived, staged, reordered, stageArchived] = made
    const firstOf = (p: (typeof made)[number]) => p.stages[0]?.id ?? ""
    const open = (title: string) =>
      crm.openOpportunity(workspaceId, { contactId: buyer.id, pipelineId: main.id, stageId: firstOf(main), title }).pipe(Effect.orDie)
    const read = yield* open("Conformance deal")
    const closing = yield* open("Conformance deal to close")
    const collection = (name: string) => Effect.orDie(crm.createCollection(workspaceId, { name, contactIds: [buyer.id] }))
    const shown = yield* collection("Conformance read")
    const grown = yield* collection("Conformance add")
    const shrunk = yield* collection("Conformance remove")
    const deleted = yield* collection("Conformance delete")
    const spare = reordered.stages.map((s) => s.id)
    return {
      contact_update: { contact_id: buyer.id },
      company_read: { company_id: buyer.company_id ?? "" },
      pipeline_rename: { pipeline_id: renamed.id },
      pipeline_archive: { pipeline_id: archived.id },
      stage_add: { pipeline_id: staged.id },
      stage_rename: { stage_id: renamed.stages[1]?.id ?? "" },
      stages_reorder: { pipeline_id: reordered.id, stage_ids: [spare[1], spare[0], ...spare.slice(2)] },
      stage_archive: { stage_id: stageArchived.stages[1]?.id ?? "" },
      opportunity_create: { contact_id: other.id, pipeline_id: main.id },
      opportunity_read: { opportunity_id: read.id },
      opportunity_close: { opportunity_id: closing.id },
      collection_create: { contact_ids: [buyer.id, other.id] },
      collection_read: { collection_id: shown.id },
      collection_add: { collection_id: grown.id, contact_ids: [other.id] },
      collection_remove: { collection_id: shrunk.id, contact_ids: [buyer.id] },
      collection_delete: { collection_id: deleted.id }
    }
  })
