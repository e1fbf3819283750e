/**
 * The composition root: one application built from a list of domain bundles. Every runtime (the HTTP server, its
 * worker processes, MCP over stdio, the CLI and its operator commands, the research belt), the benchmarks and the
 * tests use it, and loop over what it gathers from the bundles: operation groups, workers, HTTP mounts, MCP
 * methods, operator commands, readiness checks, demo loads and conformance fixtures. Adding a domain is one entry
 * in {@link bundles}; a host that serves other domains builds its own with {@link make}.
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import type { ContactProvider } from "@service/contacts/ContactProvider"
import * as ContactsBundle from "@service/contacts/ContactsBundle"
import * as IdentityBundle from "@service/identity/IdentityBundle"
import * as SandboxProvider from "@service/contacts/SandboxProvider"
import * as CoreBundle from "@service/core/CoreBundle"
import type { Crypto } from "@service/core/Crypto"
import * as Erasure from "@service/core/Erasure"
import * as LocalKeys from "@service/core/LocalKeys"
import type * as Method from "@service/core/Method"
import type * as Mount from "@service/core/Mount"
import * as CoreNotifications from "@service/core/Notifications"
import type * as Operation from "@service/core/Operation"
import type * as OperatorCommand from "@service/core/OperatorCommand"
import type * as Worker from "@service/core/Worker"
import * as DoorBundle from "@service/door/DoorBundle"
import * as AddressGuard from "@service/core/AddressGuard"
import * as EventsBundle from "@service/events/EventsBundle"
import * as MarketBundle from "@service/market-contract/MarketBundle"
import * as SavedSearchBundle from "@service/market-contract/SavedSearchBundle"
import * as Database from "@service/storage/Database"
import * as StorageNotifications from "@service/storage/Notifications"
import * as Migrations from "@service/storage/Migrations"
import type * as TestDatabase from "@service/storage/TestDatabase"
import * as TopicsBundle from "@service/topics/TopicsBundle"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Every domain of the application, in dependency order: a bundle may use the services of the bundles
 * listed before it.
 *
 * @since 0.1.0 @category bundles
 */
export const bundles = [
  CoreBundle.bundle,
  IdentityBundle.bundle,
  MarketBundle.bundle,
  EventsBundle.bundle,
  SavedSearchBundle.bundle,
  DoorBundle.bundle,
  TopicsBundle.bundle,
  ContactsBundle.bundle
] as const

/** The folded types of a list of bundles: what they provide, how they fail, what they still need. */
type Fold<Bs, S, E, D, R> = Bs extends readonly [infer H, ...infer T]
  ? H extends Bundle.Bundle<infer HS, infer HE, infer HD, infer HR> ? Fold<T, S | HS, E | HE, D | Exclude<HD, S>, R | HR>
  : never
  : { readonly services: S; readonly error: E; readonly deps: D; readonly requirements: R }

/** @since 0.1.0 @category models */
export type Folded<Bs extends ReadonlyArray<Bundle.AnyBundle>> = Fold<Bs, never, never, never, never>

/**
 * Provides each bundle's layer with the services of the ones before it, keeping every service.
 *
 * @since 0.1.0 @category constructors
 */
export function compose<const Bs extends ReadonlyArray<Bundle.AnyBundle>>(
  list: Bs
): Layer.Layer<Folded<Bs>["services"], Folded<Bs>["error"], Folded<Bs>["deps"]>
export function compose(list: ReadonlyArray<Bundle.AnyBundle>): Layer.Layer<never, unknown, unknown> {
  return list.reduce<Layer.Layer<never, unknown, unknown>>(
    (acc, bundle) => Layer.provideMerge(bundle.layer, acc),
    Layer.empty
  )
}

/** @since 0.1.0 @category models */
export interface Options {
  /**
   * Which delivery addresses outgoing webhooks may reach. Default: `AddressGuard.layerConfig`, public https only
   * unless `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true` (local development). A host that must never relax it
   * passes `AddressGuard.layer`; tests that run a receiver on loopback pass `AddressGuard.layerAllowingLoopbackForTests()`.
   */
  readonly addressGuard?: Layer.Layer<AddressGuard.AddressGuard> | undefined
  /**
   * Who researches unlocked contacts. Default: `SandboxProvider.layerConfig`, deterministic and reserved coordinates
   * (`@sandbox.invalid`), until a host brings a real provider's adapter meeting the `ContactProvider` contract.
   */
  readonly contactProvider?: Layer.Layer<ContactProvider> | undefined
}

