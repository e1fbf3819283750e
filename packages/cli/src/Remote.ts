/**
 * One operation called over HTTP, built from its declared binding for any domain: the method, `/api/v1` +
 * the group's prefix + the operation's path (path parameters filled from the input, URL-encoded), the
 * input as a JSON body or as query parameters, and the API key as `x-api-key`. A success is decoded with
 * the operation's output schema; anything else is read into a {@link Failure.Failure}: a refusal from the
 * body's `[codec.key]` block, 401/403/unknown workspace as denied, the rest as unexpected.
 *
 * The input is checked against the operation's model-facing schema first, with the operation's codec, so a
 * bad value is refused locally with the block the server would send.
 *
 * The CLI used to call a typed `HttpApiClient` of a static API. The API is now derived from runtime groups,
 * so there is no static type to give that client; the CLI speaks the declared bindings instead
 * (docs/decisions/0034-cli-derived-from-groups.md).
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as OperationRequest from "@service/http/OperationRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Failure from "./Failure.js"

/**
 * Where and as whom to call.
 *
 * @since 0.1.0 @category models
 */
export interface Connection {
  /** Without the `/api/v1` prefix; trailing slashes are ignored. */
  readonly baseUrl: string
  /** An API key (sent as `x-api-key`) or an OAuth access token (`Authorization: Bearer`). */
  readonly credential: { readonly kind: "api_key" | "bearer"; readonly secret: Redacted.Redacted<string> }
  /** Values of the group prefix's parameters (`workspace`). */
  readonly pathParams: Readonly<Record<string, string>>
}

type Target = {
  readonly group: { readonly http: { readonly prefix: string }; readonly refusals: Refusal.AnyRefusalCodec }
  readonly operation: Operation.AnyOperation<unknown>
}

/**
 * The local refusal for a value the model-facing schema does not accept.
 *
 * @since 0.1.0 @category validation
 */
export const refusal = (codec: Refusal.AnyRefusalCodec, invalid: Refusal.InvalidInput): Failure.Failure => {
  const described = codec.describeInvalidInput(invalid)
  return Failure.Failure.Refused({
    status: undefined,
    requestId: undefined,
    key: codec.key,
    block: described.block,
    body: { code: Refusal.platformCode, message: described.message, [codec.key]: described.block }
  })
}

/**
 * Checks `input` against the operation's model-facing schema (unknown properties refused) and returns it in
 * its wire form, or the codec's structural refusal, exactly as `Refusal.decodeWith` reads it on the server.
 *
 * @since 0.1.0 @category validation
 */
export const check = (
  { operation }: Pick<Target, "operation">,
  input: unknown
): Effect.Effect<Readonly<Record<string, unknown>>, Failure.Failure> => {
  const schema = operation.modelInput
  return Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })(input).pipe(
    Effect.mapError((error) =>
      refusal(operation.refusals, Refusal.invalidInputFromIssues(schema.ast, Refusal.issuesOf(error)))
    ),
    // What decoded encodes back: a failure here is a schema bug, not the caller's.
    Effect.flatMap((value) => Effect.orDie(Schema.encodeUnknown(schema)(value))),
    Effect.flatMap((wire) =>
      Predicate.isRecord(wire) ? Effect.succeed(wire) : Effect.dieMessage(`${operation.name}: the input is not an object`)
    )
  )
}

/**
 * The request for a checked input: the path with its parameters filled, and the other fields as a JSON body
 * (`body` bindings) or as query parameters (arrays repeated, other values as text).
 *
 * @since 0.1.0 @category requests
 */
export const request = (
  connection: Connection,
  { group, operation }: Target,
  input: Readonly<Record<string, unknown>>
): Either.Either<HttpClientRequest.HttpClientRequest, Failure.Failure> =>
  Either.mapLeft(OperationRequest.make(connection, group, operation, input), (problem) =>
    OperationRequest.Unbuildable.$match(problem, {
      UnsendablePathValue: ({ field }) => Failure.usage(`${field} cannot be "." or "..": no URL path can carry it.`),
      MissingPathParam: ({ param }) =>
        Failure.Failure.Unexpected({ message: `No value for the path parameter :${param} of ${operation.name}.`, body: undefined })
    }))

/** A readable reason out of a transport error's cause (undici nests the system error one level down). */
const causeText = (cause: unknown): string => {
  if (!(cause instanceof Error)) return cause === undefined ? "unknown transport error" : String(cause)
  const inner: unknown = cause.cause
  const detail = inner instanceof Error && inner.message !== cause.message ? `: ${inner.message}` : ""
  return `${cause.message}${detail}`
}

const textField = (body: unknown, field: string): string | undefined => {
  if (!Predicate.isRecord(body)) return undefined
  const value = body[field]
  return Predicate.isString(value) ? value : undefined
}

