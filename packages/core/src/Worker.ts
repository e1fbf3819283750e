/**
 * Background work a domain declares with its bundle: a named loop (apply stored Arrivals, send deliveries, compare
 * saved searches, take over abandoned unlocks) that every host runs the same way, in the API process (the
 * embedded worker) or in worker processes, by looping over the application's workers. The host knows no domain:
 * it names the process, supervises each loop and reports what the loops say they did.
 *
 * A loop runs until interrupted. Supervision restarts a loop that dies (a defect) after a growing pause, so one
 * bad row or a lost connection never stops the process's other work; a loop that ends by itself is started again
 * the same way.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"

/**
 * What a running loop is given.
 *
 * @since 0.1.0 @category models
 */
export interface Context {
  /** The process's worker name, written on the rows it claims (`server-<host>-<pid>`, `worker-<host>-<pid>-<suffix>`). */
  readonly name: string
  /**
   * How long to wait when nothing is due: the worker's own `poll`, unless the host sets one for every worker. For a
   * loop that listens for its rows, the longest wait (a fallback).
   */
  readonly poll: Duration.Duration
  /** Counts units of work done (Arrivals applied...), for the host's progress lines. */
  readonly done: (units: number) => Effect.Effect<void>
}

/**
 * A declared background loop.
 *
 * @since 0.1.0 @category models
 */
export interface Worker<R> {
  /** `<domain>.<loop>`, e.g. `door.intake`: named in logs and progress lines. */
  readonly name: string
  /** What it does, in one line. */
  readonly description: string
  /** What `done` counts, plural (`Arrivals`); a loop that counts nothing leaves it out. */
  readonly unit?: string | undefined
  /**
   * How long a claim holds a row before another worker may take it over, read from the domain's own setting
   * (shown at start; the domain's queue reads the same setting).
   */
  readonly lease?: { readonly variable: string; readonly config: Config.Config<Duration.Duration> } | undefined
  /** The wait when nothing is due, for a loop that polls (default 1 second); a loop on its own clock leaves it out. */
  readonly poll?: Duration.DurationInput | undefined
  readonly run: (context: Context) => Effect.Effect<unknown, never, R>
}

/**
 * Declares a worker.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(worker: Worker<R>): Worker<R> => worker

/**
 * The loop of a worker over a queue: `drain` works every due row and says how many it worked; with none, the loop
 * waits its poll before it looks again.
 *
 * @since 0.1.0 @category constructors
 */
export const draining = <R>(drain: (worker: string) => Effect.Effect<number, never, R>) => (context: Context): Effect.Effect<never, never, R> =>
  Effect.forever(Effect.flatMap(drain(context.name), (worked) => (worked === 0 ? Effect.sleep(context.poll) : context.done(worked))))

/** @since 0.1.0 @category constants */
export const defaultPoll: Duration.Duration = Duration.seconds(1)

/**
 * The fallback poll of a loop over a `WorkQueue` that listens for its rows (`WorkQueue.process`): a notification,
 * the next row's due time or an expiring lease wakes it first, so the poll only bounds a notification never heard.
 *
 * @since 0.1.0 @category constants
 */
export const defaultQueuePoll: Duration.Duration = Duration.seconds(10)

/** How long a crashed loop waits before it starts again: 1 s, doubling up to a minute. */
const restartSchedule = Schedule.exponential(Duration.seconds(1)).pipe(Schedule.union(Schedule.spaced(Duration.minutes(1))))

/**
 * Runs one worker until interrupted, starting it again after a defect (with a growing pause, logged) or when its
 * loop ends.
 *
 * @since 0.1.0 @category running
 */
export const supervise = <R>(worker: Worker<R>, context: Context): Effect.Effect<never, never, R> =>
  worker.run(context).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logError(`Worker loop ${worker.name} stopped; starting it again`, cause)
    ),
    Effect.repeat(restartSchedule),
    Effect.zipRight(Effect.never),
    Effect.annotateLogs({ worker: worker.name }),
    Effect.withSpan(`Worker.${worker.name}`, { captureStackTrace: false })
  )

/** @since 0.1.0 @category models */
export interface RunOptions {
  /** The process's worker name. */
  readonly name: string
  /** One poll for every worker (`SERVICE_WORKER_IDLE`), instead of each worker's own. */
  readonly poll?: Duration.Duration | undefined
  /** How often to log what the loops did since the last line (none: never). */
  readonly reportEvery?: Duration.DurationInput | undefined
}

/**
 * Runs every worker, each supervised, in the current scope, and logs what they did every `reportEvery`.
 * Returns the running totals by worker name.
 *
 * @since 0.1.0 @category running
 */
export const runAll = <R>(
  workers: ReadonlyArray<Worker<R>>,
  options: RunOptions
): Effect.Effect<Ref.Ref<ReadonlyMap<string, number>>, never, R | Scope.Scope> =>
  Effect.gen(function*() {
    const totals = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
    for (const worker of workers) {
      const context: Context = {
        name: options.name,
        poll: options.poll ?? Duration.decode(worker.poll ?? defaultPoll),
        done: (units) =>
          units === 0 ? Effect.void : Ref.update(totals, (map) => new Map([...map, [worker.name, (map.get(worker.name) ?? 0) + units]]))
      }
      // A lease setting that does not parse fails the domain's own layer first; here it only goes unshown.
      const lease = worker.lease === undefined ? Option.none() : yield* Effect.option(worker.lease.config)
      const polls = worker.poll === undefined && options.poll === undefined ? Option.none() : Option.some(context.poll)
      yield* Effect.logInfo(`Worker ${options.name} runs ${describe(worker, lease, polls)}`)
      yield* Effect.forkScoped(supervise(worker, context))
    }
    const reportEvery = options.reportEvery
    if (reportEvery !== undefined) {
      const reported = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
      const report = Effect.gen(function*() {
        const now = yield* Ref.get(totals)
        const before = yield* Ref.getAndSet(reported, now)
        const lines = workers.filter((worker) => worker.unit !== undefined).flatMap((worker) => {
          const total = now.get(worker.name) ?? 0
          const since = total - (before.get(worker.name) ?? 0)
          return since === 0 ? [] : [`${worker.name} ${since} ${worker.unit} (${total} in all)`]
        })
        if (lines.length > 0) yield* Effect.logInfo(`Worker ${options.name} since the last report: ${lines.join("; ")}`)
      })
      yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(reportEvery), report)))
    }
    return totals
  })

/**
 * One line per worker for the start-up log: name, what it does, lease and poll.
 *
 * @since 0.1.0 @category formatting
 */
export const describe = <R>(worker: Worker<R>, lease: Option.Option<Duration.Duration>, poll: Option.Option<Duration.Duration>): string => {
  const settings = [
    ...Option.toArray(Option.map(lease, (d) => `lease ${Duration.format(d)}`)),
    ...Option.toArray(Option.map(poll, (d) => `polls every ${Duration.format(d)}`))
  ]
  return `${worker.name}: ${worker.description}${settings.length === 0 ? "" : ` (${settings.join(", ")})`}`
}
