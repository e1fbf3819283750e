/**
 * Limits on what anyone may ask of the OAuth server before signing in (issue 32 rows 12 and 13, decision 0095):
 * requests per client address and kind in a fixed window, counted in one statement on the shared database so every
 * node counts the same, and the device code polling interval (RFC 8628 3.5), checked where the provider reads a
 * device code for the token endpoint.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AsyncLocalStorage } from "node:async_hooks"

/** One kind of request and its allowance per window. */
export interface Limit {
  readonly kind: "registration" | "device_authorization" | "user_code"
  readonly hits: number
  readonly windowSeconds: number
}

export const registration: Limit = { kind: "registration", hits: 10, windowSeconds: 3600 }
export const deviceAuthorization: Limit = { kind: "device_authorization", hits: 30, windowSeconds: 3600 }
export const userCode: Limit = { kind: "user_code", hits: 20, windowSeconds: 600 }

/** Dynamically registered clients that were never allowed by anyone are forgotten after a day. */
export const unusedClientSeconds = 24 * 3600

/** The polling interval RFC 8628 assumes when the device authorization names none. */
export const defaultPollSeconds = 5

/**
 * Counts one request of `limit.kind` from `address`; the seconds to wait when the window's allowance is spent.
 */
export const hit = (address: string, limit: Limit) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const rows = yield* sql`INSERT INTO identity.oauth_limits AS l (key, window_started_at, hits)
        VALUES (${`${limit.kind}:${address}`}, ${now}, 1)
        ON CONFLICT (key) DO UPDATE SET
          hits = CASE WHEN l.window_started_at <= ${now}::timestamptz - make_interval(secs => ${limit.windowSeconds}) THEN 1 ELSE l.hits + 1 END,
          window_started_at = CASE WHEN l.window_started_at <= ${now}::timestamptz - make_interval(secs => ${limit.windowSeconds})
            THEN ${now}::timestamptz ELSE l.window_started_at END
        RETURNING hits, window_started_at`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ hits: Schema.Number, window_started_at: Schema.DateFromSelf }))))
    )
    const row = rows[0]
    if (row === undefined || row.hits <= limit.hits) return Option.none<number>()
    return Option.some(Math.max(1, Math.ceil((row.window_started_at.getTime() + limit.windowSeconds * 1000 - now.getTime()) / 1000)))
  }).pipe(Effect.orDie)

/** Set while the provider answers the token endpoint: only there does reading a device code count as a poll. */
export const polling = new AsyncLocalStorage<true>()

/**
 * Records a poll of the device code stored under `id`; true when it came sooner than its interval allows, in which
 * case the interval grows by 5 s for every later poll (RFC 8628 3.5).
 */
export const tooSoon = (id: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const rows = yield* sql`WITH old AS (
          SELECT polled_at, coalesce(poll_interval, ${defaultPollSeconds}) AS every FROM identity.oauth_models
          WHERE model = 'DeviceCode' AND id = ${id} FOR UPDATE),
        judged AS (
          SELECT every, polled_at IS NOT NULL AND polled_at > ${now}::timestamptz - make_interval(secs => every) AS soon FROM old)
        UPDATE identity.oauth_models m SET polled_at = ${now},
          poll_interval = CASE WHEN judged.soon THEN judged.every + 5 ELSE judged.every END
        FROM judged WHERE m.model = 'DeviceCode' AND m.id = ${id}
        RETURNING judged.soon`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ soon: Schema.Boolean }))))
    )
    return rows[0]?.soon ?? false
  }).pipe(Effect.orDie)
