import * as SqlClient from "@effect/sql/SqlClient"
import * as Operation from "@service/core/Operation"
import { Caller } from "@service/core/RequestContext"
import { EventLedger } from "@service/events/EventLedger"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Company, Contact, CrmNotFound } from "../Crm.js"
import { codec, refuse } from "../CrmRefusal.js"

/** What every CRM declaration shares: the refusal codec, the read and write scopes and read-only annotations. */
export const kit = Operation.kit({ refusals: codec, scopes: ["commercial:read", "crm:write"], annotations: Operation.readOnly })

/** The scope every CRM change needs. */
export const writeScopes = ["crm:write"] as const

export const strict = { parseOptions: { onExcessProperty: "error" } } as const

export const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** Runs a change and its ledger entries in one transaction. */
export const transactional = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(effect)).pipe(Effect.catchTag("SqlError", Effect.die))

const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9a-f]{24}$`)

/** An id field of one kind of CRM record (`contact_` followed by 24 hexadecimal digits). */
export const IdOf = (prefix: string, description: string) =>
  Schema.String.pipe(Schema.pattern(idPattern(prefix))).annotations({ description })

export const ContactId = IdOf("contact", "A contact id (contact_ followed by 24 hexadecimal digits), as a list or an Arrival names it.")
export const CompanyId = IdOf("company", "A company id (company_ followed by 24 hexadecimal digits).")
export const PipelineId = IdOf("pipeline", "A Pipeline id (pipeline_ followed by 24 hexadecimal digits).")
export const StageId = IdOf("stage", "A stage id (stage_ followed by 24 hexadecimal digits), as pipeline_list shows it.")
export const OpportunityId = IdOf("opportunity", "An opportunity id (opportunity_ followed by 24 hexadecimal digits).")
export const CollectionId = IdOf("collection", "A collection id (collection_ followed by 24 hexadecimal digits).")
export const SourceId = Schema.String.pipe(Schema.pattern(/^src_[0-9a-f]{24}$/)).annotations({ description: "A door Source id." })

/** A page size; models and the CLI send a number, the HTTP query string text. */
export const Limit = (max: number, fallback: number) =>
  Schema.Number.pipe(Schema.int(), Schema.between(1, max)).annotations({ description: `Items per page, 1 to ${max} (default ${fallback}).` })
export const LimitFromString = (max: number, fallback: number) =>
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, max)).annotations({ description: `Items per page, 1 to ${max} (default ${fallback}).` })
export const Cursor = Schema.String.pipe(Schema.maxLength(300)).annotations({ description: "next_cursor of the previous page." })
export const NextCursor = Schema.NullOr(Schema.String).annotations({ description: "Pass as cursor for the next page; null on the last page." })

/**
 * A paged read's two inputs from its filter fields: the canonical one (HTTP's query string gives `limit` as text)
 * and the model-facing one (MCP and the CLI send a number), both with `cursor`.
 */
export const pageInputs = <Fields extends Schema.Struct.Fields>(fields: Fields, max: number, fallback: number, identifier: string) => ({
  input: Schema.Struct({ ...fields, cursor: Schema.optional(Cursor), limit: Schema.optional(LimitFromString(max, fallback)) }).annotations({
    ...strict,
    identifier: `${identifier}Input`
  }),
  modelInput: Schema.Struct({ ...fields, cursor: Schema.optional(Cursor), limit: Schema.optional(Limit(max, fallback)) }).annotations({
    ...strict,
    identifier: `${identifier}ModelInput`
  })
})

/** The refusal of a cursor this service did not write. */
export const badCursor = (failure: { readonly detail: string }) =>
  refuse("invalid_field_value", failure.detail, "Send the next_cursor of a previous page unchanged, or leave cursor out.", { field: "cursor" })

/** Text a person types: trimmed, 1 to `max` characters. */
export const Text = (max: number, description: string) =>
  Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(max)).annotations({ description })

const kinds = {
  contact: { code: "contact_not_found", field: "contact_id", hint: "List the workspace's contacts (contact_list) and use one of their ids." },
  company: { code: "company_not_found", field: "company_id", hint: "List the workspace's companies (company_list) and use one of their ids." },
  pipeline: { code: "pipeline_not_found", field: "pipeline_id", hint: "List the workspace's Pipelines (pipeline_list) and use one of their ids." },
  stage: { code: "stage_not_found", field: "stage_id", hint: "Use a live stage of the same Pipeline, as pipeline_list shows it." },
  opportunity: {
    code: "opportunity_not_found",
    field: "opportunity_id",
    hint: "List the workspace's opportunities (opportunity_list) and use one of their ids."
  },
  collection: {
    code: "collection_not_found",
    field: "collection_id",
    hint: "List the workspace's collections (collection_list) and use one of their ids."
  }
} as const

/** The refusal for a record that is not in the caller's workspace. */
export const notFound = (kind: keyof typeof kinds, id: string, field?: string) =>
  refuse(kinds[kind].code, `No ${kind} ${id} in this workspace${kind === "stage" ? "'s Pipeline that takes it" : ""}.`, kinds[kind].hint, {
    field: field ?? kinds[kind].field
  })

const isKind = (kind: string): kind is keyof typeof kinds => kind in kinds

/** Maps the CRM's not-found failure to its refusal. */
export const refuseMissing = (missing: CrmNotFound, field?: string) =>
  isKind(missing.kind) ? notFound(missing.kind, missing.id, field) : notFound("contact", missing.id, field)

/** Records `contact.created` or `contact.updated` (never an email or phone), and `company.created` for a new company. */
export const recordContact = (
  name: "contact.created" | "contact.updated",
  contact: Contact,
  changed: ReadonlyArray<string>,
  company: Option.Option<{ readonly company: Company; readonly created: boolean }>
) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const ledger = yield* EventLedger
    const occurred_at = yield* nowIso
    const workspace_id = caller.workspace.id
    for (const made of Option.toArray(company)) {
      if (!made.created) continue
      yield* ledger.record({
        workspaceId: workspace_id,
        name: "company.created",
        subject: `company/${made.company.id}`,
        payload: { workspace_id, occurred_at, company_id: made.company.id, name: made.company.name, domain: made.company.domain }
      })
    }
    yield* ledger.record({
      workspaceId: workspace_id,
      name,
      subject: `contact/${contact.id}`,
      payload: { workspace_id, occurred_at, contact_id: contact.id, name: contact.name, company_id: contact.company_id, arrival_id: null, changed_fields: changed }
    })
  })
