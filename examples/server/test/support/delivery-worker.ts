/**
 * The `npm run worker` program (`Worker.programWith`) with one change made in code, never by configuration:
 * outgoing deliveries may reach a receiver on loopback, the test's. Spawned by `DeliveryKill.test.ts`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as AddressGuard from "@service/events/AddressGuard"
import * as Effect from "effect/Effect"
import * as Worker from "../../src/Worker.js"

Worker.programWith({ addressGuard: AddressGuard.layerAllowingLoopbackForTests() }).pipe(
  Effect.scoped,
  NodeRuntime.runMain({ disableErrorReporting: false })
)
