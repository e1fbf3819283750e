/**
 * Why a command did not succeed, reduced to the outcomes a shell script can act on, each with its own exit
 * code: the domain refused the request, the credential was not accepted, the server could not be reached, the
 * command line made no sense, or something unexpected happened. Domain-neutral: a refusal carries its codec's
 * block as plain JSON under the codec's key (`market_data`, `door`...).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

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
  /** The command line is invalid (unknown command or flag, bad choice, missing argument, bad --input-json). */
  usage: 2,
  /** The domain refused the request (its block printed on stderr). */
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
 * A failed command.
 *
 * - `Refused`: the domain's refusal, from the server (`status` is the HTTP status) or from the local schema
 *   check before any call (`status` undefined). `body` is the wire body (or, locally, the body the server
 *   would have sent without its `statusCode` and `request_id`).
 * - `Denied`: 401, 402 (credits exhausted), 403, 429 (rate limited), an unknown workspace, or no API key.
 * - `Unexpected`: an undeclared answer or a bug; `body` is the wire body when there was one.
 *
 * @since 0.1.0 @category models
 */
export type Failure = Data.TaggedEnum<{
  Refused: {
    readonly status: number | undefined
    readonly requestId: string | undefined
    /** The codec's key: the body field carrying the block. */
    readonly key: string
    readonly block: Readonly<Record<string, unknown>>
    readonly body: Readonly<Record<string, unknown>>
  }
  Denied: {
    readonly status: number | undefined
    readonly code: string
    readonly message: string
    readonly requestId: string | undefined
    readonly body: unknown
    /** The credential the command sent, in words, and whether `service login` keeps a token it did not use. */
    readonly credential?: { readonly source: string; readonly loginUnused: boolean } | undefined
  }
  Unreachable: {
    readonly baseUrl: string
    readonly reason: string
  }
  Unexpected: {
    readonly message: string
    readonly body: unknown
  }
  /** The command line, or what it asks for, makes no sense (unknown command, nothing to publish...). */
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
export const unexpected = (message: string, body?: unknown): Failure => Failure.Unexpected({ message, body })

/**
 * No API key on the command line or in the environment: refused before any call.
 *
 * @since 0.1.0 @category constructors
 */
export const missingApiKey: Failure = Failure.Denied({
  status: undefined,
  code: "NO_API_KEY",
  message:
    "No API key: pass --api-key <key> (before the command words), set SERVICE_API_KEY, or sign in with `service login` (beside a local npm start, the demo workspace's key in .data/demo-api-key is read by itself).",
  requestId: undefined,
  body: undefined
})

/**
 * A failure the command already printed (as text or, with `--json`, as JSON): only its exit code is left
 * to give.
 *
 * @since 0.1.0 @category errors
 */
export class Reported extends Data.TaggedError("Reported")<{ readonly failure: Failure }> {}
