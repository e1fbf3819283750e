/**
 * The members of a workspace on HTTP and the CLI (not MCP tools):
 *
 * - `members_list` (`GET /workspaces/<slug>/members`, `service members list`): every member with name, address,
 *   role and since when. Any person of the workspace (not a faceless key).
 * - `member_role_set` (`PUT .../members/<person_id>/role`, `service members set-role <person_id> --role admin`):
 *   owners and admins; only an owner gives or takes the owner role; never the last owner.
 * - `member_remove` (`DELETE .../members/<person_id>`, `service members remove <person_id>`): owners and admins;
 *   the member's sessions, personal keys and OAuth grants in the workspace end at once, and so do the faceless
 *   keys they answer for unless `hand_keys_to` names a remaining owner or admin (decision 0091).
 *
 * @since 0.1.0
 */
import type { KeysReleased } from "@service/core/Accounts"
import { requireOwnerOrAdminPerson, requirePerson } from "@service/core/Authorization"
import { PersonId } from "@service/core/Ids"
import * as Operation from "@service/core/Operation"
import { Role, Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { codec, refuse } from "./IdentityRefusal.js"
import { accessWrite } from "./KeyOperations.js"
import { type Member, type MemberRefused, Members } from "./Members.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const kit = Operation.kit({ refusals: codec, scopes: accessWrite, annotations: Operation.idempotentWrite })

/** @since 0.1.0 @category models */
export const MemberView = Schema.Struct({
  person_id: Schema.String,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  since: Schema.String
}).annotations({ identifier: "Member" })

const viewOf = (member: Member): typeof MemberView.Type => ({
  person_id: member.personId,
  name: member.name,
  email: member.email,
  role: member.role,
  since: member.since.toISOString()
})

const fromRefused = (refused: MemberRefused) =>
  refused.reason === "not_found"
    ? refuse("member_not_found", refused.detail, "List the members and use one of their person ids.", { field: "person_id" })
    : refused.reason === "last_owner"
    ? refuse("last_owner", refused.detail, "Give the owner role to another member first.")
    : refused.reason === "handover_not_allowed"
    ? refuse("handover_not_allowed", refused.detail, "Name an owner or admin from members list, or leave hand_keys_to out to revoke the keys.", { field: "hand_keys_to" })
    : refuse("role_not_allowed", refused.detail, "Ask an owner of the workspace.", { field: "role" })

const ReleasedKey = Schema.Struct({ id: Schema.String, name: Schema.String }).annotations({ identifier: "ReleasedKey" })

const KeysReleasedView = Schema.Struct({
  revoked: Schema.Array(ReleasedKey),
  handed_over: Schema.Array(ReleasedKey).annotations({ description: "Faceless keys that now answer to hand_keys_to." })
}).annotations({ identifier: "KeysReleased" })

const keysView = (keys: KeysReleased): typeof KeysReleasedView.Type => ({
  revoked: keys.revoked.map((key) => ({ id: key.id, name: key.label })),
  handed_over: keys.handedOver.map((key) => ({ id: key.id, name: key.label }))
})

const PersonIdField = PersonId.pipe(Schema.pattern(/^person_[0-9a-f]{24}$/)).annotations({ description: "A person id (person_…), from members list." })

/** @since 0.1.0 @category operations */
export const membersList = kit.make({
  name: "members_list",
  title: "List members",
  description: "The workspace's members, oldest first: person id, name, address, role (owner, admin or member) and since when.",
  refuses: [],
  annotations: Operation.readOnly,
  scopes: Scope.literals,
  authorize: requirePerson,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/members", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: Schema.Struct({}).annotations({ ...strict, identifier: "MembersListInput" }),
  output: Schema.Struct({ members: Schema.Array(MemberView) }).annotations({ identifier: "Members" }),
  capability: { question: "Who is in this workspace, and with which role?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return { members: (yield* (yield* Members).list(caller.workspace.id)).map(viewOf) }
    })
})

