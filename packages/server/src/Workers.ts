/**
 * Where an application's workers (its bundles' background loops: applying door Arrivals, sending deliveries,
 * comparing saved searches, finishing contact unlocks) run:
 *
 * - {@link embedded}: inside the API process, by default; `SERVICE_EMBEDDED_WORKER=false` when separate worker
 *   processes do the work against the same PostgreSQL;
 * - {@link program}: `npm run worker`, a process that only runs the workers, next to API nodes started with
 *   `SERVICE_EMBEDDED_WORKER=false` (docs/decisions/0055).
 *
 * A worker process needs `DATABASE_URL`: PGlite is one process's database, so there the server's embedded worker
 * is the only one, and without it the process refuses to start with one line. It builds the same application
 * layers as the server (migrating under advisory locks, so any number of servers and workers may start at once)
 * with the API nodes' keys (`SERVICE_SEALING_KEYS` and `SERVICE_FINGERPRINT_KEY`, or the data folder's key file),
 * never generating keys: a worker with other keys would write contacts the API nodes cannot match. Interrupted
 * (SIGTERM, SIGINT), the work in hand is given back to its queue and the process exits.
 *
 * @since 0.1.0
 */
import type * as App from "@service/app/App"
import * as LocalKeys from "@service/core/LocalKeys"
import * as Worker from "@service/core/Worker"
import * as Database from "@service/storage/Database"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"

/**
 * The workers of `app` in this process, unless `SERVICE_EMBEDDED_WORKER=false`.
 *
 * @since 0.1.0 @category layers
 */
export const embedded = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const enabled = yield* Config.boolean("SERVICE_EMBEDDED_WORKER").pipe(Config.withDefault(true))
      if (!enabled) return
      const idle = yield* Config.option(Config.duration("SERVICE_WORKER_IDLE"))
      yield* Worker.runAll(app.workers, { name: `server-${hostname()}-${process.pid}`, poll: Option.getOrUndefined(idle) })
    }).pipe(Effect.orDie)
  )

/** @since 0.1.0 @category errors */
export class WorkerRefused extends Data.TaggedError("WorkerRefused")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** @since 0.1.0 @category models */
export interface Settings {
  /** Names the worker in the rows it holds: `SERVICE_WORKER_NAME`, else host, pid and a random suffix. */
  readonly name: string
  /** One wait for every worker when nothing is due (`SERVICE_WORKER_IDLE`); each worker's own otherwise. */
  readonly idle: Option.Option<Duration.Duration>
  /** How often it logs what the workers did since the last line (`SERVICE_WORKER_REPORT_EVERY`, default 10 s). */
  readonly reportEvery: Duration.Duration
}

/** @since 0.1.0 @category config */
export const settings: Config.Config<Settings> = Config.all({
  name: Config.string("SERVICE_WORKER_NAME").pipe(
    Config.map((name) => name.trim()),
    Config.option,
    Config.map(Option.filter((name) => name.length > 0)),
    Config.map(Option.getOrElse(() => `worker-${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`))
  ),
  idle: Config.option(Config.duration("SERVICE_WORKER_IDLE")),
  reportEvery: Config.duration("SERVICE_WORKER_REPORT_EVERY").pipe(Config.withDefault(Duration.seconds(10)))
})

/** What the worker refuses to start without, in one line. @since 0.1.0 @category constants */
export const NEEDS_POSTGRES =
  "A separate worker needs DATABASE_URL, the PostgreSQL the API nodes share: PGlite is one process's database, so with it the server's embedded worker applies Arrivals."

/**
 * `DATABASE_URL`, or {@link WorkerRefused} when it is unset or blank.
 *
 * @since 0.1.0 @category config
 */
export const requirePostgres = Effect.gen(function*() {
  const url = yield* Config.option(Config.redacted("DATABASE_URL"))
  if (Option.isNone(url) || Redacted.value(url.value).trim().length === 0) {
    return yield* new WorkerRefused({ reason: NEEDS_POSTGRES })
  }
})

/**
 * Runs every worker of `app` until interrupted, logging what they did every `reportEvery`.
 *
 * @since 0.1.0 @category programs
 */
export const run = <S, E, D, R>(app: App.Application<S, E, D, R>, options: Settings) =>
  Effect.gen(function*() {
    const totals = yield* Worker.runAll(app.workers, {
      name: options.name,
      poll: Option.getOrUndefined(options.idle),
      reportEvery: options.reportEvery
    })
    // Interrupted (SIGTERM, SIGINT): what each worker did, in the last line.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(totals), (done) =>
        Effect.logInfo(
          `Worker ${options.name} stopped after ${
            app.workers.flatMap((worker) => worker.unit === undefined ? [] : [`${worker.name} ${done.get(worker.name) ?? 0} ${worker.unit}`]).join(", ")
          }`
        ))
    )
    yield* Effect.logInfo(`Worker ${options.name} is running ${app.workers.map((worker) => worker.name).join(", ")}`)
    return yield* Effect.never
  })

/**
 * The whole worker process for `app`: refuse without PostgreSQL, build the services (migrating) with the API
 * nodes' keys, then {@link run}. The application options are code, never configuration: a test's worker allows
 * its loopback receiver this way.
 *
 * @since 0.1.0 @category programs
 */
export const program = <S, E, D, R>(app: App.Application<S, E, D, R>, appOptions?: App.Options) =>
  Effect.gen(function*() {
    yield* requirePostgres
    const options = yield* settings
    const context = yield* Layer.build(app.layer(Database.layerPg, LocalKeys.layerWith({ createIfMissing: false }), appOptions))
    const info = yield* Effect.provide(Database.DatabaseInfo, context)
    yield* Effect.logInfo(`Worker ${options.name} opened ${info.description} (migrations applied)`)
    return yield* Effect.provide(run(app, options), context)
  })
