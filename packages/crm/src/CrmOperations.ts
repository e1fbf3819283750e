/**
 * The CRM on HTTP and the CLI: one contact with its company (`GET /workspaces/<slug>/crm/contacts/<id>`), a
 * person's erasure (`POST .../contacts/<id>/erase`) and moving an opportunity to another stage (`POST
 * .../opportunities/<id>/move`). Every change is recorded in the event ledger in the same transaction
 * (`contact.erased`, `opportunity.moved`, and `opportunity.closed` on a won or lost stage), without email or phone.
 * The contact is the workspace's own record, email and phone included; it is not served on MCP, where agents
 * read Arrivals, which never carry them.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import { EventLedger } from "@service/events/EventLedger"
import * as Refusal from "@service/core/Refusal"
import { Caller } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Company, Contact, Crm, Opportunity } from "./Crm.js"

const defined = Refusal.define({
  key: "crm",
  identifier: "Crm",
  rules: {
    contact_not_found: { status: 404, retryable: false, action: "list_arrivals", description: "no contact with that id in this workspace" },
    opportunity_not_found: { status: 404, retryable: false, action: "list_arrivals", description: "no opportunity with that id in this workspace" },
    stage_not_found: { status: 404, retryable: false, action: "fix_arguments", description: "the stage is not one of the opportunity's Pipeline" }
  },
  outage: { code: "crm_unavailable", store: "the CRM's store", suggestedCorrection: "Retry in a few seconds." },
  invalidInputDescription: "a field is missing, unknown or malformed"
})

/** @since 0.1.0 @category errors */
export class CrmRefusal extends Schema.TaggedError<CrmRefusal>("@service/crm/CrmRefusal")("CrmRefusal", defined.fields) {}

/** @since 0.1.0 @category codecs */
export const { codec, refuse } = defined.codecFor(CrmRefusal)

const ContactRef = Schema.Struct({
  contact_id: Schema.String.pipe(Schema.pattern(/^contact_[0-9a-f]{24}$/)).annotations({
    description: "A contact id, as an Arrival names it (contact_ followed by 24 hexadecimal digits)."
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ContactRef" })

const ContactView = Schema.Struct({
  ...Contact.fields,
  company: Schema.NullOr(Company).annotations({ description: "The company matched by the email's business domain." })
}).annotations({ identifier: "Contact" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: ["commercial:read", "crm:write"], annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const contactRead = kit.make({
  name: "contact_read",
  title: "Read a contact",
  description: "One contact of the workspace's CRM with its company: what the door created or updated (an Arrival names it).",
  refuses: ["contact_not_found"],
  surfaces: { mcp: false },
  http: { method: "GET", path: "/contacts/:contact_id", input: { kind: "path", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "show"], positional: "contact_id" },
  input: ContactRef,
  output: ContactView,
  capability: {
    question: "Who is this contact the door applied?",
    requires: "contact_id, from an Arrival.",
    example: { contact_id: "<contact_id>" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const found = yield* crm.getContact(caller.workspace.id, input.contact_id)
      if (Option.isNone(found)) {
        return yield* new CrmRefusal({
          code: "contact_not_found",
          why: `No contact ${input.contact_id} in this workspace.`,
          suggestedCorrection: "Use the contact_id of one of the workspace's Arrivals.",
          field: "contact_id"
        })
      }
      const company = found.value.company_id === null ? Option.none() : yield* crm.getCompany(caller.workspace.id, found.value.company_id)
      return { ...found.value, company: Option.getOrNull(company) }
    })
})

const notFound = (code: "contact_not_found" | "opportunity_not_found" | "stage_not_found", id: string, field: string) =>
  new CrmRefusal({
    code,
    why: `No ${code.replace("_not_found", "")} ${id} in this workspace${code === "stage_not_found" ? "'s Pipeline of that opportunity" : ""}.`,
    suggestedCorrection: code === "stage_not_found"
      ? "Use a stage of the opportunity's own Pipeline."
      : "Use an id an Arrival or an earlier answer named.",
    field
  })

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** Runs a change and its ledger entries in one transaction. */
const transactional = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)).pipe(Effect.catchTag("SqlError", Effect.die))

/** @since 0.1.0 @category operations */
export const contactErase = kit.make({
  name: "contact_erase",
  title: "Erase a person",
  description:
    "Erases a contact at the person's request: name, email, phone, role and website are removed; only keyed fingerprints of the email and phone are kept, so later Arrivals for that person end rejected. Cannot be undone. Owner or admin.",
  refuses: ["contact_not_found"],
  authorize: requireOwnerOrAdminPerson,
  annotations: Operation.destructive,
  scopes: ["crm:write"],
  surfaces: { mcp: false },
  http: { method: "POST", path: "/contacts/:contact_id/erase", input: { kind: "body", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "erase"], positional: "contact_id" },
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
      yield* crm.erase(caller.workspace.id, input.contact_id).pipe(
        Effect.catchTag("CrmNotFound", () => notFound("contact_not_found", input.contact_id, "contact_id"))
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
          changed_fields: ["name", "email", "phone", "role", "website"]
        }
      })
      const company = erased.value.company_id === null ? Option.none() : yield* crm.getCompany(caller.workspace.id, erased.value.company_id)
      return { ...erased.value, company: Option.getOrNull(company) }
    }))
})

const MoveInput = Schema.Struct({
  opportunity_id: Schema.String.pipe(Schema.pattern(/^opportunity_[0-9a-f]{24}$/)).annotations({
    description: "An opportunity id, as an Arrival names it."
  }),
  stage_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)).annotations({
    description: "A stage of the opportunity's own Pipeline."
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "MoveOpportunityInput" })

const Moved = Schema.Struct({
  opportunity: Opportunity,
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
  surfaces: { mcp: false },
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
            ? notFound("stage_not_found", input.stage_id, "stage_id")
            : notFound("opportunity_not_found", input.opportunity_id, "opportunity_id"))
      )
      const { opportunity } = moved
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
export type Requirements = Crm | EventLedger | SqlClient.SqlClient | Caller

/** @since 0.1.0 @category groups */
export const group: Operation.Group<Requirements> = kit.group<Requirements>({
  name: "crm",
  title: "CRM",
  description: "The workspace's CRM as the door fills it: contacts, erasure, opportunities.",
  operations: [contactRead, contactErase, opportunityMove],
  http: { prefix: "/workspaces/:workspace/crm", workspaceScoped: true },
  mcp: { namespace: "crm" },
  cli: { word: "crm", description: "The workspace's CRM: contacts, erasure, opportunities." }
})
