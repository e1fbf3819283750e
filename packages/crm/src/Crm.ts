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
  company_id: Schema.NullOr(Schema.String),
  source_id: Schema.NullOr(Schema.String).annotations({ description: "The door Source it first came through; null when a person made it." }),
  created_at: Schema.String.annotations({ description: "ISO 8601 UTC." }),
  updated_at: Schema.String.annotations({ description: "ISO 8601 UTC." }),
  erased_at: Schema.NullOr(Schema.String).annotations({ description: "When the person was erased (ISO 8601 UTC); their personal fields are then null." })
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
  outcome: Schema.Literal("open", "won", "lost"),
  archived: Schema.Boolean.annotations({ description: "An archived stage takes no new opportunities." })
})
/** @since 0.1.0 @category models */
export type Stage = typeof Stage.Type

/** @since 0.1.0 @category models */
export const Pipeline = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  stages: Schema.Array(Stage),
  archived: Schema.Boolean.annotations({ description: "An archived Pipeline takes no new opportunities; its own stay readable." })
})
/** @since 0.1.0 @category models */
export type Pipeline = typeof Pipeline.Type

/** @since 0.1.0 @category models */
export const Opportunity = Schema.Struct({
  id: Schema.String,
  contact_id: Schema.NullOr(Schema.String),
  pipeline_id: Schema.String,
  stage_id: Schema.String,
  title: Schema.String,
  created_at: Schema.String.annotations({ description: "ISO 8601 UTC." }),
  updated_at: Schema.String.annotations({ description: "ISO 8601 UTC." })
})
/** @since 0.1.0 @category models */
export type Opportunity = typeof Opportunity.Type

/**
 * An opportunity as the CRM's reads show it: with its stage's name and outcome (`won` or `lost` is closed) and
 * the company of its contact.
 *
 * @since 0.1.0 @category models
 */
export const OpportunityView = Schema.Struct({
  ...Opportunity.fields,
  stage_name: Schema.String,
  outcome: Stage.fields.outcome,
  company_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Opportunity" })
/** @since 0.1.0 @category models */
export type OpportunityView = typeof OpportunityView.Type

/** @since 0.1.0 @category models */
export const Collection = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  size: Schema.Number.annotations({ description: "How many contacts it holds." }),
  created_at: Schema.String.annotations({ description: "ISO 8601 UTC." }),
  updated_at: Schema.String.annotations({ description: "ISO 8601 UTC." })
}).annotations({ identifier: "Collection" })
/** @since 0.1.0 @category models */
export type Collection = typeof Collection.Type

/** What a person may change on a contact: a value sets the field, null clears it, absent leaves it. @since 0.1.0 @category models */
export interface ContactPatch {
  readonly name?: string | null | undefined
  readonly email?: string | null | undefined
  readonly phone?: string | null | undefined
  readonly role?: string | null | undefined
  readonly website?: string | null | undefined
  readonly company?: string | null | undefined
}

/** One page of a keyset-paged read. @since 0.1.0 @category models */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Pass as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null
}

/** Filters of the contact list; every one optional. @since 0.1.0 @category models */
export interface ContactFilter {
  readonly companyId?: string | undefined
  /** Contacts with an opportunity in this stage. */
  readonly stageId?: string | undefined
  readonly sourceId?: string | undefined
  /** ISO 8601 instants, inclusive. */
  readonly createdFrom?: string | undefined
  readonly createdTo?: string | undefined
  /** Part of the name, email, phone or company name. */
  readonly text?: string | undefined
  readonly limit: number
  readonly cursor?: string | undefined
}

/** Filters of the opportunity list; every one optional. @since 0.1.0 @category models */
export interface OpportunityFilter {
  readonly pipelineId?: string | undefined
  readonly stageId?: string | undefined
  readonly companyId?: string | undefined
  readonly contactId?: string | undefined
  readonly outcome?: "open" | "won" | "lost" | undefined
  readonly limit: number
  readonly cursor?: string | undefined
}

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

/** A cursor this service did not write. @since 0.1.0 @category errors */
export class BadCursor extends Data.TaggedError("BadCursor")<{ readonly detail: string }> {}

/** The email or phone already belongs to another contact of the workspace. @since 0.1.0 @category errors */
export class ContactTaken extends Data.TaggedError("ContactTaken")<{ readonly field: "email" | "phone"; readonly contactId: string }> {}

/** The person asked for erasure: their email or phone cannot be stored again, and an erased contact is not edited. @since 0.1.0 @category errors */
export class ContactErased extends Data.TaggedError("ContactErased")<{ readonly contactId: string | null }> {}

/** Neither a usable email nor a usable phone: a contact needs one. @since 0.1.0 @category errors */
export class NoPersonKey extends Data.TaggedError("NoPersonKey")<{ readonly detail: string }> {}

/** A stage still holds open opportunities, or a Pipeline would keep no open stage. @since 0.1.0 @category errors */
export class StageInUse extends Data.TaggedError("StageInUse")<{ readonly reason: string }> {}

/** @since 0.1.0 @category errors */
export class InvalidPipeline extends Data.TaggedError("InvalidPipeline")<{ readonly reason: string }> {}

