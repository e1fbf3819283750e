/**
 * The members of a workspace and what owners and admins do with them: list, change a role, remove. The rules:
 * only an owner gives or takes the owner role or acts on an owner; an admin acts on admins and members; the last
 * owner can be neither demoted nor removed. Removing a member ends, at once, their sessions, the personal keys
 * they hold in the workspace and the OAuth grants they gave in it, and revokes the faceless keys they answer for
 * unless the removal hands those to a remaining owner or admin (decision 0091: nothing outlives a removed person).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Accounts, type KeysReleased } from "@service/core/Accounts"
import { PersonId, type WorkspaceId } from "@service/core/Ids"
import { Role } from "@service/core/Principal"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { OAuthServer } from "./OAuthServer.js"
import { Sessions } from "./Sessions.js"

/** @since 0.1.0 @category models */
export class Member extends Schema.Class<Member>("Member")({
  personId: PersonId,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  since: Schema.DateFromSelf
}) {}

/** @since 0.1.0 @category errors */
export class MemberRefused extends Data.TaggedError("MemberRefused")<{
  readonly reason: "not_found" | "last_owner" | "role_not_allowed" | "handover_not_allowed"
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

/** @since 0.1.0 @category models */
export interface Removed {
  readonly member: Member
  readonly sessionsEnded: number
  readonly keys: KeysReleased
  readonly grantsRevoked: number
}

/**
 * @since 0.1.0 @category tags
 */
export class Members extends Context.Tag("@service/identity/Members")<
  Members,
  {
    readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Member>>
    /**
     * `actor` is the role of whoever asks (owner or admin; the operation checks that first). An owner or admin made
     * a member no longer answers for faceless keys: they go to `handKeysTo` (a remaining owner or admin), else are
     * revoked (decision 0091).
     */
    readonly setRole: (input: {
      readonly workspaceId: WorkspaceId
      readonly actor: Role
      readonly personId: PersonId
      readonly role: Role
      readonly handKeysTo?: PersonId | undefined
    }) => Effect.Effect<{ readonly member: Member; readonly keys: KeysReleased }, MemberRefused>
    /** `handKeysTo`: a remaining owner or admin who answers for the removed member's faceless keys from now on. */
    readonly remove: (input: {
      readonly workspaceId: WorkspaceId
      readonly actor: Role
      readonly personId: PersonId
      readonly handKeysTo?: PersonId | undefined
    }) => Effect.Effect<Removed, MemberRefused>
  }
>() {}

const MemberRow = Schema.Struct({
  person_id: PersonId,
  name: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  since: Schema.DateFromSelf
})

const memberOf = (row: typeof MemberRow.Type) =>
  new Member({ personId: row.person_id, name: row.name, email: row.email, role: row.role, since: row.since })

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const accounts = yield* Accounts
  const sessions = yield* Sessions
  const oauth = yield* OAuthServer
  const decode = Schema.decodeUnknown(Schema.Array(MemberRow))

  const list = (workspaceId: WorkspaceId) =>
    sql`SELECT m.person_id, p.display_name AS name, p.email, m.role, m.created_at AS since
        FROM core.members m JOIN core.persons p ON p.id = m.person_id
        WHERE m.workspace_id = ${workspaceId} ORDER BY m.created_at, p.id`.pipe(
      Effect.flatMap(decode),
      Effect.map((rows) => rows.map(memberOf)),
      Effect.orDie
    )

