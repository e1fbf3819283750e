/**
 * The events bundle: the workspace event ledger, Destinations (MCP subscriptions), the delivery worker and the
 * delivery log over SQL, with the `events` migrations and the events group (subscriptions, deliveries). Bundles listed after it (the door, topics) record their steps in its ledger.
 * The address guard comes from the host (`App.layer`): production rules unless a test allows loopback.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import type * as Operation from "@service/core/Operation"
import * as Layer from "effect/Layer"
import * as Delivery from "./Delivery.js"
import * as DeliveryLog from "./DeliveryLog.js"
import * as DeliveryOperations from "./DeliveryOperations.js"
import * as Destinations from "./Destinations.js"
import * as EventLedger from "./EventLedger.js"
import * as EventMethods from "./EventMethods.js"
import * as EventsErasers from "./EventsErasers.js"
import * as EventsMigrations from "./EventsMigrations.js"
import * as EventsWorkers from "./EventsWorkers.js"

/** What running the events operations needs. @since 0.1.0 @category models */
export type Requirements = DeliveryOperations.Requirements

const groups: ReadonlyArray<Operation.Group<Requirements>> = [DeliveryOperations.group]

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "events",
  layer: Layer.mergeAll(EventLedger.layer, Destinations.layer, Delivery.layer().pipe(Layer.provide(EventLedger.layer)), DeliveryLog.layer),
  migrations: [EventsMigrations.migrations],
  groups,
  workers: EventsWorkers.workers,
  methods: EventMethods.methods,
  erasers: EventsErasers.erasers
})
