/**
 * The CRM's read on HTTP and the CLI: one contact with its company (`GET /workspaces/<slug>/crm/contacts/<id>`,
 * `service crm contacts show <id>`), so what the door applied can be looked at. The contact is the workspace's
 * own record, email and phone included; it is not served on MCP, where agents read Arrivals, which never carry
 * them.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Company, Contact, Crm } from "./Crm.js"

/** @since 0.1.0 @category models */
export const CrmCode = Schema.Literal("invalid_field_value", "contact_not_found", "crm_unavailable")
/** @since 0.1.0 @category models */
export type CrmCode = typeof CrmCode.Type

/** @since 0.1.0 @category errors */
export class CrmRefusal extends Schema.TaggedError<CrmRefusal>("@service/crm/CrmRefusal")("CrmRefusal", {
  code: CrmCode,
  why: Schema.String,
  suggestedCorrection: Schema.String,
  field: Schema.optional(Schema.String),
  allowedValues: Schema.optional(Schema.Array(Schema.String)),
  allowedRange: Schema.optional(Refusal.AllowedRange)
}) {}

const rules = {
  invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "a field is missing, unknown or malformed" },
  contact_not_found: { status: 404, retryable: false, action: "list_arrivals", description: "no contact with that id in this workspace" },
  crm_unavailable: { status: 503, retryable: true, action: "retry_later", description: "the CRM's store cannot be reached right now" }
} as const satisfies { readonly [K in CrmCode]: Refusal.RefusalRule }

/** @since 0.1.0 @category models */
export const CrmBlock = Schema.Struct({
  code: CrmCode,
  why: Schema.String,
  suggested_correction: Schema.String,
  retryable: Schema.Boolean,
  recovery: Schema.Struct({ action: Schema.Literal("fix_arguments", "list_arrivals", "retry_later") }),
  field: Schema.optional(Schema.String),
  allowed_values: Schema.optional(Schema.Array(Schema.String)),
  allowed_range: Schema.optional(Refusal.AllowedRange)
}).annotations({ identifier: "CrmBlock", description: "What was refused, why, and what to do next." })

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeCodec({
  key: "crm",
  identifier: "Crm",
  tag: "CrmRefusal",
  is: (u: unknown): u is CrmRefusal => u instanceof CrmRefusal,
  rules,
  code: (refusal) => refusal.code,
  message: (refusal) => refusal.why,
  toBlock: (refusal) => ({
    code: refusal.code,
    why: refusal.why,
    suggested_correction: refusal.suggestedCorrection,
    retryable: rules[refusal.code].retryable,
    recovery: { action: rules[refusal.code].action },
    ...(refusal.field === undefined ? {} : { field: refusal.field }),
    ...(refusal.allowedValues === undefined ? {} : { allowed_values: refusal.allowedValues }),
    ...(refusal.allowedRange === undefined ? {} : { allowed_range: refusal.allowedRange })
  }),
  block: CrmBlock,
  invalidInput: (input) =>
    new CrmRefusal({
      code: "invalid_field_value",
      why: input.why,
      suggestedCorrection: input.suggestedCorrection,
      ...(input.field === undefined ? {} : { field: input.field }),
      ...(input.allowedValues === undefined ? {} : { allowedValues: input.allowedValues }),
      ...(input.allowedRange === undefined ? {} : { allowedRange: input.allowedRange })
    }),
  invalidInputCode: "invalid_field_value",
  codeField: "code",
  outage: () => new CrmRefusal({ code: "crm_unavailable", why: "The CRM's store cannot be reached right now.", suggestedCorrection: "Retry in a few seconds." }),
  sample: (code) => new CrmRefusal({ code, why: `Sample ${code} refusal.`, suggestedCorrection: "Follow the recovery action." })
})

const ContactRef = Schema.Struct({
  contact_id: Schema.String.pipe(Schema.pattern(/^contact_[0-9a-f]{24}$/)).annotations({
    description: "A contact id, as an Arrival names it (contact_ followed by 24 hexadecimal digits)."
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ContactRef" })

const ContactView = Schema.Struct({
  ...Contact.fields,
  company: Schema.NullOr(Company).annotations({ description: "The company matched by the email's business domain." })
}).annotations({ identifier: "Contact" })

/** @since 0.1.0 @category operations */
export const contactRead = Operation.make({
  name: "contact_read",
  title: "Read a contact",
  description: "One contact of the workspace's CRM with its company: what the door created or updated (an Arrival names it).",
  refusals: codec,
  refuses: ["contact_not_found"],
  scopes: ["commercial:read"],
  annotations: Operation.readOnly,
  metered: false,
  paginates: false,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/contacts/:contact_id", input: { kind: "path", params: { contact_id: "contact_id" } } },
  cli: { words: ["contacts", "show"], positional: "contact_id" },
  input: ContactRef,
  modelInput: ContactRef,
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

/** What running the CRM operations needs. @since 0.1.0 @category models */
export type Requirements = Crm | Caller

/** @since 0.1.0 @category groups */
export const group: Operation.Group<Requirements> = Operation.group<Requirements>({
  name: "crm",
  title: "CRM",
  description: "The workspace's CRM as the door fills it.",
  refusals: codec,
  operations: [contactRead],
  http: { prefix: "/workspaces/:workspace/crm", workspaceScoped: true },
  mcp: { namespace: "crm" },
  cli: { word: "crm", description: "The workspace's CRM: contacts." }
})
