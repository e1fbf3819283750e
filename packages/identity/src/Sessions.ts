/**
 * Signed-in sessions. The cookie carries a random secret; only its SHA-256 is stored, with the person and the
 * expiry (14 days from sign-in). A request that changes something with a session must also carry the session's
 * CSRF token, an HMAC of the secret that only a page the server rendered (or `GET /session`) can know.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as CredentialCache from "@service/core/CredentialCache"
import { PersonId } from "@service/core/Ids"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** How long a session lasts after sign-in. @since 0.1.0 @category constants */
export const lifetimeSeconds = 14 * 24 * 60 * 60

/** The session cookie's name over plain http (local development) and behind https (`__Host-`: host-only, Secure, path /). */
export const cookieName = "service_session"
/** @since 0.1.0 @category constants */
export const secureCookieName = "__Host-service_session"

/** @since 0.1.0 @category models */
export interface Started {
  readonly id: string
  readonly secret: Redacted.Redacted<string>
  readonly csrf: string
  readonly expiresAt: Date
}

/** @since 0.1.0 @category models */
export interface Live {
  readonly id: string
  readonly personId: PersonId
  readonly expiresAt: Date
}

/**
 * @since 0.1.0 @category tags
 */
export class Sessions extends Context.Tag("@service/identity/Sessions")<
  Sessions,
  {
    readonly start: (personId: PersonId) => Effect.Effect<Started>
    /** The live session a secret opens, if any (unknown, ended and expired ones alike give none). */
    readonly open: (secret: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Live>>
    /** The CSRF token of a session secret. */
    readonly csrfOf: (secret: Redacted.Redacted<string>) => string
    /** Whether `token` is the session's CSRF token (constant time). */
    readonly csrfMatches: (secret: Redacted.Redacted<string>, token: string) => boolean
    readonly end: (secret: Redacted.Redacted<string>) => Effect.Effect<void>
    /** Ends every session of a person (removed from a workspace, password changed); how many. */
    readonly endAllOf: (personId: PersonId) => Effect.Effect<number>
  }
>() {}

const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

const csrfOf = (secret: Redacted.Redacted<string>) =>
  createHmac("sha256", Redacted.value(secret)).update("service csrf v1").digest("base64url")

// A session's last use is written at most this often, not on every request.
const seenEveryMillis = 5 * 60_000

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const changed = yield* CredentialCache.signaller

  const start = (personId: PersonId) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const id = `ses_${randomBytes(12).toString("hex")}`
      const secret = `svc_ses_${randomBytes(32).toString("base64url")}`
      const expiresAt = new Date(now + lifetimeSeconds * 1000)
      yield* sql`INSERT INTO identity.sessions (id, secret_sha256, person_id, created_at, last_seen_at, expires_at)
        VALUES (${id}, ${sha256(secret)}, ${personId}, ${new Date(now)}, ${new Date(now)}, ${expiresAt})`.pipe(Effect.orDie)
      return { id, secret: Redacted.make(secret), csrf: csrfOf(Redacted.make(secret)), expiresAt }
    })

  const SessionRow = Schema.Struct({
    id: Schema.String,
    person_id: PersonId,
    last_seen_at: Schema.DateFromSelf,
    expires_at: Schema.DateFromSelf
  })

  const open = (secret: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql`SELECT id, person_id, last_seen_at, expires_at FROM identity.sessions
        WHERE secret_sha256 = ${sha256(Redacted.value(secret))} AND revoked_at IS NULL AND expires_at > ${new Date(now)}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(SessionRow))),
        Effect.orDie
      )
      const row = rows[0]
      if (row === undefined) return Option.none<Live>()
      if (now - row.last_seen_at.getTime() > seenEveryMillis) {
        yield* sql`UPDATE identity.sessions SET last_seen_at = ${new Date(now)} WHERE id = ${row.id}`.pipe(Effect.orDie)
      }
      return Option.some<Live>({ id: row.id, personId: row.person_id, expiresAt: row.expires_at })
    }).pipe(Effect.withSpan("Sessions.open", { captureStackTrace: false }))

  const csrfMatches = (secret: Redacted.Redacted<string>, token: string) => {
    const want = Buffer.from(csrfOf(secret))
    const got = Buffer.from(token)
    return want.length === got.length && timingSafeEqual(want, got)
  }

  // Signing out is no operation (the kernel signals after those): this process's credential cache forgets now.
  const end = (secret: Redacted.Redacted<string>) =>
    sql`UPDATE identity.sessions SET revoked_at = now() WHERE secret_sha256 = ${sha256(Redacted.value(secret))} AND revoked_at IS NULL`.pipe(
      Effect.zipRight(changed("session ended")),
      Effect.orDie
    )

  const endAllOf = (personId: PersonId) =>
    sql`UPDATE identity.sessions SET revoked_at = now() WHERE person_id = ${personId} AND revoked_at IS NULL RETURNING id`.pipe(
      Effect.tap(changed("sessions ended")),
      Effect.map((rows) => rows.length),
      Effect.orDie
    )

  return Sessions.of({ start, open, csrfOf, csrfMatches, end, endAllOf })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Sessions, never, SqlClient.SqlClient> = Layer.effect(Sessions, make)
