/**
 * The request id of an HTTP call: taken from a well-formed incoming `x-request-id` or generated, returned in
 * the `x-request-id` response header and in every body that carries `request_id`.
 *
 * @since 0.1.0
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as HttpApp from "@effect/platform/HttpApp"
import { makeRequestId, RequestId } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category fiber refs */
export const currentRequestId: FiberRef.FiberRef<Option.Option<RequestId>> = FiberRef.unsafeMake(
  Option.none<RequestId>()
)

const decodeIncoming = Schema.decodeUnknownOption(RequestId)

/**
 * The current request id, or a fresh one outside a request.
 *
 * @since 0.1.0 @category accessors
 */
export const get: Effect.Effect<RequestId> = Effect.flatMap(
  FiberRef.get(currentRequestId),
  Option.match({ onNone: () => makeRequestId, onSome: Effect.succeed })
)

/**
 * Runs `app` with a request id set and echoed in the response header.
 *
 * @since 0.1.0 @category middleware
 */
export const withRequestId = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const incoming = decodeIncoming(request.headers["x-request-id"])
    const requestId = Option.isSome(incoming) ? incoming.value : yield* makeRequestId
    yield* HttpApp.appendPreResponseHandler((_req, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "x-request-id", requestId))
    )
    // On the request's server span and on every span opened inside it, so a trace can be found by request id.
    yield* Effect.annotateCurrentSpan("request.id", requestId)
    return yield* app.pipe(
      Effect.locally(currentRequestId, Option.some(requestId)),
      Effect.annotateLogs("requestId", requestId),
      Effect.annotateSpans("request.id", requestId)
    )
  })
