/**
 * API keys on HTTP and the CLI (not MCP tools: an agent does not mint credentials), decision 0067:
 *
 * - `keys_create` (`POST /workspaces/<slug>/keys`, `service keys create`): a personal key (acts as the calling
 *   person, with their role, never beyond the scopes it is given) or, for an owner or admin person, a faceless key
 *   (`faceless: true`, no person behind it). The secret is shown once; only its hash is kept. A key or token can
 *   only give scopes it holds itself; a signed-in person (a session) may give any, `commercial:activate` included
 *   when asked for by name.
 * - `keys_list` (`GET .../keys`): prefix, scopes, owner, created, last used, expiry and revocation; owners see every
 *   key of the workspace, admins every key but an owner's personal ones, a member their own.
 * - `keys_revoke` (`DELETE .../keys/<id>`): effective at once on every node (each request reads the key's row).
 *
 * @since 0.1.0
 */
import { Accounts, type CredentialInfo } from "@service/core/Accounts"
import { requirePerson } from "@service/core/Authorization"
import { CredentialId } from "@service/core/Ids"
import * as Operation from "@service/core/Operation"
import { type Principal, Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Spending from "@service/core/Spending"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { codec, refuse } from "./IdentityRefusal.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** Managing keys and members: the one write scope of the identity domain. */
export const accessWrite: ReadonlyArray<Scope> = ["access:write"]

const kit = Operation.kit({ refusals: codec, scopes: accessWrite, annotations: Operation.write })

const KeyId = CredentialId.pipe(Schema.pattern(/^key_[0-9a-f]{24}$/)).annotations({ description: "An API key id (key_…)." })

const maxExpiryDays = 730

const CreateInput = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({ description: "What the key is for, e.g. \"CI\"." }),
  scopes: Schema.Array(Scope).pipe(Schema.minItems(1), Schema.maxItems(Scope.literals.length)).annotations({
    description: "The scopes the key holds. commercial:activate (spends money) is only given when named."
  }),
  expires_in_days: Schema.optional(Schema.Int.pipe(Schema.between(1, maxExpiryDays))).annotations({
    description: `Days until the key stops working, 1 to ${maxExpiryDays}. Default: it does not expire.`
  }),
  faceless: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "A key with no person behind it (owner or admin only): it can read and write within its scopes, never approve, merge or subscribe."
  })
}).annotations({ ...strict, identifier: "KeyCreateInput" })

/** @since 0.1.0 @category models */
export const KeyView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.NullOr(Schema.String).annotations({ description: "The first characters of the secret, to recognise it." }),
  scopes: Schema.Array(Schema.String),
  owner: Schema.NullOr(Schema.Struct({ person_id: Schema.String, name: Schema.NullOr(Schema.String) })).annotations({
    description: "The person the key acts as; null for a faceless key."
  }),
  created_by: Schema.NullOr(Schema.String).annotations({ description: "The person who made the key." }),
  answered_by: Schema.NullOr(Schema.Struct({ person_id: Schema.String, name: Schema.NullOr(Schema.String) })).annotations({
    description: "Who answers for a faceless key (its maker, or whoever it was handed to); removing them revokes it. Null for a personal key."
  }),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String),
  revoked_at: Schema.NullOr(Schema.String),
  status: Schema.Literal("active", "expired", "revoked")
}).annotations({ identifier: "ApiKey" })

const viewOf = (info: CredentialInfo, now: number): typeof KeyView.Type => ({
  id: info.id,
  name: info.label,
  prefix: info.prefix,
  scopes: info.scopes,
  owner: info.personId === null ? null : { person_id: info.personId, name: info.personName },
  created_by: info.createdBy,
  answered_by: info.answeredBy === null ? null : { person_id: info.answeredBy, name: info.answeredByName },
  created_at: info.createdAt.toISOString(),
  last_used_at: info.lastUsedAt?.toISOString() ?? null,
  expires_at: info.expiresAt?.toISOString() ?? null,
  revoked_at: info.revokedAt?.toISOString() ?? null,
  status: info.revokedAt !== null ? "revoked" : info.expiresAt !== null && info.expiresAt.getTime() <= now ? "expired" : "active"
})

const ownerOrAdmin = (caller: Principal) => caller.role === "owner" || caller.role === "admin"

/**
 * Whose keys a caller may see and revoke: their own; an owner every key; an admin every key but an owner's personal
 * ones (an admin does not manage the people above them, issue 32 row 7); a member only their own.
 */
const manageable = Effect.gen(function*() {
  const caller = yield* Caller
  const owners = caller.role === "admin"
    ? new Set((yield* (yield* Accounts).listMembers(caller.workspace.id)).filter((m) => m.role === "owner").map((m) => m.person.id))
    : new Set<string>()
  return (personId: string | null): boolean => {
    if (Option.exists(caller.person, (person) => person.id === personId)) return true
    if (caller.role === "owner") return true
    if (caller.role === "admin") return personId === null || !owners.has(personId)
    return false
  }
})

