/**
 * The handlers of the groups' endpoints, the same for every operation: the workspace and scope check,
 * the canonical input read from where the declaration says (JSON body, query parameters, or path parameters
 * plus query parameters), `Operation.execute`, and the answer: 200 with the encoded output, or the refusal,
 * 403 or 429 shaped by `ApiError`.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { requireScope } from "@service/core/Authorization"
import type { Meter } from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { CurrentPrincipal } from "@service/core/Principal"
import type { RateLimiter } from "@service/core/RateLimiter"
import * as Refusal from "@service/core/Refusal"
import * as Text from "@service/core/Text"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as ApiError from "./ApiError.js"
import type { Authentication } from "./Authentication.js"
import * as BodyReader from "./BodyReader.js"
import type * as GroupApi from "./GroupApi.js"
import * as InputShape from "./InputShape.js"
import * as RequestId from "./RequestId.js"
import * as Routes from "./Routes.js"

/** What the handlers of groups needing `R` need. @since 0.1.0 @category models */
export type Requirements<R> = Exclude<R, Operation.Provided> | Meter | RateLimiter

/**
 * The canonical input of a call: the JSON body, the query parameters, or the query parameters with the
 * path-bound fields filled from the path.
 */
const inputOf = <R>(
  route: Routes.Route<R>,
  path: Readonly<Record<string, string>>,
  request: HttpServerRequest.HttpServerRequest,
  query: Readonly<Record<string, string | ReadonlyArray<string>>>
): Effect.Effect<unknown, BodyReader.BodyTooLarge | BodyReader.UnsupportedBody | BodyReader.MalformedBody, Scope.Scope> => {
  const input = route.operation.http.input
  const bound: Record<string, string> = {}
  for (const [param, field] of Object.entries(Operation.pathFields(input))) {
    const value = path[param]
    if (value !== undefined) bound[field] = value
  }
  switch (input.kind) {
    case "body":
      // The path names the resource: its fields win over the same names in the body.
      // A route that needs no body field takes an absent or empty body as `{}` (decision 0075).
      return (route.bodyOptional ? BodyReader.readOptionalJson : BodyReader.readJson)(request, route.maxBodyBytes ?? Routes.defaultMaxBodyBytes).pipe(
        Effect.map((body) => Object.keys(bound).length === 0 || !Predicate.isRecord(body) ? body : { ...body, ...bound })
      )
    case "query":
      return Effect.succeed(query)
    case "path":
      return Effect.succeed({ ...query, ...bound })
  }
}

/**
 * A top-level field the input schema does not declare. The kernel's decode refuses these too, except where
 * a schema cannot (an empty struct accepts any object), and a query parameter that names no field must
 * never pass silently.
 */
const unexpectedField = <R>(operation: Operation.AnyOperation<R>, input: unknown): Refusal.InvalidInput | undefined => {
  const names = InputShape.fieldNames(operation.input)
  if (names === undefined || !Predicate.isRecord(input)) return undefined
  const field = Object.keys(input).find((key) => !names.includes(key))
  if (field === undefined) return undefined
  const shown = Refusal.excerpt(field, 60)
  return {
    field: shown,
    why: `Field "${shown}" is not part of this operation's input.`,
    suggestedCorrection: names.length === 0
      ? "Remove it; this operation takes no input."
      : `Remove it; the accepted fields are: ${names.join(", ")}.`,
    allowedValues: names
  }
}

/**
 * A deprecated alias answers as the canonical route does, plus `Deprecation` (RFC 9745: since when) and a
 * `Link` to the canonical path (`successor-version`).
 */
const deprecated = (
  response: HttpServerResponse.HttpServerResponse,
  request: HttpServerRequest.HttpServerRequest,
  alias: { readonly segment: string; readonly canonical: string; readonly since: string }
): HttpServerResponse.HttpServerResponse => {
  const url = new URL(request.url, "http://host")
  const since = Math.floor(Date.parse(alias.since) / 1000)
  return HttpServerResponse.setHeaders(response, {
    deprecation: `@${since}`,
    link: `<${Routes.canonicalPath(url.pathname, alias)}${url.search}>; rel="successor-version"`
  })
}

