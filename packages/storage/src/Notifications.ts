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
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomBytes } from "node:crypto"

/**
 * @since 0.1.0 @category tags
 */
export class Notifications extends Context.Tag("@service/storage/Notifications")<
  Notifications,
  {
    /**
     * Calls `onMessage` (synchronously, so it must be cheap) with every notification on `channel` while the scope
     * lasts: those of any connection's committed `pg_notify`, and this process's {@link signal}s. Returns once the
     * `LISTEN` is in place, so a change committed afterwards is heard. A lost `LISTEN` connection is not
     * reconnected: a cache built on this keeps a time bound as its fallback.
     */
    readonly subscribe: (channel: string, onMessage: (payload: string) => void) => Effect.Effect<void, never, Scope.Scope>
    /** Tells this process's subscribers of `channel` now, without the database. */
    readonly signal: (channel: string, payload: string) => Effect.Effect<void>
    /**
     * {@link subscribe} as a stream, for a fiber that waits on it (a work queue's idle workers): returns once the
     * `LISTEN` is in place; a reader that falls behind keeps the latest 1,024 payloads.
     */
    readonly listen: (channel: string) => Effect.Effect<Stream.Stream<string>, never, Scope.Scope>
  }
>() {}

const listenWith = (subscribe: Context.Tag.Service<Notifications>["subscribe"]) => (channel: string) =>
  Effect.gen(function*() {
    // Listeners need to know that something was notified, not every payload.
    const queue = yield* Effect.acquireRelease(Queue.sliding<string>(1024), Queue.shutdown)
    yield* subscribe(channel, (payload) => Queue.unsafeOffer(queue, payload))
    return Stream.fromQueue(queue)
  })

const make = (
  subscribe: Context.Tag.Service<Notifications>["subscribe"],
  signal: Context.Tag.Service<Notifications>["signal"]
): Context.Tag.Service<Notifications> => Notifications.of({ subscribe, signal, listen: listenWith(subscribe) })

// A payload of this prefix only checks that a subscription hears its channel; subscribers never see it.
const probePrefix = "listen-probe:"

const makeLocal = () => {
  const handlers = new Map<string, Set<(payload: string) => void>>()
  const deliver = (channel: string, payload: string) => {
    if (payload.startsWith(probePrefix)) return
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
 * Over `PgClient.listen` (one dedicated connection for every channel), with one `LISTEN` stream per channel however
 * many subscribe to it: each subscriber hears each notification once. Subscribing waits until its own probe
 * notification comes back, so the `LISTEN` is known to be active; if it never does within 5 s the subscription
 * stays (it may still start) and a warning is logged. The channel's stream ends with its last subscriber.
 *
 * @since 0.1.0 @category constructors
 */
export const fromPg = (client: PgClient.PgClient): Context.Tag.Service<Notifications> => {
  const local = makeLocal()
  interface Channel {
    subscribers: number
    readonly fiber: Fiber.RuntimeFiber<void>
    readonly probes: Map<string, Deferred.Deferred<void>>
  }
  const channels = new Map<string, Channel>()
  // Opening and closing a channel's stream is one step at a time, so two first subscribers make one stream.
  const lock = Effect.unsafeMakeSemaphore(1)
  const join = (channel: string) =>
    lock.withPermits(1)(Effect.gen(function*() {
      const open = channels.get(channel)
      // A stream that ended (its connection lost) is started again for everyone, not joined.
      if (open !== undefined && open.fiber.unsafePoll() === null) {
        open.subscribers++
        return open
      }
      const probes = new Map<string, Deferred.Deferred<void>>()
      const fiber = yield* client.listen(channel).pipe(
        Stream.runForEach((payload) => {
          const waiting = probes.get(payload)
          return waiting === undefined ? Effect.sync(() => local.deliver(channel, payload)) : Deferred.succeed(waiting, undefined)
        }),
        Effect.catchAll((error) => Effect.logWarning(`LISTEN ${channel} ended`, error)),
        // Forked while the subscription is acquired (uninterruptible): the stream itself must stay interruptible.
        Effect.interruptible,
        Effect.forkDaemon
      )
      const opened: Channel = { subscribers: (open?.subscribers ?? 0) + 1, fiber, probes }
      channels.set(channel, opened)
      return opened
    }))
  // The channel's current stream, which may have replaced the one this subscriber joined.
  const leave = (channel: string) =>
    lock.withPermits(1)(Effect.suspend(() => {
      const current = channels.get(channel)
      if (current === undefined) return Effect.void
      current.subscribers--
      if (current.subscribers > 0) return Effect.void
      channels.delete(channel)
      return Fiber.interrupt(current.fiber)
    }))
  const subscribe = (channel: string, onMessage: (payload: string) => void) =>
    Effect.gen(function*() {
      const probe = `${probePrefix}${randomBytes(8).toString("hex")}`
      const heard = yield* Deferred.make<void>()
      yield* local.register(channel, onMessage)
      const joined = yield* Effect.acquireRelease(join(channel), () => leave(channel))
      joined.probes.set(probe, heard)
      // pg_notify rather than the client's `notify`: NOTIFY takes no bound parameter for its payload.
      const ready = yield* client`SELECT pg_notify(${channel}, ${probe})`.pipe(
        Effect.zipRight(Deferred.await(heard).pipe(Effect.timeoutOption(Duration.millis(100)))),
        Effect.flatMap((heardIt) => heardIt._tag === "Some" ? Effect.succeed(true) : Effect.fail("not yet" as const)),
        Effect.retry(Schedule.recurs(50)),
        Effect.orElseSucceed(() => false),
        // Real time even under a test clock, which would never end the wait for a probe sent before the LISTEN.
        Effect.withClock(Clock.make()),
        Effect.ensuring(Effect.sync(() => joined.probes.delete(probe)))
      )
      if (!ready) yield* Effect.logWarning(`LISTEN ${channel} did not hear its probe; relying on the cache's time bound`)
    })
  return make(subscribe, local.signal)
}

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
