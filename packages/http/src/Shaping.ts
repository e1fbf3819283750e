/**
 * API-level middleware: request ids, the body limit on the declared length, and the shape of every answer
 * the router or the middleware produces itself: unknown path (a 404 listing the group's operations under a
 * group prefix), wrong verb (405 with `Allow`), undecodable input (the codec's structural refusal), missing
 * credentials (401 with `WWW-Authenticate`) and unexpected defects (500 with a request id, no internals).
 * Nothing leaves as an untyped 500.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authenticator } from "@service/core/Authenticator"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ApiError from "./ApiError.js"
import * as Authentication from "./Authentication.js"
import * as BodyReader from "./BodyReader.js"
import * as RequestId from "./RequestId.js"
import * as Routes from "./Routes.js"

/** @since 0.1.0 @category models */
export interface Options {
  /** The realm of the `WWW-Authenticate` challenge (default `service`). */
  readonly realm?: string | undefined
  /**
   * Path prefixes of routes the host mounts itself that read their own body with their own limit and answer
   * their own 413 (the intake door): the early check of a declared length is left to them, so a sender meets one
   * refusal shape whether the length is declared or streamed.
   */
  readonly ownBodyLimits?: ReadonlyArray<string> | undefined
}

const pathnameOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** A path with an empty segment (`/topics/`, `/contacts//stage`) most likely lost an id: say so. */
const emptySegmentHint = (pathname: string): string =>
  pathname.slice(1).split("/").some((segment) => segment.length === 0)
    ? " A path segment is empty: is an id missing?"
    : ""

const notFound = <R>(table: Routes.Table<R>, method: string, pathname: string, requestId: string) => {
  const found = table.groupAt(pathname)
  const hint = emptySegmentHint(pathname)
  if (found === undefined) {
    return ApiError.respond(ApiError.RouteNotFound, 404, {
      statusCode: 404,
      code: "NOT_FOUND",
      message: `Nothing at ${method} ${Refusal.excerpt(pathname, 120)}.${hint}`,
      request_id: requestId
    })
  }
  const { prefix, values } = found
  const group = prefix.group
  const discovery = group.operations.find((op) => op.name === group.http.discovery)
  return ApiError.respond(ApiError.GroupRouteNotFound, 404, {
    statusCode: 404,
    code: "NOT_FOUND",
    message: `No ${group.title} operation at ${method} ${Refusal.excerpt(pathname, 120)}.${hint}`,
    request_id: requestId,
    endpoint: { method, path: Refusal.excerpt(pathname, 200) },
    ...(discovery === undefined ? {} : { documentation_url: Routes.fill(Operation.httpPath(group, discovery), values) }),
    operations: Operation.servedOn(group, "http").map((op) => ({
      operation: op.name,
      method: op.http.method,
      path: Routes.fill(Operation.httpPath(group, op), values)
    }))
  })
}

