/**
 * Wire shapes of every non-success HTTP answer. Each body carries `statusCode`, a platform `code`, a
 * `message` and the `request_id`; a domain refusal adds its codec's block under the codec's key
 * (`market_data`). Refusal schemas are built per codec and status, so OpenAPI names them
 * `<Identifier>Refusal<status>` and lists under each operation only the statuses it can return.
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"

/**
 * Sends `body` with `status`, encoded with the schema that documents it, so the wire matches OpenAPI.
 *
 * @since 0.1.0 @category responses
 */
export const respond = <A, I>(
  schema: Schema.Schema<A, I>,
  status: number,
  body: NoInfer<A>,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(Schema.encodeSync(schema)(body), { status, headers })

/**
 * 401: no hint of why (unknown, revoked and malformed credentials look alike). The response carries a
 * `WWW-Authenticate` challenge (see `Authentication.challenge`).
 *
 * @since 0.1.0 @category errors
 */
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")({
  statusCode: Schema.Literal(401),
  code: Schema.Literal("UNAUTHENTICATED"),
  message: Schema.String,
  request_id: Schema.String
}, HttpApiSchema.annotations({ status: 401, description: "Missing, unknown or revoked credentials." })) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "Unauthorized" {
    return "Unauthorized"
  }
}

/** @since 0.1.0 @category errors */
export const Forbidden = Schema.Struct({
  statusCode: Schema.Literal(403),
  code: Schema.Literal("FORBIDDEN"),
  message: Schema.String,
  request_id: Schema.String,
  /** Why: a scope the credential was not given, no person behind it, or a role it does not hold. */
  reason: Schema.Literal("missing_scope", "person_required", "role_required"),
  /** With `missing_scope`: any one of these scopes authorizes the call. */
  required_scopes: Schema.optional(Schema.Array(Schema.String))
}).annotations({
  identifier: "Forbidden",
  ...HttpApiSchema.annotations({
    status: 403,
    description: "The credential lacks a scope (reason missing_scope, with WWW-Authenticate error=\"insufficient_scope\"), " +
      "a person behind it, or a role for this operation."
  })
})

/**
 * The 403 of a {@link Forbidden} refusal. A missing scope also carries the RFC 6750 challenge
 * `Bearer error="insufficient_scope", scope="…"` naming the scope to ask for (the first the operation accepts).
 *
 * @since 0.1.0 @category responses
 */
export const forbidden = (
  failure: { readonly reason: "missing_scope" | "person_required" | "role_required"; readonly message: string; readonly scopes: ReadonlyArray<string> },
  requestId: string
): HttpServerResponse.HttpServerResponse => {
  const missing = failure.reason === "missing_scope"
  const wanted = failure.scopes[0]
  return respond(
    Forbidden,
    403,
    {
      statusCode: 403,
      code: "FORBIDDEN",
      message: failure.message,
      request_id: requestId,
      reason: failure.reason,
      ...(missing ? { required_scopes: failure.scopes } : {})
    },
    missing && wanted !== undefined
      ? { "www-authenticate": `Bearer error="insufficient_scope", scope="${wanted}", error_description="${failure.message.replace(/"/g, "'")}"` }
      : {}
  )
}

/**
 * 404 for a workspace the principal does not belong to: the same answer as a workspace that does not exist,
 * so workspaces cannot be probed.
 *
 * @since 0.1.0 @category errors
 */
export const WorkspaceNotFound = Schema.Struct({
  statusCode: Schema.Literal(404),
  code: Schema.Literal("NOT_FOUND"),
  message: Schema.String,
  request_id: Schema.String
}).annotations({
  identifier: "WorkspaceNotFound",
  ...HttpApiSchema.annotations({ status: 404, description: "No such workspace for this credential." })
})

/**
 * 429, with the `Retry-After` header repeating `retry_after_seconds`.
 *
 * @since 0.1.0 @category errors
 */
export const RateLimitExceeded = Schema.Struct({
  statusCode: Schema.Literal(429),
  code: Schema.Literal("RATE_LIMITED"),
  message: Schema.String,
  request_id: Schema.String,
  limit_per_minute: Schema.Number,
  retry_after_seconds: Schema.Number
}).annotations({
  identifier: "RateLimitExceeded",
  ...HttpApiSchema.annotations({
    status: 429,
    description: "The workspace used its calls for this minute; retry after the Retry-After header's seconds."
  })
})

/**
 * 402: a metered call the workspace's insight credits cannot cover. Nothing ran and nothing was debited.
 *
 * @since 0.1.0 @category errors
 */
export const CreditsExhausted = Schema.Struct({
  statusCode: Schema.Literal(402),
  code: Schema.Literal("CREDITS_EXHAUSTED"),
  message: Schema.String,
  request_id: Schema.String,
  semantic_code: Schema.Literal("credits_exhausted"),
  suggested_correction: Schema.String,
  retryable: Schema.Boolean,
  recovery: Schema.Struct({ action: Schema.Literal("wait_for_allowance_or_add_credits") }),
  balance: Schema.Number,
  price: Schema.Number,
  renews_on: Schema.String
}).annotations({
  identifier: "CreditsExhausted",
  ...HttpApiSchema.annotations({
    status: 402,
    description: "The workspace's insight credits do not cover this call; nothing was debited."
  })
})

/** @since 0.1.0 @category errors */
export const PayloadTooLarge = Schema.Struct({
  statusCode: Schema.Literal(413),
  code: Schema.Literal("PAYLOAD_TOO_LARGE"),
  message: Schema.String,
  request_id: Schema.String,
  max_body_bytes: Schema.Number
}).annotations({
  identifier: "PayloadTooLarge",
  ...HttpApiSchema.annotations({ status: 413, description: "The request body is over the route's limit (256 KiB unless stated)." })
})

