/**
 * The CRM on every surface (HTTP under `/workspaces/<slug>/crm`, MCP `service_crm_*`, CLI `service crm ...`):
 * contacts (list, search, read, create, update, erase), companies, Pipelines and stages, opportunities and
 * collections (decision 0069). This module holds the group, a contact's read, a person's erasure and moving an
 * opportunity; the others live in `ContactOperations`, `PipelineOperations` and `CollectionOperations`. Every
 * change is recorded in the event ledger in the same transaction, without email or phone. A contact is the
 * workspace's own record, email and phone included: reads need `commercial:read` (or `crm:write`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import { Erasure } from "@service/core/Erasure"
import * as Operation from "@service/core/Operation"
import { EventLedger } from "@service/events/EventLedger"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as CollectionOperations from "./CollectionOperations.js"
import * as ContactOperations from "./ContactOperations.js"
import { ContactView } from "./ContactOperations.js"
import { Crm, OpportunityView } from "./Crm.js"
import { ContactId, kit, notFound, nowIso, OpportunityId, StageId, strict, transactional } from "./internal/kit.js"
import * as Summaries from "./internal/summaries.js"
import * as PipelineOperations from "./PipelineOperations.js"

/** @since 0.1.0 @category errors */
export { codec, CrmRefusal, refuse } from "./CrmRefusal.js"

const ContactRef = Schema.Struct({ contact_id: ContactId }).annotations({ ...strict, identifier: "ContactRef" })

/** @since 0.1.0 @category operations */
export const contactRead = kit.make({
  name: "contact_read",
  title: "Read a contact",
  description: "One contact of the workspace's CRM with its company (contact_list, contact_search or an Arrival names it).",
  refuses: ["contact_not_found"],
  http: { method: "GET", path: "/contacts/:contact_id", input: { kind: "path", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "show"], positional: "contact_id", summary: Summaries.contact },
  input: ContactRef,
  output: ContactView,
  capability: {
    question: "Who is this contact?",
    requires: "contact_id, from contact_list, contact_search or an Arrival.",
    example: { contact_id: "<contact_id>" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const found = yield* crm.getContact(caller.workspace.id, input.contact_id)
      if (Option.isNone(found)) {
        return yield* notFound("contact", input.contact_id)
      }
      const company = found.value.company_id === null ? Option.none() : yield* crm.getCompany(caller.workspace.id, found.value.company_id)
      return { ...found.value, company: Option.getOrNull(company) }
    })
})

/** @since 0.1.0 @category operations */
export const contactErase = kit.make({
  name: "contact_erase",
  title: "Erase a person",
  description:
    "Erases a person at their request, everywhere the service holds them: the contact's name, email, phone, role and website, and the raw notices, Source examples, event-ledger payloads, unlock answers, opportunity titles and other text that name them (docs/erasure.md). Only keyed fingerprints of the email and phone are kept, so later Arrivals for that person end rejected. Cannot be undone. Owner or admin.",
  refuses: ["contact_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.destructive,
  scopes: ["crm:write"],
  http: { method: "POST", path: "/contacts/:contact_id/erase", input: { kind: "body", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "erase"], positional: "contact_id", summary: Summaries.contact },
  input: ContactRef,
  output: ContactView,
  capability: {
    question: "A person asked to be forgotten: how do I erase them?",
    requires: "contact_id.",
    example: { contact_id: "<contact_id>" }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const ledger = yield* EventLedger
      const erasure = yield* Erasure
      const sql = yield* SqlClient.SqlClient
      // The contact is locked first: what writes about them meanwhile (an unlock's research) waits, or is waited for.
      yield* sql`SELECT 1 FROM crm.contacts WHERE workspace_id = ${caller.workspace.id} AND id = ${input.contact_id} FOR UPDATE`
      const contact = yield* crm.getContact(caller.workspace.id, input.contact_id)
      if (Option.isNone(contact)) return yield* notFound("contact", input.contact_id)
      // Every other store first, while the contact still says who they are; then the contact itself.
      const report = yield* erasure.erase({
        workspaceId: caller.workspace.id,
        contactId: input.contact_id,
        values: {
          names: Option.toArray(Option.fromNullable(contact.value.name)),
          emails: Option.toArray(Option.fromNullable(contact.value.email)),
          phones: Option.toArray(Option.fromNullable(contact.value.phone))
        }
      })
      yield* crm.erase(caller.workspace.id, input.contact_id).pipe(
        Effect.catchTag("CrmNotFound", () => notFound("contact", input.contact_id))
      )
      const erased = yield* crm.getContact(caller.workspace.id, input.contact_id)
      if (Option.isNone(erased)) return yield* Effect.dieMessage("an erased contact vanished")
      yield* ledger.record({
        workspaceId: caller.workspace.id,
        name: "contact.erased",
        subject: `contact/${input.contact_id}`,
        payload: {
          workspace_id: caller.workspace.id,
          occurred_at: yield* nowIso,
          contact_id: input.contact_id,
          name: null,
          company_id: erased.value.company_id,
          arrival_id: null,
          changed_fields: ["name", "email", "phone", "role", "website"],
          redacted: [{ store: "crm.contacts", redacted: 1 }, ...report.stores]
        }
      })
      const company = erased.value.company_id === null ? Option.none() : yield* crm.getCompany(caller.workspace.id, erased.value.company_id)
      return { ...erased.value, company: Option.getOrNull(company) }
    }))
})