/** @since 0.1.0 @category operations */
export const keysCreate = kit.make({
  name: "keys_create",
  title: "Create an API key",
  description:
    "Creates an API key in the workspace and answers its secret, shown once. Personal by default: it acts as you, with your role, within the scopes given. faceless: true makes a key with no person behind it (owner or admin only). A key or token gives only scopes it holds; a signed-in session may give any. commercial:activate is only given when named, and only by owners and admins unless an owner lets members spend.",
  refuses: ["scope_not_held", "faceless_not_allowed", "spending_not_allowed"],
  authorize: requirePerson,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/keys", input: { kind: "body" } },
  cli: { words: ["create"] },
  input: CreateInput,
  output: Schema.Struct({
    ...KeyView.fields,
    secret: Schema.String.annotations({ description: "The key: send it in x-api-key. Shown once, never again." })
  }).annotations({ identifier: "CreatedApiKey" }),
  capability: {
    question: "How do I give a script or a CI job its own key?",
    requires: "name and scopes; expires_in_days and faceless optional.",
    example: { name: "CI", scopes: ["market_data:read"], expires_in_days: 90 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const person = yield* requirePerson(caller).pipe(Effect.orDie)
      if (input.faceless && !ownerOrAdmin(caller)) {
        return yield* refuse("faceless_not_allowed", "Only an owner or admin creates a key with no person behind it.", "Create a personal key (leave faceless out).", { field: "faceless" })
      }
      // Spending is a role (decision 0092): a member gives commercial:activate only where an owner lets members spend.
      if (input.scopes.includes(Spending.spendingScope) && caller.role === "member") {
        const cap = yield* (yield* Accounts).memberSpendCap(caller.workspace.id)
        if (cap === null) {
          return yield* refuse("spending_not_allowed", `You are a member of ${caller.workspace.slug}. ${Spending.whoMaySpend}`, "Leave commercial:activate out, or ask an owner or admin for a key that spends.", { field: "scopes" })
        }
      }
      // A session is the person, signed in now: it may give any scope. A key or token may not give more than it has.
      if (caller.credential.kind !== "session") {
        const beyond = input.scopes.filter((scope) => !caller.scopes.includes(scope))
        if (beyond.length > 0) {
          return yield* refuse("scope_not_held", `This credential does not hold ${beyond.join(", ")}, so it cannot give it.`, "Ask only for scopes this credential holds, or create the key signed in.", { field: "scopes" })
        }
      }
      const now = yield* Clock.currentTimeMillis
      const accounts = yield* Accounts
      const issued = yield* accounts.issueCredential({
        workspaceId: caller.workspace.id,
        kind: "api_key",
        label: input.name,
        scopes: [...new Set(input.scopes)],
        personId: input.faceless ? undefined : person.id,
        createdBy: person.id,
        expiresAt: input.expires_in_days === undefined ? undefined : new Date(now + input.expires_in_days * 24 * 3600 * 1000)
      }).pipe(Effect.orDie)
      const info = yield* accounts.findCredential(caller.workspace.id, issued.id)
      if (Option.isNone(info)) return yield* Effect.dieMessage("the key just made is not there")
      return { ...viewOf(info.value, now), secret: Redacted.value(issued.secret) }
    })
})

const NoInput = Schema.Struct({}).annotations({ ...strict, identifier: "KeyListInput" })

/** @since 0.1.0 @category operations */
export const keysList = kit.make({
  name: "keys_list",
  title: "List API keys",
  description:
    "The workspace's API keys, newest first, with prefix, scopes, owner, created, last used, expiry and status (never a secret). Owners see every key; admins every key but an owner's personal ones; a member their own.",
  refuses: [],
  annotations: Operation.readOnly,
  scopes: Scope.literals,
  authorize: requirePerson,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/keys", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: NoInput,
  output: Schema.Struct({ keys: Schema.Array(KeyView) }).annotations({ identifier: "ApiKeys" }),
  capability: { question: "Which API keys does this workspace have?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const now = yield* Clock.currentTimeMillis
      const keys = yield* (yield* Accounts).listKeys(caller.workspace.id)
      const may = yield* manageable
      return { keys: keys.filter((key) => may(key.personId)).map((key) => viewOf(key, now)) }
    })
})

const RevokeInput = Schema.Struct({ key_id: KeyId }).annotations({ ...strict, identifier: "KeyRevokeInput" })

/** @since 0.1.0 @category operations */
export const keysRevoke = kit.make({
  name: "keys_revoke",
  title: "Revoke an API key",
  description:
    "Revokes an API key at once, on every server. Owners revoke any key of the workspace; admins any but an owner's personal keys; a member their own. Revoking a revoked key answers it again.",
  refuses: ["key_not_found"],
  annotations: { readOnly: false, destructive: true, idempotent: true, openWorld: false },
  authorize: requirePerson,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/keys/:key_id", input: { kind: "path", params: { key_id: "key_id" } } },
  cli: { words: ["revoke"], positional: "key_id" },
  input: RevokeInput,
  output: KeyView,
  capability: {
    question: "How do I stop a key that leaked or is no longer needed?",
    requires: "key_id (from keys list).",
    example: { key_id: "<key_id>" },
    exampleFrom: { operation: "keys_create", path: ["id"], field: "key_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const accounts = yield* Accounts
      const notFound = refuse("key_not_found", `No API key ${input.key_id} you may revoke in this workspace.`, "List the keys and use one of their ids.", { field: "key_id" })
      const found = yield* accounts.findCredential(caller.workspace.id, input.key_id)
      if (Option.isNone(found) || found.value.kind !== "api_key") return yield* notFound
      if (!(yield* manageable)(found.value.personId)) return yield* notFound
      if (found.value.revokedAt === null) yield* accounts.revokeCredential(input.key_id).pipe(Effect.orDie)
      const now = yield* Clock.currentTimeMillis
      const after = yield* accounts.findCredential(caller.workspace.id, input.key_id)
      return viewOf(Option.getOrElse(after, () => found.value), now)
    })
})

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Accounts | Caller>()({
  name: "keys",
  title: "API keys",
  description: "The workspace's API keys: personal ones that act as a person within their scopes, and faceless ones.",
  operations: [keysCreate, keysList, keysRevoke],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "keys" },
  cli: { word: "keys", description: "Create, list and revoke API keys." }
})
