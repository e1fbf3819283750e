/**
 * The door bundle: the CRM, the event ledger, Sources and intake over SQL, with their migrations. Its
 * operations (workspace routes, MCP tools, CLI commands) come next; the door route itself is served by the
 * runtime, which hands the raw request to `Intake.receive`.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import type * as Operation from "@service/core/Operation"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as Layer from "effect/Layer"
import * as DoorMigrations from "./DoorMigrations.js"
import * as Intake from "./Intake.js"
import * as Sources from "./Sources.js"

// No declared operations yet: nothing for the transports to serve from this bundle.
const groups: ReadonlyArray<Operation.Group<never>> = []

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "door",
  layer: Intake.layer.pipe(Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer, EventLedger.layer))),
  migrations: [CrmMigrations.migrations, EventsMigrations.migrations, DoorMigrations.migrations],
  groups
})
