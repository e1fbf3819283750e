/**
 * Who is calling: the workspace, the person behind the credential (if any), their role and scopes.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"
import { CredentialId, PersonId } from "./Ids.js"
import { Workspace } from "./Workspace.js"

/** @since 0.1.0 @category models */
export const Role = Schema.Literal("owner", "admin", "member")
/** @since 0.1.0 @category models */
export type Role = typeof Role.Type

/**
 * Scopes of the platform. `context:read` still satisfies market-data reads for connectors issued before
 * `market_data:read` existed.
 *
 * @since 0.1.0 @category models
 */
export const Scope = Schema.Literal(
  "market_data:read",
  "context:read",
  "commercial:read",
  "commercial:activate",
  "topics:write"
)
/** @since 0.1.0 @category models */
export type Scope = typeof Scope.Type

/** @since 0.1.0 @category models */
export const CredentialKind = Schema.Literal("api_key", "bearer")
/** @since 0.1.0 @category models */
export type CredentialKind = typeof CredentialKind.Type

/** @since 0.1.0 @category models */
export class Person extends Schema.Class<Person>("Person")({
  id: PersonId,
  displayName: Schema.String
}) {}

/**
 * A principal with no person behind it (an API key not owned by anyone) is faceless: it can read, but it
 * can never approve, merge, reject or subscribe.
 *
 * @since 0.1.0 @category models
 */
export class Principal extends Schema.Class<Principal>("Principal")({
  workspace: Workspace,
  person: Schema.OptionFromNullOr(Person),
  role: Role,
  scopes: Schema.Array(Scope),
  credential: Schema.Struct({ id: CredentialId, kind: CredentialKind })
}) {
  /** True when no person stands behind the credential. */
  get faceless(): boolean {
    return this.person._tag === "None"
  }
}

/**
 * The authenticated principal of the current request.
 *
 * @since 0.1.0 @category tags
 */
export class CurrentPrincipal extends Context.Tag("@service/core/CurrentPrincipal")<CurrentPrincipal, Principal>() {}
