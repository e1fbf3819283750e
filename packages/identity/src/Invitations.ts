/**
 * Invitations to a workspace: an address, a role, and a single-use token that expires after 7 days. Only the token's
 * SHA-256 is kept; the link with the token is shown once to whoever invites. The invited person signs in (or is
 * made by an operator first) and accepts: the signed-in person's address must be the invited one.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { PersonId, WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import { Role } from "@service/core/Principal"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import type { Someone } from "./People.js"

/** How long an invitation can be accepted. @since 0.1.0 @category constants */
export const lifetimeDays = 7

/** @since 0.1.0 @category models */
export class Invitation extends Schema.Class<Invitation>("Invitation")({
  id: Schema.String,
  workspaceId: WorkspaceId,
  workspaceSlug: WorkspaceSlug,
  workspaceName: Schema.String,
  email: Schema.String,
  role: Role,
  invitedBy: Schema.NullOr(PersonId),
  createdAt: Schema.DateFromSelf,
  expiresAt: Schema.DateFromSelf,
  acceptedAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
}) {
  /** pending, accepted, revoked or expired, at `now`. */
  statusAt(now: number): "pending" | "accepted" | "revoked" | "expired" {
    return this.acceptedAt !== null
      ? "accepted"
      : this.revokedAt !== null
      ? "revoked"
      : this.expiresAt.getTime() <= now
      ? "expired"
      : "pending"
  }
}

/**
 * The token opens no pending invitation (unknown, used, revoked or expired: never which), or the signed-in person is
 * not the one invited.
 *
 * @since 0.1.0 @category errors
 */
export class InvitationRefused extends Data.TaggedError("InvitationRefused")<{ readonly reason: "invalid" | "other_email" | "inviter_cannot_grant" }> {
  override get message(): string {
    return this.reason === "invalid"
      ? "This invitation link is not valid: it was used, revoked or has expired. Ask for a new one."
      : this.reason === "other_email"
      ? "This invitation is for another email address: sign in as the person invited."
      : "This invitation no longer holds: the person who sent it can no longer give that role in the workspace. Ask an owner or admin for a new one."
  }
}

/**
 * @since 0.1.0 @category tags
 */
