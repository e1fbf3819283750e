/**
 * The events domain's background work: sending the signed webhook deliveries Destinations and MCP subscriptions
 * are waiting for, claimed on the `WorkQueue` with a lease (`SERVICE_DELIVERY_LEASE`) and sent concurrently, on
 * the Standard Webhooks retry schedule.
 *
 * @since 0.1.0
 */
import * as Worker from "@service/core/Worker"
import * as Effect from "effect/Effect"
import { Delivery, leaseConfig } from "./Delivery.js"

/** @since 0.1.0 @category workers */
export const delivery = Worker.make({
  name: "events.delivery",
  description: "sends signed webhook deliveries to Destinations and MCP subscriptions",
  lease: { variable: "SERVICE_DELIVERY_LEASE", config: leaseConfig },
  poll: Worker.defaultQueuePoll,
  run: ({ name, poll }) => Effect.flatMap(Delivery, (service) => service.process(name, poll))
})

/** @since 0.1.0 @category workers */
export const workers = [delivery] as const
