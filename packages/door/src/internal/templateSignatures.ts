/**
 * The signature schemes of the third-party templates (reference: webhooks, sections 1 and 4). Every check runs
 * on the raw body bytes and compares digests as bytes with `timingSafeEqual` once their lengths match (the
 * length of a digest is public). Header problems are `webhook_headers`, digests that do not match are
 * `invalid_signature`, and timestamps outside the window are `stale_timestamp`; the window is checked before
 * any digest, as the Standard Webhooks libraries do.
 *
 * Clerk's Standard Webhooks notices are checked by `StandardWebhooks.verify` once their svix-* header names are
 * mapped to the standard ones.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { constantTimeEqual } from "@service/core/Crypto"
import * as WebhookSignature from "@service/events/WebhookSignature"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { type DoorRefusal, refuse } from "../DoorRefusal.js"
import * as StandardWebhooks from "../StandardWebhooks.js"
import { header, type HeaderRecord } from "./templatePath.js"

/** The replay window of every timestamped scheme, both directions (reference: ±5 minutes). */
export const TOLERANCE_SECONDS = 300

/** What every scheme receives. */
export interface SignedRequest {
  readonly secret: string
  readonly headers: HeaderRecord
  readonly body: Uint8Array
  /** Unix seconds. */
  readonly now: number
}

type Verdict = Either.Either<void, DoorRefusal>

const ok: Verdict = Either.void

const missing = (name: string): Verdict => Either.left(refuse("webhook_headers", `The ${name} header is missing.`))

const malformed = (name: string, why: string): Verdict =>
  Either.left(refuse("webhook_headers", `The ${name} header is malformed: ${why}.`))

// The detail never says how close a signature came, nor whether the Source exists.
const noMatch: Verdict = Either.left(refuse("invalid_signature", "No signature matches this body."))

const stale: Verdict = Either.left(refuse("stale_timestamp", "The signature timestamp is outside the 5-minute window."))

const hmac = (key: string | Uint8Array, prefix: string, body: Uint8Array): Buffer =>
  createHmac("sha256", key).update(prefix, "utf8").update(body).digest()

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b)

const HEX = /^[0-9a-fA-F]+$/

const fromHex = (text: string): Buffer | undefined =>
  text.length % 2 === 0 && HEX.test(text) ? Buffer.from(text, "hex") : undefined

// Only canonical standard base64 is read (Node's own decoder skips junk and takes the URL-safe alphabet).
const fromBase64 = (text: string): Buffer | undefined => Option.getOrUndefined(WebhookSignature.decodeBase64(text))

const DIGITS = /^[0-9]{1,16}$/

const readInteger = (text: string): number | undefined => (DIGITS.test(text) ? Number(text) : undefined)

const presentHeader = (request: SignedRequest, name: string): string | undefined => {
  const value = header(request.headers, name)?.trim()
  return value === undefined || value.length === 0 ? undefined : value
}

/**
 * A digest of the raw body alone, in one header (Cal.com and its `no-secret-provided` value, Tally, Typeform
 * with its `sha256=` prefix, Shopify). There is no timestamp, so no replay window.
 */
export const bodyDigest = (
  request: SignedRequest,
  options: { readonly header: string; readonly encoding: "hex" | "base64"; readonly prefix: string }
): Verdict => {
  const value = presentHeader(request, options.header)
  if (value === undefined) return missing(options.header)
  // A wrong prefix or encoding is a signature that does not match, as the vendors' sample code treats it.
  if (!value.startsWith(options.prefix)) return noMatch
  const encoded = value.slice(options.prefix.length)
  const presented = options.encoding === "hex" ? fromHex(encoded) : fromBase64(encoded)
  if (presented === undefined) return noMatch
  return sameBytes(presented, hmac(request.secret, "", request.body)) ? ok : noMatch
}

/**
 * Stripe and Calendly: `t=<seconds>,v1=<hex>[,v1=<hex>...]`, HMAC over `<t>.<body>` with the secret as UTF-8
 * (Stripe's `whsec_` string included, never base64-decoded). Any `v1` may match (secret roll); `v0` is ignored.
 */
