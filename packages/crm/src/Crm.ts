/**
 * The CRM the door applies contacts to: contacts identified by email and phone, companies matched by email
 * domain (never a free-mail one), pipelines with ordered stages, opportunities moving through them, collections
 * of selected contacts, and erasure. Every query is scoped by workspace.
 *
 * Applying a contact never guesses: an email that belongs to one contact and a phone that belongs to another is
 * a `Conflict` for a person to decide, and a person who asked for erasure is `Erased` (their later arrivals end
 * `rejected`): only keyed fingerprints of their email and phone are kept, to recognize them.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { Crypto } from "@service/core/Crypto"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { isFreeMail } from "./FreeMail.js"

/** What an intake or a person says about a contact; every field optional text. @since 0.1.0 @category models */
export const ContactData = Schema.Struct({
  name: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String),
  role: Schema.optional(Schema.String),
  company: Schema.optional(Schema.String),
  website: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category models */
export type ContactData = typeof ContactData.Type

/** @since 0.1.0 @category models */
export const Contact = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  role: Schema.NullOr(Schema.String),
  website: Schema.NullOr(Schema.String),
  company_id: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Contact = typeof Contact.Type

/** @since 0.1.0 @category models */
export const Company = Schema.Struct({ id: Schema.String, name: Schema.String, domain: Schema.NullOr(Schema.String) })
/** @since 0.1.0 @category models */
export type Company = typeof Company.Type

/** @since 0.1.0 @category models */
export const Stage = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  position: Schema.Number,
  outcome: Schema.Literal("open", "won", "lost")
})
/** @since 0.1.0 @category models */
export type Stage = typeof Stage.Type

/** @since 0.1.0 @category models */
export const Pipeline = Schema.Struct({ id: Schema.String, name: Schema.String, stages: Schema.Array(Stage) })
/** @since 0.1.0 @category models */
export type Pipeline = typeof Pipeline.Type

/** @since 0.1.0 @category models */
export const Opportunity = Schema.Struct({
  id: Schema.String,
  contact_id: Schema.NullOr(Schema.String),
  pipeline_id: Schema.String,
  stage_id: Schema.String,
  title: Schema.String
})
/** @since 0.1.0 @category models */
export type Opportunity = typeof Opportunity.Type

/**
 * What applying a contact did.
 *
 * @since 0.1.0 @category models
 */
export type ContactOutcome = Data.TaggedEnum<{
  Created: { readonly contact: Contact; readonly company: Option.Option<{ readonly company: Company; readonly created: boolean }> }
  Updated: {
    readonly contact: Contact
    readonly changed: ReadonlyArray<string>
    readonly company: Option.Option<{ readonly company: Company; readonly created: boolean }>
  }
  Unchanged: { readonly contact: Contact }
  /** The email belongs to one contact and the phone to another: a person chooses. */
  Conflict: { readonly emailContactId: string; readonly phoneContactId: string }
  /** The person asked for erasure: nothing is stored. */
  Erased: {}
  /** Neither a usable email nor a usable phone. */
  NoPersonKey: {}
}>
/** @since 0.1.0 @category models */
export const ContactOutcome = Data.taggedEnum<ContactOutcome>()

/** @since 0.1.0 @category errors */
export class CrmNotFound extends Data.TaggedError("CrmNotFound")<{ readonly kind: string; readonly id: string }> {}

/** @since 0.1.0 @category errors */
export class InvalidPipeline extends Data.TaggedError("InvalidPipeline")<{ readonly reason: string }> {}

