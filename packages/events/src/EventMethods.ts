/**
 * The MCP Events methods (SEP-3415 draft, webhook delivery, as the event-intake spec profiles it), served on the
 * MCP endpoint next to the tools for the credential's primary workspace:
 *
 * - `events/list`: the catalog's events (the spec's fourteen and the breaker's two) with `name`, `description`, `delivery`, `inputSchema` and
 *   `payloadSchema`; `subject` (`opportunity/<id>`) keeps the events of that kind of record.
 * - `events/subscribe`: `{name, arguments, delivery: {mode: "webhook", url, secret}, cursor: null, ttlMs}` answers
 *   `{id, refreshBefore, cursor: null, truncated: false}` once the address passed its challenge.
 * - `events/unsubscribe`: `{name, arguments, delivery: {url}}` answers `{}`, also when nothing matched.
 *
 * Errors: `-32602` with `data.reason` `unknown_event`, `invalid_arguments`, `secret_invalid` or `delivery_mode`;
 * `-32015` with `challenge_failed`, `timeout` or `url_rejected`; `-32012` with `person_required` for an API key
 * or a test workspace (decision 0060).
 *
 * @since 0.1.0
 */
import * as Catalog from "./Catalog.js"
import { Destinations, type SubscribeRefused } from "./Destinations.js"
import * as Method from "@service/core/Method"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

/** A callback failed or was refused (the design sketch's number, which the project spec uses). @since 0.1.0 @category constants */
export const callbackError = -32015

/** The caller may not subscribe (the design sketch's Forbidden). @since 0.1.0 @category constants */
export const forbidden = -32012

const Subject = Schema.String.pipe(Schema.pattern(/^[a-z_]+\/[A-Za-z0-9_-]{1,100}$/))

const refusal = (error: SubscribeRefused): Method.MethodError => {
  const code = error.reason === "challenge_failed" || error.reason === "timeout" || error.reason === "url_rejected"
    ? callbackError
    : error.reason === "person_required"
    ? forbidden
    : Method.invalidParams
  return new Method.MethodError({ code, message: error.message, data: { reason: error.reason } })
}

/** @since 0.1.0 @category methods */
export const list = Method.make({
  method: "events/list",
  // Other params (a pagination cursor) are tolerated: the whole catalog fits one page.
  params: Schema.Struct({ subject: Schema.optional(Subject) }),
  handler: (params) => {
    const kind = params.subject?.split("/")[0]
    const events = Catalog.events.filter((event) => kind === undefined || event.name.startsWith(`${kind}.`))
    return Effect.succeed({ events: events.map(Catalog.listing) })
  }
})

const Delivery = Schema.Struct({
  mode: Schema.String,
  url: Schema.String.pipe(Schema.maxLength(2048)),
  secret: Schema.String.pipe(Schema.maxLength(200))
})

/** @since 0.1.0 @category methods */
export const subscribe = Method.make({
  method: "events/subscribe",
  params: Schema.Struct({
    name: Schema.String.pipe(Schema.maxLength(200)),
    arguments: Schema.optional(Schema.Unknown),
    delivery: Delivery,
    // History is not replayed: only null (or nothing) is accepted.
    cursor: Schema.optional(Schema.Null),
    ttlMs: Schema.optional(Schema.NullOr(Schema.Number))
  }),
  handler: (params, principal) =>
    Effect.flatMap(Destinations, (destinations) =>
      destinations.subscribe(principal, {
        name: params.name,
        arguments: params.arguments ?? {},
        delivery: { mode: params.delivery.mode, url: params.delivery.url, secret: Redacted.make(params.delivery.secret) },
        ttlMs: params.ttlMs
      })).pipe(
        Effect.map((subscribed) => ({ ...subscribed })),
        Effect.mapError(refusal)
      )
})

/** @since 0.1.0 @category methods */
export const unsubscribe = Method.make({
  method: "events/unsubscribe",
  params: Schema.Struct({
    name: Schema.String.pipe(Schema.maxLength(200)),
    arguments: Schema.optional(Schema.Unknown),
    delivery: Schema.Struct({ url: Schema.String.pipe(Schema.maxLength(2048)) })
  }),
  handler: (params, principal) =>
    Effect.flatMap(Destinations, (destinations) =>
      destinations.unsubscribe(principal, { name: params.name, arguments: params.arguments ?? {}, url: params.delivery.url })).pipe(
        Effect.as({})
      )
})

/** Every MCP Events method, for `McpHandler.Options.methods`. @since 0.1.0 @category methods */
export const methods = [list, subscribe, unsubscribe] as const
