/**
 * The contact quote (decision 0063): what unlocking the contact research of selected CRM records would cost, free,
 * without calling any provider and without returning a contact coordinate.
 *
 * A quote reads the exact selection (record ids of one collection) and the workspace's balance, prices every
 * account (`SERVICE_CONTACT_UNLOCK_CREDITS` each, zero when already unlocked), and mints:
 *
 * - a `quote_token`, sealed, bound to the workspace, the caller, the sorted record ids and the total, valid 10
 *   minutes: the unlock recomputes the price and refuses before any spend when it no longer matches;
 * - an `idempotency_key`, which names the one unlock this quote may lead to, however often it is retried.
 *
 * @since 0.1.0
 */
import { Crypto } from "@service/core/Crypto"
import { Meter } from "@service/core/Meter"
import type { Principal } from "@service/core/Principal"
import type { Crm } from "@service/crm/Crm"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { type ContactsRefusal, refuse } from "./ContactsRefusal.js"
import { principalKey, select } from "./internal/selection.js"
import { plural } from "./internal/words.js"

/** How long a quote token is good for (the spec's 10 minutes). @since 0.1.0 @category constants */
export const QUOTE_TTL = Duration.minutes(10)

/** Accounts one quote may select, at most. @since 0.1.0 @category constants */
export const MAX_RECORDS = 100

/**
 * Credits one account's contact research costs: `SERVICE_CONTACT_UNLOCK_CREDITS`, default 5.
 *
 * @since 0.1.0 @category config
 */
export const priceConfig = Config.integer("SERVICE_CONTACT_UNLOCK_CREDITS").pipe(
  Config.withDefault(5),
  Config.validate({ message: "must be a whole number of credits, 0 or more", validation: (n) => n >= 0 }),
  Config.withDescription("Insight credits one account's contact research costs on unlock.")
)

const TOKEN_PURPOSE = "contacts.quote"

/** A CRM id as the contact operations take it. @since 0.1.0 @category models */
export const Id = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))

