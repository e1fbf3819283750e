/**
 * The authentication port: a presented credential in, a Principal out.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import type { Unauthenticated } from "./AuthError.js"
import type { CredentialKind, Principal } from "./Principal.js"

/**
 * A credential as presented by a caller: `x-api-key` gives an api_key, `Authorization: Bearer` a bearer token (an
 * OAuth access token), the session cookie a session.
 *
 * @since 0.1.0 @category models
 */
export interface PresentedCredential {
  readonly kind: CredentialKind
  readonly secret: Redacted.Redacted<string>
  /**
   * The workspace slug the request names, when it names one. A key or token belongs to one workspace; a session is a
   * person's, who may be a member of several, and acts in the one named.
   */
  readonly workspace?: string | undefined
  /**
   * With a session on a request that changes something: the CSRF token it carried (`x-csrf-token`), empty when
   * none. A session without the right one authenticates nobody.
   */
  readonly csrf?: Redacted.Redacted<string> | undefined
  /**
   * Which resource the request is for, `api` (REST) or `mcp`: an OAuth access token is bound to one (RFC 8707)
   * and opens nothing else.
   */
  readonly resource?: "api" | "mcp" | undefined
}

/**
 * @since 0.1.0 @category tags
 */
export class Authenticator extends Context.Tag("@service/core/Authenticator")<
  Authenticator,
  {
    /** Unknown, expired, revoked or wrong-kind credentials all fail the same way, with no hint of why. */
    readonly authenticate: (credential: PresentedCredential) => Effect.Effect<Principal, Unauthenticated>
    /**
     * Where an OAuth client learns how to obtain a token for a resource (its RFC 9728 metadata), named in every
     * 401's challenge; absent when the deployment issues no tokens.
     */
    readonly resourceMetadata?: ((resource: "api" | "mcp") => Effect.Effect<string>) | undefined
  }
>() {}