/** @since 0.1.0 @category tags */
export class Crm extends Context.Tag("@service/crm/Crm")<Crm, {
  readonly applyContact: (workspaceId: string, data: ContactData) => Effect.Effect<ContactOutcome>
  readonly getContact: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Contact>>
  readonly getCompany: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Company>>
  /** Removes a contact's personal data and remembers (by keyed fingerprint) its email and phone. */
  readonly erase: (workspaceId: string, contactId: string) => Effect.Effect<void, CrmNotFound>
  readonly isErased: (workspaceId: string, data: ContactData) => Effect.Effect<boolean>
  readonly createPipeline: (
    workspaceId: string,
    input: { readonly name: string; readonly stages: ReadonlyArray<{ readonly name: string; readonly outcome?: "open" | "won" | "lost" }> }
  ) => Effect.Effect<Pipeline, InvalidPipeline>
  /** The workspace's Pipelines with their stages in order. */
  readonly pipelines: (workspaceId: string) => Effect.Effect<ReadonlyArray<Pipeline>>
  /** Succeeds when the stage belongs to that Pipeline of the workspace. */
  readonly checkStage: (workspaceId: string, pipelineId: string, stageId: string) => Effect.Effect<void, CrmNotFound>
  readonly openOpportunity: (
    workspaceId: string,
    input: { readonly contactId: string; readonly pipelineId: string; readonly stageId: string; readonly title: string }
  ) => Effect.Effect<Opportunity, CrmNotFound>
  readonly moveOpportunity: (
    workspaceId: string,
    opportunityId: string,
    stageId: string
  ) => Effect.Effect<{ readonly opportunity: Opportunity; readonly previousStageId: string; readonly outcome: Stage["outcome"] }, CrmNotFound>
  readonly createCollection: (
    workspaceId: string,
    input: { readonly name: string; readonly contactIds: ReadonlyArray<string> }
  ) => Effect.Effect<{ readonly id: string; readonly name: string; readonly contactIds: ReadonlyArray<string> }, CrmNotFound>
  /** The collection's contacts, or only those of them among `among` (a selection; reads just those rows). */
  readonly collectionContacts: (
    workspaceId: string,
    collectionId: string,
    among?: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<Contact>, CrmNotFound>
}>() {}

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString("hex")}`

const text = (value: string | undefined): string | null => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed.length === 0 ? null : trimmed
}

/**
 * An email as stored: trimmed and lower-cased, or null when it is not shaped like an address.
 *
 * @since 0.1.0 @category normalization
 */
export const normalizeEmail = (value: string | undefined): string | null => {
  const email = text(value)?.toLowerCase() ?? null
  return email !== null && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email) ? email : null
}

/**
 * A phone as stored: digits with a leading `+` kept, or null with fewer than 7 digits.
 *
 * @since 0.1.0 @category normalization
 */
export const normalizePhone = (value: string | undefined): string | null => {
  const raw = text(value)
  if (raw === null) return null
  const digits = raw.replace(/\D/g, "")
  if (digits.length < 7 || digits.length > 15) return null
  return raw.startsWith("+") ? `+${digits}` : digits
}

const domainOf = (email: string): string => email.slice(email.indexOf("@") + 1)

const decodeContacts = Schema.decodeUnknown(Schema.Array(Contact))
const decodeCompanies = Schema.decodeUnknown(Schema.Array(Company))
const decodeOpportunities = Schema.decodeUnknown(Schema.Array(Opportunity))
const decodeStages = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...Stage.fields, pipeline_id: Schema.String })))

const contactColumns = "id, workspace_id, name, email, phone, role, website, company_id"

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto
  const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const contactsWhere = (condition: Fragment) =>
    sql`SELECT ${sql.literal(contactColumns)} FROM crm.contacts WHERE ${condition}`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)

  const getContact = (workspaceId: string, id: string) =>
    Effect.map(contactsWhere(sql`workspace_id = ${workspaceId} AND id = ${id}`), (rows) => Option.fromNullable(rows[0]))

  const getCompany = (workspaceId: string, id: string) =>
    sql`SELECT id, name, domain FROM crm.companies WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
      Effect.flatMap(decodeCompanies),
      Effect.map((rows) => Option.fromNullable(rows[0])),
      Effect.orDie
    )

  const fingerprints = (data: ContactData) =>
    Effect.forEach(
      [normalizeEmail(data.email), normalizePhone(data.phone)].filter((v): v is string => v !== null),
      (value) => crypto.fingerprint("crm.erasure", value)
    )

  const isErased = (workspaceId: string, data: ContactData) =>
    Effect.gen(function*() {
      const prints = yield* fingerprints(data)
      if (prints.length === 0) return false
      const rows = yield* sql`SELECT 1 FROM crm.erasures WHERE workspace_id = ${workspaceId} AND fingerprint IN ${sql.in(prints)}`.pipe(Effect.orDie)
      return rows.length > 0
    })

  /** The company of a business email's domain, created on first sight. */
  const companyFor = (workspaceId: string, email: string | null, name: string | null) =>
    Effect.gen(function*() {
      if (email === null) return Option.none<{ company: Company; created: boolean }>()
      const domain = domainOf(email)
      if (isFreeMail(domain)) return Option.none<{ company: Company; created: boolean }>()
      const at = yield* now
      const inserted = yield* sql`INSERT INTO crm.companies (id, workspace_id, name, domain, created_at, updated_at)
        VALUES (${newId("company")}, ${workspaceId}, ${name ?? domain}, ${domain}, ${at}, ${at})
        ON CONFLICT (workspace_id, domain) WHERE domain IS NOT NULL DO NOTHING
        RETURNING id, name, domain`.pipe(Effect.flatMap(decodeCompanies), Effect.orDie)
      const created = inserted[0]
      if (created !== undefined) return Option.some({ company: created, created: true })
      const existing = yield* sql`SELECT id, name, domain FROM crm.companies WHERE workspace_id = ${workspaceId} AND domain = ${domain}`.pipe(
        Effect.flatMap(decodeCompanies),
        Effect.orDie
      )
      return Option.map(Option.fromNullable(existing[0]), (company) => ({ company, created: false }))
    })

  const applyContact = (workspaceId: string, data: ContactData): Effect.Effect<ContactOutcome> =>
    Effect.gen(function*() {
      const email = normalizeEmail(data.email)
      const phone = normalizePhone(data.phone)
      if (email === null && phone === null) return ContactOutcome.NoPersonKey()
      if (yield* isErased(workspaceId, data)) return ContactOutcome.Erased()
      const byEmail = email === null ? [] : yield* contactsWhere(sql`workspace_id = ${workspaceId} AND email = ${email}`)
      const byPhone = phone === null ? [] : yield* contactsWhere(sql`workspace_id = ${workspaceId} AND phone = ${phone}`)
      const emailContact = byEmail[0]
      const phoneContact = byPhone[0]
      if (emailContact !== undefined && phoneContact !== undefined && emailContact.id !== phoneContact.id) {
        return ContactOutcome.Conflict({ emailContactId: emailContact.id, phoneContactId: phoneContact.id })
      }
      const fields = { name: text(data.name), role: text(data.role), website: text(data.website) }
      const company = yield* companyFor(workspaceId, email, text(data.company))
      const companyId = Option.getOrNull(Option.map(company, (c) => c.company.id))
      const at = yield* now
      const existing = emailContact ?? phoneContact
      if (existing === undefined) {
        const rows = yield* sql`INSERT INTO crm.contacts (id, workspace_id, name, email, phone, role, website, company_id, created_at, updated_at)
          VALUES (${newId("contact")}, ${workspaceId}, ${fields.name}, ${email}, ${phone}, ${fields.role}, ${fields.website}, ${companyId}, ${at}, ${at})
          RETURNING ${sql.literal(contactColumns)}`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
        const contact = rows[0]
        if (contact === undefined) return yield* Effect.dieMessage("INSERT returned no contact")
        return ContactOutcome.Created({ contact, company })
      }
      // Provided values win; what was not sent stays as it was.
      const next = {
        name: fields.name ?? existing.name,
        email: email ?? existing.email,
        phone: phone ?? existing.phone,
        role: fields.role ?? existing.role,
        website: fields.website ?? existing.website,
        company_id: companyId ?? existing.company_id
      }
      const changed = (["name", "email", "phone", "role", "website", "company_id"] as const).filter((key) => next[key] !== existing[key])
      if (changed.length === 0) return ContactOutcome.Unchanged({ contact: existing })
      const rows = yield* sql`UPDATE crm.contacts SET name = ${next.name}, email = ${next.email}, phone = ${next.phone},
          role = ${next.role}, website = ${next.website}, company_id = ${next.company_id}, updated_at = ${at}
        WHERE id = ${existing.id} RETURNING ${sql.literal(contactColumns)}`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
      const contact = rows[0]
      if (contact === undefined) return yield* Effect.dieMessage("UPDATE returned no contact")
      return ContactOutcome.Updated({ contact, changed, company })
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("Crm.applyContact"))

  const erase = (workspaceId: string, contactId: string) =>
    Effect.gen(function*() {
      const contact = yield* getContact(workspaceId, contactId)
      if (Option.isNone(contact)) return yield* new CrmNotFound({ kind: "contact", id: contactId })
      const at = yield* now
      const prints = yield* fingerprints({ email: contact.value.email ?? undefined, phone: contact.value.phone ?? undefined })
      for (const print of prints) {
        yield* sql`INSERT INTO crm.erasures (workspace_id, fingerprint, erased_at) VALUES (${workspaceId}, ${print}, ${at})
          ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
      }
      yield* sql`UPDATE crm.contacts SET name = NULL, email = NULL, phone = NULL, role = NULL, website = NULL,
          erased_at = ${at}, updated_at = ${at} WHERE id = ${contactId}`.pipe(Effect.orDie)
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Crm.erase"))

  const createPipeline = (
    workspaceId: string,
    input: { readonly name: string; readonly stages: ReadonlyArray<{ readonly name: string; readonly outcome?: "open" | "won" | "lost" }> }
  ) =>
    Effect.gen(function*() {
      if (input.stages.length === 0) return yield* new InvalidPipeline({ reason: "a pipeline needs at least one stage" })
      if (text(input.name) === null) return yield* new InvalidPipeline({ reason: "a pipeline needs a name" })
      const at = yield* now
      const id = newId("pipeline")
      yield* sql`INSERT INTO crm.pipelines (id, workspace_id, name, created_at) VALUES (${id}, ${workspaceId}, ${input.name.trim()}, ${at})`
      const stages: Array<Stage> = []
      for (const [position, stage] of input.stages.entries()) {
        const row: Stage = { id: newId("stage"), name: stage.name, position, outcome: stage.outcome ?? "open" }
        yield* sql`INSERT INTO crm.stages (id, pipeline_id, name, position, outcome) VALUES (${row.id}, ${id}, ${row.name}, ${position}, ${row.outcome})`
        stages.push(row)
      }
      return { id, name: input.name.trim(), stages }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const stageOf = (workspaceId: string, pipelineId: string, stageId: string) =>
    sql`SELECT s.id, s.name, s.position, s.outcome, s.pipeline_id FROM crm.stages s JOIN crm.pipelines p ON p.id = s.pipeline_id
        WHERE p.workspace_id = ${workspaceId} AND p.id = ${pipelineId} AND s.id = ${stageId}`.pipe(
      Effect.flatMap(decodeStages),
      Effect.orDie,
      Effect.flatMap((rows) => {
        const stage = rows[0]
        return stage === undefined ? Effect.fail(new CrmNotFound({ kind: "stage", id: stageId })) : Effect.succeed(stage)
      })
    )

  const PipelineStageRow = Schema.Struct({
    pipeline_id: Schema.String,
    pipeline_name: Schema.String,
    stage_id: Schema.String,
    stage_name: Schema.String,
    position: Schema.Number,
    outcome: Stage.fields.outcome
  })
  const pipelines = (workspaceId: string) =>
    sql`SELECT p.id AS pipeline_id, p.name AS pipeline_name, s.id AS stage_id, s.name AS stage_name, s.position, s.outcome
        FROM crm.pipelines p JOIN crm.stages s ON s.pipeline_id = p.id
        WHERE p.workspace_id = ${workspaceId} ORDER BY p.created_at, p.id, s.position`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(PipelineStageRow))),
      Effect.orDie,
      Effect.map((rows) => {
        const byId = new Map<string, { id: string; name: string; stages: Array<Stage> }>()
        for (const row of rows) {
          const pipeline = byId.get(row.pipeline_id) ?? { id: row.pipeline_id, name: row.pipeline_name, stages: [] }
          pipeline.stages.push({ id: row.stage_id, name: row.stage_name, position: row.position, outcome: row.outcome })
          byId.set(row.pipeline_id, pipeline)
        }
        return [...byId.values()]
      })
    )

  const openOpportunity = (
    workspaceId: string,
    input: { readonly contactId: string; readonly pipelineId: string; readonly stageId: string; readonly title: string }
  ) =>
    Effect.gen(function*() {
      if (Option.isNone(yield* getContact(workspaceId, input.contactId))) {
        return yield* new CrmNotFound({ kind: "contact", id: input.contactId })
      }
      yield* stageOf(workspaceId, input.pipelineId, input.stageId)
      const at = yield* now
      const rows = yield* sql`INSERT INTO crm.opportunities (id, workspace_id, contact_id, pipeline_id, stage_id, title, created_at, updated_at)
        VALUES (${newId("opportunity")}, ${workspaceId}, ${input.contactId}, ${input.pipelineId}, ${input.stageId}, ${input.title}, ${at}, ${at})
        RETURNING id, contact_id, pipeline_id, stage_id, title`.pipe(Effect.flatMap(decodeOpportunities), Effect.orDie)
      const opportunity = rows[0]
      if (opportunity === undefined) return yield* Effect.dieMessage("INSERT returned no opportunity")
      return opportunity
    })

  const moveOpportunity = (workspaceId: string, opportunityId: string, stageId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT id, contact_id, pipeline_id, stage_id, title FROM crm.opportunities
        WHERE workspace_id = ${workspaceId} AND id = ${opportunityId} FOR UPDATE`.pipe(Effect.flatMap(decodeOpportunities), Effect.orDie)
      const current = rows[0]
      if (current === undefined) return yield* new CrmNotFound({ kind: "opportunity", id: opportunityId })
      // A stage of another pipeline is not a stage of this opportunity.
      const stage = yield* stageOf(workspaceId, current.pipeline_id, stageId)
      const at = yield* now
      yield* sql`UPDATE crm.opportunities SET stage_id = ${stageId}, updated_at = ${at} WHERE id = ${opportunityId}`.pipe(Effect.orDie)
      return { opportunity: { ...current, stage_id: stageId }, previousStageId: current.stage_id, outcome: stage.outcome }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const createCollection = (workspaceId: string, input: { readonly name: string; readonly contactIds: ReadonlyArray<string> }) =>
    Effect.gen(function*() {
      const ids = [...new Set(input.contactIds)]
      const found = ids.length === 0 ? [] : yield* contactsWhere(sql`workspace_id = ${workspaceId} AND id IN ${sql.in(ids)}`)
      const missing = ids.find((id) => !found.some((c) => c.id === id))
      if (missing !== undefined) return yield* new CrmNotFound({ kind: "contact", id: missing })
      const id = newId("collection")
      const at = yield* now
      yield* sql`INSERT INTO crm.collections (id, workspace_id, name, created_at) VALUES (${id}, ${workspaceId}, ${input.name}, ${at})`.pipe(Effect.orDie)
      for (const contactId of ids) {
        yield* sql`INSERT INTO crm.collection_items (collection_id, contact_id) VALUES (${id}, ${contactId})`.pipe(Effect.orDie)
      }
      return { id, name: input.name, contactIds: ids }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const collectionContacts = (workspaceId: string, collectionId: string, among?: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const exists = yield* sql`SELECT 1 FROM crm.collections WHERE workspace_id = ${workspaceId} AND id = ${collectionId}`.pipe(Effect.orDie)
      if (exists.length === 0) return yield* new CrmNotFound({ kind: "collection", id: collectionId })
      if (among !== undefined && among.length === 0) return []
      const selected = among === undefined ? sql`` : sql`AND i.contact_id IN ${sql.in(among)}`
      return yield* sql`SELECT ${sql.literal(contactColumns.split(", ").map((c) => `c.${c}`).join(", "))}
        FROM crm.collection_items i JOIN crm.contacts c ON c.id = i.contact_id
        WHERE i.collection_id = ${collectionId} ${selected} ORDER BY c.id`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
    })

  return Crm.of({
    applyContact,
    getContact,
    getCompany,
    erase,
    isErased,
    createPipeline,
    pipelines,
    checkStage: (workspaceId, pipelineId, stageId) => Effect.asVoid(stageOf(workspaceId, pipelineId, stageId)),
    openOpportunity,
    moveOpportunity,
    createCollection,
    collectionContacts
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Crm, never, SqlClient.SqlClient | Crypto> = Layer.effect(Crm, make)