/**
 * A non-success answer as a failure.
 *
 * @since 0.1.0 @category responses
 */
export const failureOf = (
  codec: Pick<Refusal.AnyRefusalCodec, "key">,
  status: number,
  body: unknown,
  context: { readonly baseUrl: string; readonly requestId: string | undefined; readonly endpoint: string }
): Failure.Failure => {
  const requestId = textField(body, "request_id") ?? context.requestId
  const code = textField(body, "code")
  const message = textField(body, "message")
  const block = Predicate.isRecord(body) ? body[codec.key] : undefined
  if (Predicate.isRecord(body) && Predicate.isRecord(block)) {
    return Failure.Failure.Refused({ status, requestId, key: codec.key, block, body })
  }
  // A 404 listing operations or naming the endpoint is the router's: the server does not serve this call.
  const routeNotFound = status === 404 && Predicate.isRecord(body) && ("operations" in body || "endpoint" in body)
  // Credits and rate limits refuse the call like a permission does: the message says when it can succeed.
  if (status === 401 || status === 402 || status === 403 || status === 429 || (status === 404 && !routeNotFound)) {
    return Failure.Failure.Denied({
      status,
      code: code ??
        (status === 401 ? "UNAUTHENTICATED" : status === 402 ? "CREDITS_EXHAUSTED" : status === 403 ? "FORBIDDEN" : status === 429 ? "RATE_LIMITED" : "NOT_FOUND"),
      message: message ?? (status === 404 ? "No such workspace for this credential." : "Access denied."),
      requestId,
      body
    })
  }
  const detail = [
    `HTTP ${status}`,
    ...(code === undefined ? [] : [code]),
    ...(requestId === undefined ? [] : [`request_id ${requestId}`])
  ].join(", ")
  const what = routeNotFound
    ? `${context.baseUrl} does not serve ${context.endpoint} (is the server the same version?)`
    : `Unexpected answer from ${context.baseUrl} to ${context.endpoint}`
  return Failure.Failure.Unexpected({ message: `${what}: ${detail}${message === undefined ? "" : `: ${message}`}`, body })
}

const parseJson = (text: string): Either.Either<unknown, unknown> => Either.try((): unknown => JSON.parse(text))

/** The first issue of a parse error, enough to tell a version mismatch from a bad value. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return first === undefined ? "" : `: ${first.path.length === 0 ? "" : `${first.path.join(".")}: `}${first.message}`
}

const answer = (
  target: Target,
  baseUrl: string,
  endpoint: string,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<unknown, Failure.Failure> =>
  Effect.gen(function*() {
    const text = yield* response.text.pipe(
      Effect.mapError((error) => Failure.Failure.Unreachable({ baseUrl, reason: `the answer could not be read: ${causeText(error.cause)}` }))
    )
    const requestId = response.headers["x-request-id"]
    const parsed = parseJson(text)
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(
        failureOf(target.group.refusals, response.status, Either.getOrElse(parsed, () => text), { baseUrl, requestId, endpoint })
      )
    }
    if (Either.isLeft(parsed)) {
      return yield* Effect.fail(Failure.Failure.Unexpected({ message: `${baseUrl} answered ${endpoint} with a body that is not JSON.`, body: text }))
    }
    // Decoded to prove the answer is what the declaration promises; the wire body is what is printed.
    yield* Schema.decodeUnknown(target.operation.output)(parsed.right).pipe(
      Effect.mapError((error) =>
        Failure.Failure.Unexpected({
          message: `Could not decode the answer of ${endpoint} from ${baseUrl} (is the server the same version?)${firstIssue(error)}`,
          body: parsed.right
        })
      )
    )
    return parsed.right
  })

/**
 * Calls the operation with a checked input (see {@link check}) and returns the wire output.
 *
 * @since 0.1.0 @category calls
 */
export const call = (
  connection: Connection,
  target: Target,
  input: Readonly<Record<string, unknown>>
): Effect.Effect<unknown, Failure.Failure, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const req = yield* request(connection, target, input)
    const endpoint = `${target.operation.http.method} ${Operation.httpPath(target.group, target.operation)}`
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(req).pipe(
      Effect.mapError((error) => {
        if (error._tag === "RequestError") {
          return error.reason === "Encode"
            ? Failure.Failure.Unexpected({ message: `Could not encode the request: ${causeText(error.cause)}`, body: undefined })
            : Failure.Failure.Unreachable({
              baseUrl: connection.baseUrl,
              reason: error.reason === "InvalidUrl" ? "the base URL is not usable" : causeText(error.cause)
            })
        }
        return Failure.Failure.Unreachable({ baseUrl: connection.baseUrl, reason: causeText(error.cause) })
      })
    )
    return yield* answer(target, connection.baseUrl, endpoint, response)
  })
