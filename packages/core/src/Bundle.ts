/**
 * What each domain exports for the composition root, and the whole of its contribution: its service layer, its
 * migrations and operation groups, and what lives around the operations (background workers, HTTP routes that are
 * not operations, extra MCP methods, operator commands, readiness checks, and the conformance fixture that makes
 * each of its operations' examples runnable). The `app` package builds the one application every runtime uses
 * from a list of bundles; the hosts and transports loop over it and import no domain, so adding a domain is one
 * entry in that list.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Effect from "effect/Effect"
import type * as Erasure from "./Erasure.js"
import type * as Layer from "effect/Layer"
import type * as Method from "./Method.js"
import type * as Mount from "./Mount.js"
import type { Group } from "./Operation.js"
import type * as OperatorCommand from "./OperatorCommand.js"
import type { Person } from "./Principal.js"
import type * as Worker from "./Worker.js"
import type { Workspace } from "./Workspace.js"

/**
 * A package's migrations, structurally the `PackageMigrations` the storage runner applies (core does not
 * depend on storage).
 *
 * @since 0.1.0 @category models
 */
export interface Migrations {
  readonly name: string
  readonly dependsOn?: ReadonlyArray<string> | undefined
  readonly migrations: Readonly<Record<string, Effect.Effect<unknown, unknown, SqlClient.SqlClient>>>
}

/**
 * One thing `/ready` checks (a corpus publication is active): the state found, in words an operator can act on.
 * A failure counts as not ready.
 *
 * @since 0.1.0 @category models
 */
export interface Check<R> {
  readonly name: string
  readonly run: Effect.Effect<{ readonly ready: boolean; readonly detail: string }, unknown, R>
}

/**
 * Example values a fixture gives, by operation name: the fields of each operation's capability example that name
 * a record the fixture seeded (`{ contact_read: { contact_id: "contact_..." } }`). They replace the example's
 * placeholders (`"<contact_id>"`); anything still a placeholder is read through the example's `exampleFrom`.
 *
 * @since 0.1.0 @category models
 */
export type Examples = Readonly<Record<string, Readonly<Record<string, unknown>>>>

/**
 * Where a fixture seeds: the suite's workspace (`workspace.isTest` false) and its test workspace, each with the
 * owner who makes the calls there.
 *
 * @since 0.1.0 @category models
 */
export interface SeedTarget {
  readonly workspace: Workspace
  readonly owner: Person
}

/**
 * How the conformance suite stands a bundle's operations up: data every test database starts with, the records
 * its capability examples name (seeded in the suite's workspace and in its test workspace, whose owner makes the
 * calls), and the values no answer may carry.
 *
 * @since 0.1.0 @category models
 */
export interface Fixture<R> {
  /**
   * Rows every test database of the suite holds before it starts (the published demo corpus), written once per
   * test run and engine, outside any workspace. `key` names them: the same key must write the same rows.
   */
  readonly prepare?: { readonly key: string; readonly layer: Layer.Layer<never, unknown, SqlClient.SqlClient> } | undefined
  /**
   * Seeds the records the bundle's examples name, in one workspace (called for the suite's workspace and for its
   * test workspace), and returns the example values that name them.
   */
  readonly seed?: ((where: SeedTarget) => Effect.Effect<Examples, unknown, R>) | undefined
  /** Values no response may carry (source identities, publishers, contact coordinates), read once seeded. */
  readonly forbidden?: Effect.Effect<ReadonlyArray<string>, unknown, R> | undefined
}

/**
 * A task the demo runtimes (`npm start`, MCP over stdio) run in the background once they serve, e.g. load and
 * publish the demo corpus when nothing is published. It reports its own progress and does nothing when its work
 * is already done.
 *
 * @since 0.1.0 @category models
 */
export interface DemoTask<R> {
  readonly name: string
  /** The start-up banner's label for it, e.g. `Corpus`. */
  readonly label: string
  /** What the banner says before it runs: already done, or what runs in the background. */
  readonly status: Effect.Effect<string, never, R>
  readonly run: Effect.Effect<void, never, R>
  /** Operations whose capability example the banner prints as a command to try (curl), in order. */
  readonly examples?: ReadonlyArray<string> | undefined
}

/**
 * What a domain declares, each part with what it needs at run time: its operations (`RG`), workers (`RW`),
 * routes (`RM`), methods (`RMe`), operator commands (`RO`), readiness checks (`RC`), demo tasks (`RD`) and
 * fixture (`RF`) and erasers (`RE`). {@link make} gathers them into one {@link Bundle}.
 *
 * @since 0.1.0 @category models
 */
export interface Declared<Services, E, Deps, RG, RW, RM, RMe, RO, RC, RD, RF, RE = never> {
  readonly name: string
  readonly layer: Layer.Layer<Services, E, Deps>
  /** In dependency order within the bundle; the runner orders across bundles by `dependsOn`. */
  readonly migrations: ReadonlyArray<Migrations>
  readonly groups: ReadonlyArray<Group<RG>>
  /** Background loops, run by every host that runs workers (the server's embedded worker, worker processes). */
  readonly workers?: ReadonlyArray<Worker.Worker<RW>> | undefined
  /** HTTP routes that are not operations (raw-body intake, public pages), mounted and listed in OpenAPI. */
  readonly mounts?: ReadonlyArray<Mount.Mount<RM>> | undefined
  /** Extra JSON-RPC methods served on every MCP endpoint (`events/*`). */
  readonly methods?: ReadonlyArray<Method.Method<RMe>> | undefined
  /** Operator commands for the CLI (`corpus`, `credits`, `topics-index`). */
  readonly operators?: ReadonlyArray<OperatorCommand.Group<RO>> | undefined
  /** What `/ready` checks besides the database and the migrations. */
  readonly readiness?: ReadonlyArray<Check<RC>> | undefined
  /** What the demo runtimes load on their first start. */
  readonly demo?: ReadonlyArray<DemoTask<RD>> | undefined
  readonly fixture?: Fixture<RF> | undefined
  /**
   * How a person's erasure reaches the bundle's stores that hold personal data (decision 0071): the application
   * gathers every bundle's into the one `Erasure` service the CRM's erasure calls in its transaction.
   */
  readonly erasers?: ReadonlyArray<Erasure.Eraser<RE>> | undefined
}

/**
 * A domain bundle. `Services` is what its layer provides, `E` how building it can fail (configuration),
 * `Deps` what the layer needs from the platform (SQL client, Crypto) or from bundles listed before it,
 * `R` what its operations, workers, routes, methods and commands need at run time.
 *
 * @since 0.1.0 @category models
 */
export interface Bundle<Services, E, Deps, R> extends Declared<Services, E, Deps, R, R, R, R, R, R, R, R, R> {}

/**
 * Declares a bundle. What its operations, workers, routes, methods, commands, checks, demo tasks and fixture need
 * is gathered into one requirement.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <Services, E, Deps, RG, RW = never, RM = never, RMe = never, RO = never, RC = never, RD = never, RF = never, RE = never>(
  bundle: Declared<Services, E, Deps, RG, RW, RM, RMe, RO, RC, RD, RF, RE>
): Bundle<Services, E, Deps, RG | RW | RM | RMe | RO | RC | RD | RF | RE> => bundle

/**
 * A bundle whose types are erased (a layer's output is contravariant, hence `never`).
 *
 * @since 0.1.0 @category models
 */
export type AnyBundle = Bundle<never, unknown, unknown, unknown>
