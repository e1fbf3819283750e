/**
 * The composition root: one application layer built from the list of domain bundles. Every runtime (the
 * node server, MCP over stdio, the CLI's operator commands, the research belt), the benchmarks and the
 * tests use it. Adding a domain is one entry in {@link bundles}.
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import type { ContactProvider } from "@service/contacts/ContactProvider"
import * as ContactsBundle from "@service/contacts/ContactsBundle"
import * as SandboxProvider from "@service/contacts/SandboxProvider"
import * as CoreBundle from "@service/core/CoreBundle"
import type { Crypto } from "@service/core/Crypto"
import type * as Operation from "@service/core/Operation"
import * as DoorBundle from "@service/door/DoorBundle"
import * as AddressGuard from "@service/events/AddressGuard"
import * as EventsBundle from "@service/events/EventsBundle"
import * as MarketBundle from "@service/market-contract/MarketBundle"
import * as SavedSearchBundle from "@service/market-contract/SavedSearchBundle"
import type * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as TopicsBundle from "@service/topics/TopicsBundle"
import * as Layer from "effect/Layer"

/**
 * Every domain of the application, in dependency order: a bundle may use the services of the bundles
 * listed before it.
 *
 * @since 0.1.0 @category bundles
 */
export const bundles = [
  CoreBundle.bundle,
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

/**
 * The operation groups of every bundle, in bundle order: what the transports serve.
 *
 * @since 0.1.0 @category groups
 */
export const groups: ReadonlyArray<Operation.Group<Folded<typeof bundles>["requirements"]>> = bundles.flatMap(
  (bundle): ReadonlyArray<Operation.Group<Folded<typeof bundles>["requirements"]>> => bundle.groups
)

/**
 * The migrations of every bundle.
 *
 * @since 0.1.0 @category migrations
 */
export const migrations: ReadonlyArray<Bundle.Migrations> = bundles.flatMap((bundle) => bundle.migrations)

/** @since 0.1.0 @category models */
export interface Options {
  /**
   * Which delivery addresses outgoing webhooks may reach. Default: `AddressGuard.layer`, public https only.
   * Tests that run a receiver on loopback pass `AddressGuard.layerAllowingLoopbackForTests()`.
   */
  readonly addressGuard?: Layer.Layer<AddressGuard.AddressGuard> | undefined
  /**
   * Who researches unlocked contacts. Default: `SandboxProvider.layerConfig`, deterministic and reserved coordinates
   * (`@sandbox.invalid`), until a host brings a real provider's adapter meeting the `ContactProvider` contract.
   */
  readonly contactProvider?: Layer.Layer<ContactProvider> | undefined
}

/**
 * Every domain service over a migrated database. Give it a database layer and a Crypto layer.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <E1, E2>(
  database: Layer.Layer<Database.DatabaseServices, E1>,
  crypto: Layer.Layer<Crypto, E2>,
  options?: Options
) =>
  compose(bundles).pipe(
    Layer.provideMerge(Migrations.layer(migrations)),
    Layer.provideMerge(options?.addressGuard ?? AddressGuard.layer),
    Layer.provideMerge(options?.contactProvider ?? SandboxProvider.layerConfig),
    Layer.provideMerge(crypto),
    Layer.provideMerge(database)
  )
