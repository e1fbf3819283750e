/**
 * How a JSON request body is accepted (docs/decisions/0029):
 *
 * - only `content-type: application/json` (or an `application/*+json` type), UTF-8 if a charset is named;
 *   a missing or other type is 415, so a body is never read as form fields;
 * - no `content-encoding` other than `identity`: compressed bodies are 415, never inflated;
 * - the limit (256 KiB unless the route declares `maxBodyBytes`) is enforced on the declared length before
 *   reading and on the bytes counted while streaming, chunked or not, so an oversized body is never
 *   buffered: reading stops at the first byte over the limit and the answer is 413;
 * - bytes that are not UTF-8, an empty body and malformed JSON are structural refusals (400), quoting at
 *   most a short excerpt; one leading UTF-8 byte order mark is ignored (RFC 8259 section 8.1);
 * - what no store can hold (a NUL, a lone surrogate) or nesting deeper than `Text.maxDepth` is a structural
 *   refusal: the handlers apply `@service/core/Text` to what this reads, as every surface does;
 * - on a route whose input needs no body field (an action such as `POST /topics/<id>/approve`), an absent or empty
 *   body is read as `{}`, with or without a content type ({@link readOptionalJson}, decision 0075); a body with
 *   content is held to every rule above.
 *
 * @since 0.1.0
 */
import type * as Headers from "@effect/platform/Headers"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as Refusal from "@service/core/Refusal"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** The body is over the route's limit (413). @since 0.1.0 @category errors */
export class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{ readonly maxBytes: number }> {}

/** The body's media type or encoding is not accepted (415). @since 0.1.0 @category errors */
export class UnsupportedBody extends Data.TaggedError("UnsupportedBody")<{ readonly message: string }> {}

/** The body is not a JSON text (a structural refusal, 400). @since 0.1.0 @category errors */
export class MalformedBody extends Data.TaggedError("MalformedBody")<{ readonly invalid: Refusal.InvalidInput }> {}

/** @since 0.1.0 @category constants */
export const acceptedContentTypes: ReadonlyArray<string> = ["application/json"]

const correction = "Send one JSON object with content-type application/json, following the operation's input schema (see /openapi.json)."

const malformed = (why: string, field?: string) =>
  new MalformedBody({ invalid: { why, suggestedCorrection: correction, ...(field === undefined ? {} : { field }) } })

/**
 * The media type and parameters of a `content-type` value, lower-cased.
 */
const parseContentType = (value: string): { readonly type: string; readonly charset: string | undefined } => {
  const [type = "", ...parameters] = value.split(";").map((part) => part.trim().toLowerCase())
  const charset = parameters.find((p) => p.startsWith("charset="))?.slice("charset=".length).replace(/^"|"$/g, "")
  return { type, charset }
}

const isJsonType = (type: string): boolean => type === "application/json" || /^application\/[a-z0-9.!#$&^_-]+\+json$/.test(type)

/**
 * Checks what the headers announce before a byte is read: encoding, media type, declared length.
 *
 * @since 0.1.0 @category checks
 */
export const checkHeaders = (
  headers: Headers.Headers,
  maxBytes: number
): Effect.Effect<void, BodyTooLarge | UnsupportedBody> =>
  Effect.suspend((): Effect.Effect<void, BodyTooLarge | UnsupportedBody> => {
    const encoding = headers["content-encoding"]
    if (encoding !== undefined) {
      const codings = encoding.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c.length > 0)
      if (codings.some((c) => c !== "identity")) {
        return Effect.fail(
          new UnsupportedBody({
            message: `Content-Encoding "${Refusal.excerpt(encoding, 40)}" is not supported; send the body uncompressed.`
          })
        )
      }
    }
    const contentType = headers["content-type"]
    if (contentType === undefined || contentType.trim().length === 0) {
      return Effect.fail(new UnsupportedBody({ message: "The body needs content-type: application/json." }))
    }
    const { charset, type } = parseContentType(contentType)
    if (!isJsonType(type)) {
      return Effect.fail(
        new UnsupportedBody({
          message: `Content-Type "${Refusal.excerpt(type, 60)}" is not accepted; send application/json.`
        })
      )
    }
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
      return Effect.fail(
        new UnsupportedBody({ message: `Charset "${Refusal.excerpt(charset, 40)}" is not accepted; JSON bodies are UTF-8.` })
      )
    }
    const length = declaredLength(headers)
    if (length !== undefined && length > maxBytes) return Effect.fail(new BodyTooLarge({ maxBytes }))
    return Effect.void
  })

