/**
 * Wire shapes of refusals. Every body keeps the platform fields `code`, `message` and `request_id`;
 * market-data refusals add the `market_data` block. One class per HTTP status, so the status follows from
 * the class and the typed client decodes each response back into it.
 *
 * @since 0.1.0
 */
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { MarketDataBlock, type MarketDataRefusal, toBlock } from "@service/market-contract/MarketError"
import * as Schema from "effect/Schema"

// `statusCode` repeats the HTTP status in the body: it also tells the refusal classes apart when encoding.
const refusalFields = <S extends number>(statusCode: S) => ({
  statusCode: Schema.Literal(statusCode),
  code: Schema.Literal("VALIDATION_FAILED"),
  message: Schema.String,
  request_id: Schema.String,
  market_data: MarketDataBlock
})

/** @since 0.1.0 @category errors */
export class MarketDataBadRequest extends Schema.Class<MarketDataBadRequest>("MarketDataBadRequest")(
  refusalFields(400),
  HttpApiSchema.annotations({ status: 400, description: "A market-data refusal: shape, value, vocabulary or narrowing." })
) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "MarketDataBadRequest" {
    return "MarketDataBadRequest"
  }
}

/** @since 0.1.0 @category errors */
export class MarketDataNotFound extends Schema.Class<MarketDataNotFound>("MarketDataNotFound")(
  refusalFields(404),
  HttpApiSchema.annotations({ status: 404, description: "invalid_record_ref: the ref was not issued by this layer or is gone." })
) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "MarketDataNotFound" {
    return "MarketDataNotFound"
  }
}

/** @since 0.1.0 @category errors */
export class MarketDataConflict extends Schema.Class<MarketDataConflict>("MarketDataConflict")(
  refusalFields(409),
  HttpApiSchema.annotations({ status: 409, description: "cursor_stale: the corpus was republished under the cursor." })
) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "MarketDataConflict" {
    return "MarketDataConflict"
  }
}

/** @since 0.1.0 @category errors */
export class MarketDataUnavailable extends Schema.Class<MarketDataUnavailable>("MarketDataUnavailable")(
  refusalFields(503),
  HttpApiSchema.annotations({ status: 503, description: "No active or fresh publication, or an outage; retry with backoff." })
) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "MarketDataUnavailable" {
    return "MarketDataUnavailable"
  }
}

/** @since 0.1.0 @category errors */
export class MarketDataTimeout extends Schema.Class<MarketDataTimeout>("MarketDataTimeout")(
  refusalFields(504),
  HttpApiSchema.annotations({ status: 504, description: "market_data_timeout: the statement timed out; retry with backoff." })
) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "MarketDataTimeout" {
    return "MarketDataTimeout"
  }
}

/** @since 0.1.0 @category errors */
export type MarketDataHttpError =
  | MarketDataBadRequest
  | MarketDataNotFound
  | MarketDataConflict
  | MarketDataUnavailable
  | MarketDataTimeout

/**
 * Maps a domain refusal to its wire class.
 *
 * @since 0.1.0 @category conversions
 */
export const fromRefusal = (refusal: MarketDataRefusal, requestId: string): MarketDataHttpError => {
  const body = {
    code: "VALIDATION_FAILED" as const,
    message: refusal.why,
    request_id: requestId,
    market_data: toBlock(refusal)
  }
  switch (refusal.status) {
    case 404:
      return new MarketDataNotFound({ statusCode: 404, ...body })
    case 409:
      return new MarketDataConflict({ statusCode: 409, ...body })
    case 503:
      return new MarketDataUnavailable({ statusCode: 503, ...body })
    case 504:
      return new MarketDataTimeout({ statusCode: 504, ...body })
    default:
      return new MarketDataBadRequest({ statusCode: 400, ...body })
  }
}

/**
 * 401: no hint of why (unknown, revoked and malformed credentials look alike).
 *
 * @since 0.1.0 @category errors
 */
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")({
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
export class Forbidden extends Schema.Class<Forbidden>("Forbidden")({
  code: Schema.Literal("FORBIDDEN"),
  message: Schema.String,
  request_id: Schema.String
}, HttpApiSchema.annotations({ status: 403, description: "The credential lacks a scope or role for this action." })) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "Forbidden" {
    return "Forbidden"
  }
}

/**
 * 404 for a workspace the principal does not belong to: the same answer as a workspace that does not exist.
 *
 * @since 0.1.0 @category errors
 */
export class WorkspaceNotFound extends Schema.Class<WorkspaceNotFound>("WorkspaceNotFound")({
  code: Schema.Literal("NOT_FOUND"),
  message: Schema.String,
  request_id: Schema.String
}, HttpApiSchema.annotations({ status: 404, description: "No such workspace for this credential." })) {
  /** Lets callers use `Effect.catchTag`; not part of the wire body. */
  get _tag(): "WorkspaceNotFound" {
    return "WorkspaceNotFound"
  }
}
