/**
 * The storage adapter oidc-provider calls (a class per model), over the project's SqlClient: one table,
 * `identity.oauth_models`, on PGlite and PostgreSQL alike. Bearer secrets (access and refresh tokens, codes) are
 * stored by their SHA-256 only. `consume` is one conditional UPDATE, so of two requests racing with one refresh
 * token or code exactly one passes and the other revokes the whole grant, as a sequential reuse does. A revoked
 * grant leaves a tombstone that later token writes and every token lookup respect.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as CredentialCache from "@service/core/CredentialCache"
import * as StoredText from "@service/core/Text"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import type { Adapter, AdapterConstructor, AdapterPayload } from "oidc-provider"
import type * as OidcProvider from "oidc-provider"
import * as OAuthLimits from "./oauthLimits.js"

const hashedModels = new Set(["AccessToken", "RefreshToken", "AuthorizationCode", "ClientCredentials"])

/** How a bearer secret is stored and looked up. */
export const tokenHash = (value: string): string => `sha256:${createHash("sha256").update(value, "utf8").digest("base64url")}`

// oidc-provider's own payloads, written by this adapter: an object is all there is to check.
const Payload = Schema.declare((value: unknown): value is AdapterPayload => typeof value === "object" && value !== null && !Array.isArray(value))

const Row = Schema.Struct({ payload: Payload, consumed_at: Schema.NullOr(Schema.DateFromSelf) })
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))
const GrantRow = Schema.Array(Schema.Struct({ grant_id: Schema.NullOr(Schema.String) }))

