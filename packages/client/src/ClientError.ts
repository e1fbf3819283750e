/**
 * Why a call did not succeed, as tagged errors a host can `catchTag` (or test with `instanceof` / `_tag` after a
 * rejected promise). Each is read from the answer with the server's own schemas (`@service/http/ApiError`):
 *
 * - `Refused`: the domain's refusal, with its codec's block exactly as the API sent it (under `block`), its code,
 *   and the rule's `retryable` and `action`; `status` is undefined when the input was refused before sending
 *   (the block the server would have sent).
 * - `Unauthenticated` (401), `Forbidden` (403), `WorkspaceNotFound` (404 without a refusal block),
 *   `CreditsExhausted` (402), `RateLimited` (429): the platform's answers.
 * - `Unreachable`: no answer (connection refused, DNS, TLS, an unusable base URL).
 * - `Unexpected`: an answer the operation does not declare, or a body its schema does not decode (a server of
 *   another version).
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * A domain refusal. `Code` narrows `code` to the operation's codec codes in typed method signatures.
 *
 * @since 0.1.0 @category errors
 */
export class Refused extends Data.TaggedError("Refused")<{
  /** The group's name (`marketData`) and the operation's (`search_suppliers`). */
  readonly group: string
  readonly operation: string
  /** The HTTP status, or undefined for an input refused before it was sent. */
  readonly status: number | undefined
  /** The semantic code (`invalid_ref`, `query_too_broad`...). */
  readonly code: string
  readonly message: string
  /** The body field carrying the block (`market_data`, `crm`...). */
  readonly key: string
  /** The codec's block as the API answers it (wire form). */
  readonly block: Readonly<Record<string, unknown>>
  readonly retryable: boolean
  /** The recovery the rule names (`fix_arguments`, `narrow_query`, `retry_later`...). */
  readonly action: string
  readonly requestId: string | undefined
}> {}

/**
 * A refusal whose code is one of `Code`.
 *
 * @since 0.1.0 @category errors
 */
export type RefusedWith<Code extends string> = Refused & { readonly code: Code }

/** 401: missing, unknown or revoked credential. @since 0.1.0 @category errors */
export class Unauthenticated extends Data.TaggedError("Unauthenticated")<{
  readonly message: string
  readonly requestId: string | undefined
}> {}

/** 403: a scope, a person behind the credential, or a role is missing. @since 0.1.0 @category errors */
export class Forbidden extends Data.TaggedError("Forbidden")<{
  readonly reason: "missing_scope" | "person_required" | "role_required"
  /** With `missing_scope`: any one of these authorizes the call. */
  readonly requiredScopes: ReadonlyArray<string>
  readonly message: string
  readonly requestId: string | undefined
}> {}

/** 404 for a workspace that is not the credential's (or does not exist). @since 0.1.0 @category errors */
export class WorkspaceNotFound extends Data.TaggedError("WorkspaceNotFound")<{
  readonly workspace: string | undefined
  readonly message: string
  readonly requestId: string | undefined
}> {}

/** 402: the workspace's insight credits do not cover a metered call; nothing was debited. @since 0.1.0 @category errors */
export class CreditsExhausted extends Data.TaggedError("CreditsExhausted")<{
  readonly balance: number | undefined
  readonly price: number | undefined
  readonly renewsOn: string | undefined
  readonly message: string
  readonly requestId: string | undefined
}> {}

/** 429: the workspace used its calls for this minute. @since 0.1.0 @category errors */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly retryAfterSeconds: number | undefined
  readonly message: string
  readonly requestId: string | undefined
}> {}

/** No answer from the server. @since 0.1.0 @category errors */
export class Unreachable extends Data.TaggedError("Unreachable")<{
  readonly baseUrl: string
  readonly reason: string
}> {
  override get message(): string {
    return `${this.baseUrl} could not be reached: ${this.reason}`
  }
}

/** An answer the operation does not declare, or one its schema does not decode. @since 0.1.0 @category errors */
export class Unexpected extends Data.TaggedError("Unexpected")<{
  readonly status: number | undefined
  readonly message: string
  /** The wire body (parsed JSON when it was JSON, else the text). */
  readonly body: unknown
  readonly requestId: string | undefined
}> {}

/**
 * Every failure of a call whose refusal codes are `Code`.
 *
 * @since 0.1.0 @category models
 */
export type ClientError<Code extends string = string> =
  | RefusedWith<Code>
  | Unauthenticated
  | Forbidden
  | WorkspaceNotFound
  | CreditsExhausted
  | RateLimited
  | Unreachable
  | Unexpected