/**
 * Options for suites that run without a network: the production address guard (public https only) with every
 * name resolved to one fixed public address, so an example delivery address (`hooks.example.com`) passes without
 * real DNS. Nothing is delivered unless a worker runs.
 *
 * @since 0.1.0 @category options
 */
export const offlineOptions: Options = {
  addressGuard: Layer.succeed(AddressGuard.AddressGuard, AddressGuard.make({ resolve: () => Effect.succeed(["93.184.215.14"]) }))
}

/** What the application layer gives the bundles from the platform, and the erasure it builds from them, beside their own services. */
type Platform = Database.DatabaseServices | CoreNotifications.Notifications | Crypto | AddressGuard.AddressGuard | ContactProvider | Erasure.Erasure

/**
 * An application's services over the platform: the bundles' services and the platform's, failing with `E`, needing
 * whatever the bundles depend on beyond the platform (nothing, for a complete application).
 *
 * @since 0.1.0 @category models
 */
export type AppLayer<Services, E, Deps> = Layer.Layer<Services | Platform, E, Exclude<Deps, Platform>>

/**
 * An application: the bundles, and everything the hosts loop over, gathered from them in bundle order.
 *
 * @since 0.1.0 @category models
 */
export interface Application<Services, E, Deps, R> {
  readonly bundles: ReadonlyArray<Bundle.Bundle<Services, E, Deps, R>>
  readonly groups: ReadonlyArray<Operation.Group<R>>
  readonly migrations: ReadonlyArray<Bundle.Migrations>
  // What runs outside an operation is never given the request context or the caller `Operation.execute` gives.
  readonly workers: ReadonlyArray<Worker.Worker<Exclude<R, Operation.Provided>>>
  readonly mounts: ReadonlyArray<Mount.Mount<Exclude<R, Operation.Provided>>>
  readonly methods: ReadonlyArray<Method.Method<Exclude<R, Operation.Provided>>>
  readonly operators: ReadonlyArray<OperatorCommand.Group<Exclude<R, Operation.Provided>>>
  readonly readiness: ReadonlyArray<Bundle.Check<Exclude<R, Operation.Provided>>>
  readonly demo: ReadonlyArray<Bundle.DemoTask<Exclude<R, Operation.Provided>>>
  /** Every bundle's erasers, gathered into the application's `Erasure` service (decision 0071). */
  readonly erasers: ReadonlyArray<Erasure.Eraser<Exclude<R, Operation.Provided>>>
  /** The conformance fixtures of the bundles that declare one. */
  readonly fixtures: ReadonlyArray<Bundle.Fixture<Exclude<R, Operation.Provided>>>
  /**
   * Every service of every bundle over a migrated database. Give it a database layer and a Crypto layer; the
   * platform ports (the webhook address guard, the contact provider) take their defaults unless `options` says.
   */
  readonly layer: <E1, E2>(
    database: Layer.Layer<Database.DatabaseServices, E1>,
    crypto: Layer.Layer<Crypto, E2>,
    options?: Options
  ) => AppLayer<Services, E | E1 | E2 | Migrations.MigrationError | ConfigError.ConfigError, Deps>
  /**
   * {@link layer} over the configured database (DATABASE_URL, else the embedded one in SERVICE_DATA_DIR) and the
   * local keys. `createIfMissing: false` refuses an embedded database or key file that does not exist yet.
   */
  readonly layerFromConfig: (options?: { readonly createIfMissing?: boolean | undefined } & Options) => AppLayer<Services, unknown, Deps>
  /**
   * The services an operator command runs over, by its access: {@link layerFromConfig}, creating the embedded
   * database for `database` commands and refusing a missing one for `existing-database` commands.
   */
  readonly operatorServices: (access: "database" | "existing-database") => AppLayer<Services, unknown, Deps>
  /** The test database every conformance run starts from: the migrations and each fixture's prepared rows. */
  readonly snapshot: TestDatabase.Snapshot<unknown>
  /**
   * What the configuration of the platform ports calls for saying loudly at start (a host's banner): today one
   * line while `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES` is on.
   */
  readonly warnings: Effect.Effect<ReadonlyArray<string>, ConfigError.ConfigError>
}

