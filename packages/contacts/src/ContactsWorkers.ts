/**
 * Contact unlocks' background work: taking over unlocks whose research a dead process abandoned (its lease,
 * `SERVICE_CONTACT_UNLOCK_LEASE`, ran out) and those waiting for an unavailable provider, until each is settled.
 *
 * @since 0.1.0
 */
import * as Worker from "@service/core/Worker"
import * as Effect from "effect/Effect"
import { leaseConfig, Unlocks } from "./Unlocks.js"

/** @since 0.1.0 @category workers */
export const takeover = Worker.make({
  name: "contacts.unlocks",
  description: "finishes contact unlocks a dead process abandoned or that wait for the provider",
  unit: "unlocks",
  lease: { variable: "SERVICE_CONTACT_UNLOCK_LEASE", config: leaseConfig },
  poll: "5 seconds",
  run: Worker.draining((name) => Effect.flatMap(Unlocks, (unlocks) => unlocks.resume(name)))
})

/** @since 0.1.0 @category workers */
export const workers = [takeover] as const
