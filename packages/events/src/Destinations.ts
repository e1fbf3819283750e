/**
 * Where catalog events go. An MCP client's subscription (`events/subscribe`) is a Destination created by an agent
 * for the person behind it: one event, optionally narrowed to a subject, delivered by signed webhook to a public
 * https address that passed a challenge. Its id is derived from its key (the workspace and person, the address,
 * the event and its arguments), so subscribing again with the same values renews the same subscription: a new
 * secret replaces the old one and both sign for 24 hours, and a disabled, expired or stopped one is active again.
 *
 * Events reach a Destination through the ledger: `EventLedger.record` writes one delivery per matching active
 * Destination in the entry's own transaction (decision 0060), and `Delivery` sends them.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import type { Principal } from "@service/core/Principal"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { AddressGuard } from "@service/core/AddressGuard"
import * as Catalog from "./Catalog.js"
import * as WebhookPost from "./WebhookPost.js"
import { isValidSecret } from "./WebhookSignature.js"

// -----------------------------------------------------------------------------
// Limits
// -----------------------------------------------------------------------------

/** A subscription's lifetime without `ttlMs`. @since 0.1.0 @category limits */
export const DEFAULT_TTL: Duration.Duration = Duration.days(7)
/** A subscription's lifetime with `ttlMs: null` (no expiry asked, a finite one granted). @since 0.1.0 @category limits */
export const MAX_TTL: Duration.Duration = Duration.days(30)
/** The shortest lifetime granted; shorter asks are raised to it. @since 0.1.0 @category limits */
export const MIN_TTL: Duration.Duration = Duration.hours(1)
/** How long a verified address is not challenged again, and how long the previous secret still signs. @since 0.1.0 @category limits */
export const GRACE: Duration.Duration = Duration.hours(24)

/**
 * The lifetime granted for an asked `ttlMs`: omitted 7 days, null 30 days, a number clamped to 1 hour through 30
 * days.
 *
 * @since 0.1.0 @category limits
 */
export const grantedTtl = (ttlMs: number | null | undefined): Duration.Duration =>
  ttlMs === undefined
    ? DEFAULT_TTL
    : ttlMs === null
    ? MAX_TTL
    : Duration.clamp(Duration.millis(Math.max(0, Math.floor(ttlMs))), { minimum: MIN_TTL, maximum: MAX_TTL })

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export const State = Schema.Literal("active", "disabled", "expired", "stopped", "paused")
/** @since 0.1.0 @category models */
export type State = typeof State.Type

/** What `events/subscribe` asks, before validation (the MCP method decodes only its outline). @since 0.1.0 @category models */
export interface SubscribeRequest {
  readonly name: string
  readonly arguments: unknown
  readonly delivery: { readonly mode: string; readonly url: string; readonly secret: Redacted.Redacted<string> }
  readonly ttlMs?: number | null | undefined
}

/** What `events/unsubscribe` names. @since 0.1.0 @category models */
export interface UnsubscribeRequest {
  readonly name: string
  readonly arguments: unknown
  readonly url: string
}

/** `events/subscribe`'s answer. @since 0.1.0 @category models */
export interface Subscribed {
  readonly id: string
  readonly refreshBefore: string
  readonly cursor: null
  readonly truncated: boolean
}

/**
 * Why a subscription was refused. `reason` is the spec's `data.reason`: `unknown_event`, `invalid_arguments`,
 * `secret_invalid` and `delivery_mode` are invalid params; `challenge_failed`, `timeout` and `url_rejected` are
 * the address's; `person_required` is a credential without a person (an API key) or a test workspace.
 *
 * @since 0.1.0 @category errors
 */
export class SubscribeRefused extends Data.TaggedError("SubscribeRefused")<{
  readonly reason:
    | "unknown_event"
    | "invalid_arguments"
    | "secret_invalid"
    | "delivery_mode"
    | "challenge_failed"
    | "timeout"
    | "url_rejected"
    | "person_required"
  readonly message: string
}> {}

/** What an owner or admin asks for a Destination. @since 0.1.0 @category models */
export interface DestinationRequest {
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly subject?: string | undefined
  readonly description?: string | undefined
}

/** A Destination just created: its id and its signing secret, shown once. @since 0.1.0 @category models */
export interface CreatedDestination {
  readonly id: string
  readonly secret: Redacted.Redacted<string>
}

/**
 * Why a Destination operation was refused: an event name not in the catalog, an address the guard refuses, no
 * such Destination, or a test workspace (which delivers nothing).
 *
 * @since 0.1.0 @category errors
 */
export class DestinationRefused extends Data.TaggedError("DestinationRefused")<{
  readonly reason: "unknown_event" | "url_rejected" | "not_found" | "test_workspace"
  readonly message: string
}> {}

