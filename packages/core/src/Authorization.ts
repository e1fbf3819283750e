/**
 * Authorization helpers. They never look at transport details: a principal and a rule in, a typed refusal out.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Forbidden } from "./AuthError.js"
import type { Person, Principal, Scope } from "./Principal.js"
import * as Spending from "./Spending.js"

/**
 * Succeeds when the principal holds at least one of `anyOf` (scopes are OR-listed, as `market_data:read`
 * with the transitional `context:read`).
 *
 * @since 0.1.0 @category authorization
 */
export const requireScope = (
  principal: Principal,
  anyOf: ReadonlyArray<Scope>
): Effect.Effect<void, Forbidden> =>
  anyOf.some((scope) => principal.scopes.includes(scope))
    ? Effect.void
    : Effect.fail(
      new Forbidden({
        reason: "missing_scope",
        detail: (anyOf.length === 1
          ? `This action needs the scope ${anyOf.join("")}.`
          : `This action needs one of the scopes: ${anyOf.join(", ")}.`) +
          (anyOf.includes(Spending.spendingScope) ? ` ${Spending.whoMaySpend}` : ""),
        scopes: anyOf
      })
    )

/**
 * Succeeds with the person behind the call; faceless principals are refused.
 *
 * @since 0.1.0 @category authorization
 */
export const requirePerson = (principal: Principal): Effect.Effect<Person, Forbidden> =>
  Option.match(principal.person, {
    onNone: () =>
      Effect.fail(
        new Forbidden({
          reason: "person_required",
          detail: "This action needs a person: API keys without an owner cannot perform it."
        })
      ),
    onSome: Effect.succeed
  })

/**
 * Succeeds with the person when a person (not a faceless key) with role owner or admin stands behind the call.
 *
 * @since 0.1.0 @category authorization
 */
export const requireOwnerOrAdminPerson = (principal: Principal): Effect.Effect<Person, Forbidden> =>
  Effect.flatMap(requirePerson(principal), (person) =>
    principal.role === "owner" || principal.role === "admin"
      ? Effect.succeed(person)
      : Effect.fail(new Forbidden({ reason: "role_required", detail: "This action needs the owner or admin role." })))
