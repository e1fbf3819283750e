/**
 * Invitations on HTTP and the CLI (not MCP tools):
 *
 * - `invitations_create` (`POST /workspaces/<slug>/invitations`, `service invitations create --email … --role …`):
 *   owners and admins (an admin does not invite owners). Answers the link to accept, shown once; it works 7 days,
 *   once, for the person with that address after they sign in.
 * - `invitations_list` (`GET .../invitations`): the last 100 with their status.
 * - `invitation_revoke` (`DELETE .../invitations/<id>`).
 *
 * @since 0.1.0
 */
import { requireOwnerOrAdminPerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import { Role, Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { codec, refuse } from "./IdentityRefusal.js"
import { type Invitation, Invitations, lifetimeDays } from "./Invitations.js"
import { accessWrite } from "./KeyOperations.js"
import { Members } from "./Members.js"
import { Email } from "./People.js"
import { PublicAddress } from "@service/core/PublicAddress"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const kit = Operation.kit({ refusals: codec, scopes: accessWrite, annotations: Operation.write })

/** @since 0.1.0 @category models */
export const InvitationView = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  role: Role,
  status: Schema.Literal("pending", "accepted", "revoked", "expired"),
  invited_by: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  expires_at: Schema.String
}).annotations({ identifier: "Invitation" })

const viewOf = (invitation: Invitation, now: number): typeof InvitationView.Type => ({
  id: invitation.id,
  email: invitation.email,
  role: invitation.role,
  status: invitation.statusAt(now),
  invited_by: invitation.invitedBy,
  created_at: invitation.createdAt.toISOString(),
  expires_at: invitation.expiresAt.toISOString()
})

/** The page an invitation link opens. @since 0.1.0 @category paths */
export const acceptPath = (token: string) => `/invitations/${encodeURIComponent(token)}`

/** @since 0.1.0 @category operations */
export const invitationsCreate = kit.make({
  name: "invitations_create",
  title: "Invite someone",
  description:
    `Owner or admin person only: invites an email address with a role (an admin invites admins and members). Answers the link to accept, shown once: it works ${lifetimeDays} days, once, for the person with that address, after they sign in. A pending invitation to the same address is replaced.`,
  refuses: ["already_member", "role_not_allowed"],
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "POST", path: "/invitations", input: { kind: "body" } },
  cli: { words: ["create"] },
  input: Schema.Struct({ email: Email, role: Role.annotations({ description: "owner, admin or member." }) }).annotations({
    ...strict,
    identifier: "InvitationCreateInput"
  }),
  output: Schema.Struct({
    ...InvitationView.fields,
    accept_url: Schema.String.annotations({ description: "The link to send to the person invited. Shown once." })
  }).annotations({ identifier: "CreatedInvitation" }),
  capability: {
    question: "How do I bring a colleague into this workspace?",
    requires: "email and role.",
    example: { email: "colleague@example.com", role: "member" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const inviter = yield* requireOwnerOrAdminPerson(caller).pipe(Effect.orDie)
      if (input.role === "owner" && caller.role !== "owner") {
        return yield* refuse("role_not_allowed", "Only an owner invites an owner.", "Invite them as admin, or ask an owner.", { field: "role" })
      }
      const members = yield* (yield* Members).list(caller.workspace.id)
      if (members.some((member) => (member.email ?? "").toLowerCase() === input.email.toLowerCase())) {
        return yield* refuse("already_member", `${input.email} is already a member of this workspace.`, "Change their role with members set-role instead.", { field: "email" })
      }
      const created = yield* (yield* Invitations).create({ workspaceId: caller.workspace.id, email: input.email, role: input.role, invitedBy: inviter.id })
      const address = yield* (yield* PublicAddress).get
      const now = yield* Clock.currentTimeMillis
      return { ...viewOf(created.invitation, now), accept_url: `${address.base}${acceptPath(Redacted.value(created.token))}` }
    })
})

/** @since 0.1.0 @category operations */
export const invitationsList = kit.make({
  name: "invitations_list",
  title: "List invitations",
  description: "Owner or admin person only: the workspace's last 100 invitations, newest first, with their status.",
  refuses: [],
  annotations: Operation.readOnly,
  scopes: Scope.literals,
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/invitations", input: { kind: "query" } },
  cli: { words: ["list"] },
  input: Schema.Struct({}).annotations({ ...strict, identifier: "InvitationsListInput" }),
  output: Schema.Struct({ invitations: Schema.Array(InvitationView) }).annotations({ identifier: "Invitations" }),
  capability: { question: "Who has been invited, and did they accept?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const now = yield* Clock.currentTimeMillis
      return { invitations: (yield* (yield* Invitations).list(caller.workspace.id)).map((invitation) => viewOf(invitation, now)) }
    })
})

/** @since 0.1.0 @category operations */
export const invitationRevoke = kit.make({
  name: "invitation_revoke",
  title: "Revoke an invitation",
  description: "Owner or admin person only: the invitation's link stops working.",
  refuses: ["invitation_not_found"],
  annotations: { readOnly: false, destructive: true, idempotent: false, openWorld: false },
  authorize: requireOwnerOrAdminPerson,
  surfaces: { mcp: false },
  http: { method: "DELETE", path: "/invitations/:invitation_id", input: { kind: "path", params: { invitation_id: "invitation_id" } } },
  cli: { words: ["revoke"], positional: "invitation_id" },
  input: Schema.Struct({
    invitation_id: Schema.String.pipe(Schema.pattern(/^inv_[0-9a-f]{24}$/)).annotations({ description: "An invitation id (inv_…)." })
  }).annotations({ ...strict, identifier: "InvitationRevokeInput" }),
  output: Schema.Struct({ revoked: Schema.String }).annotations({ identifier: "RevokedInvitation" }),
  capability: {
    question: "How do I take back an invitation?",
    requires: "invitation_id (from invitations list).",
    example: { invitation_id: "<invitation_id>" },
    exampleFrom: { operation: "invitations_create", path: ["id"], field: "invitation_id" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const revoked = yield* (yield* Invitations).revoke(caller.workspace.id, input.invitation_id)
      if (!revoked) {
        return yield* refuse("invitation_not_found", `No pending invitation ${input.invitation_id} in this workspace.`, "List the invitations and use a pending one's id.", { field: "invitation_id" })
      }
      return { revoked: input.invitation_id }
    })
})

/** What running the invitation operations needs. @since 0.1.0 @category models */
export type Requirements = Invitations | Members | PublicAddress | Caller

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Requirements>()({
  name: "invitations",
  title: "Invitations",
  description: "Links that bring a person into the workspace with a role, once they sign in.",
  operations: [invitationsCreate, invitationsList, invitationRevoke],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "invitations" },
  cli: { word: "invitations", description: "Invite people, list and revoke invitations." }
})
