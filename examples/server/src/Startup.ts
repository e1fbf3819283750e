/**
 * The part of `npm start` that runs once the port is bound: open and migrate the database, bootstrap the demo
 * workspace and its key, serve the API, print the banner, then load the demo corpus in the background with
 * progress. `main.ts` loads this module only after it listens, so the probes answer while it loads.
 *
 * @since 0.1.0
 */
import * as App from "@service/app/App"
import * as LocalKeys from "@service/core/LocalKeys"
import { Corpus } from "@service/market-warehouse/Corpus"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as Database from "@service/storage/Database"
import * as Console from "effect/Console"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as NodePath from "node:path"
import { DEMO_KEY_FILE_NAME, ensureDemo } from "./Bootstrap.js"
import type * as Listener from "./Listener.js"
import * as Server from "./Server.js"
import { CorpusProgress } from "./ServerReadiness.js"

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
 * Runs until interrupted.
 *
 * @since 0.1.0 @category programs
 */
export const run = ({ app, base, demoKey, phase }: Options) =>
  Effect.gen(function*() {
    const dataDir = yield* Database.dataDirConfig
    const progress = yield* Ref.make(Option.none<string>())
    const services = yield* Layer.build(
      App.layer(Database.layerFromConfig, LocalKeys.layer).pipe(
        Layer.provideMerge(Layer.succeed(CorpusProgress, progress))
      )
    )
    const info = yield* Database.DatabaseInfo.pipe(Effect.provide(services))
    yield* Ref.set(phase, "bootstrapping the demo workspace")
    const demo = yield* ensureDemo(demoKey, NodePath.join(dataDir, DEMO_KEY_FILE_NAME)).pipe(Effect.provide(services))
    yield* Deferred.succeed(app, yield* Server.makeApp.pipe(Effect.provide(services)))
    const active = yield* Effect.flatMap(Corpus, (corpus) => corpus.active).pipe(Effect.provide(services))

    const key = Redacted.value(demo.apiKey)
    const market = `${base}/api/v1/workspaces/${demo.slug}/market-data`
    const rssMb = Math.round(process.memoryUsage().rss / 1024 / 1024)
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
        `  MCP         ${base}/mcp  (streamable HTTP; same x-api-key)`,
        `  Probes      ${base}/health  ${base}/ready`,
        `  Corpus      ${
          Option.match(active, {
            onNone: () => "loading the demo corpus in the background: reads answer 503 until /ready says ready",
            onSome: (p) => `${p.snapshotId}, published ${p.publishedAt.toISOString()}`
          })
        }`,
        ``,
        `Try:`,
        `  curl -s ${market}/capabilities/compact -H 'x-api-key: ${key}'`,
        `  curl -s -X POST ${market}/suppliers/search -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"state":"Zacatecas","scian_codes":["212"],"limit":3}'`,
        `  curl -s ${market}/coverage -H 'x-api-key: ${key}'`,
        ``
      ].join("\n")
    )

    if (Option.isNone(active)) {
      yield* Ref.set(progress, Option.some("the demo corpus is loading (reference catalogs first)"))
      const report = (event: DemoLoad.DemoLoadEvent) => {
        switch (event._tag) {
          case "Started": {
            const status = `the demo corpus is loading (${event.alreadyLoaded} of ${event.total} files)`
            return Effect.zipRight(
              Ref.set(progress, Option.some(status)),
              Effect.logInfo(
                event.alreadyLoaded > 0
                  ? `Resuming the demo corpus load in ${event.snapshotId}: ${event.alreadyLoaded} of ${event.total} files were loaded before`
                  : `Loading the demo corpus (${event.total} files) into ${event.snapshotId}`
              )
            )
          }
          case "FileLoaded":
            return Effect.zipRight(
              Ref.set(progress, Option.some(`the demo corpus is loading (${event.done} of ${event.total} files)`)),
              Effect.logInfo(`Demo corpus ${event.done}/${event.total}: ${event.file} (${event.accepted} rows)`)
            )
          case "Publishing":
            return Ref.set(progress, Option.some("the demo corpus is being published"))
        }
      }
      yield* DemoLoad.ensureLoaded(report).pipe(
        Effect.tap(Option.match({
          onNone: () => Effect.void,
          onSome: (loaded) =>
            Effect.logInfo(
              `Published the demo corpus ${loaded.publication.snapshotId} after ${since()}: ${DemoLoad.describeRows(loaded.rows)}. Ready.`
            )
        })),
        Effect.catchAllCause((cause) =>
          Effect.zipRight(
            Ref.set(progress, Option.some("the demo corpus load failed: see the server log")),
            Effect.logError("Could not load the demo corpus; reads answer serving_projection_unavailable until a corpus is published", cause)
          )
        ),
        Effect.ensuring(Ref.set(progress, Option.none())),
        Effect.provide(services),
        Effect.forkScoped
      )
    }
    return yield* Effect.never
  })
