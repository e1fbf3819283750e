/**
 * Standard Webhooks 1.0.0 signatures, symmetric scheme (`v1`, HMAC-SHA256): the key of a `whsec_` secret, the
 * signature over `<webhook-id>.<webhook-timestamp>.<body>` and the space-separated `webhook-signature` list.
 * Pure functions over bytes. Outgoing delivery signs with them; the intake door verifies with them, so both
 * directions share one codec.
 *
 * @since 0.1.0
 */
import { createHmac } from "node:crypto"
import { isWebhookSecret } from "@service/core/Crypto"
import type * as Arr from "effect/Array"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The prefix of a Standard Webhooks symmetric secret.
 *
 * @since 0.1.0
 * @category constants
 */
export const SECRET_PREFIX = "whsec_"

// Standard alphabet, padded. Node's `Buffer.from(s, "base64")` skips junk and takes the URL-safe alphabet,
// so the pattern has to pass before anything is decoded.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * Decodes standard padded base64, refusing empty input, any other alphabet and non-canonical spellings
 * (non-zero padding bits), so that one byte string has exactly one accepted text.
 *
 * @since 0.1.0
 * @category codec
 */
export const decodeBase64 = (text: string): Option.Option<Buffer> => {
  if (text.length === 0 || !BASE64.test(text)) return Option.none()
  const bytes = Buffer.from(text, "base64")
  return bytes.toString("base64") === text ? Option.some(bytes) : Option.none()
}

/**
 * The HMAC key of a secret: the base64 after an optional `whsec_`; none when it does not decode.
 *
 * @since 0.1.0
 * @category codec
 */
export const secretKey = (secret: string): Option.Option<Buffer> =>
  decodeBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)

/**
 * The raw `v1` signature: HMAC-SHA256 under `key` over `<id>.<timestamp>.` followed by the body bytes exactly as
 * sent. The timestamp is the header's text, so a verifier signs what it read, not a re-printed number.
 *
 * @since 0.1.0
 * @category codec
 */
export const digest = (key: Uint8Array, id: string, timestamp: string, body: Uint8Array): Buffer =>
  createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest()

/**
 * The well-formed `version,signature` entries of a `webhook-signature` value (space-separated). None when no
 * entry is well-formed: such a header is malformed, not merely unmatched.
 *
 * @since 0.1.0
 * @category codec
 */
export const signatureEntries = (
  header: string
): Option.Option<ReadonlyArray<readonly [version: string, signature: string]>> => {
  const entries = header.split(" ").flatMap((entry): ReadonlyArray<readonly [string, string]> => {
    const comma = entry.indexOf(",")
    return comma > 0 ? [[entry.slice(0, comma), entry.slice(comma + 1)]] : []
  })
  return entries.length > 0 ? Option.some(entries) : Option.none()
}

/**
 * What `sign` needs: one secret, the message id (`webhook-id`), the attempt's timestamp in Unix seconds
 * (`webhook-timestamp`) and the exact body bytes.
 *
 * @since 0.1.0
 * @category models
 */
export const SignInput = Schema.Struct({
  secret: Schema.String,
  id: Schema.String,
  timestamp: Schema.Number,
  body: Schema.Uint8ArrayFromSelf
})
/** @since 0.1.0 @category models */
export type SignInput = typeof SignInput.Type

/**
 * The `webhook-signature` value for one secret: `v1,<base64 HMAC-SHA256>`. The secret must satisfy
 * `isValidSecret` (or be bare base64): signing with an undecodable secret is a programming defect and throws.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign = (input: SignInput): string =>
  Option.match(secretKey(input.secret), {
    onNone: () => {
      throw new TypeError("WebhookSignature.sign: the secret is not whsec_ followed by standard base64")
    },
    onSome: (key) => `v1,${digest(key, input.id, String(input.timestamp), input.body).toString("base64")}`
  })

/**
 * What `signAll` needs: `sign`'s input with every secret that currently signs (two while a renewed secret and
 * the one it replaces overlap).
 *
 * @since 0.1.0
 * @category models
 */
export interface SignAllInput {
  readonly secrets: Arr.NonEmptyReadonlyArray<string>
  readonly id: string
  readonly timestamp: number
  readonly body: Uint8Array
}

/**
 * The `webhook-signature` value for several secrets: one `v1,...` entry per secret, in the given order, joined
 * by single spaces. A receiver that knows either secret finds a matching entry, which is what lets a subscriber
 * switch secrets without losing deliveries (spec: both secrets sign for 24 hours after a renewal).
 *
 * @since 0.1.0
 * @category signing
 */
export const signAll = (input: SignAllInput): string =>
  input.secrets.map((secret) => sign({ secret, id: input.id, timestamp: input.timestamp, body: input.body })).join(" ")

/**
 * Whether `secret` is `whsec_` followed by standard padded base64 of 24 to 64 bytes (the rule for secrets a
 * subscriber or a Source chooses). The same rule as `Crypto.isWebhookSecret` of `@service/core`, which new
 * secrets come from (`Crypto.generateWebhookSecret`).
 *
 * @since 0.1.0
 * @category secrets
 */
export const isValidSecret: (secret: string) => boolean = isWebhookSecret
