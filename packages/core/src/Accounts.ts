/**
 * Workspaces, people, memberships and credentials, stored in the `core` schema. Also provides the SQL
 * adapter of the {@link Authenticator} port.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import { Unauthenticated } from "./AuthError.js"
import { Authenticator } from "./Authenticator.js"
import * as CredentialCache from "./CredentialCache.js"
import * as Spending from "./Spending.js"
import { CredentialId, PersonId, WorkspaceId, WorkspaceSlug } from "./Ids.js"
import { CredentialKind, Person, Principal, Role, Scope } from "./Principal.js"
import { Workspace } from "./Workspace.js"

/** @since 0.1.0 @category errors */
/**
 * How many test workspaces one workspace may have (spec: up to 5).
 *
 * @since 0.1.0 @category constants
 */
export const MAX_TEST_WORKSPACES = 5

/**
 * The workspace already has {@link MAX_TEST_WORKSPACES} test workspaces.
 *
 * @since 0.1.0 @category errors
 */
export class TestWorkspaceLimit extends Data.TaggedError("TestWorkspaceLimit")<{ readonly limit: number }> {
  override get message(): string {
    return `A workspace can have at most ${this.limit} test workspaces.`
  }
}

export class WorkspaceSlugTaken extends Data.TaggedError("WorkspaceSlugTaken")<{ readonly slug: string }> {
  override get message(): string {
    return `A workspace with slug "${this.slug}" already exists.`
  }
}

/** @since 0.1.0 @category errors */
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{
  readonly what: "workspace" | "person" | "credential"
  readonly id: string
}> {
  override get message(): string {
    return `No ${this.what} "${this.id}".`
  }
}

