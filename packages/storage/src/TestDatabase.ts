/**
 * Isolated databases for tests: an in-memory PGlite always, and a fresh PostgreSQL database as
 * well when `DATABASE_URL` is set, so one test body proves both adapters behave alike.
 *
 * ```ts
 * for (const target of TestDatabase.targets()) {
 *   layer(TestDatabase.withMigrations(target, [MyMigrations]), { timeout: "60 seconds" })(target.name, (it) => {
 *     it.effect("...", () => ...)
 *   })
 * }
 * ```
 *
 * Each `layer(...)` call builds its own database, so test files never see each other's rows;
 * tests inside one block share it.
 *
 * @since 0.0.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomUUID } from "node:crypto"
import * as Database from "./Database.js"
import * as InternalConfig from "./internal/config.js"
import * as Migrations from "./Migrations.js"

/**
 * A database engine tests can run against.
 *
 * @since 0.0.0
 * @category models
 */
export interface TestDatabaseTarget {
  readonly name: Database.DatabaseKind
  readonly layer: Layer.Layer<Database.DatabaseServices>
}

/**
 * A fresh in-memory PGlite per build.
 *
 * @since 0.0.0
 * @category targets
 */
export const pglite: TestDatabaseTarget = {
  name: "pglite",
  layer: Database.layerPglite().pipe(Layer.orDie)
}

// Only the path changes, so query parameters such as `sslmode` carry over to the test database.
const withDatabase = (url: Redacted.Redacted<string>, database: string) =>
  Effect.try({
    try: () => {
      const parsed = new URL(Redacted.value(url))
      parsed.pathname = `/${database}`
      return Redacted.make(parsed.toString())
    },
    catch: (cause) => new Database.DatabaseError({ message: "DATABASE_URL is not a URL", cause })
  })

/**
 * A fresh PostgreSQL database `test_<random>` per build, created through `adminUrl` and dropped
 * (`WITH (FORCE)`, so leftover connections cannot keep it alive) on release.
 *
 * @since 0.0.0
 * @category targets
 */
export const postgres = (adminUrl: Redacted.Redacted<string>): TestDatabaseTarget => ({
  name: "postgres",
  layer: Layer.scopedContext(
    Effect.gen(function*() {
      // The admin connection outlives the test database: it is needed again to drop it.
      const admin = yield* PgClient.make({ url: adminUrl, maxConnections: 1 })
      // Random rather than Effect's `Random`: test layers are built under `TestRandom`, whose
      // fixed seed would give parallel test files the same name.
      const database = `test_${randomUUID().replaceAll("-", "").slice(0, 16)}`
      yield* Effect.acquireRelease(
        admin`CREATE DATABASE ${admin(database)}`,
        () =>
          admin`DROP DATABASE IF EXISTS ${admin(database)} WITH (FORCE)`.pipe(
            Effect.catchAll((cause) => Effect.logWarning(`Could not drop test database ${database}`, cause))
          )
      )
      const client = yield* PgClient.make({ url: yield* withDatabase(adminUrl, database) })
      return Context.make(PgClient.PgClient, client).pipe(
        Context.add(SqlClient.SqlClient, client),
        Context.add(Database.DatabaseInfo, { kind: "postgres", description: `PostgreSQL test database ${database}` }),
        Context.add(Database.ReadClient, client)
      )
    })
  ).pipe(Layer.provide(Reactivity.layer), Layer.orDie)
})

/**
 * The targets to run against: PGlite always, PostgreSQL too when `DATABASE_URL` is set (it is
 * used as the admin connection that creates and drops the test databases).
 *
 * @since 0.0.0
 * @category targets
 */
export const targets = (): ReadonlyArray<TestDatabaseTarget> =>
  Option.match(Effect.runSync(InternalConfig.databaseUrl), {
    onNone: () => [pglite],
    onSome: (url) => [pglite, postgres(url)]
  })

/**
 * The target's database with the built-in and the given migrations applied.
 *
 * @since 0.0.0
 * @category layers
 */
export const withMigrations = (
  target: TestDatabaseTarget,
  sets: ReadonlyArray<Migrations.PackageMigrations>
): Layer.Layer<Database.DatabaseServices> =>
  Migrations.layer(sets).pipe(Layer.provideMerge(target.layer), Layer.orDie)
