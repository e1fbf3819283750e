/**
 * One operation called over HTTP from its declaration, the way the server derives its endpoint
 * (`@service/http/GroupApi`): the declared method, `/api/v1` + the group's prefix + the operation's path (path
 * parameters from the input, URL-encoded; `:workspace` from the connection), the rest of the input as a JSON body
 * (`body` bindings) or as query parameters, and the credential as `x-api-key` or `Authorization: Bearer`.
 *
 * The input is encoded with the operation's canonical input schema first (unknown properties refused): a value the
 * schema does not accept is refused locally with the block the server would send. A success is decoded with the
 * operation's output schema; anything else becomes a {@link ClientError.ClientError}.
 *
 * @since 0.1.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as ApiError from "@service/http/ApiError"
import * as OperationRequest from "@service/http/OperationRequest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as ClientError from "./ClientError.js"

/**
 * A credential: an API key (sent as `x-api-key`) or an OAuth access token (`Authorization: Bearer`).
 *
 * @since 0.1.0 @category models
 */
export type Credential =
  | { readonly kind: "api_key"; readonly secret: Redacted.Redacted<string> }
  | { readonly kind: "bearer"; readonly secret: Redacted.Redacted<string> }

/**
 * Where and as whom to call.
 *
 * @since 0.1.0 @category models
 */
export interface Connection {
  /** The server's address without `/api/v1` (`http://127.0.0.1:3000`); trailing slashes are ignored. */
  readonly baseUrl: string
  readonly credential: Credential
  /** The workspace slug filling `:workspace` in workspace-scoped groups. */
  readonly workspace: string | undefined
}

/**
 * What is called: the operation and the group that serves it.
 *
 * @since 0.1.0 @category models
 */
export interface Target {
  readonly group: Operation.Group<unknown>
  readonly operation: Operation.AnyOperation<unknown>
}

const refusedLocally = (target: Target, error: ParseResult.ParseError): ClientError.Refused => {
  const codec = target.group.refusals
  const described = codec.describeInvalidInput(Refusal.invalidInputFromIssues(target.operation.input.ast, Refusal.issuesOf(error)))
  return new ClientError.Refused({
    group: target.group.name,
    operation: target.operation.name,
    status: undefined,
    code: described.code,
    message: described.message,
    key: codec.key,
    block: described.block,
    retryable: described.retryable,
    action: described.action,
    requestId: undefined
  })
}

/**
 * The wire form of `input`, or the local refusal the server would answer.
 *
 * @since 0.1.0 @category requests
 */
export const encodeInput = (target: Target, input: unknown): Effect.Effect<Readonly<Record<string, unknown>>, ClientError.Refused> =>
  Schema.encodeUnknown(target.operation.input, { errors: "all", onExcessProperty: "error" })(input ?? {}).pipe(
    Effect.mapError((error) => refusedLocally(target, error)),
    Effect.flatMap((wire) =>
      Predicate.isRecord(wire) ? Effect.succeed(wire) : Effect.dieMessage(`${target.operation.name}: the input is not an object`)
    )
  )

/**
 * The request for a wire input.
 *
 * @since 0.1.0 @category requests
 */
export const request = (
  connection: Connection,
  { group, operation }: Target,
  input: Readonly<Record<string, unknown>>
): Either.Either<HttpClientRequest.HttpClientRequest, ClientError.Unexpected> =>
  Either.mapLeft(
    OperationRequest.make({ ...connection, pathParams: { workspace: connection.workspace } }, group, operation, input),
    (problem) =>
      new ClientError.Unexpected({
        status: undefined,
        message: OperationRequest.Unbuildable.$match(problem, {
          MissingPathParam: ({ param }) =>
            `No value for the path parameter :${param} of ${operation.name}${param === "workspace" ? " (set workspace)" : ""}.`,
          UnsendablePathValue: ({ field }) => `${field} cannot be "." or "..": no URL path can carry it.`
        }),
        body: undefined,
        requestId: undefined
      })
  )

const textField = (body: unknown, name: string): string | undefined => {
  const value = Predicate.isRecord(body) ? body[name] : undefined
  return Predicate.isString(value) ? value : undefined
}

/**
 * The error of a non-success answer, read with the schemas the server answers with.
 *
 * @since 0.1.0 @category responses
 */
