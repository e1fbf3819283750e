/**
 * The third-party templates of the intake door: for each tool that cannot send Standard Webhooks itself, how
 * its notices are verified, where their event type and notice id sit, which event types carry a contact, and
 * where that contact's fields are (reference: webhooks, sections 1 and 4).
 *
 * Templates are data ({@link templates}); {@link verify} applies a template's own signature scheme to the raw
 * body bytes, {@link readNotice} decodes the body ({@link NoticeBody.decode}) and reads it through the template's
 * {@link Mapping}. Jotform and PostHog do not sign: their Sources use the secret address
 * ({@link requiresSecretAddress}, {@link verifyAddressToken}).
 *
 * Mapping paths use a small language: dotted names, `*` in a name, `[0]`, `[field=value]`, `[field~text]`,
 * `[field=@other.path]` and `header:<name>` (see `internal/templatePath.ts`). Each person field lists
 * alternatives; the first that yields a non-empty text wins.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"
import * as NoticeBody from "./NoticeBody.js"
import * as Path from "./internal/templatePath.js"
import * as Signatures from "./internal/templateSignatures.js"

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export const TemplateName = Schema.Literal(
  "calcom",
  "calendly",
  "stripe",
  "tally",
  "typeform",
  "jotform",
  "webflow",
  "shopify",
  "hotmart",
  "clerk",
  "posthog"
)
/** @since 0.1.0 @category models */
export type TemplateName = typeof TemplateName.Type

/**
 * How a template's notices are authenticated: an HMAC of the tool's own shape, Standard Webhooks (under other
 * header names), a fixed token in a header, or, for tools that do not sign, the Source's secret address.
 *
 * @since 0.1.0 @category models
 */
export const VerificationKind = Schema.Literal("hmac", "standard-webhooks", "static-token", "secret-address")
/** @since 0.1.0 @category models */
export type VerificationKind = typeof VerificationKind.Type

/**
 * Several paths read and joined. `whenMissing: "skip"` joins the parts found (a name with no last name);
 * `"null"` yields nothing unless every part is found (a composed notice id must never collapse to a prefix).
 *
 * @since 0.1.0 @category models
 */
export const Concat = Schema.Struct({
  concat: Schema.Array(Schema.String),
  separator: Schema.String,
  whenMissing: Schema.Literal("skip", "null")
})
/** @since 0.1.0 @category models */
export type Concat = typeof Concat.Type

/** A path, or a join of paths. @since 0.1.0 @category models */
export const Rule = Schema.Union(Schema.String, Concat)
/** @since 0.1.0 @category models */
export type Rule = typeof Rule.Type

/** Alternatives, tried in order; the first non-empty text wins. Empty: never present. @since 0.1.0 @category models */
export const Rules = Schema.Array(Rule)
/** @since 0.1.0 @category models */
export type Rules = typeof Rules.Type

/** The person fields a notice may carry. @since 0.1.0 @category models */
export const PersonField = Schema.Literal("email", "phone", "name", "first_name", "last_name", "company", "website", "role")
/** @since 0.1.0 @category models */
export type PersonField = typeof PersonField.Type

/** Where each person field sits in a template's notice. @since 0.1.0 @category models */
export const Mapping = Schema.Record({ key: PersonField, value: Rules })
/** @since 0.1.0 @category models */
export type Mapping = typeof Mapping.Type

/**
 * A template. `eventTypePath` empty means the tool sends one kind of notice only (Jotform: every call is a
 * submission), which is then always a person event. `noticeIdPath` is the duplicate key: the tool's event id,
 * a header, or a composed key where the tool sends none.
 *
 * @since 0.1.0 @category models
 */