/** @since 0.1.0 @category errors */
export class InvalidCredentialRequest extends Data.TaggedError("InvalidCredentialRequest")<{
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

/**
 * A credential as created: the secret is returned once and never stored.
 *
 * @since 0.1.0 @category models
 */
export interface IssuedCredential {
  readonly id: CredentialId
  readonly kind: CredentialKind
  readonly secret: Redacted.Redacted<string>
  readonly scopes: ReadonlyArray<Scope>
  readonly personId: Option.Option<PersonId>
}

/**
 * A key or token as a list shows it: never the secret, only its first characters.
 *
 * @since 0.1.0 @category models
 */
export class CredentialInfo extends Schema.Class<CredentialInfo>("CredentialInfo")({
  id: CredentialId,
  kind: CredentialKind,
  label: Schema.String,
  /** The first characters of the secret, to recognise it (`svc_key_AbCd`). */
  prefix: Schema.NullOr(Schema.String),
  scopes: Schema.Array(Scope),
  /** The person it acts as; none for a faceless key. */
  personId: Schema.NullOr(PersonId),
  personName: Schema.NullOr(Schema.String),
  createdBy: Schema.NullOr(PersonId),
  /** Who answers for a faceless key (its creator, or whoever it was handed to); null for a personal key. */
  answeredBy: Schema.NullOr(PersonId),
  answeredByName: Schema.NullOr(Schema.String),
  createdAt: Schema.DateFromSelf,
  lastUsedAt: Schema.NullOr(Schema.DateFromSelf),
  expiresAt: Schema.NullOr(Schema.DateFromSelf),
  revokedAt: Schema.NullOr(Schema.DateFromSelf)
}) {}

/**
 * What a member's removal did to the keys of the workspace: the ones revoked and the faceless ones handed over.
 *
 * @since 0.1.0 @category models
 */
export interface KeysReleased {
  readonly revoked: ReadonlyArray<{ readonly id: CredentialId; readonly label: string }>
  readonly handedOver: ReadonlyArray<{ readonly id: CredentialId; readonly label: string }>
}

/** @since 0.1.0 @category models */
export interface IssueCredentialRequest {
  readonly workspaceId: WorkspaceId
  readonly kind: "api_key" | "bearer"
  readonly label: string
  readonly scopes: ReadonlyArray<Scope>
  /** Owner of an API key (optional) or the person who authorized a bearer token (required). */
  readonly personId?: PersonId | undefined
  /** A caller-chosen secret (for a reproducible demo key); by default a random one is generated. */
  readonly secret?: Redacted.Redacted<string> | undefined
  readonly expiresAt?: Date | undefined
  /** Who made it, when a person did (the owner or admin behind a faceless key). */
  readonly createdBy?: PersonId | undefined
}

/**
 * Administrative operations on accounts.
 *
 * @since 0.1.0 @category tags
 */
export class Accounts extends Context.Tag("@service/core/Accounts")<
  Accounts,
  {
    /**
     * With `testOf`, a test workspace of that (non-test) workspace: at most {@link MAX_TEST_WORKSPACES} of
     * them, counted under a lock on the parent so concurrent creations cannot pass the limit together.
     */
    readonly createWorkspace: (input: {
      readonly slug: WorkspaceSlug
      readonly name: string
      readonly testOf?: Workspace | undefined
    }) => Effect.Effect<Workspace, WorkspaceSlugTaken | TestWorkspaceLimit>
    /** The test workspaces made from a workspace, oldest first. */
    readonly testWorkspaces: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Workspace>>
    readonly findWorkspaceBySlug: (slug: string) => Effect.Effect<Option.Option<Workspace>>
    readonly createPerson: (input: { readonly displayName: string; readonly email?: string | undefined }) => Effect.Effect<Person>
    readonly addMember: (input: {
      readonly workspaceId: WorkspaceId
      readonly personId: PersonId
      readonly role: Role
    }) => Effect.Effect<void, AccountNotFound>
    readonly listMembers: (
      workspaceId: WorkspaceId
    ) => Effect.Effect<ReadonlyArray<{ readonly person: Person; readonly role: Role }>>
    readonly issueCredential: (
      input: IssueCredentialRequest
    ) => Effect.Effect<IssuedCredential, AccountNotFound | InvalidCredentialRequest>
    readonly revokeCredential: (id: CredentialId) => Effect.Effect<void, AccountNotFound>
    /** The API keys of a workspace (live, expired and revoked), newest first; bearer tokens are OAuth's to list. */
    readonly listKeys: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<CredentialInfo>>
    /** One credential of a workspace. */
    readonly findCredential: (workspaceId: WorkspaceId, id: CredentialId) => Effect.Effect<Option.Option<CredentialInfo>>
    /**
     * A member leaves: revokes every live API key they own in the workspace, and every faceless key they answer
     * for, unless `handTo` (a remaining owner or admin; the caller checks) takes the faceless ones over.
     */
    readonly revokeKeysOf: (
      workspaceId: WorkspaceId,
      personId: PersonId,
      handTo?: PersonId | undefined
    ) => Effect.Effect<KeysReleased>
    /**
     * The faceless keys a person answers for, without their personal keys: handed to `handTo`, else revoked. For a
     * person who stays but may no longer answer for them (an owner or admin made a member; decision 0091).
     */
    readonly releaseFacelessKeysOf: (
      workspaceId: WorkspaceId,
      personId: PersonId,
      handTo?: PersonId | undefined
    ) => Effect.Effect<KeysReleased>
    /**
     * Whether the workspace's members may spend (`commercial:activate`), and up to how many credits each per UTC
     * month: `null` when they may not (decision 0092).
     */
    readonly memberSpendCap: (workspaceId: WorkspaceId) => Effect.Effect<number | null>
    readonly setMemberSpendCap: (workspaceId: WorkspaceId, cap: number | null) => Effect.Effect<void>
    /** Replaces the scopes of a live credential. */
    readonly updateScopes: (id: CredentialId, scopes: ReadonlyArray<Scope>) => Effect.Effect<void, AccountNotFound>
  }
>() {}

const sha256 = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

/**
 * Generated secrets carry a kind prefix so a leaked value is recognisable in logs and scanners.
 */
const generateSecret = (kind: "api_key" | "bearer"): string =>
  `${kind === "api_key" ? "svc_key_" : "svc_tok_"}${randomBytes(32).toString("base64url")}`

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString("hex")}`

// How long a key's last use may be stale before authenticating records it again: a write at most once a minute per
// key, not one per request.
const lastUsedEveryMillis = 60_000

/** The characters of a secret a list shows. */
const prefixLength = 12

const CredentialRow = Schema.Struct({
  last_used_at: Schema.NullOr(Schema.DateFromSelf),
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  credential_id: CredentialId,
  kind: CredentialKind,
  scopes: Schema.Array(Schema.String),
  workspace_id: WorkspaceId,
  workspace_slug: WorkspaceSlug,
  workspace_name: Schema.String,
  workspace_test_of: Schema.NullOr(WorkspaceId),
  person_id: Schema.NullOr(PersonId),
  person_name: Schema.NullOr(Schema.String),
  member_role: Schema.NullOr(Role),
  answerer_role: Schema.NullOr(Role),
  operators_key: Schema.Boolean,
  members_may_spend: Schema.Boolean
})

const isScope = Schema.is(Scope)

/**
 * The SQL adapter: {@link Accounts} and {@link Authenticator} over the `core` schema.
 *
 * @since 0.1.0 @category constructors
 */
export const makeSql = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const decodeCredentialRow = Schema.decodeUnknown(CredentialRow)

  const authenticate = (credential: { readonly kind: CredentialKind; readonly secret: Redacted.Redacted<string> }) =>
    Effect.gen(function*() {
      // Sessions are the identity domain's; this adapter knows keys and tokens.
      if (credential.kind === "session") return yield* new Unauthenticated()
      const now = new Date(yield* Clock.currentTimeMillis)
      const rows = yield* sql`
        SELECT c.id AS credential_id, c.kind, c.scopes, c.last_used_at, c.expires_at,
               w.id AS workspace_id, w.slug AS workspace_slug, w.name AS workspace_name, w.test_of AS workspace_test_of,
               p.id AS person_id, p.display_name AS person_name, m.role AS member_role, a.role AS answerer_role,
               (c.person_id IS NULL AND c.created_by IS NULL AND c.answered_by IS NULL) AS operators_key,
               (w.member_spend_cap IS NOT NULL) AS members_may_spend
        FROM core.credentials c
        JOIN core.workspaces w ON w.id = c.workspace_id
        LEFT JOIN core.persons p ON p.id = c.person_id
        LEFT JOIN core.members m ON m.workspace_id = c.workspace_id AND m.person_id = c.person_id
        LEFT JOIN core.members a ON a.workspace_id = c.workspace_id AND a.person_id = c.answered_by
        WHERE c.secret_sha256 = ${sha256(Redacted.value(credential.secret))}
          AND c.kind = ${credential.kind}
          AND c.revoked_at IS NULL
          AND (c.expires_at IS NULL OR c.expires_at > ${now})
      `.pipe(Effect.orDie)
      const first = rows[0]
      if (first === undefined) return yield* new Unauthenticated()
      const row = yield* decodeCredentialRow(first).pipe(Effect.orDie)
      // A credential whose person left the workspace authenticates nobody.
      if (row.person_id !== null && row.member_role === null) return yield* new Unauthenticated()
      yield* CredentialCache.validUntil(row.expires_at)
      if (row.last_used_at === null || now.getTime() - row.last_used_at.getTime() > lastUsedEveryMillis) {
        yield* sql`UPDATE core.credentials SET last_used_at = ${now} WHERE id = ${row.credential_id}`.pipe(Effect.orDie)
      }
      return new Principal({
        workspace: new Workspace({
          id: row.workspace_id,
          slug: row.workspace_slug,
          name: row.workspace_name,
          testOf: row.workspace_test_of
        }),
        person: row.person_id !== null && row.person_name !== null
          ? Option.some(new Person({ id: row.person_id, displayName: row.person_name }))
          : Option.none(),
        // Faceless keys act as members: anything stronger needs a person.
        role: row.member_role ?? "member",
        // A faceless key spends as the person who answers for it, or as the operator who made it (decision 0092).
        scopes: Spending.heldScopes(
          row.scopes.filter(isScope),
          row.person_id === null
            ? row.operators_key || (row.answerer_role !== null && Spending.maySpend(row.answerer_role, row.members_may_spend))
            : row.member_role !== null && Spending.maySpend(row.member_role, row.members_may_spend)
        ),
        credential: { id: row.credential_id, kind: row.kind }
      })
    }).pipe(Effect.withSpan("Authenticator.authenticate", { captureStackTrace: false }))

  const WorkspaceRow = Schema.Struct({ id: WorkspaceId, slug: WorkspaceSlug, name: Schema.String, testOf: Schema.NullOr(WorkspaceId) })
  const decodeWorkspace = Schema.decodeUnknown(WorkspaceRow)

  const findWorkspaceBySlug = (slug: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT id, slug, name, test_of AS "testOf" FROM core.workspaces WHERE slug = ${slug}`
      const first = rows[0]
      if (first === undefined) return Option.none<Workspace>()
      return Option.some(new Workspace(yield* decodeWorkspace(first)))
    }).pipe(Effect.orDie)

  const createWorkspace = (input: { readonly slug: WorkspaceSlug; readonly name: string; readonly testOf?: Workspace | undefined }) =>
    Effect.gen(function*() {
      const id = WorkspaceId.make(newId("ws"))
      // A test workspace of a test workspace would be a test of a test: it hangs off the real one.
      const testOf = input.testOf === undefined ? null : input.testOf.testOf ?? input.testOf.id
      if (testOf !== null) {
        yield* sql`SELECT id FROM core.workspaces WHERE id = ${testOf} FOR UPDATE`
        const counted = yield* sql`SELECT count(*)::int AS n FROM core.workspaces WHERE test_of = ${testOf}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number }))))
        )
        if ((counted[0]?.n ?? 0) >= MAX_TEST_WORKSPACES) return yield* new TestWorkspaceLimit({ limit: MAX_TEST_WORKSPACES })
      }
      const inserted = yield* sql`
        INSERT INTO core.workspaces (id, slug, name, test_of) VALUES (${id}, ${input.slug}, ${input.name}, ${testOf})
        ON CONFLICT (slug) DO NOTHING RETURNING id`
      if (inserted.length === 0) return yield* new WorkspaceSlugTaken({ slug: input.slug })
      return new Workspace({ id, slug: input.slug, name: input.name, testOf })
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.catchTag("ParseError", Effect.die))

  const testWorkspaces = (workspaceId: WorkspaceId) =>
    sql`SELECT id, slug, name, test_of AS "testOf" FROM core.workspaces WHERE test_of = ${workspaceId} ORDER BY created_at, id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(WorkspaceRow))),
      Effect.map((rows) => rows.map((row) => new Workspace(row))),
      Effect.orDie
    )

  const createPerson = (input: { readonly displayName: string; readonly email?: string | undefined }) =>
    Effect.gen(function*() {
      const id = PersonId.make(newId("person"))
      yield* sql`INSERT INTO core.persons (id, display_name, email) VALUES (${id}, ${input.displayName}, ${
        input.email ?? null
      })`
      return new Person({ id, displayName: input.displayName })
    }).pipe(Effect.orDie)

  const exists = (table: "workspaces" | "persons" | "credentials", id: string) =>
    sql`SELECT 1 FROM ${sql(`core.${table}`)} WHERE id = ${id}`.pipe(Effect.map((rows) => rows.length > 0))

  const addMember = (input: { readonly workspaceId: WorkspaceId; readonly personId: PersonId; readonly role: Role }) =>
    Effect.gen(function*() {
      if (!(yield* exists("workspaces", input.workspaceId))) {
        return yield* new AccountNotFound({ what: "workspace", id: input.workspaceId })
      }
      if (!(yield* exists("persons", input.personId))) {
        return yield* new AccountNotFound({ what: "person", id: input.personId })
      }
      yield* sql`
        INSERT INTO core.members (workspace_id, person_id, role) VALUES (${input.workspaceId}, ${input.personId}, ${input.role})
        ON CONFLICT (workspace_id, person_id) DO UPDATE SET role = EXCLUDED.role`
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const MemberRow = Schema.Struct({ id: PersonId, display_name: Schema.String, role: Role })
  const listMembers = (workspaceId: WorkspaceId) =>
    sql`SELECT p.id, p.display_name, m.role FROM core.members m JOIN core.persons p ON p.id = m.person_id
        WHERE m.workspace_id = ${workspaceId} ORDER BY m.created_at, p.id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(MemberRow))),
      Effect.map((rows) => rows.map((r) => ({ person: new Person({ id: r.id, displayName: r.display_name }), role: r.role }))),
      Effect.orDie
    )

  const issueCredential = (input: IssueCredentialRequest) =>
    Effect.gen(function*() {
      if (input.kind === "bearer" && input.personId === undefined) {
        return yield* new InvalidCredentialRequest({ detail: "A bearer token needs the person who authorized it." })
      }
      if (input.scopes.length === 0) {
        return yield* new InvalidCredentialRequest({ detail: "A credential needs at least one scope." })
      }
      if (!(yield* exists("workspaces", input.workspaceId))) {
        return yield* new AccountNotFound({ what: "workspace", id: input.workspaceId })
      }
      if (input.personId !== undefined) {
        const member = yield* sql`SELECT 1 FROM core.members WHERE workspace_id = ${input.workspaceId} AND person_id = ${input.personId}`
        if (member.length === 0) return yield* new AccountNotFound({ what: "person", id: input.personId })
      }
      const secret = input.secret === undefined ? generateSecret(input.kind) : Redacted.value(input.secret)
      if (secret.length < 16) {
        return yield* new InvalidCredentialRequest({ detail: "A credential secret must be at least 16 characters." })
      }
      const id = CredentialId.make(newId(input.kind === "api_key" ? "key" : "tok"))
      const inserted = yield* sql`
        INSERT INTO core.credentials (id, workspace_id, kind, secret_sha256, label, person_id, scopes, expires_at, prefix, created_by, answered_by)
        VALUES (${id}, ${input.workspaceId}, ${input.kind}, ${sha256(secret)}, ${input.label}, ${input.personId ?? null},
                ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(input.scopes)}::jsonb)), ${input.expiresAt ?? null},
                ${secret.slice(0, prefixLength)}, ${input.createdBy ?? input.personId ?? null},
                ${input.personId === undefined ? input.createdBy ?? null : null})
        ON CONFLICT (secret_sha256) DO NOTHING RETURNING id`
      if (inserted.length === 0) {
        return yield* new InvalidCredentialRequest({ detail: "That secret is already in use by another credential." })
      }
      return {
        id,
        kind: input.kind,
        secret: Redacted.make(secret),
        scopes: input.scopes,
        personId: Option.fromNullable(input.personId)
      } satisfies IssuedCredential
    }).pipe(Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Accounts.issueCredential", { captureStackTrace: false }))

  const revokeCredential = (id: CredentialId) =>
    Effect.gen(function*() {
      const rows = yield* sql`UPDATE core.credentials SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
      if (rows.length === 0 && !(yield* exists("credentials", id))) {
        return yield* new AccountNotFound({ what: "credential", id })
      }
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const updateScopes = (id: CredentialId, scopes: ReadonlyArray<Scope>) =>
    Effect.gen(function*() {
      const rows = yield* sql`
        UPDATE core.credentials SET scopes = ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(scopes)}::jsonb))
        WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
      if (rows.length === 0) return yield* new AccountNotFound({ what: "credential", id })
    }).pipe(Effect.catchTag("SqlError", Effect.die))

  const InfoRow = Schema.Struct({
    id: CredentialId,
    kind: CredentialKind,
    label: Schema.String,
    prefix: Schema.NullOr(Schema.String),
    scopes: Schema.Array(Schema.String),
    person_id: Schema.NullOr(PersonId),
    person_name: Schema.NullOr(Schema.String),
    created_by: Schema.NullOr(PersonId),
    answered_by: Schema.NullOr(PersonId),
    answered_by_name: Schema.NullOr(Schema.String),
    created_at: Schema.DateFromSelf,
    last_used_at: Schema.NullOr(Schema.DateFromSelf),
    expires_at: Schema.NullOr(Schema.DateFromSelf),
    revoked_at: Schema.NullOr(Schema.DateFromSelf)
  })
  const infoOf = (row: typeof InfoRow.Type) =>
    new CredentialInfo({
      id: row.id,
      kind: row.kind,
      label: row.label,
      prefix: row.prefix,
      scopes: row.scopes.filter(isScope),
      personId: row.person_id,
      personName: row.person_name,
      createdBy: row.created_by,
      answeredBy: row.answered_by,
      answeredByName: row.answered_by_name,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at
    })
  const infoColumns = sql`c.id, c.kind, c.label, c.prefix, c.scopes, c.person_id, p.display_name AS person_name, c.created_by,
    c.answered_by, a.display_name AS answered_by_name, c.created_at, c.last_used_at, c.expires_at, c.revoked_at`
  const infoFrom = sql`core.credentials c LEFT JOIN core.persons p ON p.id = c.person_id LEFT JOIN core.persons a ON a.id = c.answered_by`

  const listKeys = (workspaceId: WorkspaceId) =>
    sql`SELECT ${infoColumns} FROM ${infoFrom}
        WHERE c.workspace_id = ${workspaceId} AND c.kind = 'api_key' ORDER BY c.created_at DESC, c.id`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(InfoRow))),
      Effect.map((rows) => rows.map(infoOf)),
      Effect.orDie
    )

  const findCredential = (workspaceId: WorkspaceId, id: CredentialId) =>
    sql`SELECT ${infoColumns} FROM ${infoFrom}
        WHERE c.workspace_id = ${workspaceId} AND c.id = ${id}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(InfoRow))),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), infoOf)),
      Effect.orDie
    )

  const Released = Schema.Array(Schema.Struct({ id: CredentialId, label: Schema.String }))
  const releaseKeys = (workspaceId: WorkspaceId, personId: PersonId, handTo: PersonId | undefined, personal: boolean) =>
    Effect.gen(function*() {
      const handedOver = handTo === undefined ? [] : yield* sql`UPDATE core.credentials SET answered_by = ${handTo}
        WHERE workspace_id = ${workspaceId} AND answered_by = ${personId} AND person_id IS NULL AND revoked_at IS NULL
        RETURNING id, label`.pipe(Effect.flatMap(Schema.decodeUnknown(Released)))
      const revoked = yield* (personal
        ? sql`UPDATE core.credentials SET revoked_at = now()
            WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL
              AND (person_id = ${personId} OR (person_id IS NULL AND answered_by = ${personId}))
            RETURNING id, label`
        : sql`UPDATE core.credentials SET revoked_at = now()
            WHERE workspace_id = ${workspaceId} AND revoked_at IS NULL AND person_id IS NULL AND answered_by = ${personId}
            RETURNING id, label`).pipe(Effect.flatMap(Schema.decodeUnknown(Released)))
      return { revoked, handedOver } satisfies KeysReleased
    }).pipe(Effect.orDie)
  const revokeKeysOf = (workspaceId: WorkspaceId, personId: PersonId, handTo?: PersonId) => releaseKeys(workspaceId, personId, handTo, true)
  const releaseFacelessKeysOf = (workspaceId: WorkspaceId, personId: PersonId, handTo?: PersonId) =>
    releaseKeys(workspaceId, personId, handTo, false)

  const memberSpendCap = (workspaceId: WorkspaceId) =>
    sql`SELECT member_spend_cap AS cap FROM core.workspaces WHERE id = ${workspaceId}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ cap: Schema.NullOr(Schema.Number) })))),
      Effect.map((rows) => rows[0]?.cap ?? null),
      Effect.orDie
    )

  // An update of the workspace row: its trigger tells every node's credential cache, so held scopes follow at once.
  const setMemberSpendCap = (workspaceId: WorkspaceId, cap: number | null) =>
    sql`UPDATE core.workspaces SET member_spend_cap = ${cap} WHERE id = ${workspaceId}`.pipe(Effect.asVoid, Effect.orDie)

  return {
    accounts: Accounts.of({
      releaseFacelessKeysOf,
      memberSpendCap,
      setMemberSpendCap,
      createWorkspace,
      testWorkspaces,
      findWorkspaceBySlug,
      createPerson,
      addMember,
      listMembers,
      issueCredential,
      revokeCredential,
      updateScopes,
      listKeys,
      findCredential,
      revokeKeysOf
    }),
    authenticator: Authenticator.of({ authenticate })
  }
})

/**
 * Provides both {@link Accounts} and {@link Authenticator} over SQL.
 *
 * @since 0.1.0 @category layers
 */
export const layerSql: Layer.Layer<Accounts | Authenticator, never, SqlClient.SqlClient> = Layer.effectContext(
  Effect.map(makeSql, ({ accounts, authenticator }) =>
    Context.make(Accounts, accounts).pipe(Context.add(Authenticator, authenticator)))
)