const handler = <R>(route: Routes.Route<R>, services: Context.Context<Requirements<R>>) =>
({ path, request }: { readonly path: Readonly<Record<string, string>>; readonly request: HttpServerRequest.HttpServerRequest }) =>
  Effect.gen(function*() {
    const { group, operation } = route
    const codec = group.refusals
    const principal = yield* CurrentPrincipal
    const requestId = yield* RequestId.get
    // The workspace of the path must be the principal's own; any other slug gets the answer a missing
    // workspace gets, so workspaces cannot be probed.
    const workspace = path["workspace"]
    if (group.http.workspaceScoped && workspace !== principal.workspace.slug) {
      return ApiError.respond(ApiError.WorkspaceNotFound, 404, {
        statusCode: 404,
        code: "NOT_FOUND",
        message: "No such workspace for this credential.",
        request_id: requestId
      })
    }
    // Checked before the body is read; `execute` checks it again for every transport.
    const scope = yield* Effect.either(requireScope(principal, operation.scopes))
    if (scope._tag === "Left") return ApiError.forbidden(scope.left, requestId)
    const query = yield* HttpServerRequest.ParsedSearchParams
    const read = yield* Effect.either(inputOf(route, path, request, query))
    if (read._tag === "Left") {
      const failure = read.left
      switch (failure._tag) {
        case "BodyTooLarge":
          // The rest of the body is not read: close the connection so it is never reused mid-body.
          return ApiError.respond(ApiError.PayloadTooLarge, 413, {
            statusCode: 413,
            code: "PAYLOAD_TOO_LARGE",
            message: `Request bodies on this route are limited to ${failure.maxBytes} bytes.`,
            request_id: requestId,
            max_body_bytes: failure.maxBytes
          }, { connection: "close" })
        case "UnsupportedBody":
          return ApiError.respond(ApiError.UnsupportedMediaType, 415, {
            statusCode: 415,
            code: "UNSUPPORTED_MEDIA_TYPE",
            message: failure.message,
            request_id: requestId,
            accepted_content_types: BodyReader.acceptedContentTypes
          }, { connection: "close" })
        case "MalformedBody":
          return ApiError.respondRefusal(codec, codec.describeInvalidInput(failure.invalid), requestId)
      }
    }
    const input = read.right
    // The kernel's text rule, before the field check walks the input (a deep value is refused here, not walked).
    const unstorable = Text.inspect(input)
    if (Option.isSome(unstorable)) {
      return ApiError.respondRefusal(codec, codec.describeInvalidInput(Text.describe(unstorable.value)), requestId)
    }
    const unexpected = unexpectedField(operation, input)
    if (unexpected !== undefined) return ApiError.respondRefusal(codec, codec.describeInvalidInput(unexpected), requestId)
    const result = yield* Effect.either(
      Operation.execute(operation, { principal, entrypoint: "http", requestId, input, canonical: true }).pipe(
        Effect.provide(services)
      )
    )
    if (result._tag === "Right") return HttpServerResponse.unsafeJson(result.right)
    const failure = result.left
    switch (failure._tag) {
      case "Refused":
        return ApiError.respondRefusal(codec, failure.described, requestId)
      case "RateLimited":
        return ApiError.respond(ApiError.RateLimitExceeded, 429, {
          statusCode: 429,
          code: "RATE_LIMITED",
          message: failure.message,
          request_id: requestId,
          limit_per_minute: failure.limit,
          retry_after_seconds: failure.retryAfterSeconds
        }, { "retry-after": String(failure.retryAfterSeconds) })
      case "CreditsExhausted":
        return ApiError.respond(ApiError.CreditsExhausted, 402, {
          statusCode: 402,
          code: "CREDITS_EXHAUSTED",
          message: failure.message,
          request_id: requestId,
          semantic_code: failure.semanticCode,
          suggested_correction: failure.suggestedCorrection,
          retryable: false,
          recovery: { action: failure.recoveryAction },
          balance: failure.balance,
          price: failure.price,
          renews_on: failure.renewsOn
        })
      case "Forbidden":
        return ApiError.forbidden(failure, requestId)
    }
  }).pipe(Effect.map((response) => (route.alias === undefined ? response : deprecated(response, request, route.alias))))

/**
 * Implements every group of `groups` that `api` serves; `None` when it serves none.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <R>(
  api: GroupApi.DerivedApi,
  groups: ReadonlyArray<Operation.Group<R>>
): Option.Option<Layer.Layer<HttpApiGroup.ApiGroup<"service", string>, never, Requirements<R> | Authentication>> => {
  const table = Routes.make(groups)
  const layers = groups.flatMap((group) => {
    const [first, ...rest] = table.routes.filter((route) => route.group === group)
    if (first === undefined || !(group.name in api.groups)) return []
    return [
      HttpApiBuilder.group(api, group.name, (handlers) =>
        Effect.map(Effect.context<Requirements<R>>(), (services) => {
          let handled = handlers
          for (const route of rest) handled = handled.handleRaw(route.endpoint, handler(route, services))
          return handled.handleRaw(first.endpoint, handler(first, services))
        }))
    ]
  })
  const [head, ...tail] = layers
  return head === undefined ? Option.none() : Option.some(Layer.mergeAll(head, ...tail))
}
