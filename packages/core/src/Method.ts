/**
 * Extra JSON-RPC methods a domain serves next to its operations' MCP tools (the events domain's `events/*`): a
 * method name, an Effect Schema for its params and an Effect handler that receives the decoded params and the
 * caller's principal. The `mcp` transport registers a bundle's methods on every MCP server it runs (streamable
 * HTTP and stdio) without knowing the domain.
 *
 * The SDK would reject params failing its own schema with a bare `-32602`; methods need their own `data`
 * (the events spec's `data.reason`), so the SDK is given a schema that accepts anything and the params are
 * decoded here.
 *
 * @since 0.1.0
 */
import type { Principal } from "./Principal.js"
import * as Refusal from "./Refusal.js"
import * as RequestContext from "./RequestContext.js"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * A JSON-RPC error a method answers with: `code`, `message` and `data` reach the wire unchanged.
 *
 * @since 0.1.0 @category errors
 */
export class MethodError extends Schema.TaggedError<MethodError>("@service/core/MethodError")("MethodError", {
  code: Schema.Int,
  message: Schema.String,
  data: Schema.optional(Schema.Unknown)
}) {}

/** JSON-RPC "Invalid params". @since 0.1.0 @category constants */
export const invalidParams = -32602

/** JSON-RPC "Internal error". @since 0.1.0 @category constants */
export const internalError = -32603

/**
 * A method ready to register: params already decoded inside `run`.
 *
 * @since 0.1.0 @category models
 */
export interface Method<R> {
  readonly method: string
  /** Decodes `params` (without `_meta`) and runs the handler with a fresh request context. */
  readonly run: (params: unknown, principal: Principal) => Effect.Effect<Readonly<Record<string, unknown>>, MethodError, R>
}

/** @since 0.1.0 @category models */
export interface Spec<P, I, R> {
  readonly method: string
  readonly params: Schema.Schema<P, I, never>
  readonly handler: (params: P, principal: Principal) => Effect.Effect<Readonly<Record<string, unknown>>, MethodError, R>
}

// `_meta` belongs to the protocol (the 2026 envelope travels there), not to the method's params.
const withoutMeta = (params: unknown): unknown => {
  if (!Predicate.isRecord(params)) return params ?? {}
  const { _meta: _ignored, ...rest } = params
  return rest
}

/**
 * Declares a method. A params decode failure answers `-32602` with `data: { reason: "invalid_arguments",
 * field }`.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <P, I, R>(spec: Spec<P, I, R>): Method<Exclude<R, RequestContext.RequestContext>> => {
  const decode = Schema.decodeUnknown(spec.params, { errors: "all" })
  return {
    method: spec.method,
    run: (params, principal) =>
      Effect.gen(function*() {
        const { requestId } = yield* RequestContext.RequestContext
        return yield* decode(withoutMeta(params)).pipe(
          Effect.mapError((error) => {
            const first = Refusal.issuesOf(error)[0]
            const field = first === undefined || first.path.length === 0 ? undefined : first.path.map(String).join(".")
            const why = first === undefined ? "the params do not match the method's schema" : Refusal.excerpt(first.message, 200)
            return new MethodError({
              code: invalidParams,
              message: `Invalid params for ${spec.method}: ${field === undefined ? "" : `${field}: `}${why}`,
              data: { reason: "invalid_arguments", ...(field === undefined ? {} : { field }) }
            })
          }),
          Effect.flatMap((decoded) => spec.handler(decoded, principal)),
          // A defect keeps its details in the log; the caller only gets the request id to quote.
          Effect.catchAllDefect((defect) =>
            Effect.logError("MCP method failed", defect).pipe(
              Effect.zipRight(
                Effect.fail(
                  new MethodError({ code: internalError, message: "Internal error; quote the request id.", data: { request_id: requestId } })
                )
              )
            )
          )
        )
      }).pipe(
        Effect.annotateLogs({ method: spec.method }),
        Effect.withSpan("Method.run", { captureStackTrace: false, attributes: { method: spec.method } }),
        RequestContext.withFreshRequest("mcp")
      )
  }
}
