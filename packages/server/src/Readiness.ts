/**
 * What `/ready` checks for an application: the database answers, every migration of its bundles is applied, and
 * each bundle's own checks (the market's: a corpus publication is active, or how far the demo load got).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as App from "@service/app/App"
import type * as Operation from "@service/core/Operation"
import * as Health from "@service/http/Health"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Notifications from "@service/storage/Notifications"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The checks over the running services.
 *
 * @since 0.1.0 @category constructors
 */
export const checks = <S, E, D, R>(
  app: App.Application<S, E, D, R>
): Effect.Effect<
  ReadonlyArray<Health.Check>,
  never,
  SqlClient.SqlClient | Database.DatabaseInfo | Notifications.Notifications | Exclude<R, Operation.Provided>
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const info = yield* Database.DatabaseInfo
    const context = yield* Effect.context<Exclude<R, Operation.Provided>>()
    const database: Health.Check = {
      name: "database",
      run: Effect.as(sql`SELECT 1`, { ready: true, detail: `answering (${info.description})` })
    }
    const migrations: Health.Check = {
      name: "migrations",
      run: Effect.map(Migrations.pending(app.migrations), (pending) => ({
        ready: pending.length === 0,
        detail: pending.length === 0 ? "all applied" : `not applied: ${pending.join(", ")}`
      })).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    }
    const notifications = yield* Notifications.Notifications
    // Not hearing notifications is no reason to leave the rotation: caches stop holding and answers stay right.
    const listening: Health.Check = {
      name: "notifications",
      run: Effect.map(notifications.status, (status) => ({ ready: true, degraded: !status.listening, detail: status.detail }))
    }
    const own = app.readiness.map((check): Health.Check => ({ name: check.name, run: Effect.provide(check.run, context) }))
    return [database, migrations, listening, ...own]
  })

/**
 * {@link Health.Readiness} from {@link checks}.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  Layer.effect(Health.Readiness, Effect.map(checks(app), Health.makeReadiness))
