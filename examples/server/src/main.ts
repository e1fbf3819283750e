/**
 * `npm start`: the node HTTP runtime on embedded PGlite (or PostgreSQL with DATABASE_URL), with the demo
 * workspace bootstrapped and the demo corpus loaded on first start.
 *
 * It listens first: this module imports only what binding the port needs, so GET /health answers while the
 * rest of the program (`Startup.ts`) is still loading. Then the database is opened and migrated and the API is
 * served; the demo corpus loads in the background with progress, and until it is published market-data reads
 * answer `serving_projection_unavailable` (503, retryable) and GET /ready answers 503.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Listener from "./Listener.js"
import * as StartupFailure from "./StartupFailure.js"
import * as Telemetry from "./Telemetry.js"

const settings = Config.all({
  port: Config.integer("PORT").pipe(
    Config.validate({
      message: "Expected a port number from 0 to 65535 (0 picks a free one)",
      validation: (port) => port >= 0 && port <= 65535
    }),
    Config.withDefault(3000),
    Config.withDescription("HTTP port (0 picks a free one)")
  ),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1"), Config.withDescription("Interface to bind")),
  demoKey: Config.option(Config.redacted("SERVICE_DEMO_API_KEY"))
})

// Reported when the start fails before the settings are read.
let listening: StartupFailure.Listening = { port: 3000, host: "127.0.0.1" }

const program = Effect.gen(function*() {
  const { demoKey, host, port } = yield* settings
  listening = { port, host }
  const app = yield* Deferred.make<Listener.App>()
  const phase = yield* Ref.make("loading the program")
  const server = yield* Layer.build(
    Listener.layer({ port, host, app, starting: Effect.map(Ref.get(phase), Listener.starting) })
  )
  const bound = Context.get(server, HttpServer.HttpServer).address
  // Print the address curl can reach as printed: the bound one, or loopback for a wildcard bind.
  const shownHost = bound._tag !== "TcpAddress" || bound.hostname === "0.0.0.0" || bound.hostname === "::"
    ? "127.0.0.1"
    : bound.hostname.includes(":") ? `[${bound.hostname}]` : bound.hostname
  const base = `http://${shownHost}:${bound._tag === "TcpAddress" ? bound.port : port}`
  yield* Effect.logInfo(`Listening on ${base} after ${Math.round(performance.now())} ms: /health answers; starting the rest`)
  const Startup = yield* Effect.promise(() => import("./Startup.js"))
  yield* Ref.set(phase, "opening the database and applying migrations")
  return yield* Startup.run({ app, base, demoKey, phase })
})

program.pipe(
  Effect.scoped,
  Effect.provide(Telemetry.layer),
  Effect.tapErrorCause((cause) =>
    Option.match(StartupFailure.describeCause(cause, listening), {
      onNone: () => Effect.void,
      onSome: (line) => Console.error(line)
    })
  ),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
