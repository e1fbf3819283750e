/**
 * PostgreSQL `LISTEN`/`NOTIFY` on both engines, for caches that must forget what another node changed: a table's
 * trigger calls `pg_notify(channel, payload)`, and every process that subscribed to the channel hears it once the
 * writing transaction commits. A process that changes something itself also `signal`s its own subscribers at
 * once, because its own `NOTIFY` reaches its `LISTEN` connection only some time after the commit (PostgreSQL) and
 * the next request must not see the old state.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Pg from "pg"

/**
 * @since 0.1.0 @category tags
 */
export class Notifications extends Context.Tag("@service/storage/Notifications")<
  Notifications,
  {
    /**
     * Calls `onMessage` (synchronously, so it must be cheap) with every notification on `channel` while the scope
     * lasts: those of any connection's committed `pg_notify`, and this process's {@link signal}s. Returns once the
     * `LISTEN` is in place, so a change committed afterwards is heard (at once, when the connection is down: see
     * `status`). A lost connection is opened again; subscribers hear {@link lostPayload} and {@link restoredPayload}.
     */
    readonly subscribe: (channel: string, onMessage: (payload: string) => void) => Effect.Effect<void, never, Scope.Scope>
    /** Tells this process's subscribers of `channel` now, without the database. */
    readonly signal: (channel: string, payload: string) => Effect.Effect<void>
    /**
     * {@link subscribe} as a stream, for a fiber that waits on it (a work queue's idle workers): returns once the
     * `LISTEN` is in place; a reader that falls behind keeps the latest 1,024 payloads.
     */
    readonly listen: (channel: string) => Effect.Effect<Stream.Stream<string>, never, Scope.Scope>
    /** Whether committed notifications are heard now (always, on the embedded database and for local signals). */
    readonly status: Effect.Effect<ListenStatus>
  }
>() {}

const listenWith = (subscribe: Context.Tag.Service<Notifications>["subscribe"]) => (channel: string) =>
  Effect.gen(function*() {
    // Listeners need to know that something was notified, not every payload.
    const queue = yield* Effect.acquireRelease(Queue.sliding<string>(1024), Queue.shutdown)
    yield* subscribe(channel, (payload) => Queue.unsafeOffer(queue, payload))
    return Stream.fromQueue(queue)
  })

const always: Effect.Effect<ListenStatus> = Effect.succeed({ listening: true, detail: "listening" })

const make = (
  subscribe: Context.Tag.Service<Notifications>["subscribe"],
  signal: Context.Tag.Service<Notifications>["signal"],
  status: Effect.Effect<ListenStatus> = always
): Context.Tag.Service<Notifications> => Notifications.of({ subscribe, signal, listen: listenWith(subscribe), status })

const makeLocal = () => {
  const handlers = new Map<string, Set<(payload: string) => void>>()
  const deliver = (channel: string, payload: string) => {
    for (const handler of handlers.get(channel) ?? []) handler(payload)
  }
  const register = (channel: string, onMessage: (payload: string) => void) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const set = handlers.get(channel) ?? new Set()
        set.add(onMessage)
        handlers.set(channel, set)
      }),
      () => Effect.sync(() => handlers.get(channel)?.delete(onMessage))
    )
  return { deliver, register, signal: (channel: string, payload: string) => Effect.sync(() => deliver(channel, payload)) }
}

/**
 * Whether notifications are heard: `listening` false while the `LISTEN` connection is down (a cache built on them must
 * hold nothing meanwhile), with a sentence for `/ready` and the logs.
 *
 * @since 0.1.0 @category models
 */
export interface ListenStatus {
  readonly listening: boolean
  readonly detail: string
}

/**
 * What every subscriber hears when the `LISTEN` connection is lost and when it is back: notifications may have been
 * missed in between, so whatever was held must be forgotten.
 *
 * @since 0.1.0 @category constants
 */
export const lostPayload = "listen-lost"
/** @since 0.1.0 @category constants */
export const restoredPayload = "listen-restored"

const optionsOf = (config: PgClient.PgClientConfig): Pg.ClientConfig => ({
  ...(config.url === undefined ? {} : { connectionString: Redacted.value(config.url) }),
  ...(config.host === undefined ? {} : { host: config.host }),
  ...(config.port === undefined ? {} : { port: config.port }),
  ...(config.database === undefined ? {} : { database: config.database }),
  ...(config.username === undefined ? {} : { user: config.username }),
  ...(config.password === undefined ? {} : { password: Redacted.value(config.password) }),
  ...(config.ssl === undefined ? {} : { ssl: config.ssl }),
  application_name: `${config.applicationName ?? "service"} listen`,
  connectionTimeoutMillis: 5_000
})

/**
 * One dedicated `LISTEN` connection of this process, for every channel (issue 32 row 14, decision 0096). When it is
 * lost (the server ended it, a network failure) every subscriber hears {@link lostPayload}, a warning is logged, the
 * status says so, and the connection is opened again with a backoff from 200 ms to 30 s, every channel listened
 * again; then every subscriber hears {@link restoredPayload} and the restoration is logged. Subscribing while
 * connected returns once the channel's `LISTEN` is in place; while disconnected it returns at once (the channel is
 * listened on reconnection, and the status tells caches not to hold). Closed with the scope.
 *
 * @since 0.1.0 @category constructors
 */