/** @since 0.1.0 @category tags */
export class Crm extends Context.Tag("@service/crm/Crm")<Crm, {
  /** Applies what an intake says about a person; `origin` names the door Source it came through. */
  readonly applyContact: (workspaceId: string, data: ContactData, origin?: { readonly sourceId: string }) => Effect.Effect<ContactOutcome>
  /** A contact made by a person: refused when its email or phone is taken or erased, or when it has neither. */
  readonly createContact: (
    workspaceId: string,
    data: ContactData,
    createdBy: string | null
  ) => Effect.Effect<
    { readonly contact: Contact; readonly company: Option.Option<{ readonly company: Company; readonly created: boolean }> },
    ContactTaken | ContactErased | NoPersonKey
  >
  /** A person's edit of a contact: the names of the fields that changed, and the company a new email matched. */
  readonly updateContact: (
    workspaceId: string,
    contactId: string,
    patch: ContactPatch
  ) => Effect.Effect<
    {
      readonly contact: Contact
      readonly changed: ReadonlyArray<string>
      readonly company: Option.Option<{ readonly company: Company; readonly created: boolean }>
    },
    CrmNotFound | ContactTaken | ContactErased | NoPersonKey
  >
  /** Contacts newest first, filtered; an unknown filter id gives an empty page. */
  readonly listContacts: (workspaceId: string, filter: ContactFilter) => Effect.Effect<Page<Contact>, BadCursor>
  /** The best matches of a text in name, email, phone and company name: exact and prefix matches first. */
  readonly searchContacts: (workspaceId: string, text: string, limit: number) => Effect.Effect<ReadonlyArray<Contact>>
  readonly listCompanies: (
    workspaceId: string,
    filter: { readonly companyId?: string | undefined; readonly text?: string | undefined; readonly limit: number; readonly cursor?: string | undefined }
  ) => Effect.Effect<Page<Company & { readonly contacts: number }>, BadCursor>
  readonly renamePipeline: (workspaceId: string, pipelineId: string, name: string) => Effect.Effect<Pipeline, CrmNotFound>
  readonly archivePipeline: (workspaceId: string, pipelineId: string) => Effect.Effect<Pipeline, CrmNotFound>
  readonly getPipeline: (workspaceId: string, pipelineId: string) => Effect.Effect<Option.Option<Pipeline>>
  readonly addStage: (
    workspaceId: string,
    pipelineId: string,
    stage: { readonly name: string; readonly outcome: "open" | "won" | "lost"; readonly position?: number | undefined }
  ) => Effect.Effect<Pipeline, CrmNotFound>
  readonly renameStage: (workspaceId: string, stageId: string, name: string) => Effect.Effect<Pipeline, CrmNotFound>
  /** Puts the Pipeline's stages in the order given; every stage of it, archived ones included, once. */
  readonly reorderStages: (workspaceId: string, pipelineId: string, stageIds: ReadonlyArray<string>) => Effect.Effect<Pipeline, CrmNotFound | InvalidPipeline>
  readonly archiveStage: (workspaceId: string, stageId: string) => Effect.Effect<Pipeline, CrmNotFound | StageInUse>
  readonly listOpportunities: (workspaceId: string, filter: OpportunityFilter) => Effect.Effect<Page<OpportunityView>, BadCursor>
  readonly getOpportunity: (workspaceId: string, opportunityId: string) => Effect.Effect<Option.Option<OpportunityView>>
  readonly listCollections: (
    workspaceId: string,
    filter: { readonly limit: number; readonly cursor?: string | undefined }
  ) => Effect.Effect<Page<Collection>, BadCursor>
  readonly getCollection: (workspaceId: string, collectionId: string) => Effect.Effect<Option.Option<Collection>>
  /** The collection's contacts, a page at a time, in the order they were added. */
  readonly collectionMembers: (
    workspaceId: string,
    collectionId: string,
    page: { readonly limit: number; readonly cursor?: string | undefined }
  ) => Effect.Effect<Page<Contact>, CrmNotFound | BadCursor>
  /** Adds contacts (already there: left as they are); answers how many were added. */
  readonly addToCollection: (workspaceId: string, collectionId: string, contactIds: ReadonlyArray<string>) => Effect.Effect<number, CrmNotFound>
  /** Removes contacts (not there: ignored); answers how many were removed. */
  readonly removeFromCollection: (workspaceId: string, collectionId: string, contactIds: ReadonlyArray<string>) => Effect.Effect<number, CrmNotFound>
  readonly deleteCollection: (workspaceId: string, collectionId: string) => Effect.Effect<Collection, CrmNotFound>
  readonly getContact: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Contact>>
  readonly getCompany: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Company>>
  /** The workspace's companies among `ids`, in one read (a page of contacts' companies). */
  readonly getCompanies: (workspaceId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Company>>
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
const decodeOpportunityViews = Schema.decodeUnknown(Schema.Array(OpportunityView))
const decodeStages = Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...Stage.fields, pipeline_id: Schema.String })))
const decodeCollections = Schema.decodeUnknown(Schema.Array(Collection))
const CompanyRow = Schema.Struct({ ...Company.fields, contacts: Schema.NumberFromString })
const decodeCompanyRows = Schema.decodeUnknown(Schema.Array(CompanyRow))

const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** The contact's columns as `Contact` decodes them, from the table aliased `at` (none: `crm.contacts` itself). */
const contactColumnsOf = (at = ""): string => {
  const c = at === "" ? "" : `${at}.`
  return `${c}id, ${c}workspace_id, ${c}name, ${c}email, ${c}phone, ${c}role, ${c}website, ${c}company_id, ${c}source_id, ` +
    `${iso(`${c}created_at`)} AS created_at, ${iso(`${c}updated_at`)} AS updated_at, ${iso(`${c}erased_at`)} AS erased_at`
}
const contactColumns = contactColumnsOf()

const opportunityColumns = `o.id, o.contact_id, o.pipeline_id, o.stage_id, o.title, ${iso("o.created_at")} AS created_at, ${iso("o.updated_at")} AS updated_at`

