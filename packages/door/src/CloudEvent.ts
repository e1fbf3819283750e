/**
 * The CloudEvent the intake door accepts: a CloudEvents 1.0 event in JSON structured mode, of a catalog
 * type, within the project's limits. `parse` turns the raw body into a `CloudEvent` or refuses it with
 * `invalid_event` and a detail naming what was wrong. The validation is the project's own: the `cloudevents`
 * SDK fills in missing attributes and skips checks (reference: webhooks, section 3.4).
 *
 * @since 0.1.0
 */
import * as StoredText from "@service/core/Text"
import { appliedTypes, isCatalogType, isIntakeType } from "@service/events/Catalog"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"
import * as Text from "./internal/cloudEventText.js"
import * as Uri from "./internal/cloudEventUri.js"
import * as Wire from "./internal/cloudEventWire.js"

// Spec: event intake, Limits ("CloudEvent id / source / subject length"), counted in characters.
const MAX_ID = 200
const MAX_SOURCE = 300
const MAX_SUBJECT = 160
// A refusal detail goes to the sender's logs: long enough to point at the fault, never a body dump.
const MAX_DETAIL = 300

/**
 * The `data` of a `contact.*` event. Every field is optional text; at least an email or a phone is needed to
 * apply the event, but an event without either is still accepted and then set aside (see `hasPersonKey`).
 * Fields the door does not know are kept.
 *
 * @since 0.1.0
 * @category models
 */
export const ContactData = Schema.Struct(
  {
    name: Schema.optional(Schema.String),
    email: Schema.optional(Schema.String),
    phone: Schema.optional(Schema.String),
    role: Schema.optional(Schema.String),
    company: Schema.optional(Schema.String),
    website: Schema.optional(Schema.String)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "ContactData" })
/** @since 0.1.0 @category models */
export type ContactData = typeof ContactData.Type

/** A CloudEvents String: no control characters, noncharacters or unpaired surrogates. */
const CeString = Schema.String.pipe(Schema.filter(Text.textProblem))

const bounded = (max: number) =>
  CeString.pipe(
    Schema.filter((text) => {
      const count = Text.characterCount(text)
      return count === 0
        ? "must not be empty"
        : count > max
        ? `must be at most ${max} characters, got ${count}`
        : undefined
    })
  )

const Int32 = Schema.Int.pipe(Schema.between(-2_147_483_648, 2_147_483_647))

const isScalar = (value: unknown): boolean =>
  Predicate.isString(value) || Predicate.isBoolean(value) || Predicate.isNumber(value)

/** Extension values take the CloudEvents types that JSON carries as scalars; objects and arrays are refused. */
const ExtensionValue = Schema.Union(CeString, Schema.Boolean, Int32).annotations({
  message: (issue) => ({
    message: "an extension attribute must be a string, a boolean or a 32-bit integer",
    // For a scalar, the member's own message (control character, not an integer...) is the precise one.
    override: !isScalar(issue.actual)
  })
})

const ExtensionName = Schema.String.pipe(
  Schema.filter((name) => Wire.isAttributeName(name) || "must contain only lower-case letters a-z and digits 0-9")
)

const Attributes = Schema.Struct({
  specversion: Schema.Literal("1.0").annotations({ message: () => 'must be the string "1.0"' }),
  id: bounded(MAX_ID),
  source: bounded(MAX_SOURCE).pipe(
    Schema.filter((source) => Uri.isUriReference(source) || "must be a URI-reference (RFC 3986)")
  ),
  type: CeString.pipe(
    Schema.filter((type) =>
      isIntakeType(type) ||
      (isCatalogType(type)
        ? `${Text.quote(type)} is recorded by the service itself and is not accepted at the door`
        : `${Text.quote(type)} is not an event type of the catalog`)
    )
  ),
  subject: Schema.optional(bounded(MAX_SUBJECT)),
  // Strict RFC 3339, offset or Z mandatory. The intake spec says "ISO 8601" but names CloudEvents 1.0 as the
  // envelope, which requires RFC 3339; RFC 3339 is a profile of ISO 8601, so this reading satisfies both.
  // `2024-01-01T10:00:00` (no offset) names no instant and `2024-01-01` is no date-time: both are refused
  // rather than guessed at (cases time-without-offset, time-date-only).
  time: Schema.optional(
    CeString.pipe(
      Schema.filter(
        (time) =>
          Text.isRfc3339DateTime(time) || "must be an RFC 3339 date-time with an offset or Z, e.g. 2025-01-01T10:00:00Z"
      )
    )
  ),
  datacontenttype: Schema.optional(
    CeString.pipe(
      Schema.filter((type) => Text.isMediaType(type) || "must be a media type (RFC 2046), e.g. application/json")
    )
  ),
  dataschema: Schema.optional(
    CeString.pipe(Schema.filter((uri) => Uri.isUri(uri) || "must be an absolute URI (RFC 3986)"))
  ),
  data: Schema.optional(Schema.Unknown),
  data_base64: Schema.optional(
    CeString.pipe(Schema.filter((text) => Text.isBase64(text) || "must be standard base64"))
  ),
  extensions: Schema.Record({ key: ExtensionName, value: ExtensionValue })
})