/** Deletes every row of a grant and leaves a tombstone for as long as a refresh token of it could live. */
export const revokeGrant = (grantId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO identity.oauth_models (model, id, payload, expires_at)
      VALUES ('RevokedGrant', ${grantId}, '{}'::jsonb, now() + interval '31 days') ON CONFLICT (model, id) DO NOTHING`
    yield* sql`DELETE FROM identity.oauth_models WHERE grant_id = ${grantId}`
    yield* sql`DELETE FROM identity.oauth_models WHERE model = 'Grant' AND id = ${grantId}`
    yield* sql`UPDATE identity.oauth_grants SET revoked_at = now() WHERE grant_id = ${grantId} AND revoked_at IS NULL`
    // Each statement above has committed: this process's credential cache forgets the grant's tokens now.
    yield* CredentialCache.signalChanged("grant revoked")
  }).pipe(Effect.orDie)

/** The adapter class for `configuration.adapter`, running its SQL on `runtime`; `errors` are the library's. */
export const make = (runtime: Runtime.Runtime<SqlClient.SqlClient>, errors: typeof OidcProvider.errors): AdapterConstructor => {
  const run = Runtime.runPromise(runtime)

  return class OAuthStore implements Adapter {
    readonly model: string
    readonly hashed: boolean

    constructor(model: string) {
      this.model = model
      this.hashed = hashedModels.has(model)
    }

    key(id: string): string {
      return this.hashed ? tokenHash(id) : id
    }

    revive(rows: ReadonlyArray<typeof Row.Type>, id?: string): AdapterPayload | undefined {
      const row = rows[0]
      if (row === undefined) return undefined
      return {
        ...row.payload,
        ...(this.hashed && id !== undefined ? { jti: id } : {}),
        ...(row.consumed_at === null ? {} : { consumed: Math.floor(row.consumed_at.getTime() / 1000) })
      }
    }

    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      // What PostgreSQL cannot store (a NUL, a lone surrogate: a client_name sent with `\u0000`) is the sender's
      // error, answered as the provider answers bad metadata or a bad request, never a 500.
      const unstorable = StoredText.unstorableText(id) ?? Option.getOrUndefined(Option.map(StoredText.inspect(payload), (f) => f.reason))
      if (unstorable !== undefined) {
        return Promise.reject(
          this.model === "Client"
            ? new errors.InvalidClientMetadata("client metadata holds text that cannot be stored (a NUL or a lone surrogate)")
            : new errors.InvalidRequest("the request holds text that cannot be stored (a NUL or a lone surrogate)")
        )
      }
      const { jti: _jti, ...withoutJti } = payload
      const stored = this.hashed ? withoutJti : payload
      const grantId = typeof payload.grantId === "string" ? payload.grantId : null
      return run(Effect.gen(this, function*() {
        const sql = yield* SqlClient.SqlClient
        const now = yield* Clock.currentTimeMillis
        // A registered client lives a day until someone allows it; its first grant keeps it (decision 0095).
        const lifetime = typeof expiresIn === "number" ? expiresIn : this.model === "Client" ? OAuthLimits.unusedClientSeconds : undefined
        const expiresAt = lifetime === undefined ? null : new Date(now + lifetime * 1000)
        if (this.model === "Grant" && typeof payload.clientId === "string") {
          yield* sql`UPDATE identity.oauth_models SET expires_at = NULL WHERE model = 'Client' AND id = ${payload.clientId}`
        }
        // A token of a revoked grant is never written: a request that passed the checks just before the revocation
        // does not leave a live token behind.
        yield* sql`
          INSERT INTO identity.oauth_models (model, id, payload, grant_id, user_code, uid, expires_at, consumed_at)
          SELECT ${this.model}, ${this.key(id)}, ${JSON.stringify(stored)}::jsonb, ${grantId}::text, ${payload.userCode ?? null}::text,
                 ${payload.uid ?? null}::text, ${expiresAt}::timestamptz, NULL
          WHERE ${grantId}::text IS NULL OR NOT EXISTS (
            SELECT 1 FROM identity.oauth_models WHERE model = 'RevokedGrant' AND id = ${grantId}::text)
          ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
            user_code = EXCLUDED.user_code, uid = EXCLUDED.uid, consumed_at = NULL,
            expires_at = CASE WHEN EXCLUDED.model = 'Client' AND identity.oauth_models.expires_at IS NULL THEN NULL ELSE EXCLUDED.expires_at END`
      }).pipe(Effect.orDie))
    }

    /** The live row of this model whose `column` is `value`. */
    findBy(column: "id" | "user_code" | "uid", value: string, id?: string): Promise<AdapterPayload | undefined> {
      // No row holds text PostgreSQL cannot store (`client_id=%00`): nothing is found, without asking.
      if (StoredText.unstorableText(value) !== undefined) return Promise.resolve(undefined)
      return run(Effect.gen(this, function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* decodeRows(yield* sql`SELECT payload, consumed_at FROM identity.oauth_models
          WHERE model = ${this.model} AND ${sql(column)} = ${value} AND (expires_at IS NULL OR expires_at > now())`)
        return this.revive(rows, id)
      }).pipe(Effect.orDie))
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      // The token endpoint reads a device code on every poll: one sooner than its interval is told to slow down.
      if (this.model === "DeviceCode" && OAuthLimits.polling.getStore() === true && StoredText.unstorableText(id) === undefined) {
        return run(OAuthLimits.tooSoon(this.key(id))).then((soon) => {
          if (soon) throw new errors.SlowDown()
          return this.findBy("id", this.key(id), id)
        })
      }
      return this.findBy("id", this.key(id), id)
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findBy("user_code", userCode)
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findBy("uid", uid)
    }

    consume(id: string): Promise<void> {
      return run(Effect.gen(this, function*() {
        const sql = yield* SqlClient.SqlClient
        const claimed = yield* sql`UPDATE identity.oauth_models SET consumed_at = now()
          WHERE model = ${this.model} AND id = ${this.key(id)} AND consumed_at IS NULL RETURNING grant_id`
        if (claimed.length === 1) return Option.none<string>()
        const existing = yield* Schema.decodeUnknown(GrantRow)(
          yield* sql`SELECT grant_id FROM identity.oauth_models WHERE model = ${this.model} AND id = ${this.key(id)}`
        )
        const grantId = existing[0]?.grant_id ?? null
        if (grantId !== null) yield* revokeGrant(grantId)
        return Option.some("lost")
      }).pipe(Effect.orDie)).then((lost) => {
        if (Option.isSome(lost)) throw new errors.InvalidGrant("grant request is invalid")
      })
    }

    destroy(id: string): Promise<void> {
      // The provider destroys a Grant when it revokes one (refresh token reuse, a replayed code, revocation).
      if (this.model === "Grant") return run(revokeGrant(id))
      return run(Effect.gen(this, function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM identity.oauth_models WHERE model = ${this.model} AND id = ${this.key(id)}`
        if (this.model === "AccessToken") yield* CredentialCache.signalChanged("token revoked")
      }).pipe(Effect.orDie))
    }

    revokeByGrantId(grantId: string): Promise<void> {
      return run(Effect.gen(this, function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM identity.oauth_models WHERE model = ${this.model} AND grant_id = ${grantId}`
        yield* CredentialCache.signalChanged("tokens revoked")
      }).pipe(Effect.orDie))
    }
  }
}
