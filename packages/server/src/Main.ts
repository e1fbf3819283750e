/**
 * `npm start` for any application: the node HTTP host on embedded PGlite (or PostgreSQL with DATABASE_URL), with
 * the demo workspace bootstrapped and the bundles' demo tasks (the demo corpus) run on first start.
 *
 * It listens first: this module imports only what binding the port needs, and `load` brings the application (all
 * of its domains) and the rest of the program afterwards, so GET /health answers while they load. Then the
 * database is opened and migrated and the API is served; until the demo corpus is published, market-data reads
 * answer `serving_projection_unavailable` (503, retryable) and GET /ready answers 503.
 *
 * ```ts
 * Main.runMain(Main.make(() => import("@service/app/App").then((module) => module.app)))
 * ```
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as App from "@service/app/App"
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

/**
 * The program: listen, load the application, start it.
 *
 * @since 0.1.0 @category programs
 */
export const program = <S, E, D, R>(
  load: () => Promise<App.Application<S, E, D, R>>,
  listening: (where: StartupFailure.Listening) => void = () => undefined
) =>
  Effect.gen(function*() {
    const { demoKey, host, port } = yield* settings
    listening({ port, host })
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
    const [application, Startup] = yield* Effect.promise(() => Promise.all([load(), import("./Startup.js")]))
    yield* Ref.set(phase, "opening the database and applying migrations")
    return yield* Startup.run(application, { app, base, demoKey, phase })
  })

/**
 * {@link program} as a process's main program: scoped, with telemetry, and a start that fails prints one line
 * that says what to change. Run it with {@link runMain}; its requirements are none once `load` gives a complete
 * application.
 *
 * @since 0.1.0 @category programs
 */
export const make = <S, E, D, R>(load: () => Promise<App.Application<S, E, D, R>>) => {
  // Reported when the start fails before the settings are read.
  let where: StartupFailure.Listening = { port: 3000, host: "127.0.0.1" }
  return program(load, (listening) => {
    where = listening
  }).pipe(
    Effect.scoped,
    Effect.provide(Telemetry.layer),
    Effect.tapErrorCause((cause) =>
      Option.match(StartupFailure.describeCause(cause, where), {
        onNone: () => Effect.void,
        onSome: (line) => Console.error(line)
      })
    )
  )
}

/**
 * Runs a main program: exit code 1 on failure (already printed), 0 when interrupted.
 *
 * @since 0.1.0 @category programs
 */
export const runMain = <A, E>(main: Effect.Effect<A, E, never>): void => NodeRuntime.runMain(main, { disableErrorReporting: true })