export class Invitations extends Context.Tag("@service/identity/Invitations")<
  Invitations,
  {
    /** A new pending invitation and its token (shown once); a pending one for the same address is replaced. */
    readonly create: (input: {
      readonly workspaceId: WorkspaceId
      readonly email: string
      readonly role: Role
      readonly invitedBy: PersonId
    }) => Effect.Effect<{ readonly invitation: Invitation; readonly token: Redacted.Redacted<string> }>
    /** The workspace's invitations, newest first (the last 100). */
    readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Invitation>>
    /** Revokes a pending invitation; false when there is none with that id. */
    readonly revoke: (workspaceId: WorkspaceId, id: string) => Effect.Effect<boolean>
    /** The pending invitation a token opens. */
    readonly open: (token: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Invitation>>
    /** Accepts: the person becomes a member with the invited role (a member already keeps the higher role). */
    readonly accept: (token: Redacted.Redacted<string>, person: Someone) => Effect.Effect<Invitation, InvitationRefused>
  }
>() {}

const sha256 = (value: string) => createHash("sha256").update(value, "utf8").digest("hex")

const rank: { readonly [R in Role]: number } = { member: 0, admin: 1, owner: 2 }

const InvitationRow = Schema.Struct({
  id: Schema.String,
  workspace_id: WorkspaceId,
  workspace_slug: WorkspaceSlug,
  workspace_name: Schema.String,
  email: Schema.String,
  role: Role,
  invited_by: Schema.NullOr(PersonId),
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf,
  accepted_at: Schema.NullOr(Schema.DateFromSelf),
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})

const invitationOf = (row: typeof InvitationRow.Type) =>
  new Invitation({
    id: row.id,
    workspaceId: row.workspace_id,
    workspaceSlug: row.workspace_slug,
    workspaceName: row.workspace_name,
    email: row.email,
    role: row.role,
    invitedBy: row.invited_by,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    acceptedAt: row.accepted_at,
    revokedAt: row.revoked_at
  })

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql`i.id, i.workspace_id, w.slug AS workspace_slug, w.name AS workspace_name, i.email, i.role, i.invited_by,
    i.created_at, i.expires_at, i.accepted_at, i.revoked_at`
  const decode = Schema.decodeUnknown(Schema.Array(InvitationRow))

  const create = (input: { readonly workspaceId: WorkspaceId; readonly email: string; readonly role: Role; readonly invitedBy: PersonId }) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const id = `inv_${randomBytes(12).toString("hex")}`
      const token = `svc_inv_${randomBytes(32).toString("base64url")}`
      const email = input.email.trim().toLowerCase()
      yield* sql`UPDATE identity.invitations SET revoked_at = ${new Date(now)}
        WHERE workspace_id = ${input.workspaceId} AND email = ${email} AND accepted_at IS NULL AND revoked_at IS NULL`
      yield* sql`INSERT INTO identity.invitations (id, workspace_id, email, role, token_sha256, invited_by, created_at, expires_at)
        VALUES (${id}, ${input.workspaceId}, ${email}, ${input.role}, ${sha256(token)}, ${input.invitedBy}, ${new Date(now)},
                ${new Date(now + lifetimeDays * 24 * 3600 * 1000)})`
      const rows = yield* decode(yield* sql`SELECT ${columns} FROM identity.invitations i JOIN core.workspaces w ON w.id = i.workspace_id WHERE i.id = ${id}`)
      const row = rows[0]
      if (row === undefined) return yield* Effect.dieMessage("the invitation just made is not there")
      return { invitation: invitationOf(row), token: Redacted.make(token) }
    }).pipe(sql.withTransaction, Effect.orDie, Effect.withSpan("Invitations.create", { captureStackTrace: false }))

  const list = (workspaceId: WorkspaceId) =>
    sql`SELECT ${columns} FROM identity.invitations i JOIN core.workspaces w ON w.id = i.workspace_id
        WHERE i.workspace_id = ${workspaceId} ORDER BY i.created_at DESC, i.id LIMIT 100`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => rows.map(invitationOf)),
      Effect.orDie
    )

  const revoke = (workspaceId: WorkspaceId, id: string) =>
    sql`UPDATE identity.invitations SET revoked_at = now()
        WHERE workspace_id = ${workspaceId} AND id = ${id} AND accepted_at IS NULL AND revoked_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )

  const open = (token: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* decode(
        yield* sql`SELECT ${columns} FROM identity.invitations i JOIN core.workspaces w ON w.id = i.workspace_id
          WHERE i.token_sha256 = ${sha256(Redacted.value(token))} AND i.accepted_at IS NULL AND i.revoked_at IS NULL
            AND i.expires_at > ${new Date(now)}`
      )
      return Option.map(Option.fromNullable(rows[0]), invitationOf)
    }).pipe(Effect.orDie)

  const accept = (token: Redacted.Redacted<string>, person: Someone) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      // Claimed under a row lock: two acceptances of one token cannot both pass.
      const rows = yield* decode(
        yield* sql`SELECT ${columns} FROM identity.invitations i JOIN core.workspaces w ON w.id = i.workspace_id
          WHERE i.token_sha256 = ${sha256(Redacted.value(token))} AND i.accepted_at IS NULL AND i.revoked_at IS NULL
            AND i.expires_at > ${new Date(now)} FOR UPDATE OF i`
      ).pipe(Effect.orDie)
      const row = rows[0]
      if (row === undefined) return yield* new InvitationRefused({ reason: "invalid" })
      if ((person.email ?? "").toLowerCase() !== row.email) return yield* new InvitationRefused({ reason: "other_email" })
      // The inviter answers for the invitation until it is accepted: someone removed or demoted since cannot grant
      // the role any more (an admin invites admins and members, an owner anyone; issue 32 row 8).
      const inviter = row.invited_by === null ? [] : yield* sql`SELECT role FROM core.members
        WHERE workspace_id = ${row.workspace_id} AND person_id = ${row.invited_by} FOR SHARE`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ role: Role })))),
        Effect.orDie
      )
      const inviterRole = inviter[0]?.role
      const mayGrant = inviterRole === "owner" || (inviterRole === "admin" && row.role !== "owner")
      if (!mayGrant) return yield* new InvitationRefused({ reason: "inviter_cannot_grant" })
      const current = yield* sql`SELECT role FROM core.members WHERE workspace_id = ${row.workspace_id} AND person_id = ${person.id}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ role: Role })))),
        Effect.orDie
      )
      const held = current[0]?.role
      if (held === undefined) {
        yield* sql`INSERT INTO core.members (workspace_id, person_id, role) VALUES (${row.workspace_id}, ${person.id}, ${row.role})`.pipe(Effect.orDie)
      } else if (rank[row.role] > rank[held]) {
        yield* sql`UPDATE core.members SET role = ${row.role} WHERE workspace_id = ${row.workspace_id} AND person_id = ${person.id}`.pipe(Effect.orDie)
      }
      yield* sql`UPDATE identity.invitations SET accepted_at = ${new Date(now)}, accepted_by = ${person.id} WHERE id = ${row.id}`.pipe(Effect.orDie)
      return invitationOf({ ...row, accepted_at: new Date(now) })
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Invitations.accept", { captureStackTrace: false }))

  return Invitations.of({ create, list, revoke, open, accept })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Invitations, never, SqlClient.SqlClient> = Layer.effect(Invitations, make)
