/**
 * The core bundle: accounts and authentication, metering and rate limits over SQL, the outbound ports (email
 * and providers, with no adapter until a host gives one, and suppressed in test workspaces), the `core` schema's
 * migrations, and the account group (credits and usage).
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import * as AccountOperations from "./AccountOperations.js"
import * as Accounts from "./Accounts.js"
import * as Bundle from "./Bundle.js"
import * as CoreErasers from "./CoreErasers.js"
import * as CoreMigrations from "./CoreMigrations.js"
import * as CreditsCommands from "./CreditsCommands.js"
import type * as Operation from "./Operation.js"
import type { Caller } from "./RequestContext.js"
import * as Meter from "./Meter.js"
import * as Outbound from "./Outbound.js"
import * as PublicAddress from "./PublicAddress.js"
import * as RateLimiter from "./RateLimiter.js"

// The account group (credits and usage) is core's only operation group.
const groups: ReadonlyArray<Operation.Group<Meter.Meter | Caller>> = [AccountOperations.group]

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "core",
  layer: Layer.mergeAll(Accounts.layerSql, Meter.layerSql, RateLimiter.layerSql, Outbound.layerNotConfigured, PublicAddress.layer),
  migrations: [CoreMigrations.migrations],
  groups,
  operators: [CreditsCommands.operators],
  erasers: CoreErasers.erasers
})
