/**
 * Standard Webhooks 1.0.0, symmetric scheme: verifying the three `webhook-*` headers of an intake request
 * and signing outgoing deliveries the same way. Pure functions over bytes and a clock reading; nothing here
 * reads the clock or the network. The signature codec itself is `@service/events/WebhookSignature`, shared
 * with outgoing delivery.
 *
 * @since 0.1.0
 */
import { timingSafeEqual } from "node:crypto"
import * as WebhookSignature from "@service/events/WebhookSignature"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"

/**
 * What `verify` reads: the Source's current secrets (two during a rotation), the request headers as
 * received, the exact body bytes and the service clock in Unix seconds.
 *
 * @since 0.1.0
 * @category models
 */
export const VerifyInput = Schema.Struct({
  secrets: Schema.Array(Schema.String),
  headers: Schema.Record({ key: Schema.String, value: Schema.UndefinedOr(Schema.String) }),
  body: Schema.Uint8ArrayFromSelf,
  now: Schema.Number,
  toleranceSeconds: Schema.optional(Schema.Number)
})
/** @since 0.1.0 @category models */
export type VerifyInput = typeof VerifyInput.Type

/**
 * A request whose signature holds: its `webhook-id` (the idempotency key) and `webhook-timestamp`.
 *
 * @since 0.1.0
 * @category models
 */
export const Verified = Schema.Struct({ id: Schema.String, timestamp: Schema.Number })
/** @since 0.1.0 @category models */
export type Verified = typeof Verified.Type

/**
 * What `sign` needs: one secret, the message id, the attempt's timestamp and the exact body bytes.
 *
 * @since 0.1.0
 * @category models
 */
export const SignInput = WebhookSignature.SignInput
/** @since 0.1.0 @category models */
export type SignInput = WebhookSignature.SignInput

/**
 * Seconds a `webhook-timestamp` may differ from the clock, either way (spec: event intake, Limits).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** @since 0.1.0 @category constants */
export const MAX_WEBHOOK_ID_LENGTH = 200

const SHA256_BYTES = 32
const DIGITS = /^[0-9]+$/
// The id is the first field of the signed content: a dot would make `<id>.<timestamp>.` ambiguous.
const FORBIDDEN_IN_ID = /[.\s]/

/**
 * Header values by lower-cased name (HTTP names are case-insensitive). A name given twice with different
 * values is reported, since which one was signed cannot be known.
 */
const lowerCaseHeaders = (
  headers: Readonly<Record<string, string | undefined>>
): { readonly values: ReadonlyMap<string, string>; readonly conflicts: ReadonlyArray<string> } => {
  const values = new Map<string, string>()
  const conflicts: Array<string> = []
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const lower = name.toLowerCase()
    const seen = values.get(lower)
    if (seen === undefined) values.set(lower, value)
    else if (seen !== value) conflicts.push(lower)
  }
  return { values, conflicts }
}

const headersRefusal = (detail: string): Either.Either<never, DoorRefusal> =>
  Either.left(refuse("webhook_headers", detail))

/**
 * Checks a Standard Webhooks request: header shape (`webhook_headers`), then the timestamp against the
 * clock (`stale_timestamp`, before any HMAC is computed), then whether any `v1` signature matches any of
 * the secrets (`invalid_signature`). Signatures are compared in constant time on decoded bytes. A secret
 * that does not decode as `whsec_` + standard base64 never matches: it is a configuration defect, and a
 * pure check cannot throw, while a 401 is what an unknown Source would get anyway.
 *
 * @since 0.1.0
 * @category verification
 */
export const verify = (input: VerifyInput): Either.Either<Verified, DoorRefusal> => {
  const { conflicts, values } = lowerCaseHeaders(input.headers)
  const conflict = conflicts[0]
  if (conflict !== undefined) return headersRefusal(`${conflict} is given twice with different values`)
  const id = values.get("webhook-id")
  const timestampText = values.get("webhook-timestamp")
  const signatureHeader = values.get("webhook-signature")
  if (id === undefined) return headersRefusal("webhook-id header is missing")
  if (timestampText === undefined) return headersRefusal("webhook-timestamp header is missing")
  if (signatureHeader === undefined) return headersRefusal("webhook-signature header is missing")
  if (id.length === 0) return headersRefusal("webhook-id is empty")
  if (id.length > MAX_WEBHOOK_ID_LENGTH) {
    return headersRefusal(`webhook-id is longer than ${MAX_WEBHOOK_ID_LENGTH} characters`)
  }
  if (FORBIDDEN_IN_ID.test(id)) return headersRefusal("webhook-id must not contain dots or whitespace")
  // Digits only: `parseInt` readers accept `1614265330abc` or `1614265330.9`, the strict reading does not.
  if (!DIGITS.test(timestampText)) return headersRefusal("webhook-timestamp must be Unix seconds, digits only")
  const entries = WebhookSignature.signatureEntries(signatureHeader)
  if (Option.isNone(entries)) {
    return headersRefusal("webhook-signature must be a space-separated list of version,signature entries")
  }

  const timestamp = Number(timestampText)
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (!(Math.abs(input.now - timestamp) <= tolerance)) {
    return Either.left(refuse("stale_timestamp", `webhook-timestamp is more than ${tolerance} seconds from the clock`))
  }

  const expected = input.secrets.flatMap((secret) =>
    Option.match(WebhookSignature.secretKey(secret), {
      onNone: () => [],
      onSome: (key) => [WebhookSignature.digest(key, id, timestampText, input.body)]
    })
  )
  const presented = entries.value.flatMap(([version, signature]) =>
    version === "v1" ? Option.toArray(WebhookSignature.decodeBase64(signature)) : []
  )
  // Every pair is compared (no early exit), so timing does not tell which secret or entry matched.
  let matched = false
  for (const candidate of presented) {
    for (const wanted of expected) {
      const equal = candidate.length === SHA256_BYTES && timingSafeEqual(candidate, wanted)
      matched = equal || matched
    }
  }
  return matched ? Either.right({ id, timestamp }) : Either.left(refuse("invalid_signature", "no v1 signature matches"))
}

/**
 * The `webhook-signature` value for one secret: `v1,<base64 HMAC-SHA256>`. During a rotation, sign with each
 * secret and join the values with a space (`WebhookSignature.signAll`). The secret must satisfy `isValidSecret`
 * (or be bare base64): signing with an undecodable secret is a programming defect and throws.
 *
 * @since 0.1.0
 * @category signing
 */
export const sign: (input: SignInput) => string = WebhookSignature.sign

/**
 * Whether `secret` is `whsec_` followed by standard padded base64 of 24 to 64 bytes (the rule for secrets a
 * subscriber chooses).
 *
 * @since 0.1.0
 * @category secrets
 */
export const isValidSecret: (secret: string) => boolean = WebhookSignature.isValidSecret
