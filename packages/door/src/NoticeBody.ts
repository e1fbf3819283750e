/**
 * The body of a third-party notice, decoded by its content type once its signature has been checked on the raw
 * bytes (reference: webhooks, section 5):
 *
 * - JSON (`application/json`, `application/*+json`; also assumed when no content type is sent), with integers
 *   beyond 2^53 - 1 kept as their exact digit strings (Shopify ids);
 * - `application/x-www-form-urlencoded`, UTF-8 unless a charset says otherwise, `+` meaning a space;
 * - `multipart/form-data` by the boundary of the header, a part holding a JSON object or array (Jotform's
 *   `rawRequest`) offered as that nested value.
 *
 * A name sent several times in a form maps to the list of its values. Anything else (XML, text) is refused with
 * `invalid_event`. {@link redact} removes the secrets a tool echoes back (Jotform's `webhookURL`) before a notice
 * is stored or shown.
 *
 * @since 0.1.0
 */
import * as StoredText from "@service/core/Text"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"
import { decodeMultipart, decodeUrlEncoded, decodeUtf8, parseContentType } from "./internal/noticeBodyForm.js"
import * as Json from "./internal/noticeBodyJson.js"

/** What replaces a secret found inside a notice. @since 0.1.0 @category constants */
export const REDACTED = "[redacted]"

/** The media types {@link decode} reads. @since 0.1.0 @category constants */
export const supportedContentTypes: ReadonlyArray<string> = [
  "application/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data"
]

const isJsonType = (type: string): boolean =>
  type === "" || type === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type)

/**
 * Parses a JSON text, keeping integers beyond `Number.MAX_SAFE_INTEGER` as their exact digit strings (fractions
 * and safe integers are numbers). Strict RFC 8259: no comments, no trailing commas.
 *
 * @since 0.1.0 @category decoding
 */
export const parseJson = (text: string): Either.Either<unknown, DoorRefusal> =>
  Either.mapLeft(
    Json.parseJson(text),
    (error) => refuse("invalid_event", `The body is not JSON (${error.reason} at character ${error.position}).`)
  )

/**
 * Decodes a notice body by its `content-type` value (parameters included, e.g. the multipart boundary).
 *
 * @since 0.1.0 @category decoding
 */
export const decode = (contentType: string, body: Uint8Array): Either.Either<unknown, DoorRefusal> =>
  Either.flatMap(decodeAny(contentType, body), (notice) =>
    Option.match(StoredText.inspect(notice), {
      onNone: () => Either.right(notice),
      // What no store can hold is refused before anything is stored (the kernel's text rule), never applied and failed.
      onSome: (finding) => Either.left(refuse("invalid_event", StoredText.describe(finding).why))
    }))

const decodeAny = (contentType: string, body: Uint8Array): Either.Either<unknown, DoorRefusal> => {
  const { parameters, type } = parseContentType(contentType)
  const charset = parameters.get("charset")
  if (isJsonType(type)) {
    // RFC 8259 section 8.1: JSON exchanged between systems is UTF-8.
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      return Either.left(refuse("invalid_event", `A JSON body must be UTF-8, not ${charset}.`))
    }
    const text = decodeUtf8(body)
    if (text === undefined) return Either.left(refuse("invalid_event", "The body is not valid UTF-8."))
    return parseJson(text)
  }
  if (type === "application/x-www-form-urlencoded") {
    return Either.mapLeft(decodeUrlEncoded(body, charset), (why) => refuse("invalid_event", `The body ${why}.`))
  }
  if (type === "multipart/form-data") {
    return Either.mapLeft(
      decodeMultipart(body, parameters.get("boundary") ?? ""),
      (why) => refuse("invalid_event", `The body: ${why}.`)
    )
  }
  return Either.left(
    refuse("invalid_event", `Content type ${type} is not accepted; send ${supportedContentTypes.join(", ")}.`)
  )
}

const redactString = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.reduce((current, secret) => current.split(secret).join(REDACTED), text)

/**
 * Replaces every occurrence of each secret, in every string of the notice (property names included), by
 * `[redacted]`. The percent-encoded form of a secret is redacted too, since tools echo addresses in URLs.
 * Empty secrets are ignored (they would match everywhere).
 *
 * @since 0.1.0 @category redaction
 */
export const redact = (notice: unknown, secrets: ReadonlyArray<string>): unknown => {
  const forms = [...new Set(secrets.filter((s) => s.length > 0).flatMap((s) => [s, encodeURIComponent(s)]))]
    // Longest first, so a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length)
  if (forms.length === 0) return notice
  const walk = (value: unknown): unknown => {
    if (Predicate.isString(value)) return redactString(value, forms)
    if (Array.isArray(value)) return value.map(walk)
    if (Predicate.isRecord(value)) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactString(key, forms), walk(item)]))
    }
    return value
  }
  return walk(notice)
}