const gather = <A>(list: ReadonlyArray<Bundle.AnyBundle>, pick: (bundle: Bundle.AnyBundle) => ReadonlyArray<A> | undefined) =>
  list.flatMap((bundle) => pick(bundle) ?? [])

/**
 * An application of `list`, in dependency order (a bundle may use the services of those before it).
 *
 * @since 0.1.0 @category constructors
 */
export function make<const Bs extends ReadonlyArray<Bundle.AnyBundle>>(
  list: Bs
): Application<Folded<Bs>["services"], Folded<Bs>["error"], Folded<Bs>["deps"], Folded<Bs>["requirements"]>
export function make(list: ReadonlyArray<Bundle.AnyBundle>): Application<never, unknown, unknown, unknown> {
  const migrations = list.flatMap((bundle) => bundle.migrations)
  const erasers = gather(list, (bundle) => bundle.erasers)
  // One erasure over every bundle's stores, built over all their services.
  const composed = Layer.provideMerge(Erasure.layer(erasers), compose(list))
  const layer = <E1, E2>(
    database: Layer.Layer<Database.DatabaseServices, E1>,
    crypto: Layer.Layer<Crypto, E2>,
    options?: Options
  ) =>
    composed.pipe(
      Layer.provideMerge(Migrations.layer(migrations)),
      Layer.provideMerge(options?.addressGuard ?? AddressGuard.layerConfig),
      Layer.provideMerge(options?.contactProvider ?? SandboxProvider.layerConfig),
      Layer.provideMerge(crypto),
      // Caches and idle workers hear the database's notifications through core's port (decision 0016: storage
      // does not depend on core, so the application connects the two).
      Layer.provideMerge(Layer.effect(CoreNotifications.Notifications, StorageNotifications.Notifications)),
      Layer.provideMerge(database)
    )
  const layerFromConfig = (options?: { readonly createIfMissing?: boolean | undefined } & Options) =>
    layer(
      Database.layerFromConfigWith({ createIfMissing: options?.createIfMissing ?? true }),
      LocalKeys.layerWith({ createIfMissing: options?.createIfMissing ?? true }),
      options
    )
  const fixtures = gather(list, (bundle) => (bundle.fixture === undefined ? [] : [bundle.fixture]))
  const prepared = fixtures.flatMap((fixture) => (fixture.prepare === undefined ? [] : [fixture.prepare]))
  return {
    bundles: list,
    groups: gather(list, (bundle) => bundle.groups),
    migrations,
    workers: gather(list, (bundle) => bundle.workers),
    mounts: gather(list, (bundle) => bundle.mounts),
    methods: gather(list, (bundle) => bundle.methods),
    operators: gather(list, (bundle) => bundle.operators),
    readiness: gather(list, (bundle) => bundle.readiness),
    demo: gather(list, (bundle) => bundle.demo),
    erasers,
    fixtures,
    layer,
    layerFromConfig,
    operatorServices: (access) => layerFromConfig({ createIfMissing: access === "database" }),
    snapshot: {
      key: ["fixtures", ...prepared.map((prepare) => prepare.key)].join(":"),
      migrations,
      prepare: Layer.mergeAll(Layer.empty, ...prepared.map((prepare) => prepare.layer))
    },
    warnings: AddressGuard.warnings
  }
}

/**
 * The application of {@link bundles}: what `npm start`, the worker, MCP over stdio and the `service` binary run.
 *
 * @since 0.1.0 @category applications
 */
export const app = make(bundles)

/**
 * The operation groups of every bundle, in bundle order: what the transports serve.
 *
 * @since 0.1.0 @category groups
 */
export const groups = app.groups

/**
 * The migrations of every bundle.
 *
 * @since 0.1.0 @category migrations
 */
export const migrations = app.migrations

/**
 * Every domain service over a migrated database. Give it a database layer and a Crypto layer.
 *
 * @since 0.1.0 @category layers
 */
export const layer = app.layer
