/**
 * Byte-level pieces of Standard Webhooks 1.0.0: strict base64, secret keys, the signed content and the
 * `webhook-signature` list. Not API: `StandardWebhooks` is the public face.
 */
import { createHmac } from "node:crypto"
import * as Option from "effect/Option"

/** The prefix of a Standard Webhooks symmetric secret. */
export const SECRET_PREFIX = "whsec_"

// Standard alphabet, padded. Node's `Buffer.from(s, "base64")` skips junk and takes the URL-safe alphabet,
// so the pattern has to pass before anything is decoded.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * Decodes standard padded base64, refusing empty input, any other alphabet and non-canonical spellings
 * (non-zero padding bits), so that one byte string has exactly one accepted text.
 */
export const decodeBase64 = (text: string): Option.Option<Buffer> => {
  if (text.length === 0 || !BASE64.test(text)) return Option.none()
  const bytes = Buffer.from(text, "base64")
  return bytes.toString("base64") === text ? Option.some(bytes) : Option.none()
}

/** The HMAC key of a secret: base64 after an optional `whsec_`; none when it does not decode. */
export const secretKey = (secret: string): Option.Option<Buffer> =>
  decodeBase64(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret)

/** HMAC-SHA256 over `<id>.<timestamp>.` followed by the body bytes exactly as received. */
export const signature = (key: Uint8Array, id: string, timestamp: string, body: Uint8Array): Buffer =>
  createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest()

/**
 * The well-formed `version,signature` entries of a `webhook-signature` value (space-separated). None when
 * no entry is well-formed: such a header is malformed, not merely unmatched.
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
 * Header values by lower-cased name (HTTP names are case-insensitive). A name given twice with different
 * values is reported, since which one was signed cannot be known.
 */
export const lowerCaseHeaders = (
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