export const failureOf = (
  connection: Pick<Connection, "workspace">,
  target: Target,
  status: number,
  body: unknown,
  headerRequestId: string | undefined
): ClientError.ClientError => {
  const codec = target.group.refusals
  const requestId = textField(body, "request_id") ?? headerRequestId
  const message = textField(body, "message") ?? `HTTP ${status}`
  const block = Predicate.isRecord(body) ? body[codec.key] : undefined
  if (Predicate.isRecord(block) && Either.isRight(Schema.decodeUnknownEither(codec.block)(block))) {
    const code = textField(block, codec.codeField) ?? ""
    const rule = codec.rules[code]
    return new ClientError.Refused({
      group: target.group.name,
      operation: target.operation.name,
      status,
      code,
      message,
      key: codec.key,
      block,
      retryable: rule?.retryable ?? false,
      action: rule?.action ?? "",
      requestId
    })
  }
  const decoded = <A, I>(schema: Schema.Schema<A, I>) => Schema.decodeUnknownOption(schema)(body)
  if (status === 401 && Option.isSome(decoded(ApiError.Unauthorized))) {
    return new ClientError.Unauthenticated({ message, requestId })
  }
  if (status === 403) {
    const forbidden = decoded(ApiError.Forbidden)
    if (Option.isSome(forbidden)) {
      return new ClientError.Forbidden({
        reason: forbidden.value.reason,
        requiredScopes: forbidden.value.required_scopes ?? [],
        message,
        requestId
      })
    }
  }
  if (status === 404 && Option.isSome(decoded(ApiError.WorkspaceNotFound)) && Option.isNone(decoded(ApiError.GroupRouteNotFound))) {
    return new ClientError.WorkspaceNotFound({ workspace: connection.workspace, message, requestId })
  }
  if (status === 402) {
    const credits = decoded(ApiError.CreditsExhausted)
    return new ClientError.CreditsExhausted({
      balance: Option.getOrUndefined(Option.map(credits, (c) => c.balance)),
      price: Option.getOrUndefined(Option.map(credits, (c) => c.price)),
      renewsOn: Option.getOrUndefined(Option.map(credits, (c) => c.renews_on)),
      message,
      requestId
    })
  }
  if (status === 429) {
    const limited = decoded(ApiError.RateLimitExceeded)
    return new ClientError.RateLimited({
      retryAfterSeconds: Option.getOrUndefined(Option.map(limited, (l) => l.retry_after_seconds)),
      message,
      requestId
    })
  }
  const endpoint = `${target.operation.http.method} ${Operation.httpPath(target.group, target.operation)}`
  const routeMissing = status === 404 && Option.isSome(decoded(ApiError.GroupRouteNotFound))
  return new ClientError.Unexpected({
    status,
    message: routeMissing
      ? `The server does not serve ${endpoint} (is it the same version?): ${message}`
      : `Unexpected answer to ${endpoint}: HTTP ${status}${textField(body, "code") === undefined ? "" : ` ${textField(body, "code")}`}: ${message}`,
    body,
    requestId
  })
}

const causeText = (cause: unknown): string => {
  if (!(cause instanceof Error)) return cause === undefined ? "unknown transport error" : String(cause)
  const inner: unknown = cause.cause
  return inner instanceof Error && inner.message !== cause.message ? `${cause.message}: ${inner.message}` : cause.message
}

const firstIssue = (error: ParseResult.ParseError): string => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return first === undefined ? "" : `: ${first.path.length === 0 ? "" : `${first.path.join(".")}: `}${first.message}`
}

/**
 * Calls the operation with `input` (its canonical input type) and decodes the answer with its output schema.
 *
 * @since 0.1.0 @category calls
 */
export const call = (
  connection: Connection,
  target: Target,
  input: unknown
): Effect.Effect<unknown, ClientError.ClientError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const wire = yield* encodeInput(target, input)
    const req = yield* request(connection, target, wire)
    const client = yield* HttpClient.HttpClient
    const unreachable = (reason: string) => new ClientError.Unreachable({ baseUrl: connection.baseUrl, reason })
    const response = yield* client.execute(req).pipe(
      Effect.mapError((error) =>
        error._tag === "RequestError" && error.reason === "InvalidUrl" ? unreachable("the base URL is not usable") : unreachable(causeText(error.cause))
      )
    )
    const text = yield* response.text.pipe(Effect.mapError((error) => unreachable(`the answer could not be read: ${causeText(error.cause)}`)))
    const headerRequestId = response.headers["x-request-id"]
    const parsed = Either.try((): unknown => JSON.parse(text))
    if (response.status < 200 || response.status >= 300) {
      return yield* Effect.fail(failureOf(connection, target, response.status, Either.getOrElse(parsed, () => text), headerRequestId))
    }
    if (Either.isLeft(parsed)) {
      return yield* new ClientError.Unexpected({ status: response.status, message: "The answer is not JSON.", body: text, requestId: headerRequestId })
    }
    return yield* Schema.decodeUnknown(target.operation.output)(parsed.right).pipe(
      Effect.mapError((error) =>
        new ClientError.Unexpected({
          status: response.status,
          message: `Could not decode the answer of ${target.operation.name} (is the server the same version?)${firstIssue(error)}`,
          body: parsed.right,
          requestId: headerRequestId
        })
      )
    )
  }).pipe(Effect.withSpan(`Client.${target.operation.name}`, { captureStackTrace: false }))