/** What a quote is asked for: records of one collection. @since 0.1.0 @category models */
export const QuoteRequest = Schema.Struct({
  collection_id: Id.annotations({ description: "The CRM collection the records belong to." }),
  record_ids: Schema.Array(Id).pipe(Schema.minItems(1), Schema.maxItems(MAX_RECORDS)).annotations({
    description: `The contacts of the collection to quote, 1 to ${MAX_RECORDS}.`
  })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ContactQuoteInput" })
/** @since 0.1.0 @category models */
export type QuoteRequest = typeof QuoteRequest.Type

/** What the quote token seals. @since 0.1.0 @category models */
export const QuoteClaims = Schema.Struct({
  v: Schema.Literal(1),
  workspace_id: Schema.String,
  /** Who asked (`person:<id>`, or `credential:<id>` for a key with no person): an unlock by another is refused. */
  principal: Schema.String,
  /** The one unlock this quote may lead to. */
  idempotency_key: Schema.String,
  collection_id: Schema.String,
  record_ids: Schema.Array(Schema.String),
  total_credits: Schema.Number,
  expires_at: Schema.String
})
/** @since 0.1.0 @category models */
export type QuoteClaims = typeof QuoteClaims.Type

/** One selected account, priced. @since 0.1.0 @category models */
export const QuotedAccount = Schema.Struct({
  record_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  already_unlocked: Schema.Boolean,
  credits: Schema.Number
})

/** A quote as its operation answers it. @since 0.1.0 @category models */
export const Quote = Schema.Struct({
  collection_id: Schema.String,
  accounts: Schema.Array(QuotedAccount),
  total_credits: Schema.Number.annotations({ description: "What the unlock will debit, at most." }),
  credits_per_account: Schema.Number,
  balance: Schema.Number.annotations({ description: "The workspace's insight credits now." }),
  sufficient: Schema.Boolean.annotations({ description: "Whether the balance covers the total now." }),
  quote_token: Schema.String.annotations({ description: "Send it with the unlock, unchanged; valid 10 minutes." }),
  idempotency_key: Schema.String.annotations({ description: "Send it with the unlock; retries with it never spend twice." }),
  expires_at: Schema.String,
  summary: Schema.String.annotations({ description: "What the unlock will cost and what the user must confirm, in words." })
}).annotations({ identifier: "ContactQuote" })
/** @since 0.1.0 @category models */
export type Quote = typeof Quote.Type

/** @since 0.1.0 @category tags */
export class Quotes extends Context.Tag("@service/contacts/Quotes")<Quotes, {
  readonly quote: (principal: Principal, request: QuoteRequest) => Effect.Effect<Quote, ContactsRefusal>
  /** The claims of a token this service sealed, or none when it is not one (altered, or of another purpose). */
  readonly openToken: (token: string) => Effect.Effect<QuoteClaims, ContactsRefusal>
}>() {}

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const context = yield* Effect.context<SqlClient.SqlClient | Crm>()
  const meter = yield* Meter
  const crypto = yield* Crypto
  const price = yield* Effect.orDie(priceConfig)

  const quote = (principal: Principal, request: QuoteRequest) =>
    Effect.gen(function*() {
      const workspaceId = principal.workspace.id
      const { contacts: byId, recordIds: selected, unlocked } = yield* select(workspaceId, request.collection_id, request.record_ids).pipe(
        Effect.provide(context)
      )
      // A test workspace spends nothing: its quote prices every account at zero.
      const each = principal.workspace.isTest ? 0 : price
      const accounts = selected.map((id) => ({
        record_id: id,
        name: byId.get(id)?.name ?? null,
        already_unlocked: unlocked.has(id),
        credits: unlocked.has(id) ? 0 : each
      }))
      const total = accounts.reduce((sum, account) => sum + account.credits, 0)
      const balance = yield* meter.balance(workspaceId)
      const now = yield* Clock.currentTimeMillis
      const expiresAt = new Date(now + Duration.toMillis(QUOTE_TTL)).toISOString()
      const idempotencyKey = `unl_${randomBytes(16).toString("hex")}`
      const claims: QuoteClaims = {
        v: 1,
        workspace_id: workspaceId,
        principal: principalKey(principal),
        idempotency_key: idempotencyKey,
        collection_id: request.collection_id,
        record_ids: selected,
        total_credits: total,
        expires_at: expiresAt
      }
      const token = yield* crypto.sealJson(TOKEN_PURPOSE, Schema.encodeSync(QuoteClaims)(claims)).pipe(Effect.orDie)
      const fresh = accounts.length - unlocked.size
      const summary = principal.workspace.isTest
        ? `Test workspace: unlocking ${plural(accounts.length, "account", "accounts")} costs nothing and calls no provider ` +
          `(the sandbox answers). To go ahead, the user must confirm before ${expiresAt}.`
        : total === 0
        ? `All ${plural(accounts.length, "selected account is", "selected accounts are")} already unlocked: unlocking costs nothing and calls no provider.`
        : `Unlocking ${plural(fresh, "account", "accounts")} will cost ${plural(total, "insight credit", "insight credits")} ` +
          `(${plural(price, "credit", "credits")} each${unlocked.size > 0 ? `; ${plural(unlocked.size, "account is", "accounts are")} already unlocked and free` : ""}). ` +
          `The workspace has ${plural(balance, "credit", "credits")}${balance < total ? ", not enough" : ""}. ` +
          `To go ahead, the user must confirm spending at most ${plural(total, "credit", "credits")} before ${expiresAt}; ` +
          `accounts that fail are refunded.`
      return {
        collection_id: request.collection_id,
        accounts,
        total_credits: total,
        credits_per_account: each,
        balance,
        sufficient: balance >= total,
        quote_token: token,
        idempotency_key: idempotencyKey,
        expires_at: expiresAt,
        summary
      }
    }).pipe(Effect.withSpan("Quotes.quote", { captureStackTrace: false }))

  const openToken = (token: string) =>
    crypto.openJson(TOKEN_PURPOSE, token).pipe(
      Effect.flatMap(Schema.decodeUnknown(QuoteClaims)),
      Effect.mapError(() => refuse("invalid_field_value", "The quote_token was not issued by a quote, or was altered.", "Ask for a new quote and send its quote_token unchanged.", {
        field: "quote_token"
      }))
    )

  return Quotes.of({ quote, openToken })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Quotes, never, SqlClient.SqlClient | Crm | Meter | Crypto> = Layer.effect(Quotes, make)