/**
 * The `content-length` the client declared, when it is a plain number.
 *
 * @since 0.1.0 @category checks
 */
export const declaredLength = (headers: Headers.Headers): number | undefined => {
  const raw = headers["content-length"]
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined
  return Number(raw)
}

/**
 * Reads the body as it streams in, failing at the first chunk that passes `maxBytes`. The stream is pulled
 * in the request's scope, so it is released after the response is sent: stopping early never resets the
 * connection before the 413 is written.
 */
const readLimited = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<Uint8Array, BodyTooLarge | MalformedBody, Scope.Scope> =>
  Effect.gen(function*() {
    const pull = yield* Stream.toPull(request.stream)
    const parts: Array<Uint8Array> = []
    let size = 0
    while (true) {
      const next = yield* Effect.either(pull)
      if (Either.isLeft(next)) {
        if (Option.isNone(next.left)) break
        return yield* malformed("The request body could not be read to its end.")
      }
      for (const part of Chunk.toReadonlyArray(next.right)) {
        size += part.byteLength
        if (size > maxBytes) return yield* new BodyTooLarge({ maxBytes })
        parts.push(part)
      }
    }
    const body = new Uint8Array(size)
    let offset = 0
    for (const part of parts) {
      body.set(part, offset)
      offset += part.byteLength
    }
    return body
  })

// `fatal` refuses bytes that are not UTF-8; `ignoreBOM: false` consumes one leading byte order mark.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/**
 * Parses a JSON text, refusing an empty body and malformed JSON with a short excerpt of the parser's message.
 *
 * @since 0.1.0 @category parsing
 */
export const parseJson = (bytes: Uint8Array): Effect.Effect<unknown, MalformedBody> =>
  Effect.suspend((): Effect.Effect<unknown, MalformedBody> => {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return Effect.fail(malformed("The request body is not valid UTF-8."))
    }
    if (text.trim().length === 0) return Effect.fail(malformed("The request body is empty."))
    try {
      const parsed: unknown = JSON.parse(text)
      return Effect.succeed(parsed)
    } catch (error) {
      // The engine's message may quote the input: keep a short excerpt only.
      const detail = error instanceof Error ? Refusal.excerpt(error.message, 80) : "unreadable"
      return Effect.fail(malformed(`The request body is not valid JSON (${detail}).`))
    }
  })

/**
 * Reads the raw body of `request` (any content type), refusing a declared or streamed size over `maxBytes`
 * before it is buffered: what a route that verifies signatures on the exact bytes needs.
 *
 * @since 0.1.0 @category reading
 */
export const readBytes = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<Uint8Array, BodyTooLarge | MalformedBody, Scope.Scope> => {
  const length = declaredLength(request.headers)
  return length !== undefined && length > maxBytes ? Effect.fail(new BodyTooLarge({ maxBytes })) : readLimited(request, maxBytes)
}

/**
 * Reads and parses the JSON body of `request` under the policy above.
 *
 * @since 0.1.0 @category reading
 */
export const readJson = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<unknown, BodyTooLarge | UnsupportedBody | MalformedBody, Scope.Scope> =>
  checkHeaders(request.headers, maxBytes).pipe(
    Effect.zipRight(readLimited(request, maxBytes)),
    Effect.flatMap(parseJson)
  )

const isBlank = (bytes: Uint8Array): boolean => bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d)

/**
 * {@link readJson} for a route whose input needs no body field: an absent or empty (or blank) body is `{}`, whether
 * or not a content type was sent, so `curl -X POST <url>` works; a body with content needs the JSON media type and
 * is parsed as {@link readJson} parses it.
 *
 * @since 0.1.0 @category reading
 */
export const readOptionalJson = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number
): Effect.Effect<unknown, BodyTooLarge | UnsupportedBody | MalformedBody, Scope.Scope> => {
  const contentType = request.headers["content-type"]
  const typed = contentType !== undefined && contentType.trim().length > 0
  // A typed body is checked before a byte is read, as always; an untyped one is read (under the limit) to see
  // whether it is empty, and refused as before when it is not.
  const checked = typed ? checkHeaders(request.headers, maxBytes) : Effect.void
  return checked.pipe(
    Effect.zipRight(readBytes(request, maxBytes)),
    Effect.flatMap((bytes): Effect.Effect<unknown, UnsupportedBody | MalformedBody> =>
      isBlank(bytes)
        ? Effect.succeed({})
        : typed
        ? parseJson(bytes)
        : Effect.flatMap(checkHeaders(request.headers, maxBytes).pipe(Effect.catchTag("BodyTooLarge", () => Effect.void)), () => parseJson(bytes))
    )
  )
}
