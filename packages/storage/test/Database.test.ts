import { assert, describe, it, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { spawnSync } from "node:child_process"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Database, TestDatabase } from "../src/index.js"
import * as InternalConfig from "../src/internal/config.js"

// A table of its own per test keeps tests independent although they share one database per block.
const withTable = <A, E, R>(
  name: string,
  body: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError, R | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE ${sql(name)} (id integer primary key, label text not null)`
    return yield* body(sql)
  })

const labels = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(
    sql<{ readonly label: string }>`SELECT label FROM ${sql(table)} ORDER BY id`,
    (rows) => rows.map((row) => row.label)
  )

class Boom {
  readonly _tag = "Boom"
}

for (const target of TestDatabase.parityTargets()) {
  layer(TestDatabase.withMigrations(target, []), { timeout: "60 seconds" })(`conformance on ${target.name}`, (it) => {
    it.effect("reports which engine it is", () =>
      Effect.gen(function*() {
        const info = yield* Database.DatabaseInfo
        assert.strictEqual(info.kind, target.name)
      }))

    it.effect("round-trips column types with pg parsing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pg = yield* PgClient.PgClient
        yield* sql`CREATE TABLE types_rt (
          i4 int4, i8 int8, num numeric, flag boolean, txt text, doc jsonb,
          at timestamptz, tags text[], bytes bytea
        )`
        const at = new Date("2024-02-29T23:59:58.123Z")
        const doc = { name: "Ñandú", nested: [1, "two", { three: null }], ok: true }
        yield* sql`INSERT INTO types_rt VALUES (
          ${2147483647}, ${"9007199254740993"}, ${"12345678901234567890.123456789"}, ${true},
          ${"Ñandú Pérez — ação, ü"}, ${pg.json(doc)}, ${at}, ${["a", "b c", "ñ", ""]},
          ${new Uint8Array([0, 1, 127, 128, 255])}
        )`
        const rows = yield* sql<{
          readonly i4: unknown
          readonly i8: unknown
          readonly num: unknown
          readonly flag: unknown
          readonly txt: unknown
          readonly doc: unknown
          readonly at: unknown
          readonly tags: unknown
          readonly bytes: unknown
        }>`SELECT * FROM types_rt`
        assert.strictEqual(rows.length, 1)
        const row = rows[0]
        assert.isDefined(row)
        if (row === undefined) return
        assert.strictEqual(row.i4, 2147483647)
        // int8 beyond 2^53 must stay exact, hence a string.
        assert.strictEqual(row.i8, "9007199254740993")
        assert.strictEqual(row.num, "12345678901234567890.123456789")
        assert.strictEqual(row.flag, true)
        assert.strictEqual(row.txt, "Ñandú Pérez — ação, ü")
        assert.deepStrictEqual(row.doc, doc)
        assert.instanceOf(row.at, Date)
        assert.strictEqual(row.at instanceof Date ? row.at.toISOString() : "", at.toISOString())
        assert.deepStrictEqual(row.tags, ["a", "b c", "ñ", ""])
        assert.instanceOf(row.bytes, Uint8Array)
        assert.deepStrictEqual(row.bytes instanceof Uint8Array ? [...row.bytes] : [], [0, 1, 127, 128, 255])

        const [sums] = yield* sql<{ readonly exact: unknown; readonly big: unknown; readonly no: unknown }>`
          SELECT 0.1::numeric + 0.2::numeric AS exact, 9223372036854775807::int8 AS big, false AS no`
        assert.deepStrictEqual(sums, { exact: "0.3", big: "9223372036854775807", no: false })
      }))

    it.effect("commits and rolls back through withTransaction", () =>
      withTable("tx_basic", (sql) =>
        Effect.gen(function*() {
          yield* sql.withTransaction(sql`INSERT INTO tx_basic VALUES (1, 'committed')`)
          const failed = yield* sql.withTransaction(
            Effect.zipRight(sql`INSERT INTO tx_basic VALUES (2, 'rolled back')`, Effect.fail(new Boom()))
          ).pipe(Effect.either)
          assert.isTrue(Either.isLeft(failed))
          assert.deepStrictEqual(yield* labels(sql, "tx_basic"), ["committed"])
        })))

    it.effect("nests withTransaction as savepoints that roll back independently", () =>
      withTable("tx_nested", (sql) =>
        Effect.gen(function*() {
          yield* sql.withTransaction(
            Effect.gen(function*() {
              yield* sql`INSERT INTO tx_nested VALUES (1, 'outer before')`
              const inner = yield* sql.withTransaction(
                Effect.zipRight(sql`INSERT INTO tx_nested VALUES (2, 'inner')`, Effect.fail(new Boom()))
              ).pipe(Effect.either)
              assert.isTrue(Either.isLeft(inner))
              yield* sql.withTransaction(sql`INSERT INTO tx_nested VALUES (3, 'inner kept')`)
              yield* sql`INSERT INTO tx_nested VALUES (4, 'outer after')`
            })
          )
          assert.deepStrictEqual(yield* labels(sql, "tx_nested"), ["outer before", "inner kept", "outer after"])

          // A committed savepoint is still undone when the outer transaction fails.
          const outer = yield* sql.withTransaction(
            Effect.gen(function*() {
              yield* sql.withTransaction(sql`INSERT INTO tx_nested VALUES (5, 'lost with outer')`)
              return yield* Effect.fail(new Boom())
            })
          ).pipe(Effect.either)
          assert.isTrue(Either.isLeft(outer))
          assert.deepStrictEqual(yield* labels(sql, "tx_nested"), ["outer before", "inner kept", "outer after"])
        })))

    it.effect("accepts SELECT ... FOR UPDATE SKIP LOCKED", () =>
      withTable("jobs", (sql) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO jobs VALUES (1, 'a'), (2, 'b'), (3, 'c')`
          const claimed = yield* sql.withTransaction(
            sql<{ readonly id: number }>`SELECT id FROM jobs ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED`
          )
          assert.deepStrictEqual(claimed.map((row) => row.id), [1, 2])
        })))

    if (target.name === "postgres") {
      // Only a server with several connections can actually skip: on PGlite's single connection
      // the second transaction would wait for the first one forever.
      it.effect("skips rows locked by another transaction", () =>
        withTable("jobs_skip", (sql) =>
          Effect.gen(function*() {
            yield* sql`INSERT INTO jobs_skip VALUES (1, 'a'), (2, 'b')`
            const locked = yield* Deferred.make<void>()
            const release = yield* Deferred.make<void>()
            const holder = yield* sql.withTransaction(
              Effect.gen(function*() {
                yield* sql`SELECT id FROM jobs_skip WHERE id = 1 FOR UPDATE`
                yield* Deferred.succeed(locked, undefined)
                yield* Deferred.await(release)
              })
            ).pipe(Effect.fork)
            yield* Deferred.await(locked)
            const claimed = yield* sql.withTransaction(
              sql<{ readonly id: number }>`SELECT id FROM jobs_skip ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED`
            )
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(holder)
            assert.deepStrictEqual(claimed.map((row) => row.id), [2])
          })))
    }

    it.effect("has unaccent", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly plain: string }>`SELECT unaccent(${"Ñandú Pérez"}) AS plain`
        assert.strictEqual(row?.plain, "Nandu Perez")
      }))

    it.effect("has pg_trgm similarity", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly same: number; readonly close: number; readonly far: number; readonly folded: number }>`
          SELECT similarity('ferreteria', 'ferreteria') AS same,
                 similarity('ferreteria', 'ferretería') AS close,
                 similarity('ferreteria', 'panaderia') AS far,
                 similarity(unaccent('Ferretería'), 'Ferreteria') AS folded`
        assert.isDefined(row)
        if (row === undefined) return
        assert.strictEqual(row.same, 1)
        assert.strictEqual(row.folded, 1)
        assert.isAbove(row.close, row.far)
        assert.isBelow(row.close, 1)
        assert.isTrue(yield* Effect.map(sql<{ readonly m: boolean }>`SELECT 'ferreteria' % 'ferreterias' AS m`, (r) => r[0]?.m === true))
      }))

    it.effect("does Spanish full-text search", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly vector: string; readonly hit: boolean; readonly miss: boolean }>`
          SELECT to_tsvector('spanish', 'Los niños corrían rápidamente') AS vector,
                 to_tsvector('spanish', 'Los niños corrían rápidamente') @@ plainto_tsquery('spanish', 'niño correr') AS hit,
                 to_tsvector('spanish', 'Los niños corrían rápidamente') @@ plainto_tsquery('spanish', 'gato') AS miss`
        assert.isDefined(row)
        if (row === undefined) return
        // Stop word "los" is dropped and the words are stemmed.
        assert.notInclude(row.vector, "los")
        assert.include(row.vector, "'niñ'")
        assert.isTrue(row.hit)
        assert.isFalse(row.miss)
      }))
  })
}

