/**
 * Contacts and companies on every surface: list (newest first, keyset pages, filtered by company, stage, Source,
 * creation range and text), search (best matches of a text), create by hand and update (`contact.created`,
 * `contact.updated` and `company.created` recorded in the same transaction, never an email or phone), and
 * companies with their contacts. Reads need `commercial:read` (or `crm:write`); changes need `crm:write`.
 *
 * @since 0.1.0
 */
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ContactErased, ContactTaken, CrmNotFound, NoPersonKey } from "./Crm.js"
import { Company, Contact, Crm } from "./Crm.js"
import { refuse } from "./CrmRefusal.js"
import {
  badCursor,
  CompanyId,
  ContactId,
  kit,
  Limit,
  NextCursor,
  notFound,
  pageInputs,
  recordContact,
  SourceId,
  StageId,
  strict,
  Text,
  transactional,
  writeScopes
} from "./internal/kit.js"
import * as Summaries from "./internal/summaries.js"

/** A contact with its company. @since 0.1.0 @category models */
export const ContactView = Schema.Struct({
  ...Contact.fields,
  company: Schema.NullOr(Company).annotations({ description: "The company matched by the email's business domain." })
}).annotations({ identifier: "Contact" })

/** Attaches each contact's company (one read for the page). */
const withCompanies = (workspaceId: string, contacts: ReadonlyArray<Contact>) =>
  Effect.gen(function*() {
    const crm = yield* Crm
    const ids = [...new Set(contacts.flatMap((c) => (c.company_id === null ? [] : [c.company_id])))]
    const companies = new Map((yield* crm.getCompanies(workspaceId, ids)).map((company) => [company.id, company] as const))
    return contacts.map((contact) => ({ ...contact, company: contact.company_id === null ? null : companies.get(contact.company_id) ?? null }))
  })

const Instant = Schema.String.pipe(
  Schema.filter((value) => !Number.isNaN(Date.parse(value)) && /^\d{4}-\d{2}-\d{2}/.test(value), {
    message: () => "an ISO 8601 date or instant, e.g. 2026-11-01 or 2026-11-01T12:00:00Z"
  })
).annotations({ description: "An ISO 8601 date or instant (UTC when no offset is given)." })

const listFields = {
  company_id: Schema.optional(CompanyId).annotations({ description: "Only contacts of this company." }),
  stage_id: Schema.optional(StageId).annotations({ description: "Only contacts with an opportunity in this stage." }),
  source_id: Schema.optional(SourceId).annotations({ description: "Only contacts that came through this door Source." }),
  created_from: Schema.optional(Instant).annotations({ description: "Only contacts created at or after this instant." }),
  created_to: Schema.optional(Instant).annotations({ description: "Only contacts created at or before this instant." }),
  text: Schema.optional(Text(200, "Part of the name, email, phone or company name."))
}

const contactPage = pageInputs(listFields, 100, 20, "ContactList")

const ContactPage = Schema.Struct({ contacts: Schema.Array(ContactView), next_cursor: NextCursor }).annotations({ identifier: "ContactPage" })

/** @since 0.1.0 @category operations */
export const contactList = kit.make({
  name: "contact_list",
  title: "List contacts",
  description:
    "The workspace's CRM contacts, newest first, each with its company; filter by company, stage, door Source, creation range or text; page with cursor. Free.",
  refuses: [],
  paginates: true,
  http: { method: "GET", path: "/contacts", input: { kind: "query" } },
  cli: { words: ["contacts", "list"], summary: Summaries.contactPage },
  ...contactPage,
  output: ContactPage,
  capability: {
    question: "Which contacts does the CRM hold (those the door created, or made by hand)?",
    requires: "Nothing; optionally company_id, stage_id, source_id, created_from, created_to, text, limit and cursor.",
    example: { limit: 10 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const page = yield* crm.listContacts(caller.workspace.id, {
        companyId: input.company_id,
        stageId: input.stage_id,
        sourceId: input.source_id,
        createdFrom: input.created_from,
        createdTo: input.created_to,
        text: input.text,
        limit: input.limit ?? 20,
        cursor: input.cursor
      }).pipe(Effect.catchTag("BadCursor", badCursor))
      return { contacts: yield* withCompanies(caller.workspace.id, page.items), next_cursor: page.nextCursor }
    })
})

const SearchInput = Schema.Struct({
  text: Text(200, "What to look for: part of a name, an email, a phone or a company name."),
  limit: Schema.optional(Limit(50, 10))
}).annotations({ ...strict, identifier: "ContactSearchInput" })

