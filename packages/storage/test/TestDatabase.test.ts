import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as Pg from "pg"
import * as ConfigProvider from "effect/ConfigProvider"
import type * as Migrations from "../src/Migrations.js"
import * as TestDatabase from "../src/TestDatabase.js"

const sets: ReadonlyArray<Migrations.PackageMigrations> = [{
  name: "prepared_test",
  migrations: {
    "1_notes": Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE prepared_notes (body text NOT NULL)`)
  }
}]

// Counts how often the snapshot was prepared: copies must not prepare it again.
let preparedTimes = 0
const snapshot = (key: string): TestDatabase.Snapshot<never> => ({
  key,
  migrations: sets,
  prepare: Layer.effectDiscard(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(Effect.sync(() => void preparedTimes++), sql`INSERT INTO prepared_notes (body) VALUES ('prepared')`)).pipe(Effect.orDie)
  )
})

const bodies = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ body: string }>`SELECT body FROM prepared_notes ORDER BY body`).pipe(
  Effect.map((rows) => rows.map((row) => row.body)),
  Effect.orDie
)

/** Builds the prepared database, writes `note` into it and reads everything back. */
const useCopy = (target: TestDatabase.TestDatabaseTarget, key: string, note: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO prepared_notes (body) VALUES (${note})`.pipe(Effect.orDie)
    return yield* bodies
  }).pipe(Effect.provide(TestDatabase.prepared(target, snapshot(key))))

// Under a folder of the test's own, so the run's folder (named by the global setup) is not touched.
const url = process.env["DATABASE_URL"]?.trim() ?? ""
const databaseUrl: ReadonlyArray<[string, string]> = url === "" ? [] : [["DATABASE_URL", url]]
const withEnv = (entries: ReadonlyArray<[string, string]>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map([...databaseUrl, ...entries])))

const withFolder = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    withEnv([])(TestDatabase.startRun(NodeOs.tmpdir())),
    (folder) => withEnv([["SERVICE_TEST_SNAPSHOTS", folder]])(effect),
    (folder) => withEnv([])(TestDatabase.endRun(folder))
  )

/** The template databases of the run whose folder is `folder`. */
const templatesOf = (folder: string) =>
  Effect.promise(async () => {
    if (url === "") return []
    const client = new Pg.Client({ connectionString: url })
    await client.connect()
    try {
      const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [
        `${TestDatabase.templatePrefix(folder)}_`
      ])
      return rows.map((row) => row.datname)
    } finally {
      await client.end()
    }
  })

describe("TestDatabase.prepared", () => {
  for (const target of TestDatabase.parityTargets()) {
    it.live(`prepares once per folder and gives every caller its own copy on ${target.name}`, () =>
      withFolder(Effect.gen(function*() {
        const key = `copies-${target.name}-${Math.random().toString(36).slice(2)}`
        const before = preparedTimes
        assert.deepStrictEqual(yield* useCopy(target, key, "first"), ["first", "prepared"])
        // The second copy starts from the prepared rows, without the first copy's write.
        assert.deepStrictEqual(yield* useCopy(target, key, "second"), ["prepared", "second"])
        assert.strictEqual(preparedTimes - before, 1)
        // Another key is another database.
        assert.deepStrictEqual(yield* useCopy(target, `${key}-other`, "third"), ["prepared", "third"])
        assert.strictEqual(preparedTimes - before, 2)
      })), { timeout: 120_000 })

    it.live(`two callers at once: one prepares, the other waits for it on ${target.name}`, () =>
      withFolder(Effect.gen(function*() {
        const key = `together-${target.name}-${Math.random().toString(36).slice(2)}`
        const before = preparedTimes
        const [a, b] = yield* Effect.all([useCopy(target, key, "a"), useCopy(target, key, "b")], { concurrency: 2 })
        assert.deepStrictEqual([a, b], [["a", "prepared"], ["b", "prepared"]])
        assert.strictEqual(preparedTimes - before, 1)
      })), { timeout: 120_000 })

    it.live(`without a folder, prepares each database itself on ${target.name}`, () =>
      Effect.gen(function*() {
        const before = preparedTimes
        assert.deepStrictEqual(yield* useCopy(target, "unshared", "one"), ["one", "prepared"])
        assert.deepStrictEqual(yield* useCopy(target, "unshared", "two"), ["prepared", "two"])
        assert.strictEqual(preparedTimes - before, 2)
      }).pipe(withEnv([])), { timeout: 120_000 })
  }

  it.live("a run's end removes its folder and its template databases", () =>
    Effect.gen(function*() {
      const folder = yield* withEnv([])(TestDatabase.startRun(NodeOs.tmpdir()))
      const target = TestDatabase.parityTargets().at(-1) ?? TestDatabase.pglite
      yield* withEnv([["SERVICE_TEST_SNAPSHOTS", folder]])(useCopy(target, "ended", "one"))
      const files = yield* Effect.promise(() => NodeFs.readdir(folder))
      assert.strictEqual(files.length + (yield* templatesOf(folder)).length, 1)
      yield* withEnv([])(TestDatabase.endRun(folder))
      assert.isFalse(yield* Effect.promise(() => NodeFs.stat(folder).then(() => true, () => false)))
      assert.deepStrictEqual(yield* templatesOf(folder), [])
    }), { timeout: 120_000 })

  it("names a run's templates after its folder", () => {
    assert.strictEqual(TestDatabase.templatePrefix("/tmp/service-test-snapshots-1795662317-eo4cgg"), "tpl_1795662317_eo4cgg")
  })
})
