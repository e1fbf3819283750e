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
 * `market_data:read` existed. A scope ending in `:read` only reads; every other one writes, and an operation
 * that writes names write scopes only (docs/decisions/0066).
 *
 * @since 0.1.0 @category models
 */
export const Scope = Schema.Literal(
  "market_data:read",
  "context:read",
  "commercial:read",
  "commercial:activate",
  "topics:write",
  "saved_searches:write",
  "crm:write",
  "door:admin",
  "events:write",
  "access:write"
)
/** @since 0.1.0 @category models */
export type Scope = typeof Scope.Type

/**
 * Each scope in words, as a consent page and `service keys create --help` show it.
 *
 * @since 0.1.0 @category models
 */
export const scopeDescriptions: { readonly [S in Scope]: string } = {
  "market_data:read": "Read market data: suppliers, opportunities, awards, risk marks and permits (spends insight credits).",
  "context:read": "Read market data, topics and events (the older scope that market_data:read replaces).",
  "commercial:read": "Read the CRM, the event door's sources and arrivals, and contact quotes.",
  "commercial:activate": "Unlock contact details, which spends money from the workspace's balance.",
  "topics:write": "Create, edit, propose, approve and share topics and tags.",
  "saved_searches:write": "Create and delete saved searches and their alerts.",
  "crm:write": "Create and change contacts, companies, Pipelines, opportunities and collections in the CRM, and erase contacts.",
  "door:admin": "Manage the event door: sources, secrets, mappings, reprocessing, test arrivals and test workspaces.",
  "events:write": "Create, stop and replay event destinations (webhooks sent to your systems).",
  "access:write": "Create and revoke API keys; invite, change and remove members (each within your role)."
}

/**
 * Whether a scope only reads.
 *
 * @since 0.1.0 @category models
 */
export const isReadScope = (scope: Scope): boolean => scope.endsWith(":read")

/**
 * The scopes that only read.
 *
 * @since 0.1.0 @category models
 */
export const readScopes: ReadonlyArray<Scope> = Scope.literals.filter(isReadScope)

/** @since 0.1.0 @category models */
export const CredentialKind = Schema.Literal("api_key", "bearer", "session")
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
