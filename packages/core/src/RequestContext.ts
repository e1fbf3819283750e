/**
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { Principal } from "./Principal.js"

/**
 * Request ids are echoed to callers and logged; accept only a conservative alphabet from clients.
 *
 * @since 0.1.0 @category models
 */
export const RequestId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9._:-]{8,128}$/),
  Schema.brand("RequestId")
)
/** @since 0.1.0 @category models */
export type RequestId = typeof RequestId.Type

/**
 * Per-request facts every layer may read: the request id (annotated on logs and returned in bodies) and
 * the entrypoint that received the call.
 *
 * @since 0.1.0 @category tags
 */
export class RequestContext extends Context.Tag("@service/core/RequestContext")<
  RequestContext,
  { readonly requestId: RequestId; readonly entrypoint: "http" | "mcp" | "cli" | "belt" }
>() {}

/**
 * Who is calling: the authenticated principal an operation runs for (its workspace, person, role and scopes).
 * `Operation.execute` provides it; in-process callers without a credential (the research belt) have none, so
 * only operations that answer for a workspace require it.
 *
 * @since 0.1.0 @category tags
 */
export class Caller extends Context.Tag("@service/core/Caller")<Caller, Principal>() {}

/**
 * A fresh request id: `req_` plus 24 hex characters.
 *
 * @since 0.1.0 @category constructors
 */
export const makeRequestId: Effect.Effect<RequestId> = Effect.sync(() =>
  RequestId.make(`req_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`)
)

/**
 * Provides a RequestContext with a fresh id and annotates logs with it.
 *
 * @since 0.1.0 @category combinators
 */
export const withFreshRequest = (entrypoint: "http" | "mcp" | "cli" | "belt") =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, RequestContext>> =>
  Effect.flatMap(makeRequestId, (requestId) =>
    self.pipe(
      Effect.annotateLogs("requestId", requestId),
      Effect.provideService(RequestContext, { requestId, entrypoint })
    ))

/**
 * A fixed context for tests.
 *
 * @since 0.1.0 @category layers
 */
export const layerTest = Layer.succeed(RequestContext, {
  requestId: RequestId.make("req_test00000000000000000000"),
  entrypoint: "belt"
})