describe("layerPglite", () => {
  const tempDir = (prefix: string) =>
    Effect.acquireRelease(
      Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), prefix))),
      (dir) => Effect.promise(() => NodeFs.rm(dir, { recursive: true, force: true }))
    )

  it.scoped("creates a missing data folder and reopens it across restarts", () =>
    Effect.gen(function*() {
      const dataDir = NodePath.join(yield* tempDir("storage-pglite-"), "nested", "pglite")
      const insert = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS kept (n integer)`
        yield* sql`INSERT INTO kept VALUES (1)`
        const info = yield* Database.DatabaseInfo
        return { info, client: yield* SqlClient.SqlClient }
      })
      const first = yield* insert.pipe(Effect.provide(Database.layerPglite({ dataDir })))
      assert.strictEqual(first.info.kind, "pglite")
      assert.include(first.info.description, dataDir)
      // Released: the pool is gone, so the old client cannot reach the database any more.
      const afterRelease = yield* first.client`SELECT 1`.pipe(Effect.either)
      assert.isTrue(Either.isLeft(afterRelease))

      yield* insert.pipe(Effect.provide(Database.layerPglite({ dataDir })))
      const count = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: string }>`SELECT count(*) AS n FROM kept`
      }).pipe(Effect.provide(Database.layerPglite({ dataDir })))
      assert.deepStrictEqual(count, [{ n: "2" }])
    }), { timeout: 60_000 })

  it.scoped("layerFromConfig picks PGlite in SERVICE_DATA_DIR when DATABASE_URL is unset or blank", () =>
    Effect.gen(function*() {
      const dataDir = NodePath.join(yield* tempDir("storage-config-"), "data")
      const info = yield* Database.DatabaseInfo.pipe(
        Effect.provide(Database.layerFromConfig),
        Effect.withConfigProvider(
          ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", dataDir], ["DATABASE_URL", " "]]))
        )
      )
      const pgliteDir = NodePath.join(dataDir, "pglite")
      assert.deepStrictEqual(info, { kind: "pglite", description: `PGlite in ${pgliteDir}` })
      const stat = yield* Effect.promise(() => NodeFs.stat(pgliteDir))
      assert.isTrue(stat.isDirectory())
    }), { timeout: 60_000 })

  it.scoped("locks the folder: a second open is refused with the holder's pid until the first closes", () =>
    Effect.gen(function*() {
      const dataDir = NodePath.join(yield* tempDir("storage-lock-"), "pglite")
      const second = yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(Database.layerPglite({ dataDir }))
        const lock = JSON.parse(yield* Effect.promise(() => NodeFs.readFile(`${dataDir}.lock`, "utf8")))
        assert.strictEqual(lock.pid, process.pid)
        return yield* Effect.scoped(Layer.build(Database.layerPglite({ dataDir }))).pipe(Effect.flip)
      }))
      assert.strictEqual(second._tag, "DatabaseError")
      if (second._tag === "DatabaseError") {
        assert.strictEqual(second.reason, "locked")
        assert.include(second.message, `in use by process ${process.pid}`)
        assert.include(second.message, `${dataDir}.lock`)
      }
      // Released with the first layer: the folder opens again and the lock file is gone afterwards.
      yield* Effect.scoped(Layer.build(Database.layerPglite({ dataDir })))
      assert.isFalse(yield* Effect.promise(() => NodeFs.access(`${dataDir}.lock`).then(() => true, () => false)))
    }), { timeout: 60_000 })

  it.scoped("takes over a lock whose process is gone, and removes a half-made database left by a stopped start", () =>
    Effect.gen(function*() {
      const parent = yield* tempDir("storage-stale-")
      const dataDir = NodePath.join(parent, "pglite")
      // A pid that surely ran and ended: a child process that has exited.
      const child = spawnSync(process.execPath, ["-e", "0"])
      yield* Effect.promise(() =>
        NodeFs.writeFile(
          `${dataDir}.lock`,
          JSON.stringify({ pid: child.pid, hostname: NodeOs.hostname(), startedAt: new Date(0).toISOString(), token: "old" })
        )
      )
      yield* Effect.promise(() => NodeFs.mkdir(NodePath.join(parent, "pglite.creating-1", "base"), { recursive: true }))
      const rows = yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: number }>`SELECT 1 AS n`
      }).pipe(Effect.provide(Database.layerPglite({ dataDir })))
      assert.deepStrictEqual(rows, [{ n: 1 }])
      assert.deepStrictEqual((yield* Effect.promise(() => NodeFs.readdir(parent))).sort(), ["pglite"])
    }), { timeout: 60_000 })

  it.scoped("with createIfMissing: false refuses a folder without a database and creates nothing", () =>
    Effect.gen(function*() {
      const parent = yield* tempDir("storage-missing-")
      const dataDir = NodePath.join(parent, "data", "pglite")
      const error = yield* Effect.scoped(Layer.build(Database.layerPglite({ dataDir, createIfMissing: false }))).pipe(Effect.flip)
      assert.strictEqual(error._tag, "DatabaseError")
      if (error._tag === "DatabaseError") {
        assert.strictEqual(error.reason, "missing")
        assert.include(error.message, dataDir)
      }
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(parent)), [])
      const fromConfig = yield* Effect.scoped(Layer.build(Database.layerFromConfigWith({ createIfMissing: false }))).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", NodePath.join(parent, "data")]]))),
        Effect.flip
      )
      assert.strictEqual(fromConfig._tag === "DatabaseError" ? fromConfig.reason : fromConfig._tag, "missing")
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(parent)), [])
    }), { timeout: 60_000 })

  it.scoped("DATABASE_READ_URL without DATABASE_URL is refused with one clear message, before anything is created", () =>
    Effect.gen(function*() {
      const parent = yield* tempDir("storage-read-url-")
      const error = yield* Effect.scoped(Layer.build(Database.layerFromConfig)).pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([
          ["SERVICE_DATA_DIR", NodePath.join(parent, "data")],
          ["DATABASE_READ_URL", "postgres://replica.invalid/db"]
        ]))),
        Effect.flip
      )
      assert.strictEqual(error._tag, "DatabaseError")
      assert.include(error.message, "DATABASE_READ_URL")
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(parent)), [])
    }))

  it.scoped.skipIf(!TestDatabase.parityTargets().some((target) => target.name === "postgres"))(
    "with DATABASE_URL and DATABASE_READ_URL the ReadClient is its own pool to the replica (PostgreSQL)",
    () =>
      Effect.gen(function*() {
        const url = Redacted.value(yield* Config.redacted("DATABASE_URL"))
        const context = yield* Layer.build(Database.layerFromConfig).pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", url], ["DATABASE_READ_URL", url]])))
        )
        const read = Context.get(context, Database.ReadClient)
        const primary = Context.get(context, SqlClient.SqlClient)
        assert.notStrictEqual(read, primary)
        const readName = yield* read<{ name: string }>`SELECT current_setting('application_name') AS name`
        assert.strictEqual(readName[0]?.name, "service-read")
        const primaryName = yield* primary<{ name: string }>`SELECT current_setting('application_name') AS name`
        assert.notStrictEqual(primaryName[0]?.name, "service-read")
        assert.include(Context.get(context, Database.DatabaseInfo).description, "reads from")
      }),
    { timeout: 60_000 }
  )

  it.effect("SERVICE_DATA_DIR defaults to .data when unset or blank", () =>
    Effect.gen(function*() {
      for (const entries of [[], [["SERVICE_DATA_DIR", ""]], [["SERVICE_DATA_DIR", "  "]]] as const) {
        const dir = yield* InternalConfig.serviceDataDir.pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map(entries)))
        )
        assert.strictEqual(dir, ".data")
      }
      const set = yield* InternalConfig.serviceDataDir.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", " /srv/db "]])))
      )
      assert.strictEqual(set, "/srv/db")
    }))
})

describe("layerPgWith", () => {
  it.effect("fails while building when the server is unreachable", () =>
    Effect.gen(function*() {
      const result = yield* Effect.scoped(Layer.build(
        Database.layerPgWith({ url: Redacted.make("postgres://nobody@127.0.0.1:1/none") })
      )).pipe(Effect.either)
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "SqlError")
    }))
})

const databaseUrl = Effect.runSync(Config.option(Config.redacted("DATABASE_URL")))
describe.skipIf(Option.isNone(databaseUrl))("layerPg", () => {
  it.effect("is chosen by layerFromConfig when DATABASE_URL is set, and never shows the password", () =>
    Effect.gen(function*() {
      const url = new URL(Redacted.value(yield* Config.redacted("DATABASE_URL")))
      // The local server trusts every connection, so any password is accepted and just has to stay hidden.
      url.password = "s3cret-value"
      const provider = ConfigProvider.fromMap(new Map([["DATABASE_URL", url.toString()]]))
      for (const layer of [Database.layerFromConfig, Database.layerPg]) {
        const info = yield* Database.DatabaseInfo.pipe(Effect.provide(layer), Effect.withConfigProvider(provider))
        assert.strictEqual(info.kind, "postgres")
        assert.include(info.description, url.hostname)
        assert.notInclude(info.description, "s3cret")
      }
    }))
})
