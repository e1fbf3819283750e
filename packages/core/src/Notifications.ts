/**
 * What core's caches and work queues need of PostgreSQL's `LISTEN/NOTIFY`: to hear a channel, and to tell this
 * process's own listeners at once. The database layers implement it (`@service/storage/Notifications`, the same
 * shape); storage does not depend on core (decision 0016), so the application provides this port from that
 * service (`App.layer`). Without it, caches hold nothing they could not time out and workers poll.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Stream from "effect/Stream"

/** @since 0.1.0 @category tags */
export class Notifications extends Context.Tag("@service/core/Notifications")<Notifications, {
  /**
   * Calls `onMessage` (synchronously, so it must be cheap) with every notification on `channel` while the scope
   * lasts, and with this process's {@link signal}s; returns once the `LISTEN` is in place.
   */
  readonly subscribe: (channel: string, onMessage: (payload: string) => void) => Effect.Effect<void, never, Scope.Scope>
  /** Tells this process's subscribers of `channel` now, without the database. */
  readonly signal: (channel: string, payload: string) => Effect.Effect<void>
  /** {@link subscribe} as a stream for a fiber that waits on it; returns once the `LISTEN` is in place. */
  readonly listen: (channel: string) => Effect.Effect<Stream.Stream<string>, never, Scope.Scope>
  /**
   * Whether committed notifications are heard now: false while the `LISTEN` connection is down and being opened
   * again, when caches must hold nothing (decision 0096).
   */
  readonly status: Effect.Effect<{ readonly listening: boolean; readonly detail: string }>
}>() {}