/** @since 0.1.0 @category operations */
export const contactSearch = kit.make({
  name: "contact_search",
  title: "Search contacts",
  description:
    "The contacts best matching a text in their name, email, phone or company name: exact matches first, then prefixes, then any match. Erased contacts are never found. Free.",
  refuses: [],
  http: { method: "POST", path: "/contacts/search", input: { kind: "body" } },
  cli: { words: ["contacts", "search"], positional: "text", summary: Summaries.contactPage },
  input: SearchInput,
  output: Schema.Struct({ contacts: Schema.Array(ContactView) }).annotations({ identifier: "ContactSearchResult" }),
  capability: {
    question: "Is this person already in the CRM?",
    requires: "text: part of a name, an email, a phone or a company name.",
    example: { text: "conformance" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const found = yield* crm.searchContacts(caller.workspace.id, input.text, input.limit ?? 10)
      return { contacts: yield* withCompanies(caller.workspace.id, found) }
    })
})

const fieldsOf = {
  name: Text(200, "The person's name."),
  email: Text(320, "An email address; its business domain finds or creates the company."),
  phone: Text(40, "A phone, 7 to 15 digits, a leading + kept."),
  role: Text(200, "The person's role or title."),
  company: Text(200, "A company name, used when the email's domain makes a new company."),
  website: Text(500, "A website.")
}

const CreateInput = Schema.Struct({
  name: Schema.optional(fieldsOf.name),
  email: Schema.optional(fieldsOf.email),
  phone: Schema.optional(fieldsOf.phone),
  role: Schema.optional(fieldsOf.role),
  company: Schema.optional(fieldsOf.company),
  website: Schema.optional(fieldsOf.website)
}).annotations({ ...strict, identifier: "ContactCreateInput" })

/** The CRM's refusals of a person's contact change. */
const refuseChange = <A, R>(
  effect: Effect.Effect<A, ContactTaken | ContactErased | NoPersonKey | CrmNotFound, R>,
  contactId?: string
) =>
  effect.pipe(
    Effect.catchTags({
      ContactTaken: (taken) =>
        refuse("contact_exists", `That ${taken.field} already belongs to contact ${taken.contactId}.`, `Update ${taken.contactId} instead (contact_update).`, {
          field: taken.field
        }),
      ContactErased: () =>
        refuse(
          "contact_erased",
          "This person asked for erasure: their email or phone is not stored again, and an erased contact is not edited.",
          "Do not store this person again."
        ),
      NoPersonKey: (missing) => refuse("no_person_key", missing.detail, "Send an email shaped like an address or a phone of 7 to 15 digits."),
      CrmNotFound: () => notFound("contact", contactId ?? "")
    })
  )

/** @since 0.1.0 @category operations */
export const contactCreate = kit.make({
  name: "contact_create",
  title: "Create a contact",
  description:
    "Adds a contact by hand. It needs an email or a phone; each belongs to one contact of the workspace (contact_exists names the one that has it), and an erased person's are refused (contact_erased). A business email's domain finds or creates its company. Records contact.created.",
  refuses: ["contact_exists", "contact_erased", "no_person_key"],
  annotations: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  scopes: writeScopes,
  http: { method: "POST", path: "/contacts", input: { kind: "body" } },
  cli: { words: ["contacts", "create"], summary: Summaries.contact },
  input: CreateInput,
  output: ContactView,
  capability: {
    question: "How do I add a person to the CRM by hand?",
    requires: "An email or a phone; optionally name, role, company and website.",
    example: { name: "Ana Torres", email: "ana.torres@conformance.example.com", role: "Compras" }
  },
  run: (input) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const made = yield* refuseChange(crm.createContact(caller.workspace.id, input, Option.getOrNull(Option.map(caller.person, (p) => p.id))))
      yield* recordContact("contact.created", made.contact, [], made.company)
      const [view] = yield* withCompanies(caller.workspace.id, [made.contact])
      return view ?? { ...made.contact, company: null }
    }))
})

const nullable = <A, I>(schema: Schema.Schema<A, I>) => Schema.optional(Schema.NullOr(schema))

const UpdateInput = Schema.Struct({
  contact_id: ContactId,
  name: nullable(fieldsOf.name),
  email: nullable(fieldsOf.email),
  phone: nullable(fieldsOf.phone),
  role: nullable(fieldsOf.role),
  company: nullable(fieldsOf.company),
  website: nullable(fieldsOf.website)
}).annotations({
  ...strict,
  identifier: "ContactUpdateInput",
  description: "A value sets the field, null clears it, a field left out stays as it is."
})