  // The member under a lock, and the workspace's owners counted under it, so two demotions cannot both pass.
  const locked = (workspaceId: WorkspaceId, personId: PersonId) =>
    Effect.gen(function*() {
      yield* sql`SELECT id FROM core.workspaces WHERE id = ${workspaceId} FOR UPDATE`
      const rows = yield* decode(
        yield* sql`SELECT m.person_id, p.display_name AS name, p.email, m.role, m.created_at AS since
          FROM core.members m JOIN core.persons p ON p.id = m.person_id
          WHERE m.workspace_id = ${workspaceId} AND m.person_id = ${personId}`
      )
      const row = rows[0]
      if (row === undefined) {
        return yield* new MemberRefused({ reason: "not_found", detail: `No member ${personId} in this workspace.` })
      }
      const owners = yield* sql`SELECT count(*)::int AS n FROM core.members WHERE workspace_id = ${workspaceId} AND role = 'owner'`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number }))))
      )
      return { member: memberOf(row), owners: owners[0]?.n ?? 0 }
    })

  const mayActOn = (actor: Role, target: Role, next?: Role) =>
    actor === "owner" || (target !== "owner" && next !== "owner")

  // Who may take over a leaving or demoted person's faceless keys: another member who is an owner or admin.
  const checkHeir = (workspaceId: WorkspaceId, personId: PersonId, heir: PersonId | undefined) =>
    Effect.gen(function*() {
      if (heir === undefined) return
      const rows = yield* sql`SELECT role FROM core.members WHERE workspace_id = ${workspaceId} AND person_id = ${heir}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ role: Role }))))
      )
      const role = rows[0]?.role
      if (heir === personId || (role !== "owner" && role !== "admin")) {
        return yield* new MemberRefused({
          reason: "handover_not_allowed",
          detail: "Faceless keys can only be handed to another member who is an owner or admin of this workspace."
        })
      }
    })

  const setRole = (input: {
    readonly workspaceId: WorkspaceId
    readonly actor: Role
    readonly personId: PersonId
    readonly role: Role
    readonly handKeysTo?: PersonId | undefined
  }) =>
    Effect.gen(function*() {
      const { member, owners } = yield* locked(input.workspaceId, input.personId)
      if (!mayActOn(input.actor, member.role, input.role)) {
        return yield* new MemberRefused({ reason: "role_not_allowed", detail: "Only an owner gives or takes the owner role." })
      }
      if (member.role === "owner" && input.role !== "owner" && owners <= 1) {
        return yield* new MemberRefused({ reason: "last_owner", detail: "This is the workspace's only owner: make another owner first." })
      }
      const demoted = member.role !== "member" && input.role === "member"
      if (demoted) yield* checkHeir(input.workspaceId, input.personId, input.handKeysTo)
      yield* sql`UPDATE core.members SET role = ${input.role} WHERE workspace_id = ${input.workspaceId} AND person_id = ${input.personId}`
      const keys = demoted
        ? yield* accounts.releaseFacelessKeysOf(input.workspaceId, input.personId, input.handKeysTo)
        : { revoked: [], handedOver: [] }
      return { member: new Member({ ...member, role: input.role }), keys }
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("ParseError", Effect.die))

  const remove = (input: {
    readonly workspaceId: WorkspaceId
    readonly actor: Role
    readonly personId: PersonId
    readonly handKeysTo?: PersonId | undefined
  }) =>
    Effect.gen(function*() {
      const { member, owners } = yield* locked(input.workspaceId, input.personId)
      if (!mayActOn(input.actor, member.role)) {
        return yield* new MemberRefused({ reason: "role_not_allowed", detail: "Only an owner removes an owner." })
      }
      if (member.role === "owner" && owners <= 1) {
        return yield* new MemberRefused({ reason: "last_owner", detail: "This is the workspace's only owner: make another owner first." })
      }
      yield* checkHeir(input.workspaceId, input.personId, input.handKeysTo)
      yield* sql`DELETE FROM core.members WHERE workspace_id = ${input.workspaceId} AND person_id = ${input.personId}`
      const keys = yield* accounts.revokeKeysOf(input.workspaceId, input.personId, input.handKeysTo)
      const sessionsEnded = yield* sessions.endAllOf(input.personId)
      const grantsRevoked = yield* oauth.revokeGrantsOf(input.personId, input.workspaceId)
      return { member, sessionsEnded, keys, grantsRevoked } satisfies Removed
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("ParseError", Effect.die))

  return Members.of({ list, setRole, remove })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Members, never, SqlClient.SqlClient | Accounts | Sessions | OAuthServer> = Layer.effect(Members, make)
