import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Migrations, TestDatabase } from "../src/index.js"
import type { MigrationError, PackageMigrations } from "../src/Migrations.js"

const exec = (statement: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement))

const tableExists = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly found: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS found`,
      (rows) => rows[0]?.found === true
    ))

const recorded = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly migration_id: number; readonly name: string }>`SELECT migration_id, name FROM ${
        sql(Migrations.migrationsTable(name))
      } ORDER BY migration_id`,
      (rows) => rows.map((row) => `${row.migration_id}_${row.name}`)
    ))

const describeApplied = (applied: ReadonlyArray<Migrations.AppliedMigration>) =>
  applied.map((m) => `${m.package}/${m.id}_${m.name}`)

const expectFailure = <A>(effect: Effect.Effect<A, MigrationError, SqlClient.SqlClient>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.match(result, {
      onLeft: Effect.succeed,
      onRight: () => Effect.dieMessage("expected the migrations to be refused")
    }))

const core: PackageMigrations = {
  name: "core",
  migrations: {
    "0001_create_accounts": exec("CREATE TABLE accounts (id integer primary key, name text not null)"),
    "0002_seed_accounts": exec("INSERT INTO accounts VALUES (1, 'root')")
  }
}

// Fails unless `core` ran first: it reads and references core's table.
const market: PackageMigrations = {
  name: "market",
  dependsOn: ["core"],
  migrations: {
    "0001_create_offers": exec(
      "CREATE TABLE offers (id integer primary key, account integer not null references accounts (id))"
    ),
    "0002_seed_offers": exec("INSERT INTO offers SELECT id, id FROM accounts")
  }
}

const billing: PackageMigrations = {
  name: "billing",
  dependsOn: ["market", "core"],
  migrations: { "0001_create_invoices": exec("CREATE TABLE invoices (offer integer references offers (id))") }
}

for (const target of TestDatabase.parityTargets()) {
  layer(target.layer, { timeout: "60 seconds" })(`migrations on ${target.name}`, (it) => {
    it.effect("applies packages in dependency order, storage first", () =>
      Effect.gen(function*() {
        const applied = yield* Migrations.run([billing, market, core])
        assert.deepStrictEqual(describeApplied(applied), [
          "storage/1_extensions",
          "core/1_create_accounts",
          "core/2_seed_accounts",
          "market/1_create_offers",
          "market/2_seed_offers",
          "billing/1_create_invoices"
        ])
        assert.deepStrictEqual(yield* recorded("core"), ["1_create_accounts", "2_seed_accounts"])
        assert.deepStrictEqual(yield* recorded("market"), ["1_create_offers", "2_seed_offers"])
        assert.deepStrictEqual(yield* recorded("storage"), ["1_extensions"])
        const sql = yield* SqlClient.SqlClient
        const extensions = yield* sql<{ readonly extname: string }>`
          SELECT extname FROM pg_extension WHERE extname IN ('unaccent', 'pg_trgm') ORDER BY extname`
        assert.deepStrictEqual(extensions.map((row) => row.extname), ["pg_trgm", "unaccent"])
      }))

    it.effect("pending lists what a run would apply, and nothing once it ran", () =>
      Effect.gen(function*() {
        const fresh: PackageMigrations = { name: "pending_probe", migrations: { "0001_create": exec("CREATE TABLE pending_probe (x int)") } }
        assert.deepStrictEqual(yield* Migrations.pending([core, fresh]), ["pending_probe/0001_create"])
        yield* Migrations.run([fresh])
        assert.deepStrictEqual(yield* Migrations.pending([core, fresh]), [])
      }))

    it.effect("applies nothing the second time, and only new migrations later", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Migrations.run([billing, market, core]), [])
        const grown: PackageMigrations = {
          ...core,
          migrations: { ...core.migrations, "0003_add_email": exec("ALTER TABLE accounts ADD COLUMN email text") }
        }
        assert.deepStrictEqual(describeApplied(yield* Migrations.run([market, grown])), ["core/3_add_email"])
        assert.deepStrictEqual(yield* Migrations.run([market, grown]), [])
      }))

    it.effect("refuses a dependency cycle before touching the database", () =>
      Effect.gen(function*() {
        const error = yield* expectFailure(Migrations.run([
          { name: "cycle_a", dependsOn: ["cycle_b"], migrations: { "0001_a": exec("CREATE TABLE cycle_a (x int)") } },
          { name: "cycle_b", dependsOn: ["cycle_a"], migrations: { "0001_b": exec("CREATE TABLE cycle_b (x int)") } },
          { name: "cycle_free", migrations: { "0001_free": exec("CREATE TABLE cycle_free (x int)") } }
        ]))
        assert.strictEqual(error.reason, "cycle")
        assert.include(error.message, "cycle_a")
        assert.include(error.message, "cycle_b")
        assert.isFalse(yield* tableExists("cycle_free_migrations"))
        assert.isFalse(yield* tableExists("cycle_a"))

        const self = yield* expectFailure(Migrations.run([
          { name: "selfish", dependsOn: ["selfish"], migrations: {} }
        ]))
        assert.strictEqual(self.reason, "cycle")
      }))

    it.effect("refuses unknown dependencies and malformed sets", () =>
      Effect.gen(function*() {
        const unknown = yield* expectFailure(Migrations.run([{ name: "lonely", dependsOn: ["ghost"], migrations: {} }]))
        assert.strictEqual(unknown.reason, "unknown-dependency")
        assert.include(unknown.message, "ghost")

        const cases: ReadonlyArray<readonly [ReadonlyArray<PackageMigrations>, MigrationError["reason"]]> = [
          [[{ name: "Bad-Name", migrations: {} }], "invalid-package"],
          [[{ name: "twice", migrations: {} }, { name: "twice", migrations: {} }], "duplicate-package"],
          [[{ name: "storage", migrations: {} }], "duplicate-package"],
          [[{ name: "nokey", migrations: { "create_x": Effect.void } }], "invalid-migration"],
          [[{ name: "zero", migrations: { "0000_init": Effect.void } }], "invalid-migration"],
          [[{ name: "clash", migrations: { "0001_a": Effect.void, "1_b": Effect.void } }], "invalid-migration"]
        ]
        for (const [sets, reason] of cases) {
          const error = yield* expectFailure(Migrations.run(sets))
          assert.strictEqual(error.reason, reason, error.message)
        }
      }))

    it.effect("rolls back a failing package completely and reports the migration", () =>
      Effect.gen(function*() {
        const fine: PackageMigrations = { name: "fine", migrations: { "0001_ok": exec("CREATE TABLE fine_items (x int)") } }
        const broken: PackageMigrations = {
          name: "broken",
          dependsOn: ["fine"],
          migrations: {
            "0001_create_items": exec("CREATE TABLE broken_items (x int)"),
            "0002_bad_query": exec("INSERT INTO no_such_table VALUES (1)"),
            "0003_never": exec("CREATE TABLE broken_never (x int)")
          }
        }
        const error = yield* expectFailure(Migrations.run([broken, fine]))
        assert.strictEqual(error.reason, "failed")
        assert.strictEqual(error.package, "broken")
        assert.strictEqual(error.migration, "0002_bad_query")
        assert.include(error.message, "no_such_table")
        // Packages ordered before the failure stay applied; nothing of the failing one is kept.
        assert.deepStrictEqual(yield* recorded("fine"), ["1_ok"])
        assert.isTrue(yield* tableExists("fine_items"))
        assert.isFalse(yield* tableExists("broken_items"))
        assert.isFalse(yield* tableExists("broken_never"))
        assert.isFalse(yield* tableExists("broken_migrations"))

        // The database is usable afterwards, and typed failures and defects are reported alike.
        const typed = yield* expectFailure(Migrations.run([
          { name: "typed", migrations: { "0001_fail": Effect.fail("no way") } }
        ]))
        assert.deepStrictEqual([typed.reason, typed.package, typed.migration], ["failed", "typed", "0001_fail"])
        assert.include(typed.message, "no way")
        const defect = yield* expectFailure(Migrations.run([
          { name: "defect", migrations: { "0001_die": Effect.dieMessage("kaput") } }
        ]))
        assert.deepStrictEqual([defect.reason, defect.package, defect.migration], ["failed", "defect", "0001_die"])
        assert.include(defect.message, "kaput")
      }))

    it.effect("refuses a migration added below the latest applied id", () =>
      Effect.gen(function*() {
        yield* Migrations.run([{ name: "late", migrations: { "0002_second": Effect.void } }])
        const error = yield* expectFailure(Migrations.run([
          { name: "late", migrations: { "0001_first": Effect.void, "0002_second": Effect.void } }
        ]))
        assert.strictEqual(error.reason, "out-of-order")
        assert.strictEqual(error.migration, "0001_first")
      }))
  })

  // A database of its own, so that the runners also race on creating the migrations tables.
  layer(target.layer, { timeout: "60 seconds" })(`concurrent migrations on ${target.name}`, (it) => {
    it.effect("lets concurrent runners start on a fresh database, applying everything once", () =>
      Effect.gen(function*() {
        const runs = yield* Effect.all(
          [Migrations.run([market, core]), Migrations.run([market, core]), Migrations.run([market, core])],
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(describeApplied(runs.flat()).sort(), [
          "core/1_create_accounts",
          "core/2_seed_accounts",
          "market/1_create_offers",
          "market/2_seed_offers",
          "storage/1_extensions"
        ])
        assert.deepStrictEqual(yield* recorded("market"), ["1_create_offers", "2_seed_offers"])
      }))
  })
}
