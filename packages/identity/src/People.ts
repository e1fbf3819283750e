/**
 * People who sign in: their address, name and password, and the sign-in check with its backoff. A person without a
 * password (a demo owner made before one was set, a person only reached by API keys) cannot sign in.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Accounts } from "@service/core/Accounts"
import { PersonId } from "@service/core/Ids"
import { Person, Role } from "@service/core/Principal"
import * as Spending from "@service/core/Spending"
import { Workspace } from "@service/core/Workspace"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import * as Passwords from "./Passwords.js"

/**
 * An email address as people type it: trimmed, compared without case, at most 254 characters (RFC 5321).
 *
 * @since 0.1.0 @category models
 */
export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "an email address such as ana@example.com" }),
  Schema.brand("Email")
).annotations({ description: "An email address, such as ana@example.com." })
/** @since 0.1.0 @category models */
export type Email = typeof Email.Type

/** @since 0.1.0 @category models */
export class Someone extends Schema.Class<Someone>("Someone")({
  id: PersonId,
  name: Schema.String,
  email: Schema.NullOr(Schema.String)
}) {
  get person(): Person {
    return new Person({ id: this.id, displayName: this.name })
  }
}

/** @since 0.1.0 @category errors */
export class EmailTaken extends Data.TaggedError("EmailTaken")<{ readonly email: string }> {
  override get message(): string {
    return `A person with the address ${this.email} already exists.`
  }
}

/** @since 0.1.0 @category errors */
export class WeakPassword extends Data.TaggedError("WeakPassword")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/**
 * A sign-in that did not pass: a wrong address or password (never which), or too many failures for the address
 * (wait `retryAfterSeconds`).
 *
 * @since 0.1.0 @category errors
 */
export class SignInRefused extends Data.TaggedError("SignInRefused")<{
  readonly reason: "invalid" | "locked" | "address_locked"
  readonly retryAfterSeconds: number
}> {
  override get message(): string {
    return this.reason === "locked"
      ? `Too many failed sign-ins for this address: try again in ${this.retryAfterSeconds} seconds.`
      : this.reason === "address_locked"
      ? `Too many failed sign-ins from your network: try again in ${this.retryAfterSeconds} seconds.`
      : "Wrong email address or password."
  }
}

/** Failures allowed before the address waits; each further failure doubles the wait, up to the cap. */
export const freeFailures = 5
/** Failures allowed from one client address, whatever accounts it tries, before it waits the same way. */
export const freeAddressFailures = 20
const firstLockSeconds = 30
const maxLockSeconds = 15 * 60

/**
 * The wait after `failures` consecutive failures: none for the first {@link freeFailures}, then 30 s doubling to 15 min.
 *
 * @since 0.1.0 @category backoff
 */
export const lockSeconds = (failures: number): number =>
  failures < freeFailures ? 0 : Math.min(maxLockSeconds, firstLockSeconds * 2 ** (failures - freeFailures))

/** @since 0.1.0 @category models */
export interface Membership {
  readonly workspace: Workspace
  readonly role: Role
  /** Whether the person may hold and give `commercial:activate` there (decision 0092). */
  readonly spends: boolean
}

/**
 * @since 0.1.0 @category tags
 */
export class People extends Context.Tag("@service/identity/People")<
  People,
  {
    /** A person with an address and a password: the one given, or a generated one returned once. */
    readonly create: (input: {
      readonly email: Email
      readonly name: string
      readonly password?: Redacted.Redacted<string> | undefined
    }) => Effect.Effect<{ readonly person: Someone; readonly password: Redacted.Redacted<string>; readonly generated: boolean }, EmailTaken | WeakPassword>
    readonly setPassword: (personId: PersonId, password: Redacted.Redacted<string>) => Effect.Effect<void, WeakPassword>
    /** Gives a person made without an address (the demo owner) one. */
    readonly setEmail: (personId: PersonId, email: Email) => Effect.Effect<void, EmailTaken>
    readonly findByEmail: (email: string) => Effect.Effect<Option.Option<Someone>>
    readonly find: (personId: PersonId) => Effect.Effect<Option.Option<Someone>>
    /** Whether the person has a password (can sign in). */
    readonly hasPassword: (personId: PersonId) => Effect.Effect<boolean>
    /**
     * Each attempt is counted as a failure before its password is checked, per account and per client address
     * (`from`), in one statement each, so parallel guesses cannot all pass the lockout; a success takes it back.
     */
    readonly signIn: (email: string, password: Redacted.Redacted<string>, from?: string | undefined) => Effect.Effect<Someone, SignInRefused>
    /** The workspaces the person is a member of, oldest membership first. */
    readonly memberships: (personId: PersonId) => Effect.Effect<ReadonlyArray<Membership>>
  }
