/**
 * What each domain exports for the composition root: its service layer, its migrations and its operation
 * groups. The `app` package builds the one application layer every runtime uses from a list of bundles;
 * adding a domain is one entry in that list.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type { Group } from "./Operation.js"

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
 * A domain bundle. `Services` is what its layer provides, `E` how building it can fail (configuration),
 * `Deps` what the layer needs from the platform (SQL client, Crypto) or from bundles listed before it,
 * `R` what its operations need at run time.
 *
 * @since 0.1.0 @category models
 */
export interface Bundle<Services, E, Deps, R> {
  readonly name: string
  readonly layer: Layer.Layer<Services, E, Deps>
  /** In dependency order within the bundle; the runner orders across bundles by `dependsOn`. */
  readonly migrations: ReadonlyArray<Migrations>
  readonly groups: ReadonlyArray<Group<R>>
}

/**
 * Declares a bundle.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <Services, E, Deps, R>(bundle: Bundle<Services, E, Deps, R>): Bundle<Services, E, Deps, R> => bundle

/**
 * A bundle whose types are erased (a layer's output is contravariant, hence `never`).
 *
 * @since 0.1.0 @category models
 */
export type AnyBundle = Bundle<never, unknown, unknown, unknown>