const isContactType = (type: string): boolean => type.startsWith("contact.")

// Rules across attributes, checked once each attribute is valid on its own.
const crossAttributeProblem = (event: typeof Attributes.Type): Schema.FilterOutput => {
  if (event.data !== undefined && event.data_base64 !== undefined) {
    return "data and data_base64 must not both be present"
  }
  if (!isContactType(event.type)) return undefined
  if (event.datacontenttype !== undefined && !Text.isJsonMediaType(event.datacontenttype)) {
    return { path: ["datacontenttype"], message: `must be a JSON media type for ${event.type} events` }
  }
  if (!Predicate.isRecord(event.data)) {
    return { path: ["data"], message: `must be a JSON object for ${event.type} events` }
  }
  return Either.match(ParseResult.decodeUnknownEither(ContactData)(event.data), {
    onLeft: (issue) => new ParseResult.Pointer("data", event, issue),
    onRight: () => undefined
  })
}

/**
 * An accepted CloudEvent. Attributes a sender set to `null` are absent; extension attributes are gathered in
 * `extensions`. `data` is the JSON value as sent (never re-parsed); `data_base64` is binary data.
 *
 * @since 0.1.0
 * @category models
 */
export const CloudEvent = Attributes.pipe(Schema.filter(crossAttributeProblem)).annotations({
  identifier: "CloudEvent"
})
/** @since 0.1.0 @category models */
export type CloudEvent = typeof CloudEvent.Type

const known: ReadonlySet<string> = new Set(Object.keys(Attributes.fields).filter((name) => name !== "extensions"))
const required: ReadonlySet<string> = new Set(
  (AST.isTypeLiteral(Attributes.ast) ? Attributes.ast.propertySignatures : [])
    .filter((property) => !property.isOptional)
    .map((property) => String(property.name))
)

const decodeEvent = Schema.decodeUnknownEither(CloudEvent)
const decodeJson = Schema.decodeEither(Schema.parseJson())

const cut = (text: string): string => (text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text)

// The first issue, preferring a failed refinement (within a union it is the member the value was meant for).
const detailOf = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const issue = issues.find((candidate) => candidate._tag === "Refinement") ?? issues[0]
  if (issue === undefined) return "not a CloudEvent"
  // Extensions are top-level members on the wire: name them as the sender wrote them.
  const path = (issue.path[0] === "extensions" ? issue.path.slice(1) : issue.path).map(String).join(".")
  if (path === "") return cut(issue.message)
  return cut(issue._tag === "Missing" ? `${path} is missing` : `${path}: ${issue.message}`)
}

const decodeUtf8 = (body: Uint8Array): Either.Either<string, string> =>
  Either.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(body),
    catch: () => "body is not valid UTF-8"
  })

const members = (json: unknown): Either.Either<Readonly<Record<string, unknown>>, string> => {
  if (Array.isArray(json)) {
    return Either.left("body is a JSON array: batched CloudEvents are not accepted, send one event per request")
  }
  return Predicate.isRecord(json) ? Either.right(json) : Either.left("body must be a JSON object (one CloudEvent)")
}

/**
 * Reads a request body as one CloudEvent: UTF-8 JSON of an object, CloudEvents 1.0 attribute rules, the
 * project's limits, a catalog `type`, and for `contact.*` types a `data` object whose known fields are
 * strings. Every refusal is `invalid_event` with a detail for the sender. An event without email and phone
 * is not refused here: it is accepted and then set aside (`hasPersonKey`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (body: Uint8Array): Either.Either<CloudEvent, DoorRefusal> =>
  decodeUtf8(body).pipe(
    Either.flatMap((text) =>
      text.trim() === "" ? Either.left("body is empty") : Either.mapLeft(decodeJson(text), () => "body is not JSON")
    ),
    Either.flatMap(members),
    Either.flatMap((object) => Wire.split(object, known, required)),
    Either.flatMap((shape) => Either.mapLeft(decodeEvent(shape), detailOf)),
    // What no store can hold in its data (an escaped NUL, a lone surrogate) or nesting past the limit: refused
    // before it is stored, so an event the door accepts can always be applied.
    Either.flatMap((event) =>
      Option.match(StoredText.inspect(event), {
        onNone: () => Either.right(event),
        onSome: (finding) => Either.left(StoredText.describe(finding).why)
      })
    ),
    Either.mapLeft((detail) => refuse("invalid_event", detail))
  )

/**
 * The `data` of an event read as contact fields; none when it is not an object with string known fields.
 *
 * @since 0.1.0
 * @category accessors
 */
export const contactData = (event: CloudEvent): Option.Option<ContactData> =>
  Schema.decodeUnknownOption(ContactData)(event.data)

const filled = (value: string | undefined): boolean => value !== undefined && value.trim() !== ""

/**
 * Whether the event names a person: a non-blank `email` or `phone` in its data. A contact event without one
 * is accepted and then set aside.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasPersonKey = (event: CloudEvent): boolean =>
  Option.exists(contactData(event), (data) => filled(data.email) || filled(data.phone))

/**
 * Whether the door applies the event to the CRM (`contact.created`, `contact.updated`); other catalog types
 * are stored and set aside.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isApplied = (event: CloudEvent): boolean => appliedTypes.includes(event.type)
