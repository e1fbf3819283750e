/**
 * The Authenticator every transport uses: API keys (and the bearer tokens core stores) through core's adapter, OAuth
 * access tokens (a person, the workspace they chose on the consent page, the scopes they granted, for the resource
 * the token is bound to), and sessions: a signed-in person acting in the workspace the request names, with their role there. A session holds
 * every scope but `commercial:activate`, which spends money and is never implicit (decision 0067); a request that
 * changes something with a session must carry its CSRF token.
 *
 * @since 0.1.0
 */
import { Unauthenticated } from "@service/core/AuthError"
import { Authenticator, type PresentedCredential } from "@service/core/Authenticator"
import * as CredentialCache from "@service/core/CredentialCache"
import { CredentialId } from "@service/core/Ids"
import { Principal, Scope } from "@service/core/Principal"
import * as Spending from "@service/core/Spending"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { OAuthServer } from "./OAuthServer.js"
import { People } from "./People.js"
import { Sessions } from "./Sessions.js"

/** What a session may do. @since 0.1.0 @category constants */
export const sessionScopes: ReadonlyArray<Scope> = Scope.literals.filter((scope) => scope !== "commercial:activate")

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const keys = yield* Authenticator
  const sessions = yield* Sessions
  const people = yield* People
  const oauth = yield* OAuthServer

  // A token's person acts with their role in the workspace they chose, as long as they are still a member there.
  const bearer = (credential: PresentedCredential) =>
    Effect.gen(function*() {
      const grant = yield* oauth.accessToken(credential.secret, credential.resource ?? "api")
      if (Option.isNone(grant)) return yield* keys.authenticate(credential)
      const person = yield* people.find(grant.value.personId)
      const membership = (yield* people.memberships(grant.value.personId)).find((m) => m.workspace.id === grant.value.workspaceId)
      if (Option.isNone(person) || membership === undefined) return yield* new Unauthenticated()
      return new Principal({
        workspace: membership.workspace,
        person: Option.some(person.value.person),
        role: membership.role,
        // What the person gave, as long as they may still give it: a member who no longer spends holds no spending.
        scopes: [...Spending.heldScopes(grant.value.scopes, membership.spends)],
        credential: { id: CredentialId.make(grant.value.grantId), kind: "bearer" }
      })
    }).pipe(Effect.withSpan("Authenticator.bearer", { captureStackTrace: false }))

  const session = (credential: PresentedCredential) =>
    Effect.gen(function*() {
      const live = yield* sessions.open(credential.secret)
      if (Option.isNone(live)) return yield* new Unauthenticated()
      // Sessions end at a fixed time (no sliding expiry): a held session is not served past it.
      yield* CredentialCache.validUntil(live.value.expiresAt)
      const person = yield* people.find(live.value.personId)
      if (Option.isNone(person)) return yield* new Unauthenticated()
      const memberships = yield* people.memberships(live.value.personId)
      // The workspace the request names; a route that names none acts in the person's first one.
      const membership = credential.workspace === undefined
        ? memberships[0]
        : memberships.find((m) => m.workspace.slug === credential.workspace)
      // Not a member there: the same answer as a workspace that does not exist, given by the route's check.
      const chosen = membership ?? memberships[0]
      if (chosen === undefined) return yield* new Unauthenticated()
      return new Principal({
        workspace: chosen.workspace,
        person: Option.some(person.value.person),
        role: chosen.role,
        scopes: [...sessionScopes],
        credential: { id: CredentialId.make(live.value.id), kind: "session" }
      })
    }).pipe(Effect.withSpan("Authenticator.session", { captureStackTrace: false }))

  // The CSRF check is a computation on what the request carries, so it stays outside the cache: every request that
  // changes something with a session is checked.
  const csrfRefused = (credential: PresentedCredential) =>
    credential.kind === "session" && credential.csrf !== undefined &&
    !sessions.csrfMatches(credential.secret, Redacted.value(credential.csrf))

  const cache = yield* CredentialCache.make()

  return Authenticator.of({
    authenticate: (credential) =>
      csrfRefused(credential) ? new Unauthenticated() : cache.cached(
        credential,
        credential.kind === "session" ? session(credential) : credential.kind === "bearer" ? bearer(credential) : keys.authenticate(credential)
      ),
    resourceMetadata: oauth.resourceMetadataUrl
  })
})

/**
 * Replaces core's Authenticator (which it uses for keys) in the application's context.
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Authenticator, never, Authenticator | Sessions | People | OAuthServer> = Layer.scoped(Authenticator, make)