/** The message of a `not_found` refusal. @since 0.1.0 @category errors */
export const notFoundMessage = (id: string): string => `No subscription or Destination ${id} in this workspace.`

/** @since 0.1.0 @category tags */
export class Destinations extends Context.Tag("@service/events/Destinations")<Destinations, {
  /** Creates or renews the caller's subscription (verifying the address unless verified in the last 24 hours). */
  readonly subscribe: (principal: Principal, request: SubscribeRequest) => Effect.Effect<Subscribed, SubscribeRefused>
  /** Stops the caller's matching subscription, if any; its history stays. */
  readonly unsubscribe: (principal: Principal, request: UnsubscribeRequest) => Effect.Effect<void>
  /** The subscription id `subscribe` gives for these values (the same on every renewal). */
  readonly subscriptionId: (principal: Principal, name: string, args: Catalog.ArgumentsType, url: string) => Effect.Effect<string>
  /** Creates a person's Destination with a new secret (authorization is the caller's: owner or admin). */
  readonly create: (principal: Principal, request: DestinationRequest) => Effect.Effect<CreatedDestination, DestinationRefused>
  /** Stops a Destination or subscription of the workspace: pending deliveries stop, history stays. */
  readonly stop: (workspaceId: string, id: string) => Effect.Effect<void, DestinationRefused>
  /**
   * Schedules again, as new deliveries with the same `webhook-id`s, every ledger entry of `[from, to)` the
   * Destination matches; answers how many.
   */
  readonly replay: (workspaceId: string, id: string, window: { readonly from: string; readonly to: string }) => Effect.Effect<number, DestinationRefused>
}>() {}

// -----------------------------------------------------------------------------
// Implementation
// -----------------------------------------------------------------------------

const SECRET_PURPOSE = "events.destination-secret"

const decodeArguments = Schema.decodeUnknownEither(Catalog.Arguments)

/** Canonical JSON: object keys sorted, so the same arguments give the same key in any order. */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

const ExistingRow = Schema.Struct({ id: Schema.String, secret: Schema.String, state: State })
const decodeExisting = Schema.decodeUnknown(Schema.Array(ExistingRow))
const decodeVerified = Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number })))