const MoveInput = Schema.Struct({
  opportunity_id: OpportunityId,
  stage_id: StageId.annotations({ description: "A live stage of the opportunity's own Pipeline." })
}).annotations({ ...strict, identifier: "MoveOpportunityInput" })

const Moved = Schema.Struct({
  opportunity: OpportunityView,
  previous_stage_id: Schema.String,
  outcome: Schema.Literal("open", "won", "lost").annotations({ description: "The new stage's outcome: won or lost closes it." })
}).annotations({ identifier: "MovedOpportunity" })

/** @since 0.1.0 @category operations */
export const opportunityMove = kit.make({
  name: "opportunity_move",
  title: "Move an opportunity",
  description:
    "Moves an opportunity to another stage of its Pipeline. The ledger records opportunity.moved (subscribable per opportunity) and, on a won or lost stage, opportunity.closed.",
  refuses: ["opportunity_not_found", "stage_not_found"],
  annotations: Operation.idempotentWrite,
  scopes: ["crm:write"],
  http: { method: "POST", path: "/opportunities/:opportunity_id/move", input: { kind: "body", params: { opportunity_id: "opportunity_id" } } },
  cli: { words: ["opportunities", "move"], positional: "opportunity_id" },
  input: MoveInput,
  output: Moved,
  capability: {
    question: "How do I move a deal along its Pipeline?",
    requires: "opportunity_id and stage_id.",
    example: { opportunity_id: "<opportunity_id>", stage_id: "<stage_id>" }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const ledger = yield* EventLedger
      const moved = yield* crm.moveOpportunity(caller.workspace.id, input.opportunity_id, input.stage_id).pipe(
        Effect.catchTag("CrmNotFound", (missing) =>
          missing.kind === "stage"
            ? notFound("stage", input.stage_id)
            : notFound("opportunity", input.opportunity_id))
      )
      const view = yield* crm.getOpportunity(caller.workspace.id, input.opportunity_id)
      if (Option.isNone(view)) return yield* Effect.dieMessage("a moved opportunity vanished")
      const opportunity = view.value
      const payload = {
        workspace_id: caller.workspace.id,
        occurred_at: yield* nowIso,
        opportunity_id: opportunity.id,
        contact_id: opportunity.contact_id,
        pipeline_id: opportunity.pipeline_id,
        stage_id: opportunity.stage_id,
        previous_stage_id: moved.previousStageId
      }
      // Moving to the stage it is in changes nothing and records nothing.
      if (moved.previousStageId !== opportunity.stage_id) {
        yield* ledger.record({ workspaceId: caller.workspace.id, name: "opportunity.moved", subject: `opportunity/${opportunity.id}`, payload })
        if (moved.outcome !== "open") {
          yield* ledger.record({ workspaceId: caller.workspace.id, name: "opportunity.closed", subject: `opportunity/${opportunity.id}`, payload })
        }
      }
      return { opportunity, previous_stage_id: moved.previousStageId, outcome: moved.outcome }
    }))
})

/** What running the CRM operations needs. @since 0.1.0 @category models */
export type Requirements = Crm | EventLedger | SqlClient.SqlClient | Caller | Erasure

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "crm",
  title: "CRM",
  description:
    "The workspace's CRM, filled by the door and by people: contacts and their companies, Pipelines and stages, opportunities, and collections of contacts (what contact quotes and unlocks take).",
  operations: [
    ...ContactOperations.operations.slice(0, 2),
    contactRead,
    ...ContactOperations.operations.slice(2, 4),
    contactErase,
    ...ContactOperations.operations.slice(4),
    ...PipelineOperations.pipelineOperations,
    ...PipelineOperations.opportunityOperations.slice(0, 3),
    opportunityMove,
    ...PipelineOperations.opportunityOperations.slice(3),
    ...CollectionOperations.operations
  ],
  http: { prefix: "/workspaces/:workspace/crm", workspaceScoped: true },
  mcp: { namespace: "crm" },
  cli: { word: "crm", description: "The workspace's CRM: contacts, companies, Pipelines, opportunities and collections." }
})
