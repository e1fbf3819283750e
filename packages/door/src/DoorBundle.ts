/**
 * The door bundle: the CRM, Sources, Arrivals and intake over SQL, with their migrations (the event ledger is the
 * events bundle's, listed before it),
 * and the door's operation groups (Sources and templates, Arrivals, test workspaces) with the CRM's read of a
 * contact. The door route itself
 * is served by the runtime, which hands the raw request to `Intake.receive`.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import type * as Operation from "@service/core/Operation"
import * as Crm from "@service/crm/Crm"
import * as CrmOperations from "@service/crm/CrmOperations"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as CrmErasers from "@service/crm/CrmErasers"
import * as Layer from "effect/Layer"
import * as ArrivalOperations from "./ArrivalOperations.js"
import * as Arrivals from "./Arrivals.js"
import * as DoorLimiter from "./DoorLimiter.js"
import * as DoorErasers from "./DoorErasers.js"
import * as DoorFixture from "./DoorFixture.js"
import * as DoorMigrations from "./DoorMigrations.js"
import * as DoorWorkers from "./DoorWorkers.js"
import * as Intake from "./Intake.js"
import * as IntakeRoutes from "./IntakeRoutes.js"
import * as SandboxOperations from "./SandboxOperations.js"
import * as SourceOperations from "./SourceOperations.js"
import * as Sources from "./Sources.js"

/** What running the door's operations needs. @since 0.1.0 @category models */
export type Requirements =
  | SourceOperations.Requirements
  | ArrivalOperations.Requirements
  | SandboxOperations.Requirements
  | CrmOperations.Requirements

const groups: ReadonlyArray<Operation.Group<Requirements>> = [
  SourceOperations.group,
  ArrivalOperations.group,
  SandboxOperations.group,
  CrmOperations.group
]

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "door",
  layer: Layer.mergeAll(Intake.layer, Arrivals.layer, DoorLimiter.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer))
  ),
  migrations: [CrmMigrations.migrations, DoorMigrations.migrations],
  groups,
  workers: DoorWorkers.workers,
  mounts: IntakeRoutes.mounts,
  fixture: DoorFixture.fixture,
  erasers: [...DoorErasers.erasers, ...CrmErasers.erasers]
})
