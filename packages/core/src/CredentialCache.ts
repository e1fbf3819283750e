/**
 * Successful authentications held for a few seconds, so a request with a credential seen a moment ago runs no
 * statement to know who it is (decision 0079). An entry is keyed by a digest of everything that decides the
 * Principal (the kind, the secret, the resource, the workspace the request names) and lives until the first of:
 * the time bound (`SERVICE_CREDENTIAL_CACHE_SECONDS`), the credential's own expiry, and a change to any table a
 * Principal is read from. Such a change clears every entry: triggers on those tables `pg_notify` the
 * {@link channel} and every node listens; the node that made the change also {@link signalChanged}s its own
 * cache after committing, so its next request sees the change even before its own notification arrives. Failed
 * authentications are never held.
 *
 * @since 0.1.0
 */
import { Notifications } from "./Notifications.js"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import type { Unauthenticated } from "./AuthError.js"
import type { PresentedCredential } from "./Authenticator.js"
import type { Principal } from "./Principal.js"

/** The notification channel the credential tables' triggers use. @since 0.1.0 @category constants */
export const channel = "service_credentials"

/**
 * How long a successful authentication is held: `SERVICE_CREDENTIAL_CACHE_SECONDS`, default 5; 0 holds none.
 * Also the longest a revocation can take to reach a node whose notification connection is lost.
 *
 * @since 0.1.0 @category config
 */
export const secondsConfig: Config.Config<number> = Config.number("SERVICE_CREDENTIAL_CACHE_SECONDS").pipe(
  Config.withDefault(5),
  Config.validate({ message: "SERVICE_CREDENTIAL_CACHE_SECONDS must be 0 or more", validation: (n) => n >= 0 })
)

/**
 * The instant (epoch milliseconds) a lookup found the credential valid until, reported by the adapters that know
 * it (a key's or token's `expires_at`, a session's expiry) through {@link validUntil}.
 */
class ValidUntil extends Context.Tag("@service/core/CredentialCache/ValidUntil")<ValidUntil, { at: number }>() {}

/**
 * Tells the cache around this lookup, when there is one, that the credential stops being valid at `at`: the
 * entry is not served past it.
 *
 * @since 0.1.0 @category combinators
 */
export const validUntil = (at: Date | null): Effect.Effect<void> =>
  at === null ? Effect.void : Effect.serviceOption(ValidUntil).pipe(
    Effect.map(Option.map((holder) => {
      holder.at = Math.min(holder.at, at.getTime())
    }))
  )

/**
 * Clears this process's credential caches now: for a change this process has just committed to a table a
 * Principal is read from. Other nodes learn of it from the triggers' notification.
 *
 * @since 0.1.0 @category combinators
 */
export const signalChanged = (why: string): Effect.Effect<void> => Effect.flatMap(signaller, (signal) => signal(why))

/**
 * {@link signalChanged} bound to the {@link Notifications} of the context it is built in: for a service that
 * signals from code run outside that context (an HTTP handler, oidc-provider's adapter).
 *
 * @since 0.1.0 @category constructors
 */
export const signaller: Effect.Effect<(why: string) => Effect.Effect<void>> = Effect.map(
  Effect.serviceOption(Notifications),
  Option.match({
    onNone: () => () => Effect.void,
    onSome: (notifications) => (why: string) => notifications.signal(channel, why)
  })
)

const digest = (credential: PresentedCredential): string =>
  createHash("sha256")
    .update(
      JSON.stringify([credential.kind, Redacted.value(credential.secret), credential.resource ?? null, credential.workspace ?? null])
    )
    .digest("base64url")

// Enough for every live credential of a busy node; past it the oldest entries are dropped.
const capacity = 10_000

/**
 * A cache around an authentication lookup. Without a {@link Notifications} service (a test that gives only a
 * SqlClient) nothing is held, since nothing would tell it of a revocation.
 *
 * @since 0.1.0 @category constructors
 */
export const make = (options: { readonly seconds?: number | undefined } = {}): Effect.Effect<
  {
    readonly cached: (
      credential: PresentedCredential,
      lookup: Effect.Effect<Principal, Unauthenticated>
    ) => Effect.Effect<Principal, Unauthenticated>
    /** How many lookups went to the database (misses), for tests and figures. */
    readonly misses: () => number
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const seconds = options.seconds ?? (yield* Effect.orDie(secondsConfig))
    const notifications = yield* Effect.serviceOption(Notifications)
    const entries = new Map<string, { readonly principal: Principal; readonly until: number }>()
    // Bumped by every change: a lookup that ran across a change may have read the old state, so it is not kept.
    let generation = 0
    let misses = 0
    const clear = () => {
      generation++
      entries.clear()
    }
    if (seconds > 0 && Option.isSome(notifications)) yield* notifications.value.subscribe(channel, clear)
    const enabled = seconds > 0 && Option.isSome(notifications)

    const cached = (credential: PresentedCredential, lookup: Effect.Effect<Principal, Unauthenticated>) =>
      Effect.gen(function*() {
        if (!enabled) return yield* lookup
        // Not hearing notifications (the LISTEN connection is down): a revocation elsewhere would go unheard, so
        // nothing is served from the cache or kept in it until it is back (decision 0096).
        if (Option.isSome(notifications) && !(yield* notifications.value.status).listening) {
          if (entries.size > 0) clear()
          return yield* lookup
        }
        const key = digest(credential)
        const now = yield* Clock.currentTimeMillis
        const hit = entries.get(key)
        if (hit !== undefined && hit.until > now) return hit.principal
        if (hit !== undefined) entries.delete(key)
        misses++
        const started = generation
        const holder = { at: now + seconds * 1000 }
        const principal = yield* lookup.pipe(Effect.provideService(ValidUntil, holder))
        if (generation === started && holder.at > now) {
          if (entries.size >= capacity) {
            const oldest = entries.keys().next()
            if (oldest.done !== true) entries.delete(oldest.value)
          }
          entries.set(key, { principal, until: holder.at })
        }
        return principal
      })

    return { cached, misses: () => misses }
  })
