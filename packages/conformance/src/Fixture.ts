/**
 * What every harness gives the suite to stand on, built from the application's bundles (each declares its own
 * fixture; nothing here knows a domain):
 *
 * - a test database holding what the fixtures prepare (the published demo corpus): `app.snapshot`;
 * - a workspace with an owner person and an API key holding every scope the served groups accept, so no call is
 *   refused for a scope or a role; and a test workspace of it with the same owner and key scopes, for the
 *   operations only a test workspace takes (`capability.runsIn`);
 * - beside the owner's key, the credentials each refusal of access is checked with (`Credential`): the owner's key
 *   with the read scopes only, a member's key and a faceless key, both with every scope;
 * - the records the capability examples name, seeded by each bundle's fixture in both workspaces, with the
 *   example values that name them;
 * - the values no response may carry, read by the fixtures once seeded.
 *
 * Seeded once per harness (once per test file and database), directly through the services.
 *
 * @since 0.1.0
 */
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import type * as Bundle from "@service/core/Bundle"
import { WorkspaceSlug } from "@service/core/Ids"
import type * as Operation from "@service/core/Operation"
import { isReadScope, type Person, Principal, type Role, type Scope } from "@service/core/Principal"
import * as RequestContext from "@service/core/RequestContext"
import { Caller } from "@service/core/RequestContext"
import type { Workspace } from "@service/core/Workspace"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/**
 * The configuration a harness's application is built with: the environment's, with the per-workspace rate limit
 * raised above the suite's own call count (every example, refusal and seat of every operation runs in one
 * workspace within a few minutes; the limit itself is tested on its own).
 *
 * @since 0.1.0 @category layers
 */
export const config: Layer.Layer<never> = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["SERVICE_RATE_LIMIT_PER_MINUTE", "1000000"]])).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))
)

/**
 * What `app.layer` takes from the harness: no network (`App.offlineOptions`: example delivery addresses resolve to
 * a fixed public address). Nothing is delivered: the harnesses run no workers.
 *
 * @since 0.1.0 @category layers
 */
export const appOptions: App.Options = App.offlineOptions

/**
 * Every scope the operations of `groups` accept: a credential holding them all is refused by none.
 *
 * @since 0.1.0 @category scopes
 */
export const scopesOf = (groups: ReadonlyArray<Operation.Group<unknown>>): ReadonlyArray<Scope> =>
  Array.from(new Set(groups.flatMap((group) => group.operations.flatMap((op) => op.scopes)))).sort()

/** @since 0.1.0 @category models */
export type Where = "workspace" | "test_workspace"

/**
 * Who calls: the owner with every scope (the default), the owner with the read scopes only, a member with every
 * scope, or a faceless key (no person behind it) with every scope.
 *
 * @since 0.1.0 @category models
 */
export type As = "owner" | "reader" | "member" | "faceless"

/** A credential of a seat: the secret a transport sends and the principal it authenticates as. @since 0.1.0 @category models */
export interface Credential {
  readonly key: string
  readonly caller: Principal
}

/** What running every group of the application needs. @since 0.1.0 @category models */
export type Requirements = App.Folded<typeof App.bundles>["requirements"]

/**
 * One workspace the suite calls in: its owner, the owner's API key, and the example values the fixtures gave there.
 *
 * @since 0.1.0 @category models
 */
export interface Seat {
  readonly workspace: Workspace
  readonly owner: Person
  readonly key: string
  /** The owner calling with that key, as the transports authenticate it (for in-process clients). */
  readonly caller: Principal
  /** Every credential of the seat, the owner's (`key`, `caller`) among them. */
  readonly as: { readonly [A in As]: Credential }
  readonly examples: Bundle.Examples
}

/**
 * What {@link seed} made.
 *
 * @since 0.1.0 @category models
 */
export interface Seeded {
  readonly seats: { readonly [W in Where]: Seat }
  /** Values no response may carry. */
  readonly forbidden: ReadonlyArray<string>
}

const mergeExamples = (all: ReadonlyArray<Bundle.Examples>): Bundle.Examples => {
  const out: Record<string, Readonly<Record<string, unknown>>> = {}
  for (const examples of all) for (const [operation, values] of Object.entries(examples)) out[operation] = { ...out[operation], ...values }
  return out
}

/**
 * Makes workspace `slug` and its test workspace, each with the owner and a key holding every scope of `groups`,
 * then runs every bundle fixture's seed in both and reads their forbidden values.
 *
 * @since 0.1.0 @category records
 */
export const seed = <S, E, D, R>(app: App.Application<S, E, D, R>, slug: string, groups: ReadonlyArray<Operation.Group<unknown>> = app.groups) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const owner = yield* accounts.createPerson({ displayName: "Conformance owner" })
    const member = yield* accounts.createPerson({ displayName: "Conformance member" })
    const scopes = scopesOf(groups)
    const seat = (workspace: Workspace) =>
      Effect.gen(function*() {
        yield* accounts.addMember({ workspaceId: workspace.id, personId: owner.id, role: "owner" })
        yield* accounts.addMember({ workspaceId: workspace.id, personId: member.id, role: "member" })
        const credential = (label: string, person: Option.Option<Person>, role: Role, held: ReadonlyArray<Scope>) =>
          Effect.map(
            accounts.issueCredential({
              workspaceId: workspace.id,
              kind: "api_key",
              label,
              personId: Option.getOrUndefined(Option.map(person, (p) => p.id)),
              scopes: [...held]
            }),
            (key): Credential => ({
              key: Redacted.value(key.secret),
              caller: new Principal({ workspace, person, role, scopes: [...held], credential: { id: key.id, kind: key.kind } })
            })
          )
        const as = {
          owner: yield* credential("conformance", Option.some(owner), "owner", scopes),
          reader: yield* credential("conformance reader", Option.some(owner), "owner", scopes.filter(isReadScope)),
          member: yield* credential("conformance member", Option.some(member), "member", scopes),
          // Faceless keys act as members (Accounts.authenticate).
          faceless: yield* credential("conformance faceless", Option.none(), "member", scopes)
        }
        // Seeded as the owner would be: the fixtures may read the caller like an operation does.
        const caller = as.owner.caller
        const examples = yield* Effect.forEach(app.fixtures, (fixture) =>
          fixture.seed === undefined ? Effect.succeed({}) : fixture.seed({ workspace, owner })).pipe(
            Effect.provideService(Caller, caller),
            RequestContext.withFreshRequest("belt")
          )
        return { workspace, owner, key: as.owner.key, caller, as, examples: mergeExamples(examples) } satisfies Seat
      })
    const main = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(slug), name: slug })
    const test = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(`${slug}-test`), name: `${slug} (test)`, testOf: main })
    const seats = { workspace: yield* seat(main), test_workspace: yield* seat(test) }
    const forbidden = yield* Effect.forEach(app.fixtures, (fixture) => fixture.forbidden ?? Effect.succeed([])).pipe(
      Effect.provideService(Caller, seats.workspace.caller),
      RequestContext.withFreshRequest("belt")
    )
    return { seats, forbidden: forbidden.flat() } satisfies Seeded
  }).pipe(Effect.orDie)
