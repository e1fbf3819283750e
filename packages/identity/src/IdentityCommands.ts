/**
 * Operator commands of the identity bundle, run on the database directly like `service corpus` (the deployment
 * operator's acts, before anyone can sign in):
 *
 * ```text
 * service workspaces create <slug> [--name <name>]
 * service workspaces add-member <workspace-slug> <email> --role owner|admin|member
 * service people create --email <email> --name <name> [--password-stdin]
 * ```
 *
 * Adding a member sits under `workspaces` because `service members` is the members' own commands over the API
 * (`list`, `set-role`, `remove`): one word cannot be both (decision 0067).
 *
 * `people create` reads the password from standard input with `--password-stdin` (`printf '%s' "$PW" | service people
 * create …`), or generates one and prints it once. Then the person signs in at `/sign-in` (or `service login`).
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import * as OperatorCommand from "@service/core/OperatorCommand"
import { Role } from "@service/core/Principal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Email, People } from "./People.js"
import { PublicAddress } from "@service/core/PublicAddress"

const Slug = WorkspaceSlug.annotations({ description: "The workspace's slug: lower-case letters, digits and hyphens." })

/** @since 0.1.0 @category commands */
export const workspacesCreate = OperatorCommand.make({
  word: "create",
  description: "Create a workspace. Then add its first owner with `service workspaces add-member <slug> <email> --role owner`.",
  access: "database",
  positional: ["slug"],
  input: Schema.Struct({
    slug: Slug,
    name: Schema.optional(Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120))).annotations({ description: "Its display name (default: the slug)." })
  }),
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* (yield* Accounts).createWorkspace({ slug: input.slug, name: input.name ?? input.slug }).pipe(
        Effect.catchTags({
          WorkspaceSlugTaken: (taken) => Effect.fail(OperatorCommand.usage(taken.message)),
          TestWorkspaceLimit: (limit) => Effect.fail(OperatorCommand.usage(limit.message))
        })
      )
      return {
        json: { id: workspace.id, slug: workspace.slug, name: workspace.name },
        text: `created workspace ${workspace.slug} (${workspace.id})\nnext: service workspaces add-member ${workspace.slug} <email> --role owner`
      }
    })
})

/** @since 0.1.0 @category commands */
export const peopleCreate = OperatorCommand.make({
  word: "create",
  description:
    "Create a person who can sign in. The password comes from standard input with --password-stdin (12 characters at least), or is generated and printed once.",
  access: "database",
  input: Schema.Struct({
    email: Email,
    name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(120)).annotations({ description: "The person's name, as others see it." }),
    password_stdin: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
      description: "Read the password from standard input (one line; the trailing newline is dropped)."
    })
  }),
  run: (input, context) =>
    Effect.gen(function*() {
      const given = input.password_stdin ? Option.some(Redacted.make((yield* context.stdin).replace(/\r?\n$/, ""))) : Option.none()
      const created = yield* (yield* People).create({ email: input.email, name: input.name, password: Option.getOrUndefined(given) }).pipe(
        Effect.catchTags({
          EmailTaken: (taken) => Effect.fail(OperatorCommand.usage(taken.message)),
          WeakPassword: (weak) => Effect.fail(OperatorCommand.usage(weak.message))
        })
      )
      const address = yield* (yield* PublicAddress).get
      const password = created.generated ? Redacted.value(created.password) : undefined
      return {
        json: {
          id: created.person.id,
          email: created.person.email,
          name: created.person.name,
          ...(password === undefined ? {} : { password }),
          sign_in_url: `${address.base}/sign-in`
        },
        text: [
          `created ${created.person.name} <${created.person.email ?? ""}> (${created.person.id})`,
          ...(password === undefined ? [] : [`password: ${password}   (shown once: keep it now)`]),
          `sign in at ${address.base}/sign-in; add them to a workspace with: service workspaces add-member <slug> ${created.person.email ?? ""} --role member`
        ].join("\n")
      }
    })
})

/** @since 0.1.0 @category commands */
export const membersAdd = OperatorCommand.make({
  word: "add-member",
  description: "Make a person (by email) a member of a workspace with a role; a member already there gets the new role.",
  access: "existing-database",
  positional: ["workspace_slug", "email"],
  input: Schema.Struct({
    workspace_slug: Slug,
    email: Email,
    role: Role.annotations({ description: "owner, admin or member." })
  }),
  run: (input) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      const workspace = yield* accounts.findWorkspaceBySlug(input.workspace_slug)
      if (Option.isNone(workspace)) return yield* OperatorCommand.usage(`No workspace with the slug ${input.workspace_slug}.`)
      const person = yield* (yield* People).findByEmail(input.email)
      if (Option.isNone(person)) {
        return yield* OperatorCommand.usage(`No person with the address ${input.email}: create them with service people create --email ${input.email} --name <name>.`)
      }
      // The API's rule holds here too: a workspace's only owner keeps the owner role (issue 32 row 9).
      const members = yield* accounts.listMembers(workspace.value.id)
      const owners = members.filter((m) => m.role === "owner")
      if (input.role !== "owner" && owners.length === 1 && owners[0]?.person.id === person.value.id) {
        return yield* OperatorCommand.usage(
          `${input.email} is the only owner of ${workspace.value.slug}: make another member owner first (service workspaces add-member ${workspace.value.slug} <email> --role owner).`
        )
      }
      // An owner or admin made a member no longer answers for faceless keys (decision 0091): as through the API
      // without hand_keys_to, they are revoked, first (a failure after it leaves less power, not more).
      const before = members.find((m) => m.person.id === person.value.id)?.role
      const revoked = before !== undefined && before !== "member" && input.role === "member"
        ? (yield* accounts.releaseFacelessKeysOf(workspace.value.id, person.value.id)).revoked
        : []
      yield* accounts.addMember({ workspaceId: workspace.value.id, personId: person.value.id, role: input.role }).pipe(
        Effect.catchTag("AccountNotFound", (missing) => Effect.fail(OperatorCommand.unexpected(missing.message)))
      )
      return {
        json: {
          workspace: workspace.value.slug,
          person_id: person.value.id,
          email: person.value.email,
          role: input.role,
          faceless_keys_revoked: revoked.map((key) => ({ id: key.id, name: key.label }))
        },
        text: [
          `${person.value.name} <${person.value.email ?? ""}> is ${input.role} of ${workspace.value.slug}`,
          ...(revoked.length === 0 ? [] : [`revoked the faceless keys they answered for: ${revoked.map((key) => `${key.label} (${key.id})`).join(", ")}`])
        ].join("\n")
      }
    })
})

/** @since 0.1.0 @category commands */
export const operators: ReadonlyArray<OperatorCommand.Group<Accounts | People | PublicAddress>> = [
  OperatorCommand.group({
    word: "workspaces",
    description: "Create workspaces and add their members (direct database access).",
    commands: [workspacesCreate, membersAdd]
  }),
  OperatorCommand.group({ word: "people", description: "Create people who sign in (direct database access).", commands: [peopleCreate] })
]
