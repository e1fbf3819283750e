import * as Operation from "@service/core/Operation"
import * as Schema from "effect/Schema"
import { Collection, Contact, OpportunityView, Pipeline } from "../Crm.js"

const dash = (value: string | number | null | undefined): string => (value === null || value === undefined || value === "" ? "-" : String(value))

/** Rows as aligned columns under a header line. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.min(40, Math.max(h.length, ...rows.map((row) => (row[i] ?? "").length))))
  const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cut(cell, widths[i] ?? cell.length)).join("  ").trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

const more = (next: string | null, context: Operation.SummaryContext): ReadonlyArray<string> =>
  next === null ? [] : [`next page: ${context.commandLine({ ...context.input, cursor: next })}`]

const ContactWithCompany = Schema.Struct({ ...Contact.fields, company: Schema.optional(Schema.NullOr(Schema.Struct({ name: Schema.String }))) })

const contactRow = (c: typeof ContactWithCompany.Type) => [
  c.id,
  c.erased_at === null ? dash(c.name) : "(erased)",
  dash(c.email),
  dash(c.phone),
  dash(c.company?.name ?? c.company_id),
  c.created_at.slice(0, 10)
]

const contactHeader = ["id", "name", "email", "phone", "company", "created"]

/** A page of contacts as a table, with the command for the next page. */
export const contactPage = Operation.summaryOf(
  Schema.Struct({ contacts: Schema.Array(ContactWithCompany), next_cursor: Schema.optional(Schema.NullOr(Schema.String)) }),
  (page, context) =>
    page.contacts.length === 0
      ? "No contacts."
      : [`${page.contacts.length} contact${page.contacts.length === 1 ? "" : "s"}`, table(contactHeader, page.contacts.map(contactRow)), ...more(page.next_cursor ?? null, context)]
        .join("\n")
)

/** One contact's key facts. */
export const contact = Operation.summaryOf(ContactWithCompany, (c) =>
  [
    `${c.erased_at === null ? dash(c.name) : "(erased)"}  ${c.id}`,
    `  email: ${dash(c.email)} · phone: ${dash(c.phone)} · role: ${dash(c.role)}`,
    `  company: ${dash(c.company?.name ?? c.company_id)} · website: ${dash(c.website)}`,
    `  source: ${dash(c.source_id)} · created ${c.created_at} · updated ${c.updated_at}${c.erased_at === null ? "" : ` · erased ${c.erased_at}`}`
  ].join("\n"))

/** Pipelines with their stages in order. */
export const pipelines = Operation.summaryOf(Schema.Struct({ pipelines: Schema.Array(Pipeline) }), (list) =>
  list.pipelines.length === 0
    ? "No Pipelines."
    : list.pipelines.map((p) =>
      [
        `${p.name}  ${p.id}${p.archived ? " (archived)" : ""}`,
        ...p.stages.map((s) => `  ${s.position + 1}. ${s.name} [${s.outcome}]  ${s.id}${s.archived ? " (archived)" : ""}`)
      ].join("\n")
    ).join("\n"))

/** One Pipeline with its stages. */
export const pipeline = Operation.summaryOf(Pipeline, (p) =>
  [
    `${p.name}  ${p.id}${p.archived ? " (archived)" : ""}`,
    ...p.stages.map((s) => `  ${s.position + 1}. ${s.name} [${s.outcome}]  ${s.id}${s.archived ? " (archived)" : ""}`)
  ].join("\n"))

const opportunityRow = (o: typeof OpportunityView.Type) => [o.id, o.title, `${o.stage_name} [${o.outcome}]`, dash(o.contact_id), o.updated_at.slice(0, 10)]

/** A page of opportunities as a table. */
export const opportunityPage = Operation.summaryOf(
  Schema.Struct({ opportunities: Schema.Array(OpportunityView), next_cursor: Schema.NullOr(Schema.String) }),
  (page, context) =>
    page.opportunities.length === 0
      ? "No opportunities."
      : [table(["id", "title", "stage", "contact", "updated"], page.opportunities.map(opportunityRow)), ...more(page.next_cursor, context)].join("\n")
)

/** A page of collections as a table. */
export const collectionPage = Operation.summaryOf(
  Schema.Struct({ collections: Schema.Array(Collection), next_cursor: Schema.NullOr(Schema.String) }),
  (page, context) =>
    page.collections.length === 0
      ? "No collections."
      : [table(["id", "name", "contacts", "updated"], page.collections.map((c) => [c.id, c.name, String(c.size), c.updated_at.slice(0, 10)])), ...more(page.next_cursor, context)]
        .join("\n")
)

/** One collection's facts. */
export const collection = Operation.summaryOf(Collection, (c) => `${c.name}  ${c.id}\n  ${c.size} contact${c.size === 1 ? "" : "s"} · updated ${c.updated_at}`)

/** A collection with a page of its contacts. */
export const collectionWithContacts = Operation.summaryOf(
  Schema.Struct({ collection: Collection, contacts: Schema.Array(ContactWithCompany), next_cursor: Schema.NullOr(Schema.String) }),
  (page, context) =>
    [
      `${page.collection.name}  ${page.collection.id} (${page.collection.size} contact${page.collection.size === 1 ? "" : "s"})`,
      ...(page.contacts.length === 0 ? [] : [table(contactHeader, page.contacts.map(contactRow))]),
      ...more(page.next_cursor, context)
    ].join("\n")
)