// The position after which the next page starts: the last row's sort key and id.
const CursorJson = Schema.parseJson(Schema.Tuple(Schema.String, Schema.String))
const encodeCursor = (key: string, id: string): string => Buffer.from(JSON.stringify([key, id]), "utf8").toString("base64url")
const decodeCursor = (cursor: string | undefined): Effect.Effect<readonly [string, string] | undefined, BadCursor> =>
  cursor === undefined
    ? Effect.succeed(undefined)
    : Schema.decodeUnknown(CursorJson)(Buffer.from(cursor, "base64url").toString("utf8")).pipe(
      Effect.mapError(() => new BadCursor({ detail: "This cursor was not returned by a previous page." }))
    )
const pageOf = <A>(rows: ReadonlyArray<A>, limit: number, keyOf: (row: A) => readonly [string, string]): Page<A> => {
  const items = rows.slice(0, limit)
  const last = items[items.length - 1]
  return { items, nextCursor: rows.length > limit && last !== undefined ? encodeCursor(...keyOf(last)) : null }
}

/** `%text%` for LIKE, with the pattern characters of the text escaped. */
const containing = (value: string): string => `%${value.toLowerCase().replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`

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

  const getCompanies = (workspaceId: string, ids: ReadonlyArray<string>) =>
    ids.length === 0
      ? Effect.succeed([])
      : sql`SELECT id, name, domain FROM crm.companies WHERE workspace_id = ${workspaceId} AND id IN ${sql.in(ids)}`.pipe(
        Effect.flatMap(decodeCompanies),
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

  const applyContact = (workspaceId: string, data: ContactData, origin?: { readonly sourceId: string }): Effect.Effect<ContactOutcome> =>
    Effect.gen(function*() {
      const email = normalizeEmail(data.email)
      const phone = normalizePhone(data.phone)
      if (email === null && phone === null) return ContactOutcome.NoPersonKey()
      // The contacts it may update are locked before the erasure check: an erasure of one of them either commits
      // first (the check then sees it) or waits for this change and erases what it wrote.
      const byEmail = email === null ? [] : yield* contactsWhere(sql`workspace_id = ${workspaceId} AND email = ${email} FOR UPDATE`)
      const byPhone = phone === null ? [] : yield* contactsWhere(sql`workspace_id = ${workspaceId} AND phone = ${phone} FOR UPDATE`)
      if (yield* isErased(workspaceId, data)) return ContactOutcome.Erased()
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
        const rows = yield* sql`INSERT INTO crm.contacts (id, workspace_id, name, email, phone, role, website, company_id, source_id, created_at, updated_at)
          VALUES (${newId("contact")}, ${workspaceId}, ${fields.name}, ${email}, ${phone}, ${fields.role}, ${fields.website}, ${companyId},
            ${origin?.sourceId ?? null}, ${at}, ${at})
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
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("Crm.applyContact", { captureStackTrace: false }))

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
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Crm.erase", { captureStackTrace: false }))

  const createPipeline = (
    workspaceId: string,
    input: { readonly name: string; readonly stages: ReadonlyArray<{ readonly name: string; readonly outcome?: "open" | "won" | "lost" }> }
  ) =>
    Effect.gen(function*() {
      if (input.stages.length === 0) return yield* new InvalidPipeline({ reason: "a pipeline needs at least one stage" })
      if (text(input.name) === null) return yield* new InvalidPipeline({ reason: "a pipeline needs a name" })
      const at = yield* now
      const id = newId("pipeline")
      yield* sql`INSERT INTO crm.pipelines (id, workspace_id, name, created_at, updated_at) VALUES (${id}, ${workspaceId}, ${input.name.trim()}, ${at}, ${at})`
      const stages: Array<Stage> = []
      for (const [position, stage] of input.stages.entries()) {
        const row: Stage = { id: newId("stage"), name: stage.name, position, outcome: stage.outcome ?? "open", archived: false }
        yield* sql`INSERT INTO crm.stages (id, pipeline_id, name, position, outcome) VALUES (${row.id}, ${id}, ${row.name}, ${position}, ${row.outcome})`
        stages.push(row)
      }
      return { id, name: input.name.trim(), stages, archived: false }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const stageOf = (workspaceId: string, pipelineId: string, stageId: string) =>
    sql`SELECT s.id, s.name, s.position, s.outcome, s.archived_at IS NOT NULL OR p.archived_at IS NOT NULL AS archived, s.pipeline_id
        FROM crm.stages s JOIN crm.pipelines p ON p.id = s.pipeline_id
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
    pipeline_archived: Schema.Boolean,
    stage_id: Schema.String,
    stage_name: Schema.String,
    position: Schema.Number,
    outcome: Stage.fields.outcome,
    stage_archived: Schema.Boolean
  })
  const pipelinesWhere = (condition: Fragment) =>
    sql`SELECT p.id AS pipeline_id, p.name AS pipeline_name, p.archived_at IS NOT NULL AS pipeline_archived, s.id AS stage_id,
          s.name AS stage_name, s.position, s.outcome, s.archived_at IS NOT NULL AS stage_archived
        FROM crm.pipelines p JOIN crm.stages s ON s.pipeline_id = p.id
        WHERE ${condition} ORDER BY p.created_at, p.id, s.position`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(PipelineStageRow))),
      Effect.orDie,
      Effect.map((rows) => {
        const byId = new Map<string, { id: string; name: string; stages: Array<Stage>; archived: boolean }>()
        for (const row of rows) {
          const pipeline = byId.get(row.pipeline_id) ?? { id: row.pipeline_id, name: row.pipeline_name, stages: [], archived: row.pipeline_archived }
          pipeline.stages.push({ id: row.stage_id, name: row.stage_name, position: row.position, outcome: row.outcome, archived: row.stage_archived })
          byId.set(row.pipeline_id, pipeline)
        }
        return [...byId.values()]
      })
    )
  const pipelines = (workspaceId: string) => pipelinesWhere(sql`p.workspace_id = ${workspaceId}`)
  const getPipeline = (workspaceId: string, pipelineId: string) =>
    Effect.map(pipelinesWhere(sql`p.workspace_id = ${workspaceId} AND p.id = ${pipelineId}`), (found) => Option.fromNullable(found[0]))
  const pipelineOrFail = (workspaceId: string, pipelineId: string) =>
    Effect.flatMap(getPipeline(workspaceId, pipelineId), (found) =>
      Option.match(found, {
        onNone: () => Effect.fail(new CrmNotFound({ kind: "pipeline", id: pipelineId })),
        onSome: Effect.succeed
      }))
  /** The Pipeline a stage of the workspace belongs to, locked for the change. */
  const pipelineOfStage = (workspaceId: string, stageId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT p.id FROM crm.stages s JOIN crm.pipelines p ON p.id = s.pipeline_id
        WHERE p.workspace_id = ${workspaceId} AND s.id = ${stageId} FOR UPDATE OF p`.pipe(Effect.orDie)
      const id = rows[0]?.id
      if (typeof id !== "string") return yield* new CrmNotFound({ kind: "stage", id: stageId })
      return id
    })
  const lockPipeline = (workspaceId: string, pipelineId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT id FROM crm.pipelines WHERE workspace_id = ${workspaceId} AND id = ${pipelineId} FOR UPDATE`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* new CrmNotFound({ kind: "pipeline", id: pipelineId })
    })

  const renamePipeline = (workspaceId: string, pipelineId: string, name: string) =>
    Effect.gen(function*() {
      yield* lockPipeline(workspaceId, pipelineId)
      yield* sql`UPDATE crm.pipelines SET name = ${name.trim()}, updated_at = ${yield* now} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  const archivePipeline = (workspaceId: string, pipelineId: string) =>
    Effect.gen(function*() {
      yield* lockPipeline(workspaceId, pipelineId)
      const at = yield* now
      yield* sql`UPDATE crm.pipelines SET archived_at = COALESCE(archived_at, ${at}), updated_at = ${at} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  /** Writes positions 0..n-1 in the order given (through a free range first: positions are unique per Pipeline). */
  const writeOrder = (pipelineId: string, stageIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* sql`UPDATE crm.stages SET position = position + 100000 WHERE pipeline_id = ${pipelineId}`.pipe(Effect.orDie)
      for (const [position, id] of stageIds.entries()) {
        yield* sql`UPDATE crm.stages SET position = ${position} WHERE pipeline_id = ${pipelineId} AND id = ${id}`.pipe(Effect.orDie)
      }
    })

  const addStage = (
    workspaceId: string,
    pipelineId: string,
    stage: { readonly name: string; readonly outcome: "open" | "won" | "lost"; readonly position?: number | undefined }
  ) =>
    Effect.gen(function*() {
      yield* lockPipeline(workspaceId, pipelineId)
      const current = yield* pipelineOrFail(workspaceId, pipelineId)
      const id = newId("stage")
      yield* sql`INSERT INTO crm.stages (id, pipeline_id, name, position, outcome)
        VALUES (${id}, ${pipelineId}, ${stage.name.trim()}, ${current.stages.length + 100000}, ${stage.outcome})`.pipe(Effect.orDie)
      const ids = current.stages.map((s) => s.id)
      const at = Math.max(0, Math.min(stage.position ?? ids.length, ids.length))
      yield* writeOrder(pipelineId, [...ids.slice(0, at), id, ...ids.slice(at)])
      yield* sql`UPDATE crm.pipelines SET updated_at = ${yield* now} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  const renameStage = (workspaceId: string, stageId: string, name: string) =>
    Effect.gen(function*() {
      const pipelineId = yield* pipelineOfStage(workspaceId, stageId)
      yield* sql`UPDATE crm.stages SET name = ${name.trim()} WHERE id = ${stageId}`.pipe(Effect.orDie)
      yield* sql`UPDATE crm.pipelines SET updated_at = ${yield* now} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  const reorderStages = (workspaceId: string, pipelineId: string, stageIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* lockPipeline(workspaceId, pipelineId)
      const current = yield* pipelineOrFail(workspaceId, pipelineId)
      const known = new Set(current.stages.map((s) => s.id))
      const unknown = stageIds.find((id) => !known.has(id))
      if (unknown !== undefined) return yield* new CrmNotFound({ kind: "stage", id: unknown })
      if (new Set(stageIds).size !== stageIds.length || stageIds.length !== known.size) {
        return yield* new InvalidPipeline({ reason: `name each of the Pipeline's ${known.size} stages exactly once` })
      }
      yield* writeOrder(pipelineId, stageIds)
      yield* sql`UPDATE crm.pipelines SET updated_at = ${yield* now} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  const archiveStage = (workspaceId: string, stageId: string) =>
    Effect.gen(function*() {
      const pipelineId = yield* pipelineOfStage(workspaceId, stageId)
      const held = yield* sql`SELECT count(*)::int AS n FROM crm.opportunities WHERE stage_id = ${stageId}`.pipe(Effect.orDie)
      const count = Number(held[0]?.n ?? 0)
      const stage = yield* stageOf(workspaceId, pipelineId, stageId)
      if (count > 0 && stage.outcome === "open") {
        return yield* new StageInUse({ reason: `${count} opportunit${count === 1 ? "y is" : "ies are"} in this stage: move them first` })
      }
      const current = yield* pipelineOrFail(workspaceId, pipelineId)
      const openLeft = current.stages.filter((s) => s.id !== stageId && !s.archived && s.outcome === "open").length
      if (stage.outcome === "open" && openLeft === 0) {
        return yield* new StageInUse({ reason: "it is the Pipeline's last open stage: add another or archive the Pipeline" })
      }
      const at = yield* now
      yield* sql`UPDATE crm.stages SET archived_at = COALESCE(archived_at, ${at}) WHERE id = ${stageId}`.pipe(Effect.orDie)
      yield* sql`UPDATE crm.pipelines SET updated_at = ${at} WHERE id = ${pipelineId}`.pipe(Effect.orDie)
      return yield* pipelineOrFail(workspaceId, pipelineId)
    })

  /** A stage that takes new opportunities: of that Pipeline, neither archived. */
  const liveStage = (workspaceId: string, pipelineId: string, stageId: string) =>
    Effect.flatMap(stageOf(workspaceId, pipelineId, stageId), (stage) =>
      stage.archived ? Effect.fail(new CrmNotFound({ kind: "stage", id: stageId })) : Effect.succeed(stage))

  const opportunityViewsWhere = (condition: Fragment, tail: Fragment = sql``) =>
    sql`SELECT ${sql.literal(opportunityColumns)}, s.name AS stage_name, s.outcome, c.company_id
        FROM crm.opportunities o JOIN crm.stages s ON s.id = o.stage_id LEFT JOIN crm.contacts c ON c.id = o.contact_id
        WHERE ${condition} ${tail}`.pipe(Effect.flatMap(decodeOpportunityViews), Effect.orDie)

  const openOpportunity = (
    workspaceId: string,
    input: { readonly contactId: string; readonly pipelineId: string; readonly stageId: string; readonly title: string }
  ) =>
    Effect.gen(function*() {
      if (Option.isNone(yield* getContact(workspaceId, input.contactId))) {
        return yield* new CrmNotFound({ kind: "contact", id: input.contactId })
      }
      yield* liveStage(workspaceId, input.pipelineId, input.stageId)
      const at = yield* now
      const id = newId("opportunity")
      yield* sql`INSERT INTO crm.opportunities (id, workspace_id, contact_id, pipeline_id, stage_id, title, created_at, updated_at)
        VALUES (${id}, ${workspaceId}, ${input.contactId}, ${input.pipelineId}, ${input.stageId}, ${input.title}, ${at}, ${at})`.pipe(Effect.orDie)
      const rows = yield* sql`SELECT ${sql.literal(opportunityColumns)} FROM crm.opportunities o WHERE o.id = ${id}`.pipe(
        Effect.flatMap(decodeOpportunities),
        Effect.orDie
      )
      const opportunity = rows[0]
      if (opportunity === undefined) return yield* Effect.dieMessage("INSERT returned no opportunity")
      return opportunity
    })

  const moveOpportunity = (workspaceId: string, opportunityId: string, stageId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT ${sql.literal(opportunityColumns)} FROM crm.opportunities o
        WHERE o.workspace_id = ${workspaceId} AND o.id = ${opportunityId} FOR UPDATE`.pipe(Effect.flatMap(decodeOpportunities), Effect.orDie)
      const current = rows[0]
      if (current === undefined) return yield* new CrmNotFound({ kind: "opportunity", id: opportunityId })
      // A stage of another pipeline is not a stage of this opportunity; an archived one takes none.
      const stage = current.stage_id === stageId
        ? yield* stageOf(workspaceId, current.pipeline_id, stageId)
        : yield* liveStage(workspaceId, current.pipeline_id, stageId)
      if (current.stage_id === stageId) return { opportunity: current, previousStageId: current.stage_id, outcome: stage.outcome }
      const at = yield* now
      yield* sql`UPDATE crm.opportunities SET stage_id = ${stageId}, updated_at = ${at} WHERE id = ${opportunityId}`.pipe(Effect.orDie)
      const moved = yield* sql`SELECT ${sql.literal(opportunityColumns)} FROM crm.opportunities o WHERE o.id = ${opportunityId}`.pipe(
        Effect.flatMap(decodeOpportunities),
        Effect.orDie
      )
      return { opportunity: moved[0] ?? { ...current, stage_id: stageId }, previousStageId: current.stage_id, outcome: stage.outcome }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const getOpportunity = (workspaceId: string, opportunityId: string) =>
    Effect.map(opportunityViewsWhere(sql`o.workspace_id = ${workspaceId} AND o.id = ${opportunityId}`), (rows) => Option.fromNullable(rows[0]))

  const listOpportunities = (workspaceId: string, filter: OpportunityFilter) =>
    Effect.gen(function*() {
      const after = yield* decodeCursor(filter.cursor)
      const limit = Math.max(1, Math.min(filter.limit, 100))
      const rows = yield* opportunityViewsWhere(
        sql.and([
          sql`o.workspace_id = ${workspaceId}`,
          ...(filter.pipelineId === undefined ? [] : [sql`o.pipeline_id = ${filter.pipelineId}`]),
          ...(filter.stageId === undefined ? [] : [sql`o.stage_id = ${filter.stageId}`]),
          ...(filter.contactId === undefined ? [] : [sql`o.contact_id = ${filter.contactId}`]),
          ...(filter.companyId === undefined ? [] : [sql`c.company_id = ${filter.companyId}`]),
          ...(filter.outcome === undefined ? [] : [sql`s.outcome = ${filter.outcome}`]),
          ...(after === undefined ? [] : [sql`(o.created_at, o.id) < (${after[0]}::timestamptz, ${after[1]})`])
        ]),
        sql`ORDER BY o.created_at DESC, o.id DESC LIMIT ${limit + 1}`
      )
      return pageOf(rows, limit, (row) => [row.created_at, row.id])
    })

  const takenBy = (workspaceId: string, field: "email" | "phone", value: string | null, except: string | null) =>
    Effect.gen(function*() {
      if (value === null) return
      const rows = yield* contactsWhere(sql`workspace_id = ${workspaceId} AND ${sql(field)} = ${value}`)
      const other = rows.find((row) => row.id !== except)
      if (other !== undefined) return yield* new ContactTaken({ field, contactId: other.id })
    })

  const createContact = (workspaceId: string, data: ContactData, createdBy: string | null) =>
    Effect.gen(function*() {
      const email = normalizeEmail(data.email)
      const phone = normalizePhone(data.phone)
      if (email === null && phone === null) {
        return yield* new NoPersonKey({ detail: "A contact needs an email shaped like an address or a phone of 7 to 15 digits." })
      }
      if (yield* isErased(workspaceId, data)) return yield* new ContactErased({ contactId: null })
      yield* takenBy(workspaceId, "email", email, null)
      yield* takenBy(workspaceId, "phone", phone, null)
      const company = yield* companyFor(workspaceId, email, text(data.company))
      const at = yield* now
      const id = newId("contact")
      yield* sql`INSERT INTO crm.contacts (id, workspace_id, name, email, phone, role, website, company_id, created_by, created_at, updated_at)
        VALUES (${id}, ${workspaceId}, ${text(data.name)}, ${email}, ${phone}, ${text(data.role)}, ${text(data.website)},
          ${Option.getOrNull(Option.map(company, (c) => c.company.id))}, ${createdBy}, ${at}, ${at})`.pipe(Effect.orDie)
      const contact = yield* getContact(workspaceId, id)
      if (Option.isNone(contact)) return yield* Effect.dieMessage("INSERT wrote no contact")
      return { contact: contact.value, company }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const updateContact = (workspaceId: string, contactId: string, patch: ContactPatch) =>
    Effect.gen(function*() {
      const rows = yield* contactsWhere(sql`workspace_id = ${workspaceId} AND id = ${contactId} FOR UPDATE`)
      const existing = rows[0]
      if (existing === undefined) return yield* new CrmNotFound({ kind: "contact", id: contactId })
      if (existing.erased_at !== null) return yield* new ContactErased({ contactId })
      const email = patch.email === undefined ? existing.email : normalizeEmail(patch.email ?? undefined)
      const phone = patch.phone === undefined ? existing.phone : normalizePhone(patch.phone ?? undefined)
      if (patch.email !== undefined && patch.email !== null && email === null) {
        return yield* new NoPersonKey({ detail: `"${patch.email}" is not shaped like an email address.` })
      }
      if (patch.phone !== undefined && patch.phone !== null && phone === null) {
        return yield* new NoPersonKey({ detail: "A phone needs 7 to 15 digits." })
      }
      if (email === null && phone === null) {
        return yield* new NoPersonKey({ detail: "A contact keeps an email or a phone: clearing both would leave no way to recognise them." })
      }
      if (yield* isErased(workspaceId, { email: email ?? undefined, phone: phone ?? undefined })) {
        return yield* new ContactErased({ contactId: null })
      }
      yield* takenBy(workspaceId, "email", email, contactId)
      yield* takenBy(workspaceId, "phone", phone, contactId)
      const keep = (value: string | null | undefined, current: string | null) => value === undefined ? current : text(value ?? undefined)
      const company = email !== existing.email || patch.company !== undefined
        ? yield* companyFor(workspaceId, email, keep(patch.company, null))
        : Option.none()
      const next = {
        name: keep(patch.name, existing.name),
        email,
        phone,
        role: keep(patch.role, existing.role),
        website: keep(patch.website, existing.website),
        company_id: Option.isSome(company)
          ? company.value.company.id
          : email !== existing.email && email !== null ? null : existing.company_id
      }
      const changed = (["name", "email", "phone", "role", "website", "company_id"] as const).filter((key) => next[key] !== existing[key])
      if (changed.length === 0) return { contact: existing, changed, company }
      yield* sql`UPDATE crm.contacts SET name = ${next.name}, email = ${next.email}, phone = ${next.phone}, role = ${next.role},
          website = ${next.website}, company_id = ${next.company_id}, updated_at = ${yield* now} WHERE id = ${contactId}`.pipe(Effect.orDie)
      const updated = yield* getContact(workspaceId, contactId)
      if (Option.isNone(updated)) return yield* Effect.dieMessage("an updated contact vanished")
      return { contact: updated.value, changed, company }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const listContacts = (workspaceId: string, filter: ContactFilter) =>
    Effect.gen(function*() {
      const after = yield* decodeCursor(filter.cursor)
      const limit = Math.max(1, Math.min(filter.limit, 100))
      const needle = filter.text === undefined ? undefined : containing(filter.text)
      const digits = filter.text?.replace(/\D/g, "") ?? ""
      const rows = yield* sql`SELECT ${sql.literal(contactColumnsOf("c"))} FROM crm.contacts c WHERE ${
        sql.and([
          sql`c.workspace_id = ${workspaceId}`,
          ...(filter.companyId === undefined ? [] : [sql`c.company_id = ${filter.companyId}`]),
          ...(filter.sourceId === undefined ? [] : [sql`c.source_id = ${filter.sourceId}`]),
          ...(filter.stageId === undefined
            ? []
            : [sql`EXISTS (SELECT 1 FROM crm.opportunities o WHERE o.contact_id = c.id AND o.stage_id = ${filter.stageId})`]),
          ...(filter.createdFrom === undefined ? [] : [sql`c.created_at >= ${filter.createdFrom}::timestamptz`]),
          ...(filter.createdTo === undefined ? [] : [sql`c.created_at <= ${filter.createdTo}::timestamptz`]),
          ...(needle === undefined ? [] : [sql`(lower(c.name) LIKE ${needle} OR c.email LIKE ${needle}
              ${digits.length >= 3 ? sql`OR c.phone LIKE ${`%${digits}%`}` : sql``}
              OR EXISTS (SELECT 1 FROM crm.companies k WHERE k.id = c.company_id AND lower(k.name) LIKE ${needle}))`]),
          ...(after === undefined ? [] : [sql`(c.created_at, c.id) < (${after[0]}::timestamptz, ${after[1]})`])
        ])
      } ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
      return pageOf(rows, limit, (row) => [row.created_at, row.id])
    })

  const searchContacts = (workspaceId: string, query: string, limit: number) =>
    Effect.gen(function*() {
      const needle = containing(query.trim())
      const lowered = query.trim().toLowerCase()
      const digits = query.replace(/\D/g, "")
      const phone = digits.length >= 3 ? `%${digits}%` : null
      return yield* sql`SELECT ${sql.literal(contactColumnsOf("c"))} FROM crm.contacts c LEFT JOIN crm.companies k ON k.id = c.company_id
        WHERE c.workspace_id = ${workspaceId} AND c.erased_at IS NULL
          AND (lower(c.name) LIKE ${needle} OR c.email LIKE ${needle} OR lower(k.name) LIKE ${needle}
            ${phone === null ? sql`` : sql`OR c.phone LIKE ${phone}`})
        ORDER BY (CASE WHEN c.email = ${lowered} OR lower(c.name) = ${lowered} THEN 0
                       WHEN lower(c.name) LIKE ${`${lowered.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`} OR c.email LIKE ${`${lowered.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`} THEN 1
                       ELSE 2 END), c.created_at DESC, c.id DESC
        LIMIT ${Math.max(1, Math.min(limit, 50))}`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
    })

  const listCompanies = (
    workspaceId: string,
    filter: { readonly companyId?: string | undefined; readonly text?: string | undefined; readonly limit: number; readonly cursor?: string | undefined }
  ) =>
    Effect.gen(function*() {
      const after = yield* decodeCursor(filter.cursor)
      const limit = Math.max(1, Math.min(filter.limit, 100))
      const rows = yield* sql`SELECT k.id, k.name, k.domain,
            (SELECT count(*) FROM crm.contacts c WHERE c.company_id = k.id)::text AS contacts
          FROM crm.companies k WHERE ${
        sql.and([
          sql`k.workspace_id = ${workspaceId}`,
          ...(filter.companyId === undefined ? [] : [sql`k.id = ${filter.companyId}`]),
          ...(filter.text === undefined ? [] : [sql`(lower(k.name) LIKE ${containing(filter.text)} OR k.domain LIKE ${containing(filter.text)})`]),
          ...(after === undefined ? [] : [sql`(lower(k.name), k.id) > (${after[0]}, ${after[1]})`])
        ])
      } ORDER BY lower(k.name), k.id LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeCompanyRows), Effect.orDie)
      return pageOf(rows, limit, (row) => [row.name.toLowerCase(), row.id])
    })

  const collectionsWhere = (condition: Fragment, tail: Fragment = sql``) =>
    sql`SELECT l.id, l.name, (SELECT count(*) FROM crm.collection_items i WHERE i.collection_id = l.id)::int AS size,
          ${sql.literal(iso("l.created_at"))} AS created_at, ${sql.literal(iso("l.updated_at"))} AS updated_at
        FROM crm.collections l WHERE ${condition} ${tail}`.pipe(Effect.flatMap(decodeCollections), Effect.orDie)

  const getCollection = (workspaceId: string, collectionId: string) =>
    Effect.map(collectionsWhere(sql`l.workspace_id = ${workspaceId} AND l.id = ${collectionId}`), (rows) => Option.fromNullable(rows[0]))

  const listCollections = (workspaceId: string, filter: { readonly limit: number; readonly cursor?: string | undefined }) =>
    Effect.gen(function*() {
      const after = yield* decodeCursor(filter.cursor)
      const limit = Math.max(1, Math.min(filter.limit, 100))
      const rows = yield* collectionsWhere(
        sql.and([
          sql`l.workspace_id = ${workspaceId}`,
          ...(after === undefined ? [] : [sql`(l.created_at, l.id) < (${after[0]}::timestamptz, ${after[1]})`])
        ]),
        sql`ORDER BY l.created_at DESC, l.id DESC LIMIT ${limit + 1}`
      )
      return pageOf(rows, limit, (row) => [row.created_at, row.id])
    })

  const lockCollection = (workspaceId: string, collectionId: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT id FROM crm.collections WHERE workspace_id = ${workspaceId} AND id = ${collectionId} FOR UPDATE`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* new CrmNotFound({ kind: "collection", id: collectionId })
    })

  /** Every id a contact of the workspace, or the first that is not. */
  const checkContacts = (workspaceId: string, contactIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const ids = [...new Set(contactIds)]
      const found = ids.length === 0 ? [] : yield* sql`SELECT id FROM crm.contacts WHERE workspace_id = ${workspaceId} AND id IN ${sql.in(ids)}`.pipe(Effect.orDie)
      const known = new Set(found.map((row) => row.id))
      const missing = ids.find((id) => !known.has(id))
      if (missing !== undefined) return yield* new CrmNotFound({ kind: "contact", id: missing })
      return ids
    })

  const addToCollection = (workspaceId: string, collectionId: string, contactIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* lockCollection(workspaceId, collectionId)
      const ids = yield* checkContacts(workspaceId, contactIds)
      const at = yield* now
      let added = 0
      for (const contactId of ids) {
        const inserted = yield* sql`INSERT INTO crm.collection_items (collection_id, contact_id, added_at) VALUES (${collectionId}, ${contactId}, ${at})
          ON CONFLICT DO NOTHING RETURNING contact_id`.pipe(Effect.orDie)
        added += inserted.length
      }
      if (added > 0) yield* sql`UPDATE crm.collections SET updated_at = ${at} WHERE id = ${collectionId}`.pipe(Effect.orDie)
      return added
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const removeFromCollection = (workspaceId: string, collectionId: string, contactIds: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      yield* lockCollection(workspaceId, collectionId)
      const ids = [...new Set(contactIds)]
      if (ids.length === 0) return 0
      const removed = yield* sql`DELETE FROM crm.collection_items WHERE collection_id = ${collectionId} AND contact_id IN ${sql.in(ids)}
        RETURNING contact_id`.pipe(Effect.orDie)
      if (removed.length > 0) yield* sql`UPDATE crm.collections SET updated_at = ${yield* now} WHERE id = ${collectionId}`.pipe(Effect.orDie)
      return removed.length
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const deleteCollection = (workspaceId: string, collectionId: string) =>
    Effect.gen(function*() {
      yield* lockCollection(workspaceId, collectionId)
      const found = yield* getCollection(workspaceId, collectionId)
      if (Option.isNone(found)) return yield* new CrmNotFound({ kind: "collection", id: collectionId })
      yield* sql`DELETE FROM crm.collections WHERE id = ${collectionId}`.pipe(Effect.orDie)
      return found.value
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const createCollection = (workspaceId: string, input: { readonly name: string; readonly contactIds: ReadonlyArray<string> }) =>
    Effect.gen(function*() {
      const ids = yield* checkContacts(workspaceId, input.contactIds)
      const id = newId("collection")
      const at = yield* now
      yield* sql`INSERT INTO crm.collections (id, workspace_id, name, created_at, updated_at) VALUES (${id}, ${workspaceId}, ${input.name}, ${at}, ${at})`.pipe(Effect.orDie)
      for (const contactId of ids) {
        yield* sql`INSERT INTO crm.collection_items (collection_id, contact_id, added_at) VALUES (${id}, ${contactId}, ${at})`.pipe(Effect.orDie)
      }
      return { id, name: input.name, contactIds: ids }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

  const collectionContacts = (workspaceId: string, collectionId: string, among?: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const exists = yield* sql`SELECT 1 FROM crm.collections WHERE workspace_id = ${workspaceId} AND id = ${collectionId}`.pipe(Effect.orDie)
      if (exists.length === 0) return yield* new CrmNotFound({ kind: "collection", id: collectionId })
      if (among !== undefined && among.length === 0) return []
      const selected = among === undefined ? sql`` : sql`AND i.contact_id IN ${sql.in(among)}`
      return yield* sql`SELECT ${sql.literal(contactColumnsOf("c"))}
        FROM crm.collection_items i JOIN crm.contacts c ON c.id = i.contact_id
        WHERE i.collection_id = ${collectionId} ${selected} ORDER BY c.id`.pipe(Effect.flatMap(decodeContacts), Effect.orDie)
    })

  const collectionMembers = (workspaceId: string, collectionId: string, page: { readonly limit: number; readonly cursor?: string | undefined }) =>
    Effect.gen(function*() {
      const exists = yield* sql`SELECT 1 FROM crm.collections WHERE workspace_id = ${workspaceId} AND id = ${collectionId}`.pipe(Effect.orDie)
      if (exists.length === 0) return yield* new CrmNotFound({ kind: "collection", id: collectionId })
      const after = yield* decodeCursor(page.cursor)
      const limit = Math.max(1, Math.min(page.limit, 100))
      const rows = yield* sql`SELECT ${sql.literal(contactColumnsOf("c"))}, ${sql.literal(iso("i.added_at"))} AS added_at
        FROM crm.collection_items i JOIN crm.contacts c ON c.id = i.contact_id
        WHERE i.collection_id = ${collectionId}
          ${after === undefined ? sql`` : sql`AND (COALESCE(i.added_at, 'epoch'::timestamptz), c.id) > (${after[0]}::timestamptz, ${after[1]})`}
        ORDER BY COALESCE(i.added_at, 'epoch'::timestamptz), c.id LIMIT ${limit + 1}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...Contact.fields, added_at: Schema.NullOr(Schema.String) })))),
        Effect.orDie
      )
      const paged = pageOf(rows, limit, (row) => [row.added_at ?? "1970-01-01T00:00:00.000000Z", row.id])
      return { items: paged.items.map(({ added_at: _, ...contact }) => contact), nextCursor: paged.nextCursor }
    })

  return Crm.of({
    applyContact,
    createContact,
    updateContact,
    listContacts,
    searchContacts,
    listCompanies,
    getContact,
    getCompany,
    getCompanies,
    erase,
    isErased,
    createPipeline,
    pipelines,
    getPipeline,
    renamePipeline: (workspaceId, pipelineId, name) => renamePipeline(workspaceId, pipelineId, name).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    archivePipeline: (workspaceId, pipelineId) => archivePipeline(workspaceId, pipelineId).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    addStage: (workspaceId, pipelineId, stage) => addStage(workspaceId, pipelineId, stage).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    renameStage: (workspaceId, stageId, name) => renameStage(workspaceId, stageId, name).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    reorderStages: (workspaceId, pipelineId, ids) => reorderStages(workspaceId, pipelineId, ids).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    archiveStage: (workspaceId, stageId) => archiveStage(workspaceId, stageId).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)),
    checkStage: (workspaceId, pipelineId, stageId) => Effect.asVoid(liveStage(workspaceId, pipelineId, stageId)),
    openOpportunity,
    moveOpportunity,
    getOpportunity,
    listOpportunities,
    createCollection,
    collectionContacts,
    getCollection,
    listCollections,
    collectionMembers,
    addToCollection,
    removeFromCollection,
    deleteCollection
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Crm, never, SqlClient.SqlClient | Crypto> = Layer.effect(Crm, make)
