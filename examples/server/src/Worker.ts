/**
 * `npm run worker`: a process that only applies stored Arrivals to the CRM, sends outgoing deliveries and compares
 * saved searches with new publications, next
 * to API nodes started with `SERVICE_EMBEDDED_WORKER=false`, all against one PostgreSQL (docs/decisions/0055).
 *
 * - It needs `DATABASE_URL`: PGlite is one process's database, so there the server's embedded worker is the
 *   only worker. Without it the worker refuses to start with one line.
 * - It builds the same application layers as the server (`App.layer`), so it applies the same migrations on
 *   start; they run under advisory locks, so any number of servers and workers may start at once.
 * - Its keys come from `SERVICE_SEALING_KEYS` and `SERVICE_FINGERPRINT_KEY` or the data folder's key file, as
 *   the server's do, but it never generates keys: a worker with other keys would write contacts the API nodes
 *   cannot match.
 * - It claims Arrivals through `Intake.drain` in a loop (the same claims and attempts as `Intake.work`, which
 *   reports no counts), runs the hourly retention `Intake.work` runs, and logs how many Arrivals it applied.
 * - Interrupted (SIGTERM, SIGINT), the attempt in hand is given back to the queue and the process exits.
 *
 * @since 0.1.0
 */
import * as App from "@service/app/App"
import * as LocalKeys from "@service/core/LocalKeys"
import { Intake } from "@service/door/Intake"
import { Delivery } from "@service/events/Delivery"
import { Unlocks } from "@service/contacts/Unlocks"
import { SavedSearches } from "@service/market-contract/SavedSearches"
import * as Database from "@service/storage/Database"
import * as Clock from "effect/Clock"
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

/** @since 0.1.0 @category errors */
export class WorkerRefused extends Data.TaggedError("WorkerRefused")<{ readonly reason: string }> {
  override get message(): string {
    return this.reason
  }
}

/** @since 0.1.0 @category models */
export interface Settings {
  /** Names the worker in the Arrivals it holds: `SERVICE_WORKER_NAME`, else host, pid and a random suffix. */
  readonly name: string
  /** Wait when no Arrival is due (`SERVICE_WORKER_IDLE`, default 1 second). */
  readonly idle: Duration.Duration
  /** How often it logs the Arrivals applied since the last line (`SERVICE_WORKER_REPORT_EVERY`, default 10 s). */
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
  idle: Config.duration("SERVICE_WORKER_IDLE").pipe(Config.withDefault(Duration.seconds(1))),
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
 * The server's application layers for a worker: PostgreSQL from `DATABASE_URL`, migrated on build, and the keys
 * of the API nodes (never generated here).
 *
 * @since 0.1.0 @category layers
 */
export const services = (options?: App.Options) => App.layer(Database.layerPg, LocalKeys.layerWith({ createIfMissing: false }), options)

/**
 * Applies due Arrivals until interrupted, with the hourly retention, logging progress every `reportEvery`.
 *
 * @since 0.1.0 @category programs
 */
export const run = (options: Settings) =>
  Effect.gen(function*() {
    const intake = yield* Intake
    const total = yield* Ref.make(0)
    const reported = yield* Ref.make(0)
    const startedAt = yield* Clock.currentTimeMillis
    const report = Effect.gen(function*() {
      const now = yield* Ref.get(total)
      const before = yield* Ref.getAndSet(reported, now)
      if (now === before) return
      const seconds = Math.max(0.001, ((yield* Clock.currentTimeMillis) - startedAt) / 1000)
      yield* Effect.logInfo(
        `Worker ${options.name}: applied ${now - before} Arrivals since the last report, ${now} in all (${(now / seconds).toFixed(1)}/s since start)`
      )
    })
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(options.reportEvery), report)))
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(intake.purgeExpired, Effect.sleep(Duration.hours(1)))))
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Ref.get(total), (applied) => Effect.logInfo(`Worker ${options.name} stopped after ${applied} Arrivals`))
    )
    yield* Effect.logInfo(`Worker ${options.name} is applying Arrivals and sending deliveries`)
    // Outgoing deliveries ride the same process: claimed on their own queue, sent with their own concurrency.
    yield* Effect.forkScoped((yield* Delivery).process(options.name, options.idle))
    // So do saved searches: compared with each new publication, each alert recorded once whichever worker finds it.
    yield* Effect.forkScoped((yield* SavedSearches).watch)
    // And contact unlocks whose research a dead process abandoned, or that wait for an unavailable provider.
    yield* Effect.forkScoped((yield* Unlocks).watch(options.name))
    return yield* Effect.forever(
      Effect.flatMap(intake.drain(options.name), (attempts) =>
        attempts === 0 ? Effect.sleep(options.idle) : Ref.update(total, (n) => n + attempts))
    )
  })

/**
 * The whole worker process: refuse without PostgreSQL, build the services (migrating), then {@link run}. The
 * application options are code, never configuration: a test's worker allows its loopback receiver this way.
 *
 * @since 0.1.0 @category programs
 */
export const programWith = (appOptions?: App.Options) => Effect.gen(function*() {
  yield* requirePostgres
  const options = yield* settings
  const context = yield* Layer.build(services(appOptions))
  const info = yield* Effect.provide(Database.DatabaseInfo, context)
  yield* Effect.logInfo(`Worker ${options.name} opened ${info.description} (migrations applied)`)
  return yield* Effect.provide(run(options), context)
})

/**
 * {@link programWith} the production options.
 *
 * @since 0.1.0 @category programs
 */
export const program = programWith()