/** @since 0.1.0 @category operations */
export const contactUpdate = kit.make({
  name: "contact_update",
  title: "Update a contact",
  description:
    "Changes a contact's fields: a value sets one, null clears it, a field left out stays. It keeps an email or a phone; a value another contact has is refused (contact_exists), an erased contact cannot be edited (contact_erased). Records contact.updated with the names of the changed fields.",
  refuses: ["contact_not_found", "contact_exists", "contact_erased", "no_person_key"],
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  scopes: writeScopes,
  http: { method: "PATCH", path: "/contacts/:contact_id", input: { kind: "body", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "update"], positional: "contact_id" },
  input: UpdateInput,
  output: Schema.Struct({
    contact: ContactView,
    changed_fields: Schema.Array(Schema.String).annotations({ description: "Names of the fields that changed; empty when nothing did." })
  }).annotations({ identifier: "ContactUpdated" }),
  capability: {
    question: "How do I correct or complete a contact?",
    requires: "contact_id and the fields to change.",
    example: { contact_id: "<contact_id>", role: "Director de compras" }
  },
  run: ({ contact_id, ...patch }) =>
    transactional(Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const updated = yield* refuseChange(crm.updateContact(caller.workspace.id, contact_id, patch), contact_id)
      if (updated.changed.length > 0) yield* recordContact("contact.updated", updated.contact, updated.changed, updated.company)
      const [view] = yield* withCompanies(caller.workspace.id, [updated.contact])
      return { contact: view ?? { ...updated.contact, company: null }, changed_fields: updated.changed }
    }))
})

const CompanyView = Schema.Struct({
  ...Company.fields,
  contacts: Schema.Number.annotations({ description: "How many contacts of the workspace belong to it." })
}).annotations({ identifier: "CompanySummary" })

const companyPage = pageInputs({ text: Schema.optional(Text(200, "Part of the company's name or domain.")) }, 100, 20, "CompanyList")

/** @since 0.1.0 @category operations */
export const companyList = kit.make({
  name: "company_list",
  title: "List companies",
  description: "The workspace's companies (matched from contacts' business email domains, or named by a person) by name, each with its number of contacts; filter by text; page with cursor. Free.",
  refuses: [],
  paginates: true,
  http: { method: "GET", path: "/companies", input: { kind: "query" } },
  cli: { words: ["companies", "list"] },
  ...companyPage,
  output: Schema.Struct({ companies: Schema.Array(CompanyView), next_cursor: NextCursor }).annotations({ identifier: "CompanyPage" }),
  capability: {
    question: "Which companies do the CRM's contacts work for?",
    requires: "Nothing; optionally text, limit and cursor.",
    example: { limit: 10 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const page = yield* crm.listCompanies(caller.workspace.id, { text: input.text, limit: input.limit ?? 20, cursor: input.cursor }).pipe(
        Effect.catchTag("BadCursor", badCursor)
      )
      return { companies: page.items, next_cursor: page.nextCursor }
    })
})

/** @since 0.1.0 @category operations */
export const companyRead = kit.make({
  name: "company_read",
  title: "Read a company",
  description: "One company with its first contacts (newest first, up to 50; contact_list with company_id pages through all of them).",
  refuses: ["company_not_found"],
  http: { method: "GET", path: "/companies/:company_id", input: { kind: "path", params: { company_id: "company_id" } } },
  cli: { words: ["companies", "show"], positional: "company_id" },
  input: Schema.Struct({ company_id: CompanyId }).annotations({ ...strict, identifier: "CompanyRef" }),
  output: Schema.Struct({
    company: CompanyView,
    contacts: Schema.Array(Contact),
    next_cursor: NextCursor.annotations({ description: "Pass to contact_list with this company_id for more of its contacts." })
  }).annotations({ identifier: "CompanyWithContacts" }),
  capability: {
    question: "Who do we know at this company?",
    requires: "company_id, from company_list or a contact.",
    example: { company_id: "<company_id>" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const crm = yield* Crm
      const company = yield* crm.getCompany(caller.workspace.id, input.company_id)
      if (Option.isNone(company)) return yield* notFound("company", input.company_id)
      const page = yield* crm.listContacts(caller.workspace.id, { companyId: input.company_id, limit: 50 }).pipe(Effect.orDie)
      const counted = yield* crm.listCompanies(caller.workspace.id, { companyId: input.company_id, limit: 1 }).pipe(Effect.orDie)
      const contacts = counted.items[0]?.contacts ?? page.items.length
      return { company: { ...company.value, contacts }, contacts: page.items, next_cursor: page.nextCursor }
    })
})

/** The contact and company operations, in the order the group lists them. @since 0.1.0 @category operations */
export const operations = [contactList, contactSearch, contactCreate, contactUpdate, companyList, companyRead] as const
