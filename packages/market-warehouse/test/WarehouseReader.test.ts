import * as Reactivity from "@effect/experimental/Reactivity"
import * as CoreNotifications from "@service/core/Notifications"
import * as StorageNotifications from "@service/storage/Notifications"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Corpus } from "../src/Corpus.js"
import * as MarketMigrations from "../src/MarketMigrations.js"
import * as WarehouseLayer from "../src/WarehouseLayer.js"
import { WarehouseReader } from "../src/WarehouseReader.js"

// The reader holds the active publication on the test clock, which stands still: a change it reports can only have
// come from a notification or its own process's signal, never from its time bound running out.
const freshness = Effect.map(Effect.flatMap(WarehouseReader, (reader) => reader.active), Option.map((p) => [p.snapshotId, p.freshForSeconds] as const))

// Real time between polls: the notification travels over a socket, whatever the test clock says.
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

for (const target of TestDatabase.targets()) {
  const Env = WarehouseLayer.layer.pipe(
    Layer.provideMerge(Crypto.layerTest),
    // The database's notifications under core's port, as App.layer connects them.
    Layer.provideMerge(Layer.effect(CoreNotifications.Notifications, StorageNotifications.Notifications)),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )

  layer(Env, { timeout: "120 seconds" })(`the active publication held on ${target.name}`, (it) => {
    it.effect("is read once and held; a publication in this process is seen by the very next read", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const corpus = yield* Corpus
        assert.isTrue(Option.isNone(yield* freshness))
        const first = yield* corpus.beginSnapshot({ base: "empty" })
        yield* corpus.publish(first)
        assert.deepStrictEqual(yield* freshness, Option.some([first, null] as const))
        // A change no trigger reports is not seen: the held publication answered without a statement.
        yield* sql`ALTER TABLE market.snapshots DISABLE TRIGGER USER`
        yield* sql`UPDATE market.snapshots SET fresh_for_seconds = 42 WHERE id = ${first}`
        assert.deepStrictEqual(yield* freshness, Option.some([first, null] as const))
        yield* sql`ALTER TABLE market.snapshots ENABLE TRIGGER USER`
        // Publishing tells this process's reader at once.
        const second = yield* corpus.beginSnapshot({ base: "empty" })
        yield* corpus.publish(second)
        assert.deepStrictEqual(yield* freshness, Option.some([second, null] as const))
      }))

    it.effect("a change committed by another connection reaches the reader through the snapshots' trigger", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const before = yield* freshness
        assert.isTrue(Option.isSome(before))
        const id = Option.isSome(before) ? before.value[0] : ""
        // PGlite has one connection, and runs its listeners before the writing statement returns: heard at once.
        // PostgreSQL: a second pool, as another node would, and the notification arrives some moments later.
        if (target.name === "pglite") {
          yield* sql`UPDATE market.snapshots SET fresh_for_seconds = 7 WHERE id = ${id}`
          assert.deepStrictEqual(yield* freshness, Option.some([id, 7] as const))
        } else {
          const url = (yield* PgClient.PgClient).config.url
          const other = yield* PgClient.make({ url, maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))
          yield* other`UPDATE market.snapshots SET fresh_for_seconds = 7 WHERE id = ${id}`
          while (Option.getOrUndefined(yield* freshness)?.[1] !== 7) yield* pause
        }
      }).pipe(Effect.scoped))
  })
}
