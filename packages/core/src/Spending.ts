/**
 * Spending is a role (decision 0092): `commercial:activate` spends the workspace's money, so only its owners and
 * admins hold it, and faceless keys answered for by one of them. A workspace may let members spend too, each up to a
 * monthly cap of credits. A credential that was given the scope by someone who may no longer give it simply does not
 * hold it: the authenticators drop it from the scopes they read, on every surface at once.
 *
 * @since 0.1.0
 */
import type { Role, Scope } from "./Principal.js"

/**
 * The scope that spends money.
 *
 * @since 0.1.0 @category constants
 */
export const spendingScope: Scope = "commercial:activate"

/**
 * Whether a role may hold and give {@link spendingScope} in a workspace whose members may (or may not) spend.
 *
 * @since 0.1.0 @category predicates
 */
export const maySpend = (role: Role, membersMaySpend: boolean): boolean => role === "owner" || role === "admin" || membersMaySpend

/**
 * The scopes a credential holds: what it was given, without {@link spendingScope} where its holder may not spend.
 *
 * @since 0.1.0 @category combinators
 */
export const heldScopes = <S extends string>(scopes: ReadonlyArray<S>, spends: boolean): ReadonlyArray<S> =>
  spends ? scopes : scopes.filter((scope) => scope !== spendingScope)

/**
 * Who may spend, in words: what a refusal of {@link spendingScope} says.
 *
 * @since 0.1.0 @category constants
 */
export const whoMaySpend =
  "commercial:activate spends the workspace's money: only its owners and admins hold and give it, unless an owner lets members spend up to a monthly cap (spending_set)."
