import { assert, layer } from "@effect/vitest"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { Notifications, TestDatabase } from "../src/index.js"

for (const target of TestDatabase.parityTargets()) {
  layer(target.layer, { timeout: "60 seconds", excludeTestServices: true })(`notifications on ${target.name}`, (it) => {
    it.scoped("a committed pg_notify reaches the subscriber; a signal reaches it without the database", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const notifications = yield* Notifications.Notifications
        const heard: Array<string> = []
        const first = yield* Deferred.make<void>()
        yield* notifications.subscribe("test_channel", (payload) => {
          heard.push(payload)
          Deferred.unsafeDone(first, Effect.void)
        })
        yield* sql`SELECT pg_notify('test_channel', 'changed')`
        // PGlite runs its listeners before the statement's caller resumes: heard at once, with no wait.
        if (target.name === "pglite") assert.deepStrictEqual(heard, ["changed"])
        yield* Deferred.await(first)
        assert.deepStrictEqual(heard, ["changed"])
        yield* notifications.signal("test_channel", "local")
        assert.deepStrictEqual(heard, ["changed", "local"])
        // Another channel, and a notification rolled back with its transaction, are not heard.
        yield* sql`SELECT pg_notify('other_channel', 'no')`
        yield* sql.withTransaction(Effect.zipRight(sql`SELECT pg_notify('test_channel', 'rolled back')`, Effect.fail("abort"))).pipe(
          Effect.ignore
        )
        yield* sql`SELECT pg_notify('test_channel', 'last')`
        while (heard.length < 3) yield* Effect.sleep("10 millis")
        assert.deepStrictEqual(heard, ["changed", "local", "last"])
      }))

    it.scoped("two subscribers of one channel each hear a notification once, and one leaving keeps the other", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const notifications = yield* Notifications.Notifications
        const first: Array<string> = []
        const second: Array<string> = []
        const bothHeard = (payload: string) =>
          Effect.gen(function*() {
            while (!first.includes(payload) || !second.includes(payload)) yield* Effect.sleep("10 millis")
          })
        const firstScope = yield* Scope.make()
        yield* notifications.subscribe("test_shared", (payload) => first.push(payload)).pipe(Scope.extend(firstScope))
        yield* notifications.subscribe("test_shared", (payload) => second.push(payload))
        yield* sql`SELECT pg_notify('test_shared', 'a')`
        yield* sql`SELECT pg_notify('test_shared', 'b')`
        yield* bothHeard("b")
        // Notifications of one connection arrive in order: a second copy of "a" would be here before "end".
        yield* sql`SELECT pg_notify('test_shared', 'end')`
        yield* bothHeard("end")
        assert.deepStrictEqual(first, ["a", "b", "end"])
        assert.deepStrictEqual(second, ["a", "b", "end"])
        yield* Scope.close(firstScope, Exit.void)
        yield* sql`SELECT pg_notify('test_shared', 'after')`
        while (!second.includes("after")) yield* Effect.sleep("10 millis")
        assert.deepStrictEqual(first, ["a", "b", "end"])
        assert.deepStrictEqual(second, ["a", "b", "end", "after"])
      }))

    if (target.name === "postgres") {
      it.scoped("a change committed by another connection pool reaches the subscriber", () =>
        Effect.gen(function*() {
          const client = yield* PgClient.PgClient
          const other = yield* PgClient.make({ url: client.config.url, maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))
          const notifications = yield* Notifications.Notifications
          const heard = yield* Deferred.make<string>()
          yield* notifications.subscribe("test_other", (payload) => Deferred.unsafeDone(heard, Effect.succeed(payload)))
          yield* other`SELECT pg_notify('test_other', 'from elsewhere')`
          assert.strictEqual(yield* Deferred.await(heard), "from elsewhere")
        }))
    }
  })
}