/** @since 0.1.0 @category operations */
export const memberRoleSet = kit.make({
  name: "member_role_set",
  title: "Change a member's role",
  description:
    "Owner or admin person only: gives a member the role owner, admin or member. Only an owner gives or takes the owner role; the last owner keeps it. An owner or admin made a member no longer answers for faceless keys: they are revoked, unless hand_keys_to names a remaining owner or admin to answer for them.",
  refuses: ["member_not_found", "last_owner", "role_not_allowed", "handover_not_allowed"],
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "PUT", path: "/members/:person_id/role", input: { kind: "body", params: { person_id: "person_id" } } },
  cli: { words: ["set-role"], positional: "person_id" },
  input: Schema.Struct({
    person_id: PersonIdField,
    role: Role.annotations({ description: "owner, admin or member." }),
    hand_keys_to: Schema.optional(PersonIdField).annotations({
      description: "When an owner or admin is made a member: a remaining owner or admin (person id) who answers for the faceless keys they answered for; without it those keys are revoked."
    })
  }).annotations({ ...strict, identifier: "MemberRoleInput" }),
  output: Schema.Struct({ ...MemberView.fields, keys: KeysReleasedView }).annotations({ identifier: "MemberWithRole" }),
  capability: {
    question: "How do I make a member an admin (or take it back)?",
    requires: "person_id (from members list) and role.",
    example: { person_id: "<person_id>", role: "admin" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const set = yield* (yield* Members).setRole({
        workspaceId: caller.workspace.id,
        actor: caller.role,
        personId: input.person_id,
        role: input.role,
        handKeysTo: input.hand_keys_to
      }).pipe(Effect.catchTag("MemberRefused", (refused) => Effect.fail(fromRefused(refused))))
      return { ...viewOf(set.member), keys: keysView(set.keys) }
    })
})

/** @since 0.1.0 @category operations */
export const memberRemove = kit.make({
  name: "member_remove",
  title: "Remove a member",
  description:
    "Owner or admin person only: removes a member from the workspace. Their sessions end, and their personal keys and OAuth grants in the workspace are revoked, at once. The faceless keys they answer for are revoked too, unless hand_keys_to names a remaining owner or admin to answer for them. Only an owner removes an owner; never the last one.",
  refuses: ["member_not_found", "last_owner", "role_not_allowed", "handover_not_allowed"],
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/members/:person_id", input: { kind: "path", params: { person_id: "person_id" } } },
  cli: { words: ["remove"], positional: "person_id" },
  input: Schema.Struct({
    person_id: PersonIdField,
    hand_keys_to: Schema.optional(PersonIdField).annotations({
      description: "A remaining owner or admin (person id) who answers for the faceless keys the member made; without it those keys are revoked."
    })
  }).annotations({ ...strict, identifier: "MemberRemoveInput" }),
  output: Schema.Struct({
    removed: MemberView,
    sessions_ended: Schema.Int,
    keys_revoked: Schema.Int.annotations({ description: "How many keys were revoked: the member's personal keys and the faceless keys they answered for." }),
    keys: KeysReleasedView,
    grants_revoked: Schema.Int.annotations({ description: "OAuth grants (MCP clients, the CLI) the member gave in this workspace." })
  }).annotations({ identifier: "RemovedMember" }),
  capability: {
    question: "How do I take someone out of this workspace?",
    requires: "person_id (from members list).",
    example: { person_id: "<person_id>" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const removed = yield* (yield* Members).remove({
        workspaceId: caller.workspace.id,
        actor: caller.role,
        personId: input.person_id,
        handKeysTo: input.hand_keys_to
      }).pipe(
        Effect.catchTag("MemberRefused", (refused) => Effect.fail(fromRefused(refused)))
      )
      return {
        removed: viewOf(removed.member),
        sessions_ended: removed.sessionsEnded,
        keys_revoked: removed.keys.revoked.length,
        keys: keysView(removed.keys),
        grants_revoked: removed.grantsRevoked
      }
    })
})

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Members | Caller>()({
  name: "members",
  title: "Members",
  description: "The people of the workspace and their roles.",
  operations: [membersList, memberRoleSet, memberRemove],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "members" },
  cli: { word: "members", description: "List members, change a role, remove a member." }
})
