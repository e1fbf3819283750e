/**
 * The identity bundle: people who sign in, sessions, members and invitations, API keys, and the Authenticator every
 * transport uses (keys through core's adapter, sessions here), with the `identity` migrations, the key, member and
 * invitation groups (HTTP and CLI), the sign-in pages, and the operator commands that make workspaces and people.
 * Listed right after the core bundle, whose Authenticator it wraps and replaces.
 *
 * @since 0.1.0
 */
import type { Accounts } from "@service/core/Accounts"
import * as Bundle from "@service/core/Bundle"
import type * as Mount from "@service/core/Mount"
import type * as Operation from "@service/core/Operation"
import type { Caller } from "@service/core/RequestContext"
import * as Layer from "effect/Layer"
import * as IdentityAuthenticator from "./IdentityAuthenticator.js"
import * as IdentityCommands from "./IdentityCommands.js"
import * as IdentityDemo from "./IdentityDemo.js"
import * as IdentityErasers from "./IdentityErasers.js"
import * as IdentityFixture from "./IdentityFixture.js"
import * as IdentityMigrations from "./IdentityMigrations.js"
import * as InvitationOperations from "./InvitationOperations.js"
import * as Invitations from "./Invitations.js"
import * as KeyOperations from "./KeyOperations.js"
import * as MemberOperations from "./MemberOperations.js"
import * as Members from "./Members.js"
import * as OAuthRoutes from "./OAuthRoutes.js"
import * as OAuthServer from "./OAuthServer.js"
import * as Passwords from "./Passwords.js"
import * as People from "./People.js"
import * as Sessions from "./Sessions.js"
import * as SignInPages from "./SignInPages.js"
import * as SpendingOperations from "./SpendingOperations.js"
import * as WhoamiOperations from "./WhoamiOperations.js"

const base = Layer.mergeAll(Passwords.layer, Sessions.layer, Invitations.layer)
const people = People.layer.pipe(Layer.provideMerge(base))
const oauth = OAuthServer.layer.pipe(Layer.provideMerge(people))

/** @since 0.1.0 @category layers */
export const layer = Layer.mergeAll(Members.layer, IdentityAuthenticator.layer).pipe(Layer.provideMerge(oauth))

/** What running the identity operations needs. @since 0.1.0 @category models */
export type Requirements = Accounts | InvitationOperations.Requirements

const groups: ReadonlyArray<Operation.Group<Requirements | Caller>> = [
  KeyOperations.group,
  MemberOperations.group,
  InvitationOperations.group,
  SpendingOperations.group,
  WhoamiOperations.group
]

const mounts: ReadonlyArray<Mount.Mount<SignInPages.Requirements | OAuthRoutes.Requirements>> = [...SignInPages.mounts, ...OAuthRoutes.mounts]

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "identity",
  layer,
  migrations: [IdentityMigrations.migrations],
  groups,
  mounts,
  operators: IdentityCommands.operators,
  demo: [IdentityDemo.demoPerson],
  fixture: IdentityFixture.fixture,
  erasers: IdentityErasers.erasers
})
