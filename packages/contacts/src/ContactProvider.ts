/**
 * The port contact research goes through: given accounts a user selected in the CRM (a name, a company, a
 * domain), a provider finds their contact coordinates. Unlock (issue 11) pays for it on the credit ledger; this
 * module only says what any provider must do.
 *
 * The contract a provider adapter must meet (checked for every adapter by `test/support/ProviderContract.ts`):
 *
 * 1. **One result per account asked**, by `record_id`, none missing and none extra; order is free.
 * 2. **Idempotent per request key.** A request repeated with the same `requestKey` answers the same results and
 *    is not worked (nor charged by the provider) again. This is what lets a crashed unlock be retried without a
 *    second call: the key is the unlock's idempotency key.
 * 3. **Expected failures are values.** An account that cannot be researched is `failed` with a reason (it is
 *    refunded); an account with nothing found is `not_found`. Only a provider that cannot be reached at all fails
 *    the whole request, with {@link ProviderUnavailable}, and nothing of it is charged.
 * 4. **Coordinates only for `found`.** An email address, a phone number, or both; never for another outcome.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** One account to research: a CRM contact the user selected. @since 0.1.0 @category models */
export const Account = Schema.Struct({
  record_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
  name: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  domain: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Account = typeof Account.Type

/** A research request: the accounts, under the key that makes it idempotent. @since 0.1.0 @category models */
export interface ResearchRequest {
  readonly workspaceId: string
  /** The same key answers the same results without working again. */
  readonly requestKey: string
  readonly accounts: ReadonlyArray<Account>
}

/** What was found for one account. @since 0.1.0 @category models */
export const Coordinates = Schema.Struct({
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 @category models */
export type Coordinates = typeof Coordinates.Type

/** The outcome for one account. @since 0.1.0 @category models */
export const Result = Schema.Union(
  Schema.Struct({ record_id: Schema.String, outcome: Schema.Literal("found"), coordinates: Coordinates }),
  Schema.Struct({ record_id: Schema.String, outcome: Schema.Literal("not_found") }),
  Schema.Struct({ record_id: Schema.String, outcome: Schema.Literal("failed"), reason: Schema.String })
)
/** @since 0.1.0 @category models */
export type Result = typeof Result.Type

/**
 * The provider could not be reached or refused the whole request: nothing was researched or charged by it.
 *
 * @since 0.1.0 @category errors
 */
export class ProviderUnavailable extends Data.TaggedError("ProviderUnavailable")<{ readonly provider: string; readonly reason: string }> {
  override get message(): string {
    return `The contact provider ${this.provider} is unavailable: ${this.reason}`
  }
}

/** @since 0.1.0 @category tags */
export class ContactProvider extends Context.Tag("@service/contacts/ContactProvider")<ContactProvider, {
  /** Names the provider in the ledger and in refusals. */
  readonly name: string
  readonly research: (request: ResearchRequest) => Effect.Effect<ReadonlyArray<Result>, ProviderUnavailable>
}>() {}
