/**
 * The part of `npm start` that runs once the port is bound, for any application: open and migrate the database,
 * bootstrap the demo workspace and its key, serve the API, print the banner, then run the bundles' demo tasks
 * (the demo corpus load) in the background with progress. `Main` loads this module only after it listens, so the
 * probes answer while it loads.
 *
 * @since 0.1.0
 */
import type * as App from "@service/app/App"
import * as Operation from "@service/core/Operation"
import * as Curl from "@service/http/Curl"
import * as Database from "@service/storage/Database"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as NodePath from "node:path"
import { DEMO_KEY_FILE_NAME, ensureDemo } from "./Demo.js"
import type * as Listener from "./Listener.js"
import * as Server from "./Server.js"

// Measured from the process start (performance's time origin), so module loading counts too.
const since = () => `${Math.round(performance.now())} ms`

/** @since 0.1.0 @category models */
export interface Options {
  /** The address to print (what curl can reach). */
  readonly base: string
  readonly demoKey: Option.Option<Redacted.Redacted<string>>
  /** Completed with the application once it is built; the listener hands it every request from then on. */
  readonly app: Deferred.Deferred<Listener.App>
  /** What `/ready` says is starting until then. */
  readonly phase: Ref.Ref<string>
}

/**
 * The commands to try that the demo tasks name: each operation's capability example as a curl line.
 *
 * @since 0.1.0 @category banner
 */
export const tryLines = <S, E, D, R>(app: App.Application<S, E, D, R>, target: Curl.Target): ReadonlyArray<string> =>
  app.demo.flatMap((task) => task.examples ?? []).flatMap((name) =>
    app.groups.flatMap((group) =>
      Operation.servedOn(group, "http").filter((op) => op.name === name).map((op) => Curl.commandLine(target, group, op, op.capability.example))
    )
  )

/**
 * Runs `app` until interrupted.
 *
 * @since 0.1.0 @category programs
 */
export const run = <S, E, D, R>(application: App.Application<S, E, D, R>, { app, base, demoKey, phase }: Options) =>
  Effect.gen(function*() {
    const dataDir = yield* Database.dataDirConfig
    const services = yield* Layer.build(application.layerFromConfig())
    const info = yield* Database.DatabaseInfo.pipe(Effect.provide(services))
    const listening = new URL(base)
    yield* Server.announceAddress(listening.hostname, Number(listening.port)).pipe(Effect.provide(services))
    yield* Ref.set(phase, "bootstrapping the demo workspace")
    const demo = yield* ensureDemo(demoKey, NodePath.join(dataDir, DEMO_KEY_FILE_NAME)).pipe(Effect.provide(services))
    yield* Deferred.succeed(app, yield* Server.makeApp(application).pipe(Effect.provide(services)))
    const statuses = yield* Effect.forEach(application.demo, (task) =>
      Effect.map(task.status, (status) => `  ${task.label.padEnd(11)} ${status}`)).pipe(Effect.provide(services))

    const warnings = yield* application.warnings
    const key = Redacted.value(demo.apiKey)
    const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024)
    const tries = tryLines(application, { baseUrl: base, apiKey: key, workspace: demo.slug })
    yield* Console.log(
      [
        ``,
        `service is listening on ${base}  (API served in ${since()}, RSS ${rssMb} MB, database: ${info.description})`,
        ``,
        `  workspace   ${demo.slug}`,
        `  API key     ${key}`,
        demo.apiKeySource === "environment"
          ? `              (fixed by SERVICE_DEMO_API_KEY)`
          : `              (kept in ${Option.getOrElse(demo.keyFile, () => "the data folder")}, mode 0600; ${
            demo.apiKeySource === "minted" ? "new" : "reused"
          })`,
        `  OpenAPI     ${base}/openapi.json`,
        `  API docs    ${base}/docs`,
        `  MCP         ${base}/mcp  (streamable HTTP; same x-api-key, or OAuth)`,
        `  Probes      ${base}/health  ${base}/ready`,
        ...statuses,
        ``,
        ...(tries.length === 0 ? [] : [`Try:`, ...tries.map((line) => `  ${line}`), ``]),
        // Last, where the eye lands: a setting that must never reach production.
        ...warnings.flatMap((line) => [`WARNING  ${line}`, ``])
      ].join("\n")
    )
    // Each demo task does nothing when its work is done (a corpus already published).
    for (const task of application.demo) yield* Effect.forkScoped(Effect.provide(task.run, services))
    return yield* Effect.never
  })
