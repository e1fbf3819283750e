/**
 * Why a `service` command did not succeed, reduced to the four outcomes a shell script can act on, each with
 * its own exit code: the layer refused the request, the credential was not accepted, the server could not be
 * reached, or something unexpected happened.
 *
 * @since 0.1.0
 */
import type * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import {
  Forbidden,
  MarketDataBadRequest,
  MarketDataConflict,
  MarketDataNotFound,
  MarketDataTimeout,
  MarketDataUnavailable,
  Unauthorized,
  WorkspaceNotFound
} from "@service/http/ApiError"
import { type MarketDataBlock, type MarketDataRefusal, toBlock } from "@service/market-contract/MarketError"
import * as Data from "effect/Data"
import * as ParseResult from "effect/ParseResult"

/**
 * Process exit codes of the `service` binary.
 *
 * @since 0.1.0 @category constants
 */
export const ExitCode = {
  /** The command succeeded. */
  ok: 0,
  /** An unexpected error: an undeclared server answer, an undecodable body, or a bug. */
  unexpected: 1,
  /** The command line is invalid (unknown flag, bad choice, missing argument). */
  usage: 2,
  /** The market-data layer refused the request (`semantic_code` printed on stderr). */
  refused: 3,
  /** Authentication or authorization failed: 401, 403, no API key, or a workspace the key does not belong to. */
  denied: 4,
  /** The server could not be reached (connection refused, DNS, TLS, timeout) or the base URL is unusable. */
  unreachable: 5,
  /** Interrupted (Ctrl-C), as shells report SIGINT. */
  interrupted: 130
} as const

/** @since 0.1.0 @category models */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * A failed command. `Refused` carries the `market_data` block whether the server or the local schema check
 * produced it (`status` is undefined for the latter).
 *
 * @since 0.1.0 @category models
 */
export type Failure = Data.TaggedEnum<{
  Refused: {
    readonly status: number | undefined
    readonly requestId: string | undefined
    readonly block: MarketDataBlock
  }
  Denied: {
    readonly status: number | undefined
    readonly code: string
    readonly message: string
    readonly requestId: string | undefined
  }
  Unreachable: {
    readonly baseUrl: string
    readonly reason: string
  }
  Unexpected: {
    readonly message: string
  }
  /** A command whose arguments make no sense for the current state (e.g. nothing to publish). */
  Invalid: {
    readonly message: string
  }
}>

/** Constructors and matchers of {@link Failure}. @since 0.1.0 @category constructors */
export const Failure = Data.taggedEnum<Failure>()

/** @since 0.1.0 @category guards */
export const isFailure = (u: unknown): u is Failure =>
  Failure.$is("Refused")(u) || Failure.$is("Denied")(u) || Failure.$is("Unreachable")(u) ||
  Failure.$is("Unexpected")(u) || Failure.$is("Invalid")(u)

/**
 * The exit code of a failure.
 *
 * @since 0.1.0 @category conversions
 */
export const exitCode: (failure: Failure) => ExitCode = Failure.$match({
  Refused: () => ExitCode.refused,
  Denied: () => ExitCode.denied,
  Unreachable: () => ExitCode.unreachable,
  Unexpected: () => ExitCode.unexpected,
  Invalid: () => ExitCode.usage
})

/** @since 0.1.0 @category constructors */
export const usage = (message: string): Failure => Failure.Invalid({ message })

/** @since 0.1.0 @category constructors */
export const unexpected = (message: string): Failure => Failure.Unexpected({ message })

/** A readable reason out of a transport error's cause (undici nests the system error one level down). */
const causeText = (cause: unknown): string => {
  if (!(cause instanceof Error)) return cause === undefined ? "unknown transport error" : String(cause)
  const inner: unknown = cause.cause
  const detail = inner instanceof Error && inner.message !== cause.message ? `: ${inner.message}` : ""
  return `${cause.message}${detail}`
}

/**
 * Every error the typed client can fail with, as a {@link Failure}.
 *
 * @since 0.1.0 @category conversions
 */
export const fromClientError = (
  error:
    | MarketDataBadRequest
    | MarketDataNotFound
    | MarketDataConflict
    | MarketDataUnavailable
    | MarketDataTimeout
    | WorkspaceNotFound
    | Forbidden
    | Unauthorized
    | HttpApiError.HttpApiDecodeError
    | HttpClientError.HttpClientError
    | ParseResult.ParseError,
  baseUrl: string
): Failure => {
  if (
    error instanceof MarketDataBadRequest || error instanceof MarketDataNotFound ||
    error instanceof MarketDataConflict || error instanceof MarketDataUnavailable ||
    error instanceof MarketDataTimeout
  ) {
    return Failure.Refused({ status: error.statusCode, requestId: error.request_id, block: error.market_data })
  }
  if (error instanceof Unauthorized) {
    return Failure.Denied({ status: 401, code: error.code, message: error.message, requestId: error.request_id })
  }
  if (error instanceof Forbidden) {
    return Failure.Denied({ status: 403, code: error.code, message: error.message, requestId: error.request_id })
  }
  if (error instanceof WorkspaceNotFound) {
    return Failure.Denied({ status: 404, code: error.code, message: error.message, requestId: error.request_id })
  }
  if (error._tag === "HttpApiDecodeError") {
    return Failure.Unexpected({ message: `The server could not decode the request: ${error.message}` })
  }
  if (ParseResult.isParseError(error)) {
    // The full tree is long; the first issue is enough to tell a version mismatch from a bad value.
    const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const detail = first === undefined ? "" : `: ${first.path.length === 0 ? "" : `${first.path.join(".")}: `}${first.message}`
    return Failure.Unexpected({
      message: `Could not encode the request or decode the answer from ${baseUrl} (is the server the same version?)${detail}`
    })
  }
  if (error._tag === "RequestError") {
    return error.reason === "Encode"
      ? Failure.Unexpected({ message: `Could not encode the request: ${causeText(error.cause)}` })
      : Failure.Unreachable({ baseUrl, reason: causeText(error.cause) })
  }
  const requestId = error.response.headers["x-request-id"]
  return Failure.Unexpected({
    message: `Unexpected answer from ${baseUrl}: HTTP ${error.response.status}${
      requestId === undefined ? "" : ` (request_id ${requestId})`
    }${error.reason === "StatusCode" ? "" : ` (${error.reason})`}`
  })
}

/**
 * A refusal produced locally, before any call, by the operation's own input schema.
 *
 * @since 0.1.0 @category conversions
 */
export const fromRefusal = (refusal: MarketDataRefusal): Failure =>
  Failure.Refused({ status: undefined, requestId: undefined, block: toBlock(refusal) })

/**
 * No API key on the command line or in the environment: refused before any call.
 *
 * @since 0.1.0 @category constructors
 */
export const missingApiKey: Failure = Failure.Denied({
  status: undefined,
  code: "NO_API_KEY",
  message: "No API key: pass --api-key <key> (before `market`) or set SERVICE_API_KEY.",
  requestId: undefined
})