const iso = (millis: number): string => new Date(millis).toISOString()

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const crypto = yield* Crypto
  const guard = yield* AddressGuard

  // The person behind the credential in its workspace: a subscription belongs to them, whichever token they use.
  const ownerKey = (principal: Principal): Option.Option<string> =>
    Option.map(principal.person, (person) => `${principal.workspace.id}:${person.id}`)

  const idFor = (owner: string, name: string, args: Catalog.ArgumentsType, url: string) =>
    Effect.map(crypto.fingerprint("events.subscription", canonical({ owner, url, name, arguments: args })), (hex) => `sub_${hex}`)

  const subscriptionId = (principal: Principal, name: string, args: Catalog.ArgumentsType, url: string) =>
    idFor(Option.getOrElse(ownerKey(principal), () => `${principal.workspace.id}:${principal.credential.id}`), name, args, url)

  const refuse = (reason: SubscribeRefused["reason"], message: string) => Effect.fail(new SubscribeRefused({ reason, message }))

  const validate = (principal: Principal, name: string, args: unknown) =>
    Effect.gen(function*() {
      const owner = ownerKey(principal)
      // A person through their own client: API keys (even a person's CLI key) and test workspaces cannot subscribe.
      if (Option.isNone(owner) || principal.credential.kind !== "bearer" || principal.workspace.isTest) {
        return yield* refuse(
          "person_required",
          principal.workspace.isTest
            ? "Test workspaces deliver nothing: subscribe from the real workspace."
            : "Subscribing needs a person signed in through their MCP client; an API key cannot subscribe."
        )
      }
      if (!Catalog.isCatalogType(name)) {
        return yield* refuse("unknown_event", `${JSON.stringify(name).slice(0, 80)} is not a catalog event; events/list names them.`)
      }
      const decoded = decodeArguments(args ?? {})
      if (decoded._tag === "Left") {
        return yield* refuse("invalid_arguments", "arguments take only an optional subject of the form <kind>/<id>, e.g. opportunity/<id>.")
      }
      return { owner: owner.value, args: decoded.right }
    })

  const verifiedRecently = (owner: string, url: string, now: number) =>
    sql`SELECT count(*)::int AS n FROM events.verified_addresses
      WHERE owner_key = ${owner} AND url = ${url} AND verified_at > ${iso(now - Duration.toMillis(GRACE))}::timestamptz`.pipe(
      Effect.flatMap(decodeVerified),
      Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
      Effect.orDie
    )

  const subscribe = (principal: Principal, request: SubscribeRequest) =>
    Effect.gen(function*() {
      const { owner, args } = yield* validate(principal, request.name, request.arguments)
      if (request.delivery.mode !== "webhook") {
        return yield* refuse("delivery_mode", "Only webhook delivery is offered: delivery.mode must be \"webhook\".")
      }
      const secret = Redacted.value(request.delivery.secret)
      if (!isValidSecret(secret)) {
        return yield* refuse("secret_invalid", "delivery.secret must be whsec_ followed by standard base64 of 24 to 64 random bytes.")
      }
      const url = request.delivery.url
      yield* guard.check(url).pipe(Effect.catchTag("UrlRejected", (error) => refuse("url_rejected", error.message)))
      const id = yield* idFor(owner, request.name, args, url)
      const now = yield* Clock.currentTimeMillis
      if (!(yield* verifiedRecently(owner, url, now))) {
        const outcome = yield* WebhookPost.verifyEndpoint({ url, secret: request.delivery.secret, subscriptionId: id }).pipe(
          Effect.provideService(AddressGuard, guard)
        )
        const failed = WebhookPost.failureReason(outcome)
        if (Option.isSome(failed)) {
          const detail = outcome._tag === "ChallengeFailed" ? outcome.detail : outcome._tag === "UrlRejected" ? outcome.message : ""
          return yield* refuse(
            failed.value,
            failed.value === "timeout"
              ? "The address did not answer the verification challenge within 10 seconds."
              : `The address failed verification: ${detail}`
          )
        }
        const at = yield* Clock.currentTimeMillis
        yield* sql`INSERT INTO events.verified_addresses (owner_key, url, verified_at) VALUES (${owner}, ${url}, ${iso(at)}::timestamptz)
          ON CONFLICT (owner_key, url) DO UPDATE SET verified_at = EXCLUDED.verified_at`.pipe(Effect.orDie)
      }
      const at = yield* Clock.currentTimeMillis
      const expires = iso(at + Duration.toMillis(grantedTtl(request.ttlMs)))
      const sealed = yield* crypto.seal(SECRET_PURPOSE, secret)
      yield* sql.withTransaction(Effect.gen(function*() {
        const locked = sql`SELECT id, secret, state FROM events.destinations WHERE id = ${id} FOR UPDATE`.pipe(
          Effect.flatMap(decodeExisting),
          Effect.orDie
        )
        let existing = (yield* locked)[0]
        if (existing === undefined) {
          const inserted = yield* sql`INSERT INTO events.destinations (id, workspace_id, kind, owner_key, created_by, url, events, subject, secret,
              state, state_at, expires_at, refresh_before, created_at, updated_at)
            VALUES (${id}, ${principal.workspace.id}, 'subscription', ${owner}, ${owner.slice(principal.workspace.id.length + 1)}, ${url},
              ARRAY[${request.name}]::text[], ${args.subject ?? null}, ${sealed}, 'active', ${iso(at)}::timestamptz,
              ${expires}::timestamptz, ${expires}::timestamptz, ${iso(at)}::timestamptz, ${iso(at)}::timestamptz)
            ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(Effect.orDie)
          if (inserted.length > 0) return
          // The same subscribe, running at once, inserted it first (no row to lock above): renew that one.
          existing = (yield* locked)[0]
          if (existing === undefined) return yield* Effect.dieMessage(`Destinations: ${id} neither inserted nor found`)
        }
        // A renewal: a different secret replaces the old one, which still signs for 24 hours.
        const previous = yield* crypto.open(SECRET_PURPOSE, existing.secret).pipe(
          Effect.map((bytes) => new TextDecoder().decode(bytes)),
          Effect.orDie
        )
        const rotated = previous !== secret
        yield* sql`UPDATE events.destinations SET secret = ${sealed},
            previous_secret = ${rotated ? existing.secret : sql.literal("previous_secret")},
            previous_until = ${rotated ? sql`${iso(at + Duration.toMillis(GRACE))}::timestamptz` : sql.literal("previous_until")},
            ${
          // A paused one stays in the breaker's hands (decision 0061): a renewal proves no delivery gets through.
          existing.state === "paused"
            ? sql.literal("state = state")
            : sql`state = 'active', state_reason = NULL, state_at = ${
              existing.state === "active" ? sql.literal("state_at") : sql`${iso(at)}::timestamptz`
            }, consecutive_failures = 0, failing_since = NULL`},
            expires_at = ${expires}::timestamptz, refresh_before = ${expires}::timestamptz, updated_at = ${iso(at)}::timestamptz
          WHERE id = ${id}`.pipe(Effect.orDie)
      })).pipe(Effect.orDie)
      return { id, refreshBefore: expires, cursor: null, truncated: false }
    }).pipe(Effect.withSpan("Destinations.subscribe", { captureStackTrace: false, attributes: { name: request.name } }))

  const unsubscribe = (principal: Principal, request: UnsubscribeRequest) =>
    Effect.gen(function*() {
      const owner = ownerKey(principal)
      const decoded = decodeArguments(request.arguments ?? {})
      // Nothing can match what could not have been subscribed: the answer is the same empty object.
      if (Option.isNone(owner) || decoded._tag === "Left") return
      const id = yield* idFor(owner.value, request.name, decoded.right, request.url)
      const at = yield* Clock.currentTimeMillis
      yield* sql`UPDATE events.destinations SET state = 'stopped', state_reason = 'unsubscribed', state_at = ${iso(at)}::timestamptz,
          updated_at = ${iso(at)}::timestamptz
        WHERE id = ${id} AND workspace_id = ${principal.workspace.id} AND state <> 'stopped'`.pipe(Effect.orDie)
    }).pipe(Effect.withSpan("Destinations.unsubscribe", { captureStackTrace: false }))

  const refuseDestination = (reason: DestinationRefused["reason"], message: string) => Effect.fail(new DestinationRefused({ reason, message }))

  const create = (principal: Principal, request: DestinationRequest) =>
    Effect.gen(function*() {
      if (principal.workspace.isTest) return yield* refuseDestination("test_workspace", "Test workspaces deliver nothing.")
      const unknown = request.events.filter((name) => !Catalog.isCatalogType(name))
      if (unknown.length > 0) return yield* refuseDestination("unknown_event", `Not catalog events: ${unknown.join(", ").slice(0, 200)}.`)
      yield* guard.check(request.url).pipe(Effect.catchTag("UrlRejected", (error) => refuseDestination("url_rejected", error.message)))
      const secret = yield* crypto.webhookSecret()
      const sealed = yield* crypto.seal(SECRET_PURPOSE, Redacted.value(secret))
      const id = `dst_${randomBytes(12).toString("hex")}`
      const at = iso(yield* Clock.currentTimeMillis)
      const person = Option.getOrNull(Option.map(principal.person, (p) => p.id))
      yield* sql`INSERT INTO events.destinations (id, workspace_id, kind, owner_key, created_by, description, url, events, subject, secret,
          state, state_at, created_at, updated_at)
        VALUES (${id}, ${principal.workspace.id}, 'destination', ${`${principal.workspace.id}:${person ?? principal.credential.id}`}, ${person},
          ${request.description ?? null}, ${request.url},
          ARRAY(SELECT e.value FROM jsonb_array_elements_text(${JSON.stringify([...new Set(request.events)])}::jsonb) AS e(value))::text[],
          ${request.subject ?? null}, ${sealed}, 'active', ${at}::timestamptz, ${at}::timestamptz, ${at}::timestamptz)`.pipe(Effect.orDie)
      return { id, secret }
    }).pipe(Effect.withSpan("Destinations.create", { captureStackTrace: false }))

  const stop = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const at = iso(yield* Clock.currentTimeMillis)
      const rows = yield* sql`UPDATE events.destinations SET state = 'stopped', state_reason = 'stopped by a person', state_at = ${at}::timestamptz,
          updated_at = ${at}::timestamptz
        WHERE workspace_id = ${workspaceId} AND id = ${id} RETURNING id`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* refuseDestination("not_found", notFoundMessage(id))
    })

  const replay = (workspaceId: string, id: string, window: { readonly from: string; readonly to: string }) =>
    Effect.gen(function*() {
      const at = iso(yield* Clock.currentTimeMillis)
      // Replays are new deliveries of the same events (same webhook-id, so receivers deduplicate), due at once.
      const found = yield* sql`SELECT state FROM events.destinations WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(Effect.orDie)
      if (found.length === 0) return yield* refuseDestination("not_found", notFoundMessage(id))
      const rows = yield* sql`INSERT INTO events.deliveries (id, destination_id, workspace_id, ledger_id, replay, created_at)
        SELECT 'dlv_' || md5(random()::text || l.id::text || clock_timestamp()::text)::text, d.id, d.workspace_id, l.id, true, ${at}::timestamptz
        FROM events.destinations d JOIN events.ledger l ON l.workspace_id = d.workspace_id AND l.name = ANY(d.events)
          AND (d.subject IS NULL OR l.subject = d.subject)
        WHERE d.workspace_id = ${workspaceId} AND d.id = ${id}
          AND l.occurred_at >= ${window.from}::timestamptz AND l.occurred_at < ${window.to}::timestamptz
        RETURNING id`.pipe(Effect.orDie)
      return rows.length
    }).pipe(Effect.withSpan("Destinations.replay", { captureStackTrace: false }))

  return Destinations.of({ subscribe, unsubscribe, subscriptionId, create, stop, replay })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Destinations, never, SqlClient.SqlClient | Crypto | AddressGuard> = Layer.effect(Destinations, make)