export const timestampedHex = (request: SignedRequest, headerName: string): Verdict => {
  const value = presentHeader(request, headerName)
  if (value === undefined) return missing(headerName)
  const entries = value.split(",").map((entry) => {
    const equals = entry.indexOf("=")
    return equals === -1
      ? { key: entry.trim(), value: "" }
      : { key: entry.slice(0, equals).trim(), value: entry.slice(equals + 1).trim() }
  })
  const timestamps = entries.filter((entry) => entry.key === "t")
  const [first] = timestamps
  if (first === undefined || timestamps.length > 1) return malformed(headerName, "it needs exactly one t=<seconds>")
  const timestamp = readInteger(first.value)
  if (timestamp === undefined) return malformed(headerName, "t is not a number of seconds")
  if (Math.abs(request.now - timestamp) > TOLERANCE_SECONDS) return stale
  const expected = hmac(request.secret, `${first.value}.`, request.body)
  const matches = entries.some((entry) => {
    const presented = entry.key === "v1" ? fromHex(entry.value) : undefined
    return presented !== undefined && sameBytes(presented, expected)
  })
  return matches ? ok : noMatch
}

/** Webflow: hex HMAC over `<timestamp>:<body>` (colon), the timestamp in milliseconds. */
export const webflow = (request: SignedRequest): Verdict => {
  const signature = presentHeader(request, "x-webflow-signature")
  if (signature === undefined) return missing("x-webflow-signature")
  const timestampText = presentHeader(request, "x-webflow-timestamp")
  if (timestampText === undefined) return missing("x-webflow-timestamp")
  const timestamp = readInteger(timestampText)
  if (timestamp === undefined) return malformed("x-webflow-timestamp", "not a number of milliseconds")
  if (Math.abs(request.now * 1000 - timestamp) > TOLERANCE_SECONDS * 1000) return stale
  const presented = fromHex(signature)
  if (presented === undefined) return noMatch
  return sameBytes(presented, hmac(request.secret, `${timestampText}:`, request.body)) ? ok : noMatch
}

/** Hotmart: a fixed account token in a header, compared in constant time (through digests, so length too). */
export const staticToken = (request: SignedRequest, headerName: string): Verdict => {
  const value = presentHeader(request, headerName)
  if (value === undefined) return missing(headerName)
  return request.secret.length > 0 && constantTimeEqual(value, request.secret) ? ok : noMatch
}

/**
 * Standard Webhooks 1.0.0 as Svix sends it for Clerk: `svix-id`, `svix-timestamp`, `svix-signature`, each
 * falling back to its `webhook-*` name (the svix library's order), checked by the door's own Standard Webhooks
 * verifier under the standard names.
 */
export const standardWebhooks = (request: SignedRequest): Verdict => {
  const named = (suffix: string): string | undefined =>
    presentHeader(request, `svix-${suffix}`) ?? presentHeader(request, `webhook-${suffix}`)
  const headers: Record<string, string> = {}
  for (const suffix of ["id", "timestamp", "signature"]) {
    const value = named(suffix)
    if (value !== undefined) headers[`webhook-${suffix}`] = value
  }
  return Either.map(
    StandardWebhooks.verify({ secrets: [request.secret], headers, body: request.body, now: request.now, toleranceSeconds: TOLERANCE_SECONDS }),
    () => undefined
  )
}

/**
 * The token of a secret address (`/door/<source>/<token>`), compared in constant time with the expected one.
 * No token at all is `webhook_headers`: the request carries neither a token nor a signature.
 */
export const addressToken = (expected: string, presented: string | undefined): Verdict => {
  if (presented === undefined || presented.length === 0) {
    return Either.left(refuse("webhook_headers", "The address carries no token and the request no signature."))
  }
  return expected.length > 0 && constantTimeEqual(presented, expected) ? ok : noMatch
}