export const Template = Schema.Struct({
  name: TemplateName,
  label: Schema.String,
  verification: VerificationKind,
  /** The headers the scheme reads (documentation for the Source form; the checks live in {@link verify}). */
  signatureHeaders: Schema.Array(Schema.String),
  eventTypePath: Rules,
  noticeIdPath: Rules,
  personEvents: Schema.Array(Schema.String),
  defaultMapping: Mapping
})
/** @since 0.1.0 @category models */
export type Template = typeof Template.Type

/** Request headers as received (names case-insensitive). @since 0.1.0 @category models */
export const Headers = Schema.Record({ key: Schema.String, value: Schema.UndefinedOr(Schema.String) })
/** @since 0.1.0 @category models */
export type Headers = typeof Headers.Type

/** What {@link verify} checks: `now` in Unix seconds. @since 0.1.0 @category models */
export const VerifyInput = Schema.Struct({
  secret: Schema.String,
  headers: Headers,
  body: Schema.Uint8ArrayFromSelf,
  now: Schema.Number
})
/** @since 0.1.0 @category models */
export type VerifyInput = typeof VerifyInput.Type

/** What {@link readNotice} reads; `contentType` defaults to the `content-type` header. @since 0.1.0 @category models */
export const ReadInput = Schema.Struct({
  headers: Headers,
  body: Schema.Uint8ArrayFromSelf,
  contentType: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category models */
export type ReadInput = typeof ReadInput.Type

/** The person fields found in a notice; null where absent. @since 0.1.0 @category models */
export const Person = Schema.Record({ key: PersonField, value: Schema.NullOr(Schema.String) })
/** @since 0.1.0 @category models */
export type Person = typeof Person.Type

/** A notice read through its template. `body` is the decoded body (not redacted). @since 0.1.0 @category models */
export const Notice = Schema.Struct({
  eventType: Schema.NullOr(Schema.String),
  noticeId: Schema.NullOr(Schema.String),
  person: Person,
  body: Schema.Unknown
})
/** @since 0.1.0 @category models */
export type Notice = typeof Notice.Type

// -----------------------------------------------------------------------------
// Data
// -----------------------------------------------------------------------------

const joined = (concat: ReadonlyArray<string>, separator = " "): Concat => ({ concat, separator, whenMissing: "skip" })
const composedKey = (concat: ReadonlyArray<string>): Concat => ({ concat, separator: ":", whenMissing: "null" })

const none: Rules = []

// Cal.com: the lead is the first attendee (further attendees are guests, the organizer is the host); custom
// booking questions land in `responses` / `userFieldsResponses` under the question's slug.
const calcom: Template = {
  name: "calcom",
  label: "Cal.com",
  verification: "hmac",
  signatureHeaders: ["x-cal-signature-256"],
  eventTypePath: ["triggerEvent"],
  noticeIdPath: [composedKey(["triggerEvent", "payload.uid"])],
  personEvents: ["BOOKING_CREATED", "BOOKING_REQUESTED", "BOOKING_RESCHEDULED", "FORM_SUBMITTED", "FORM_SUBMITTED_NO_EVENT"],
  defaultMapping: {
    email: ["payload.attendees[0].email", "payload.responses.email.value"],
    phone: [
      "payload.responses.attendeePhoneNumber.value",
      "payload.attendees[0].phoneNumber",
      "payload.responses.*phone*.value"
    ],
    name: ["payload.attendees[0].name", "payload.responses.name.value"],
    first_name: ["payload.attendees[0].firstName"],
    last_name: ["payload.attendees[0].lastName"],
    company: ["payload.responses.*company*.value", "payload.userFieldsResponses.*company*.value"],
    website: ["payload.responses.*website*.value", "payload.userFieldsResponses.*website*.value"],
    role: ["payload.responses.*role*.value", "payload.userFieldsResponses.*role*.value"]
  }
}

// Calendly: `payload` is the Invitee; phone and company are answers to booking questions.
const calendly: Template = {
  name: "calendly",
  label: "Calendly",
  verification: "hmac",
  signatureHeaders: ["calendly-webhook-signature"],
  eventTypePath: ["event"],
  noticeIdPath: [composedKey(["event", "payload.uri"])],
  personEvents: ["invitee.created", "routing_form_submission.created", "contact.created"],
  defaultMapping: {
    email: ["payload.email"],
    phone: ["payload.text_reminder_number", "payload.questions_and_answers[question~phone].answer"],
    name: ["payload.name", joined(["payload.first_name", "payload.last_name"])],
    first_name: ["payload.first_name"],
    last_name: ["payload.last_name"],
    company: ["payload.questions_and_answers[question~company].answer"],
    website: ["payload.questions_and_answers[question~website].answer"],
    role: ["payload.questions_and_answers[question~role].answer", "payload.questions_and_answers[question~job title].answer"]
  }
}

// Stripe: customers carry the fields on the object, checkout sessions in `customer_details`, invoices as
// `customer_*`. Stripe has no first/last name split.
const stripe: Template = {
  name: "stripe",
  label: "Stripe",
  verification: "hmac",
  signatureHeaders: ["stripe-signature"],
  eventTypePath: ["type"],
  noticeIdPath: ["id"],
  personEvents: ["customer.created", "customer.updated", "checkout.session.completed"],
  defaultMapping: {
    email: ["data.object.email", "data.object.customer_details.email", "data.object.customer_email"],
    phone: ["data.object.phone", "data.object.customer_details.phone", "data.object.customer_phone"],
    name: ["data.object.name", "data.object.customer_details.name", "data.object.customer_name"],
    first_name: none,
    last_name: none,
    company: ["data.object.business_name", "data.object.customer_details.business_name", "data.object.metadata.company"],
    website: ["data.object.metadata.website"],
    role: none
  }
}

// Tally: answers are a list of fields; email and phone by their input type, the rest by label.
const tallyField = (label: string): string => `data.fields[label~${label}].value`
const tally: Template = {
  name: "tally",
  label: "Tally",
  verification: "hmac",
  signatureHeaders: ["tally-signature"],
  eventTypePath: ["eventType"],
  noticeIdPath: ["eventId", "data.responseId"],
  personEvents: ["FORM_RESPONSE"],
  defaultMapping: {
    email: ["data.fields[type=INPUT_EMAIL].value", tallyField("email")],
    phone: ["data.fields[type=INPUT_PHONE_NUMBER].value", tallyField("phone")],
    name: [joined([tallyField("first name"), tallyField("last name")]), tallyField("name")],
    first_name: [tallyField("first name")],
    last_name: [tallyField("last name")],
    company: [tallyField("company"), tallyField("organization")],
    website: [tallyField("website")],
    role: [tallyField("role"), tallyField("job title")]
  }
}

// Typeform: answers point at their question through `field.id`; names are plain text answers, found through
// the title of their question in `definition.fields`.
const typeformAnswer = (title: string, type: string): string =>
  `form_response.answers[field.id=@form_response.definition.fields[title~${title}].id].${type}`
const typeform: Template = {
  name: "typeform",
  label: "Typeform",
  verification: "hmac",
  signatureHeaders: ["typeform-signature"],
  eventTypePath: ["event_type"],
  noticeIdPath: ["event_id"],
  personEvents: ["form_response"],
  defaultMapping: {
    email: ["form_response.answers[type=email].email"],
    phone: ["form_response.answers[type=phone_number].phone_number"],
    name: [joined([typeformAnswer("first name", "text"), typeformAnswer("last name", "text")]), typeformAnswer("name", "text")],
    first_name: [typeformAnswer("first name", "text")],
    last_name: [typeformAnswer("last name", "text")],
    company: [typeformAnswer("company", "text"), "form_response.hidden.company"],
    website: [typeformAnswer("website", "url"), "form_response.answers[type=url].url"],
    role: [typeformAnswer("role", "text"), typeformAnswer("job title", "text")]
  }
}

// Jotform: answers are in `rawRequest` (a JSON part) under `q<N>_<fieldName>`, the name derived from the label;
// name fields are `{first, last}`, phone fields `{full}` or, on older forms, `{area, phone}`.
const jotform: Template = {
  name: "jotform",
  label: "Jotform",
  verification: "secret-address",
  signatureHeaders: [],
  eventTypePath: none,
  noticeIdPath: ["submissionID", "rawRequest.event_id"],
  personEvents: [],
  defaultMapping: {
    email: ["rawRequest.q*_*email*"],
    phone: [
      "rawRequest.q*_*phone*.full",
      joined(["rawRequest.q*_*phone*.area", "rawRequest.q*_*phone*.phone"]),
      "rawRequest.q*_*phone*"
    ],
    name: [joined(["rawRequest.q*_*.first", "rawRequest.q*_*.last"])],
    first_name: ["rawRequest.q*_*.first"],
    last_name: ["rawRequest.q*_*.last"],
    company: ["rawRequest.q*_*company*"],
    website: ["rawRequest.q*_*website*"],
    role: ["rawRequest.q*_*role*", "rawRequest.q*_*jobTitle*"]
  }
}

// Webflow: form fields are keyed by whatever the designer named the inputs; numbers may arrive as JSON numbers.
const webflow: Template = {
  name: "webflow",
  label: "Webflow",
  verification: "hmac",
  signatureHeaders: ["x-webflow-signature", "x-webflow-timestamp"],
  eventTypePath: ["triggerType"],
  noticeIdPath: ["payload.id", "payload._id"],
  personEvents: ["form_submission", "user_account_added", "ecomm_new_order"],
  defaultMapping: {
    email: ["payload.data.*email*", "payload.customerInfo.email"],
    phone: ["payload.data.*phone*"],
    name: [
      joined(["payload.data.first*name", "payload.data.last*name"]),
      "payload.data.name",
      "payload.data.*full*name*",
      "payload.customerInfo.fullName"
    ],
    first_name: ["payload.data.first*name"],
    last_name: ["payload.data.last*name"],
    company: ["payload.data.*company*"],
    website: ["payload.data.*website*"],
    role: ["payload.data.*role*", "payload.data.*job*title*"]
  }
}

// Shopify: the topic and the event id are headers; customers carry the fields at the top, orders and checkouts
// also under `customer` and `billing_address`.
const shopify: Template = {
  name: "shopify",
  label: "Shopify",
  verification: "hmac",
  signatureHeaders: ["x-shopify-hmac-sha256", "x-shopify-topic", "x-shopify-event-id"],
  eventTypePath: ["header:x-shopify-topic"],
  noticeIdPath: ["header:x-shopify-event-id"],
  personEvents: ["customers/create", "orders/create", "checkouts/create"],
  defaultMapping: {
    email: ["email", "customer.email", "contact_email"],
    phone: ["phone", "customer.phone", "default_address.phone", "billing_address.phone"],
    name: [
      joined(["first_name", "last_name"]),
      joined(["customer.first_name", "customer.last_name"]),
      "billing_address.name"
    ],
    first_name: ["first_name", "customer.first_name", "billing_address.first_name"],
    last_name: ["last_name", "customer.last_name", "billing_address.last_name"],
    company: ["default_address.company", "customer.default_address.company", "billing_address.company"],
    website: none,
    role: none
  }
}

// Hotmart: the buyer; `checkout_phone_code` is kept out of the phone (how it combines is not documented).
const hotmart: Template = {
  name: "hotmart",
  label: "Hotmart",
  verification: "static-token",
  signatureHeaders: ["x-hotmart-hottok"],
  eventTypePath: ["event"],
  noticeIdPath: ["id"],
  personEvents: ["PURCHASE_APPROVED", "PURCHASE_COMPLETE", "PURCHASE_OUT_OF_SHOPPING_CART"],
  defaultMapping: {
    email: ["data.buyer.email", "data.user.email"],
    phone: ["data.buyer.checkout_phone"],
    name: ["data.buyer.name", "data.user.name"],
    first_name: ["data.buyer.first_name"],
    last_name: ["data.buyer.last_name"],
    company: none,
    website: none,
    role: none
  }
}

// Clerk: the primary email and phone are the list entries whose id the user names as primary.
const clerk: Template = {
  name: "clerk",
  label: "Clerk",
  verification: "standard-webhooks",
  signatureHeaders: ["svix-id", "svix-timestamp", "svix-signature"],
  eventTypePath: ["type"],
  noticeIdPath: ["header:svix-id", "header:webhook-id"],
  personEvents: ["user.created", "user.updated"],
  defaultMapping: {
    email: ["data.email_addresses[id=@data.primary_email_address_id].email_address"],
    phone: ["data.phone_numbers[id=@data.primary_phone_number_id].phone_number"],
    name: [joined(["data.first_name", "data.last_name"])],
    first_name: ["data.first_name"],
    last_name: ["data.last_name"],
    company: none,
    website: none,
    role: none
  }
}

// PostHog: the default body of the HTTP Webhook destination; `person.name` is a display name (often the email),
// so names come from the person's properties.
const posthog: Template = {
  name: "posthog",
  label: "PostHog",
  verification: "secret-address",
  signatureHeaders: [],
  eventTypePath: ["event.event"],
  noticeIdPath: ["event.uuid"],
  personEvents: ["$identify"],
  defaultMapping: {
    email: ["person.properties.email", "person.properties.$email"],
    phone: ["person.properties.phone", "person.properties.$phone"],
    name: ["person.properties.name", joined(["person.properties.first_name", "person.properties.last_name"])],
    first_name: ["person.properties.first_name"],
    last_name: ["person.properties.last_name"],
    company: ["person.properties.company", "groups.company.properties.name"],
    website: ["person.properties.website"],
    role: ["person.properties.role", "person.properties.title"]
  }
}

const byName: { readonly [K in TemplateName]: Template } = {
  calcom,
  calendly,
  stripe,
  tally,
  typeform,
  jotform,
  webflow,
  shopify,
  hotmart,
  clerk,
  posthog
}

/** The eleven templates. @since 0.1.0 @category data */
export const templates: ReadonlyArray<Template> = TemplateName.literals.map((name) => byName[name])

/** The template of a name. @since 0.1.0 @category data */
export const template = (name: TemplateName): Template => byName[name]

// -----------------------------------------------------------------------------
// Verification
// -----------------------------------------------------------------------------

/**
 * Whether the template's tool does not sign, so its Source must use the secret address
 * (`POST /door/<source>/<token>`) and {@link verifyAddressToken} instead of {@link verify}.
 *
 * @since 0.1.0 @category verification
 */
export const requiresSecretAddress = (template: Template): boolean => template.verification === "secret-address"

/**
 * Checks a notice with the template's own scheme on the raw body bytes: constant-time comparison, timestamps
 * within ±300 s where the scheme has one (Webflow's in milliseconds). `webhook_headers` when the scheme's header
 * is missing or malformed, `invalid_signature` when no signature matches, `stale_timestamp` outside the window.
 * A template that does not sign ({@link requiresSecretAddress}) never verifies here: `webhook_headers`, as a
 * request on the signed door path without signature headers would get.
 *
 * @since 0.1.0 @category verification
 */
export const verify = (template: Template, input: VerifyInput): Either.Either<void, DoorRefusal> => {
  switch (template.name) {
    case "calcom":
      return Signatures.bodyDigest(input, { header: "x-cal-signature-256", encoding: "hex", prefix: "" })
    case "tally":
      return Signatures.bodyDigest(input, { header: "tally-signature", encoding: "base64", prefix: "" })
    case "typeform":
      return Signatures.bodyDigest(input, { header: "typeform-signature", encoding: "base64", prefix: "sha256=" })
    case "shopify":
      return Signatures.bodyDigest(input, { header: "x-shopify-hmac-sha256", encoding: "base64", prefix: "" })
    case "stripe":
      return Signatures.timestampedHex(input, "stripe-signature")
    case "calendly":
      return Signatures.timestampedHex(input, "calendly-webhook-signature")
    case "webflow":
      return Signatures.webflow(input)
    case "hotmart":
      return Signatures.staticToken(input, "x-hotmart-hottok")
    case "clerk":
      return Signatures.standardWebhooks(input)
    case "jotform":
    case "posthog":
      return Either.left(
        refuse("webhook_headers", `${template.label} does not sign its notices; send them to the Source's secret address.`)
      )
  }
}

/**
 * Checks the token of a secret address against the Source's token, in constant time. A missing token is
 * `webhook_headers` (nothing authenticates the request), a wrong one `invalid_signature` (the same 401 as an
 * unknown Source).
 *
 * @since 0.1.0 @category verification
 */
export const verifyAddressToken = (
  expected: string,
  presented: string | undefined
): Either.Either<void, DoorRefusal> => Signatures.addressToken(expected, presented)

// -----------------------------------------------------------------------------
// Reading
// -----------------------------------------------------------------------------

const readRule = (rule: Rule, body: unknown, headers: Headers): string | null => {
  if (typeof rule === "string") return Path.read(rule, body, headers)
  const parts = rule.concat.map((path) => Path.read(path, body, headers))
  const found = parts.filter((part) => part !== null)
  if (found.length === 0 || (rule.whenMissing === "null" && found.length < parts.length)) return null
  return found.join(rule.separator)
}

/**
 * The first alternative that yields a non-empty text, in a decoded body (and the request headers).
 *
 * @since 0.1.0 @category reading
 */
export const readRules = (rules: Rules, body: unknown, headers: Headers = {}): string | null => {
  for (const rule of rules) {
    const value = readRule(rule, body, headers)
    if (value !== null) return value
  }
  return null
}

/**
 * Why a path of a mapping does not compile, or nothing when every path does (for mappings users edit).
 *
 * @since 0.1.0 @category reading
 */
export const mappingErrors = (rules: Rules): ReadonlyArray<string> =>
  rules
    .flatMap((rule) => (typeof rule === "string" ? [rule] : rule.concat))
    .flatMap((path) => {
      const compiled = Path.compile(path)
      return Either.isLeft(compiled) ? [compiled.left] : []
    })

/**
 * Whether an event type is one that carries a contact for this template. A template without event types
 * (Jotform) sends submissions only, all of them person events.
 *
 * @since 0.1.0 @category reading
 */
export const isPersonEvent = (template: Template, eventType: string | null): boolean =>
  template.eventTypePath.length === 0 || (eventType !== null && template.personEvents.includes(eventType))

/**
 * Decodes a notice's body by its content type and reads its event type, notice id and person fields through
 * the template's default mapping (or the one given). Values not present are null.
 *
 * @since 0.1.0 @category reading
 */
export const readNotice = (
  template: Template,
  input: ReadInput,
  mapping: Mapping = template.defaultMapping
): Either.Either<Notice, DoorRefusal> => {
  const contentType = input.contentType ?? Path.header(input.headers, "content-type") ?? ""
  return Either.map(NoticeBody.decode(contentType, input.body), (body) => {
    const field = (name: PersonField): string | null => readRules(mapping[name], body, input.headers)
    return {
      eventType: readRules(template.eventTypePath, body, input.headers),
      noticeId: readRules(template.noticeIdPath, body, input.headers),
      person: {
        email: field("email"),
        phone: field("phone"),
        name: field("name"),
        first_name: field("first_name"),
        last_name: field("last_name"),
        company: field("company"),
        website: field("website"),
        role: field("role")
      },
      body
    }
  })
}