>() {}

const strength = (password: string): Option.Option<string> =>
  password.length < Passwords.minLength
    ? Option.some(`A password needs at least ${Passwords.minLength} characters.`)
    : password.length > Passwords.maxLength
    ? Option.some(`A password has at most ${Passwords.maxLength} characters.`)
    : Option.none()

const PersonRow = Schema.Struct({ id: PersonId, name: Schema.String, email: Schema.NullOr(Schema.String) })
const MembershipRow = Schema.Struct({
  id: WorkspaceId,
  slug: WorkspaceSlug,
  name: Schema.String,
  test_of: Schema.NullOr(WorkspaceId),
  role: Role,
  members_may_spend: Schema.Boolean
})

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const accounts = yield* Accounts
  const passwords = yield* Passwords.Passwords

  const one = (rows: ReadonlyArray<unknown>) =>
    Effect.map(Schema.decodeUnknown(Schema.Array(PersonRow))(rows), (decoded) =>
      Option.map(Option.fromNullable(decoded[0]), (row) => new Someone(row)))

  const findByEmail = (email: string) =>
    sql`SELECT id, display_name AS name, email FROM core.persons WHERE lower(email) = lower(${email.trim()})`.pipe(
      Effect.flatMap(one),
      Effect.orDie
    )

  const find = (personId: PersonId) =>
    sql`SELECT id, display_name AS name, email FROM core.persons WHERE id = ${personId}`.pipe(Effect.flatMap(one), Effect.orDie)

  const checked = (password: Redacted.Redacted<string>) =>
    Option.match(strength(Redacted.value(password)), {
      onNone: () => Effect.succeed(password),
      onSome: (detail) => Effect.fail(new WeakPassword({ detail }))
    })

  const setPassword = (personId: PersonId, password: Redacted.Redacted<string>) =>
    Effect.gen(function*() {
      const hash = yield* passwords.hash(yield* checked(password))
      yield* sql`
        INSERT INTO identity.passwords (person_id, hash) VALUES (${personId}, ${hash})
        ON CONFLICT (person_id) DO UPDATE SET hash = EXCLUDED.hash, updated_at = now()`.pipe(Effect.orDie)
    })

  const create = (input: { readonly email: Email; readonly name: string; readonly password?: Redacted.Redacted<string> | undefined }) =>
    Effect.gen(function*() {
      const generated = input.password === undefined
      const password = yield* checked(input.password ?? (yield* passwords.generate))
      if (Option.isSome(yield* findByEmail(input.email))) return yield* new EmailTaken({ email: input.email })
      const hash = yield* passwords.hash(password)
      const person = yield* accounts.createPerson({ displayName: input.name.trim(), email: input.email }).pipe(
        // Two creations of one address at once: the unique index decides, the second is told it is taken.
        Effect.catchAllDefect((defect) =>
          String(defect).includes("persons_email_idx") ? Effect.fail(new EmailTaken({ email: input.email })) : Effect.die(defect)
        )
      )
      yield* sql`INSERT INTO identity.passwords (person_id, hash) VALUES (${person.id}, ${hash})`.pipe(Effect.orDie)
      return { person: new Someone({ id: person.id, name: person.displayName, email: input.email }), password, generated }
    }).pipe(Effect.withSpan("People.create", { captureStackTrace: false }))

  const setEmail = (personId: PersonId, email: Email) =>
    Effect.gen(function*() {
      const holder = yield* findByEmail(email)
      if (Option.isSome(holder) && holder.value.id !== personId) return yield* new EmailTaken({ email })
      yield* sql`UPDATE core.persons SET email = ${email} WHERE id = ${personId}`.pipe(Effect.orDie)
    })

  const hasPassword = (personId: PersonId) =>
    sql`SELECT 1 FROM identity.passwords WHERE person_id = ${personId}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

  // Counts an attempt against `key` in `table` and, from the threshold on, locks the key for the doubling wait: one
  // statement, so concurrent attempts each see the count of those before them. The attempt's number, or none: the key
  // is locked.
  const claim = (table: "sign_in_failures" | "sign_in_address_failures", column: "email" | "address", key: string, free: number, now: Date) =>
    sql`INSERT INTO ${sql(`identity.${table}`)} AS f (${sql(column)}, failures, locked_until, last_failed_at)
        VALUES (${key}, 1, ${free <= 1 ? new Date(now.getTime() + firstLockSeconds * 1000) : null}, ${now})
        ON CONFLICT (${sql(column)}) DO UPDATE SET failures = f.failures + 1, last_failed_at = EXCLUDED.last_failed_at,
          locked_until = CASE WHEN f.failures + 1 < ${free} THEN NULL
            ELSE ${now}::timestamptz + make_interval(secs => least(${maxLockSeconds}, ${firstLockSeconds} * power(2, least(20, f.failures + 1 - ${free})))) END
        WHERE f.locked_until IS NULL OR f.locked_until <= ${now}
        RETURNING failures`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ failures: Schema.Number })))),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => row.failures)),
      Effect.orDie
    )

  const lockedFor = (table: "sign_in_failures" | "sign_in_address_failures", column: "email" | "address", key: string, now: number) =>
    sql`SELECT locked_until FROM ${sql(`identity.${table}`)} WHERE ${sql(column)} = ${key}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ locked_until: Schema.NullOr(Schema.DateFromSelf) })))),
      Effect.map((rows) => Math.max(1, Math.ceil(((rows[0]?.locked_until?.getTime() ?? now) - now) / 1000))),
      Effect.orDie
    )

  const signIn = (emailGiven: string, password: Redacted.Redacted<string>, from?: string) =>
    Effect.gen(function*() {
      const email = emailGiven.trim().toLowerCase().slice(0, 254)
      const now = yield* Clock.currentTimeMillis
      const at = new Date(now)
      // The count decides before the hash is checked (issue 32 row 5): the address first, then the account.
      if (from !== undefined && Option.isNone(yield* claim("sign_in_address_failures", "address", from, freeAddressFailures, at))) {
        return yield* new SignInRefused({ reason: "address_locked", retryAfterSeconds: yield* lockedFor("sign_in_address_failures", "address", from, now) })
      }
      const attempt = yield* claim("sign_in_failures", "email", email, freeFailures, at)
      if (Option.isNone(attempt)) {
        return yield* new SignInRefused({ reason: "locked", retryAfterSeconds: yield* lockedFor("sign_in_failures", "email", email, now) })
      }
      const found = yield* sql`
        SELECT p.id, p.display_name AS name, p.email, w.hash
        FROM core.persons p JOIN identity.passwords w ON w.person_id = p.id
        WHERE lower(p.email) = ${email}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ ...PersonRow.fields, hash: Schema.String })))),
        Effect.orDie
      )
      const row = found[0]
      const ok = row === undefined
        ? yield* Effect.as(passwords.waste(password), false)
        : yield* passwords.verify(password, row.hash)
      if (row === undefined || !ok) {
        // This attempt's own number decides: the one that reached the threshold locked the account when it was counted.
        const wait = lockSeconds(attempt.value)
        return yield* new SignInRefused({ reason: wait > 0 ? "locked" : "invalid", retryAfterSeconds: wait })
      }
      // A success takes its attempt back: the account starts again, the address forgets one failure.
      yield* sql`DELETE FROM identity.sign_in_failures WHERE email = ${email}`.pipe(Effect.orDie)
      if (from !== undefined) {
        yield* sql`UPDATE identity.sign_in_address_failures SET failures = greatest(0, failures - 1) WHERE address = ${from}`.pipe(Effect.orDie)
      }
      return new Someone({ id: row.id, name: row.name, email: row.email })
    }).pipe(Effect.withSpan("People.signIn", { captureStackTrace: false }))

  const memberships = (personId: PersonId) =>
    sql`SELECT w.id, w.slug, w.name, w.test_of, m.role, w.member_spend_cap IS NOT NULL AS members_may_spend FROM core.members m JOIN core.workspaces w ON w.id = m.workspace_id
        WHERE m.person_id = ${personId} ORDER BY m.created_at, w.slug`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(MembershipRow))),
      Effect.map((rows) =>
        rows.map((row): Membership => ({
          workspace: new Workspace({ id: row.id, slug: row.slug, name: row.name, testOf: row.test_of }),
          role: row.role,
          spends: Spending.maySpend(row.role, row.members_may_spend)
        }))
      ),
      Effect.orDie
    )

  return People.of({ create, setPassword, setEmail, findByEmail, find, hasPassword, signIn, memberships })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<People, never, SqlClient.SqlClient | Accounts | Passwords.Passwords> = Layer.effect(People, make)
