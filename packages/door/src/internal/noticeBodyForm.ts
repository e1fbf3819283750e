/**
 * Form bodies: `application/x-www-form-urlencoded` and `multipart/form-data` (RFC 7578), decoded into plain
 * objects. A name sent once maps to its value; a name sent several times maps to the list of its values, in
 * order, so no answer is silently dropped.
 */
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import { parseJson } from "./noticeBodyJson.js"

/** The media type and the parameters of a `content-type` value (type and parameter names lower-cased). */
export interface ContentType {
  readonly type: string
  readonly parameters: ReadonlyMap<string, string>
}

/** Reads `type/subtype; name=value; name="quoted value"`. */
export const parseContentType = (value: string): ContentType => {
  const semicolon = value.indexOf(";")
  const type = (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase()
  const parameters = new Map<string, string>()
  const pattern = /;\s*([^=;\s]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  for (const match of value.matchAll(pattern)) {
    const name = match[1]
    if (name === undefined) continue
    const quoted = match[2]
    const raw = quoted === undefined ? (match[3] ?? "").trim() : quoted.replace(/\\(.)/g, "$1")
    if (!parameters.has(name.toLowerCase())) parameters.set(name.toLowerCase(), raw)
  }
  return { type, parameters }
}

const append = (target: Map<string, Array<unknown>>, name: string, value: unknown): void => {
  const values = target.get(name)
  if (values === undefined) target.set(name, [value])
  else values.push(value)
}

const toObject = (fields: Map<string, Array<unknown>>): Record<string, unknown> =>
  Object.fromEntries([...fields].map(([name, values]) => [name, values.length === 1 ? values[0] : values]))

const decoderFor = (charset: string | undefined): Either.Either<TextDecoder, string> => {
  try {
    return Either.right(new TextDecoder(charset ?? "utf-8", { fatal: true }))
  } catch {
    return Either.left(`unsupported charset ${JSON.stringify(charset)}`)
  }
}

// `binary` holds one byte per character. Escapes become bytes too, and only then is the charset applied, so a
// multi-byte character may arrive raw or spread over several escapes.
const percentDecode = (binary: string, decoder: TextDecoder): string => {
  const bytes = new Uint8Array(binary.length)
  let length = 0
  for (let i = 0; i < binary.length;) {
    const hex = binary.slice(i + 1, i + 3)
    if (binary[i] === "%" && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes[length++] = parseInt(hex, 16)
      i += 3
    } else {
      bytes[length++] = binary.charCodeAt(i)
      i += 1
    }
  }
  return decoder.decode(bytes.subarray(0, length))
}

/** Decodes an urlencoded body: `+` is a space, `%XX` escapes are bytes in the charset (UTF-8 by default). */
export const decodeUrlEncoded = (
  body: Uint8Array,
  charset: string | undefined
): Either.Either<Record<string, unknown>, string> =>
  Either.flatMap(decoderFor(charset), (decoder) => {
    const binary = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("latin1")
    const fields = new Map<string, Array<unknown>>()
    try {
      for (const pair of binary.split("&")) {
        if (pair.length === 0) continue
        const equals = pair.indexOf("=")
        const name = equals === -1 ? pair : pair.slice(0, equals)
        const value = equals === -1 ? "" : pair.slice(equals + 1)
        append(fields, percentDecode(name.replace(/\+/g, " "), decoder), percentDecode(value.replace(/\+/g, " "), decoder))
      }
    } catch {
      return Either.left(`form fields are not valid ${charset ?? "utf-8"}`)
    }
    return Either.right(toObject(fields))
  })

/** The UTF-8 text of the bytes (one leading byte order mark dropped), or undefined when they are not UTF-8. */
export const decodeUtf8 = (body: Uint8Array): string | undefined => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(body)
  } catch {
    return undefined
  }
}

const headerParameter = (header: string, name: string): string | undefined =>
  parseContentType(`x;${header.slice(header.indexOf(";") + 1)}`).parameters.get(name)

// A part whose text is a JSON object or array (Jotform's `rawRequest`) is offered as that value.
const partValue = (text: string, type: string | undefined): unknown => {
  const trimmed = text.trim()
  const looksJson = trimmed.startsWith("{") || trimmed.startsWith("[")
  if (!looksJson && type !== "application/json") return text
  const parsed = parseJson(trimmed)
  return Either.isRight(parsed) && (Predicate.isRecord(parsed.right) || Array.isArray(parsed.right))
    ? parsed.right
    : text
}

/**
 * Decodes a `multipart/form-data` body by its boundary. Lines end with CRLF (a bare LF is tolerated), parts may
 * be empty, a part without a name is skipped, and a file part is described (`filename`, `contentType`, `size`)
 * rather than kept: notices carry answers, not attachments.
 */
export const decodeMultipart = (body: Uint8Array, boundary: string): Either.Either<Record<string, unknown>, string> => {
  if (boundary.length === 0 || boundary.length > 200) return Either.left("multipart boundary missing or too long")
  const text = decodeUtf8(body)
  if (text === undefined) return Either.left("multipart body is not valid UTF-8")
  const delimiter = `--${boundary}`
  let cursor = text.startsWith(delimiter) ? 0 : text.indexOf(`\n${delimiter}`)
  if (cursor === -1) return Either.left("multipart boundary not found in the body")
  if (cursor > 0) cursor += 1
  const fields = new Map<string, Array<unknown>>()
  for (;;) {
    cursor += delimiter.length
    if (text.startsWith("--", cursor)) return Either.right(toObject(fields))
    const lineEnd = text.indexOf("\n", cursor)
    if (lineEnd === -1) return Either.left("multipart body ends without its closing boundary")
    const start = lineEnd + 1
    const next = text.indexOf(`\n${delimiter}`, start - 1)
    if (next === -1) return Either.left("multipart body ends without its closing boundary")
    const end = next > start && text[next - 1] === "\r" ? next - 1 : next
    const part = next < start ? "" : text.slice(start, end)
    cursor = next + 1
    const split = /\r?\n\r?\n/.exec(part)
    const head = split === null ? part : part.slice(0, split.index)
    const content = split === null ? "" : part.slice(split.index + split[0].length)
    const headers = new Map<string, string>()
    for (const line of head.split(/\r?\n/)) {
      const colon = line.indexOf(":")
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
    }
    const disposition = headers.get("content-disposition")
    const name = disposition === undefined ? undefined : headerParameter(disposition, "name")
    if (name === undefined) continue
    const filename = disposition === undefined ? undefined : headerParameter(disposition, "filename")
    const partType = headers.get("content-type")
    const type = partType === undefined ? undefined : parseContentType(partType).type
    append(
      fields,
      name,
      filename === undefined
        ? partValue(content, type)
        : { filename, contentType: type ?? "application/octet-stream", size: new TextEncoder().encode(content).length }
    )
  }
}
