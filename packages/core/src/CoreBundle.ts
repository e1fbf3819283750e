/**
 * The core bundle: accounts and authentication, metering and rate limits over SQL, and the `core`
 * schema's migrations. It serves no operations of its own.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as Accounts from "./Accounts.js"
import * as Bundle from "./Bundle.js"
import * as CoreMigrations from "./CoreMigrations.js"
import type * as Operation from "./Operation.js"
import * as Meter from "./Meter.js"
import * as RateLimiter from "./RateLimiter.js"

// Typed, so the application's requirements stay those of the domains' operations (`[]` alone infers unknown).
const groups: ReadonlyArray<Operation.Group<never>> = []

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "core",
  layer: Layer.mergeAll(Accounts.layerSql, Meter.layerSql, RateLimiter.layerSql),
  migrations: [CoreMigrations.migrations],
  groups
})