const shape = <R>(table: Routes.Table<R>, challenge: Effect.Effect<string>, ownBodyLimits: ReadonlyArray<string>) =>
(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = yield* RequestId.get
    const pathname = pathnameOf(request.url)
    const route = table.find(request.method, pathname)
    const limit = route?.maxBodyBytes ?? Routes.defaultMaxBodyBytes
    const declared = BodyReader.declaredLength(request.headers)
    const readsItsOwn = route === undefined && ownBodyLimits.some((prefix) => pathname.startsWith(prefix))
    // An empty segment inside an API path (`/topics//approve`) lost an id; the router would fold the slashes and read
    // the next word as the id. Answered here, naming the group the path belongs to.
    if (route === undefined && pathname.startsWith("/api/v1/") && pathname.includes("//")) {
      return notFound(table, request.method, pathname, requestId)
    }
    if (declared !== undefined && declared > limit && !readsItsOwn) {
      // Answered before reading a byte; the connection closes rather than carrying the unread body.
      return ApiError.respond(ApiError.PayloadTooLarge, 413, {
        statusCode: 413,
        code: "PAYLOAD_TOO_LARGE",
        message: `Request bodies on this route are limited to ${limit} bytes.`,
        request_id: requestId,
        max_body_bytes: limit
      }, { connection: "close" })
    }
    return yield* app.pipe(
      // Bounds any handler that reads the body with the platform's own readers.
      HttpIncomingMessage.withMaxBodySize(Option.some(limit)),
      Effect.catchAllCause((cause) =>
        Effect.gen(function*() {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) {
            // The router's failures are untyped at this level; narrow them one by one.
            const error: unknown = failure.value
            if (error instanceof HttpServerError.RouteNotFound) {
              // The route exists for this method, but the router would not take the path (a segment past its
              // parameter length, e.g. a 5,000-character ref): the operation's structural refusal, not a 405.
              if (route !== undefined) {
                const codec = route.group.refusals
                return ApiError.respondRefusal(codec, codec.describeInvalidInput({
                  why: `A path segment is longer than the ${Routes.maxPathParamLength} characters a route takes.`,
                  suggestedCorrection: "Send the id or reference exactly as an earlier answer gave it."
                }), requestId)
              }
              const allowed = table.methodsAt(pathname)
              if (allowed.length > 0) {
                return ApiError.respond(ApiError.MethodNotAllowed, 405, {
                  statusCode: 405,
                  code: "METHOD_NOT_ALLOWED",
                  message: `${request.method} is not allowed here; use ${allowed.join(" or ")}.`,
                  request_id: requestId,
                  allowed_methods: allowed
                }, { allow: allowed.join(", ") })
              }
              return notFound(table, request.method, pathname, requestId)
            }
            if (error instanceof ApiError.Unauthorized) {
              return ApiError.respond(ApiError.Unauthorized, 401, error, { "www-authenticate": yield* challenge })
            }
            if (error instanceof HttpApiError.HttpApiDecodeError) {
              const issues = error.issues.map((issue) => ({ path: issue.path, message: issue.message, tag: issue._tag }))
              if (route !== undefined) {
                const codec = route.group.refusals
                const described = codec.describeInvalidInput(Refusal.invalidInputFromIssues(route.operation.input.ast, issues))
                return ApiError.respondRefusal(codec, described, requestId)
              }
              return ApiError.respond(ApiError.BadRequest, 400, {
                statusCode: 400,
                code: "VALIDATION_FAILED",
                message: Refusal.excerpt(error.message, 200),
                request_id: requestId
              })
            }
            return yield* Effect.failCause(cause)
          }
          if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
          yield* Effect.logError("Unexpected defect while serving a request", cause)
          return ApiError.respond(ApiError.Internal, 500, {
            statusCode: 500,
            code: "INTERNAL",
            message: "An unexpected error occurred. Quote the request id when reporting it.",
            request_id: requestId
          })
        })
      )
    )
  })

/**
 * The API-level middleware layer for `groups` (the same list the API was built from).
 *
 * @since 0.1.0 @category layers
 */
export const layer = <R>(groups: ReadonlyArray<Operation.Group<R>>, options: Options = {}): Layer.Layer<never> => {
  const table = Routes.make(groups)
  return Layer.unwrapEffect(Effect.gen(function*() {
    // Where OAuth clients learn to get a token, when the application's Authenticator issues them (RFC 9728).
    const authenticator = yield* Effect.serviceOption(Authenticator)
    const metadata = Option.flatMap(authenticator, (found) => Option.fromNullable(found.resourceMetadata))
    const challenge = Option.match(metadata, {
      onNone: () => Effect.succeed(Authentication.challenge(options.realm)),
      onSome: (url) => Effect.map(url("api"), (at) => Authentication.challenge(options.realm, at))
    })
    return HttpApiBuilder.middleware((app) => RequestId.withRequestId(shape(table, challenge, options.ownBodyLimits ?? [])(app)))
  }))
}