/** @since 0.1.0 @category errors */
export const UnsupportedMediaType = Schema.Struct({
  statusCode: Schema.Literal(415),
  code: Schema.Literal("UNSUPPORTED_MEDIA_TYPE"),
  message: Schema.String,
  request_id: Schema.String,
  accepted_content_types: Schema.Array(Schema.String)
}).annotations({
  identifier: "UnsupportedMediaType",
  ...HttpApiSchema.annotations({
    status: 415,
    description: "The body must be uncompressed JSON sent as content-type application/json (UTF-8)."
  })
})

/** A 404 outside any operation group. @since 0.1.0 @category errors */
export const RouteNotFound = Schema.Struct({
  statusCode: Schema.Literal(404),
  code: Schema.Literal("NOT_FOUND"),
  message: Schema.String,
  request_id: Schema.String
}).annotations({ identifier: "RouteNotFound" })

/** @since 0.1.0 @category models */
export const OperationRoute = Schema.Struct({
  operation: Schema.String,
  method: Schema.String,
  path: Schema.String
}).annotations({ identifier: "OperationRoute" })

/**
 * A 404 under a group's prefix: what was attempted, where discovery lives, and every operation the group
 * serves, so a caller can correct the path.
 *
 * @since 0.1.0 @category errors
 */
export const GroupRouteNotFound = Schema.Struct({
  statusCode: Schema.Literal(404),
  code: Schema.Literal("NOT_FOUND"),
  message: Schema.String,
  request_id: Schema.String,
  endpoint: Schema.Struct({ method: Schema.String, path: Schema.String }),
  documentation_url: Schema.optional(Schema.String),
  operations: Schema.Array(OperationRoute)
}).annotations({ identifier: "GroupRouteNotFound" })

/** 405, with the `Allow` header listing the same methods. @since 0.1.0 @category errors */
export const MethodNotAllowed = Schema.Struct({
  statusCode: Schema.Literal(405),
  code: Schema.Literal("METHOD_NOT_ALLOWED"),
  message: Schema.String,
  request_id: Schema.String,
  allowed_methods: Schema.Array(Schema.String)
}).annotations({ identifier: "MethodNotAllowed" })

/** A 400 outside any operation (no codec to describe it). @since 0.1.0 @category errors */
export const BadRequest = Schema.Struct({
  statusCode: Schema.Literal(400),
  code: Schema.Literal("VALIDATION_FAILED"),
  message: Schema.String,
  request_id: Schema.String
}).annotations({ identifier: "BadRequest" })

/** An unexpected defect: a request id to quote, no internals. @since 0.1.0 @category errors */
export const Internal = Schema.Struct({
  statusCode: Schema.Literal(500),
  code: Schema.Literal("INTERNAL"),
  message: Schema.String,
  request_id: Schema.String
}).annotations({ identifier: "Internal" })

const refusalSchemas = new WeakMap<Refusal.AnyRefusalCodec, Map<number, Schema.Schema.AnyNoContext>>()

/**
 * The wire schema of a codec's refusals at one status (cached, so every group sharing the codec shares one
 * OpenAPI component).
 *
 * @since 0.1.0 @category errors
 */
export const refusal = (codec: Refusal.AnyRefusalCodec, status: number): Schema.Schema.AnyNoContext => {
  const byStatus = refusalSchemas.get(codec) ?? new Map<number, Schema.Schema.AnyNoContext>()
  refusalSchemas.set(codec, byStatus)
  const cached = byStatus.get(status)
  if (cached !== undefined) return cached
  const codes = Object.entries(codec.rules).flatMap(([code, rule]) => (rule?.status === status ? [code] : []))
  const schema = Schema.Struct({
    statusCode: Schema.Literal(status),
    code: Schema.Literal("VALIDATION_FAILED"),
    message: Schema.String,
    request_id: Schema.String,
    [codec.key]: codec.block
  }).annotations({
    identifier: `${codec.identifier}Refusal${status}`,
    ...HttpApiSchema.annotations({
      status,
      description: `A ${codec.identifier} refusal (${codes.join(", ")}): the \`${codec.key}\` block names the code and the next working call.`
    })
  })
  byStatus.set(status, schema)
  return schema
}

/**
 * The wire body of a described refusal.
 *
 * @since 0.1.0 @category errors
 */
export const refusalBody = (
  codec: Refusal.AnyRefusalCodec,
  described: Refusal.Described,
  requestId: string
): Readonly<Record<string, unknown>> => ({
  statusCode: described.status,
  code: "VALIDATION_FAILED",
  message: described.message,
  request_id: requestId,
  [codec.key]: described.block
})

/**
 * Sends a described refusal with its rule's status.
 *
 * @since 0.1.0 @category responses
 */
export const respondRefusal = (
  codec: Refusal.AnyRefusalCodec,
  described: Refusal.Described,
  requestId: string,
  headers: Readonly<Record<string, string>> = {}
): HttpServerResponse.HttpServerResponse =>
  // The block is already wire-encoded by the codec: sent as is, so every transport shows the same block.
  HttpServerResponse.unsafeJson(refusalBody(codec, described, requestId), {
    status: described.status,
    headers: described.status === 503 && described.retryable ? { "retry-after": String(unavailableRetryAfterSeconds), ...headers } : headers
  })

/**
 * The `Retry-After` (seconds) of a retryable 503 refusal (an outage, a corpus not yet published): long enough not to
 * hammer a store that is down or a load under way, short enough to answer soon after it ends.
 *
 * @since 0.1.0 @category constants
 */
export const unavailableRetryAfterSeconds = 5
