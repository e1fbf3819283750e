/**
 * The `npm run worker` program (`WorkerMain.make`) with one change made in code, never by configuration:
 * outgoing deliveries may reach a receiver on loopback, the test's. Spawned by `DeliveryKill.test.ts`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as App from "@service/app/App"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Workers from "@service/server/Workers"
import * as Effect from "effect/Effect"

Workers.program(App.app, { addressGuard: AddressGuard.layerAllowingLoopbackForTests() }).pipe(
  Effect.scoped,
  NodeRuntime.runMain({ disableErrorReporting: false })
)