export const fromPg = (client: PgClient.PgClient): Effect.Effect<Context.Tag.Service<Notifications>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const local = makeLocal()
    const channels = new Set<string>()
    let connection: Pg.Client | undefined
    let status: ListenStatus = { listening: false, detail: "connecting the LISTEN connection" }
    const tellEveryone = (payload: string) => {
      for (const channel of channels) local.deliver(channel, payload)
    }
    const listenOn = (pg: Pg.Client, channel: string) => Effect.tryPromise(() => pg.query(`LISTEN ${Pg.escapeIdentifier(channel)}`))
    const firstAttempt = yield* Deferred.make<void>()

    // One connection's life: connect, listen to every channel, wait for its end. Fails when it cannot connect.
    const session = Effect.gen(function*() {
      const pg = new Pg.Client(optionsOf(client.config))
      const ended = yield* Deferred.make<string>()
      pg.on("error", (error) => Deferred.unsafeDone(ended, Exit.succeed(error.message)))
      pg.on("end", () => Deferred.unsafeDone(ended, Exit.succeed("the connection ended")))
      pg.on("notification", (message) => {
        if (message.payload !== undefined) local.deliver(message.channel, message.payload)
      })
      yield* Effect.acquireRelease(
        Effect.tryPromise(() => pg.connect()),
        () => Effect.promise(() => pg.end().catch(() => undefined)).pipe(Effect.timeoutOption(Duration.seconds(1)))
      )
      connection = pg
      for (const channel of [...channels]) yield* listenOn(pg, channel)
      const wasLost = !status.listening && status.detail.startsWith("not listening")
      status = { listening: true, detail: "listening" }
      yield* Deferred.succeed(firstAttempt, undefined)
      if (wasLost) {
        tellEveryone(restoredPayload)
        yield* Effect.logInfo("LISTEN connection restored: caches hold credentials again")
      }
      const why = yield* Deferred.await(ended)
      connection = undefined
      status = { listening: false, detail: `not listening since ${new Date().toISOString()} (${why}); reconnecting, caches hold nothing meanwhile` }
      tellEveryone(lostPayload)
      yield* Effect.logWarning(`LISTEN connection lost (${why}): reconnecting; credential caches hold nothing until it is back`)
    }).pipe(
      Effect.scoped,
      Effect.tapError((error) =>
        Effect.zipRight(
          Effect.sync(() => {
            connection = undefined
            if (status.listening || !status.detail.startsWith("not listening")) {
              status = { listening: false, detail: `not listening since ${new Date().toISOString()} (cannot connect: ${String(error.error)}); retrying` }
            }
          }),
          Deferred.succeed(firstAttempt, undefined)
        )
      )
    )
    const backoff = Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(30))))
    // A session that was connected and lost starts again at once with a fresh backoff; one that cannot connect backs off.
    yield* session.pipe(
      Effect.retry(backoff),
      Effect.forever,
      Effect.withClock(Clock.make()),
      Effect.interruptible,
      Effect.forkScoped
    )
    // The process starts listening before it serves: a change committed after this returns is heard.
    yield* Deferred.await(firstAttempt).pipe(Effect.timeoutOption(Duration.seconds(5)), Effect.withClock(Clock.make()))

    const subscribe = (channel: string, onMessage: (payload: string) => void) =>
      Effect.gen(function*() {
        yield* local.register(channel, onMessage)
        if (channels.has(channel)) return
        channels.add(channel)
        // Never UNLISTENed: the connection is this process's, and an unheard notification costs nothing.
        const pg = connection
        if (pg !== undefined) yield* listenOn(pg, channel).pipe(Effect.ignore)
      })
    const service = make(subscribe, local.signal, Effect.sync(() => status))
    return service
  })

/**
 * What {@link fromPglite} uses of a PGlite instance. Declared here rather than imported, so these declarations do not
 * pull in PGlite's own, which need the DOM and Emscripten type libraries a Node host does not have.
 *
 * @since 0.1.0 @category models
 */
export interface PgliteNotifier {
  readonly onNotification: (callback: (channel: string, payload: string) => void) => () => void
}

/**
 * Over embedded PGlite: its notification callback, with the `LISTEN` sent through `client`, the `pg` bridge's one
 * session. PGlite's own `listen` would run its `LISTEN` beside the bridge, inside whatever transaction the bridge
 * has open (and undone if that rolls back). PGlite calls back as soon as the statement that commits the
 * notification returns, before its caller resumes, so a change made in this process is heard before the next
 * request even without {@link Notifications.signal}.
 *
 * @since 0.1.0 @category constructors
 */
export const fromPglite = (pglite: PgliteNotifier, client: SqlClient.SqlClient): Context.Tag.Service<Notifications> => {
  const local = makeLocal()
  const listening = new Set<string>()
  pglite.onNotification((channel, payload) => local.deliver(channel, payload))
  const subscribe = (channel: string, onMessage: (payload: string) => void) =>
    Effect.gen(function*() {
      yield* local.register(channel, onMessage)
      // Never UNLISTENed: the session is shared by every subscriber, and an unheard notification costs nothing.
      if (!listening.has(channel)) {
        yield* client`LISTEN ${client(channel)}`.pipe(Effect.orDie)
        listening.add(channel)
      }
    })
  return make(subscribe, local.signal)
}

/**
 * Only this process's signals: for a database that cannot listen, or tests of one process.
 *
 * @since 0.1.0 @category constructors
 */
export const localOnly = (): Context.Tag.Service<Notifications> => {
  const local = makeLocal()
  return make((channel, onMessage) => local.register(channel, onMessage), local.signal)
}
