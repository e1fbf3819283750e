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
 * Preparing a database can cost more than the tests that read it (the demo corpus takes seconds per
 * engine). {@link prepared} prepares it once per test run and gives every later test a copy: PostgreSQL
 * copies a template database, PGlite starts from a dump of the prepared files.
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
import * as Schedule from "effect/Schedule"
import { createHash, randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Database from "./Database.js"
import * as InternalConfig from "./internal/config.js"
import * as Migrations from "./Migrations.js"
import * as Notifications from "./Notifications.js"

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
// Random rather than Effect's `Random`: test layers are built under `TestRandom`, whose fixed seed would give
// parallel test files the same name.
const randomName = (prefix: string) => `${prefix}${randomUUID().replaceAll("-", "").slice(0, 16)}`

const connect = (adminUrl: Redacted.Redacted<string>, database: string) =>
  Effect.gen(function*() {
    const client = yield* PgClient.make({ url: yield* withDatabase(adminUrl, database) })
    return Context.make(PgClient.PgClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(Database.DatabaseInfo, { kind: "postgres", description: `PostgreSQL test database ${database}` }),
      Context.add(Database.ReadClient, client),
      Context.add(Database.TimedReadClient, yield* Database.makeTimed(client, 5_000)),
      Context.add(Notifications.Notifications, yield* Notifications.fromPg(client))
    )
  })

/** A fresh database `test_<random>` (a copy of `template` when given), dropped on release. */
const postgresDatabase = (adminUrl: Redacted.Redacted<string>, template?: string) =>
  Layer.scopedContext(
    Effect.gen(function*() {
      // The admin connection outlives the test database: it is needed again to drop it.
      const admin = yield* PgClient.make({ url: adminUrl, maxConnections: 1 })
      const database = randomName("test_")
      yield* Effect.acquireRelease(
        template === undefined
          ? admin`CREATE DATABASE ${admin(database)}`
          // A template being copied must have no session; another copy starting at the same moment is
          // not one, but a build finishing is: try again briefly.
          : admin`CREATE DATABASE ${admin(database)} TEMPLATE ${admin(template)}`.pipe(
            Effect.retry({ times: 20, schedule: Schedule.spaced("250 millis") })
          ),
        () =>
          admin`DROP DATABASE IF EXISTS ${admin(database)} WITH (FORCE)`.pipe(
            Effect.catchAll((cause) => Effect.logWarning(`Could not drop test database ${database}`, cause))
          )
      )
      return yield* connect(adminUrl, database)
    })
  ).pipe(Layer.provide(Reactivity.layer), Layer.orDie)

// The server each target made by `postgres` creates its databases on, so its copies of a template are made there too.
const adminUrls = new WeakMap<TestDatabaseTarget, Redacted.Redacted<string>>()

export const postgres = (adminUrl: Redacted.Redacted<string>): TestDatabaseTarget => {
  const target: TestDatabaseTarget = { name: "postgres", layer: postgresDatabase(adminUrl) }
  adminUrls.set(target, adminUrl)
  return target
}

/**
 * The engine a test runs on, one per leg (decision 0099): PGlite, or PostgreSQL instead when `DATABASE_URL` is set
 * (used as the admin connection that creates and drops the test databases). `npm test` is the PGlite leg; CI runs it
 * again with `DATABASE_URL` for the PostgreSQL leg, so every test runs on both engines without either leg repeating
 * the other's work.
 *
 * @since 0.0.0
 * @category targets
 */
export const targets = (): ReadonlyArray<TestDatabaseTarget> =>
  Option.match(Effect.runSync(InternalConfig.databaseUrl), {
    onNone: () => [pglite],
    onSome: (url) => [postgres(url)]
  })

/**
 * Both engines in one run when `DATABASE_URL` is set (PGlite alone otherwise): for the tests of what the engines
 * may do differently (storage, migrations, notifications, the work queue, counters under concurrency), which compare
 * them side by side in the PostgreSQL leg.
 *
 * @since 0.1.0
 * @category targets
 */
export const parityTargets = (): ReadonlyArray<TestDatabaseTarget> =>
  Option.match(Effect.runSync(InternalConfig.databaseUrl), {
    onNone: () => [pglite],
    onSome: (url) => [pglite, postgres(url)]
  })

const adminUrlOf = (target: TestDatabaseTarget): Option.Option<Redacted.Redacted<string>> =>
  target.name !== "postgres"
    ? Option.none()
    : Option.orElse(Option.fromNullable(adminUrls.get(target)), () => Effect.runSync(InternalConfig.databaseUrl))

/**
 * The target's database with the built-in and the given migrations applied.
 *
 * On a target made by {@link postgres}, under the test runner's global setup, the sets are migrated once per run into
 * a template database and every database is a copy of it, as {@link prepared} does: the same tables and rows in a
 * fraction of a second, where running every migration again took seconds per test file. Like a snapshot's, a set is
 * known by its name and its migrations' names (migrations never change once applied). PGlite still migrates each
 * database itself: its first copy would cost a dump on top of the migrations, for a smaller saving.
 *
 * @since 0.0.0
 * @category layers
 */
export const withMigrations = (
  target: TestDatabaseTarget,
  sets: ReadonlyArray<Migrations.PackageMigrations>
): Layer.Layer<Database.DatabaseServices> =>
  adminUrls.has(target)
    ? prepared(target, { key: "migrations", migrations: sets, prepare: Layer.empty })
    : Migrations.layer(sets).pipe(Layer.provideMerge(target.layer), Layer.orDie)

/**
 * What a prepared database holds: the migrations and the rows `prepare` writes over them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot<E> {
  /**
   * Names the rows `prepare` writes: two snapshots with the same key (and the same migrations) must hold the
   * same rows, since the second is a copy of the first.
   */
  readonly key: string
  readonly migrations: ReadonlyArray<Migrations.PackageMigrations>
  /** Built once over the migrated database, outside any test's services (live clock and random). */
  readonly prepare: Layer.Layer<never, E, Database.DatabaseServices>
}

/**
 * The prefix of the PostgreSQL template databases of the test run whose snapshots live in `folder`:
 * `tpl_<epoch seconds>_<random>`, read off the folder's name `service-test-snapshots-<epoch>-<random>`.
 *
 * @since 0.1.0
 * @category snapshots
 */
export const templatePrefix = (folder: string): string =>
  `tpl_${NodePath.basename(folder).replace(/^service-test-snapshots-/, "").replace(/[^a-z0-9]+/g, "_")}`

const snapshotName = (snapshot: Snapshot<unknown>) =>
  createHash("sha256")
    .update(JSON.stringify([snapshot.key, snapshot.migrations.map((set) => [set.name, Object.keys(set.migrations)])]))
    .digest("hex")
    .slice(0, 16)

// Prepared outside the test's runtime, so a `TestClock` or `TestRandom` of the test cannot leak into rows that
// other tests will read.
const isolated = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.promise(() => Effect.runPromiseExit(effect)), (exit) => exit)

const prepareOver = <A, E>(database: Layer.Layer<A | Database.DatabaseServices>, snapshot: Snapshot<E>) =>
  snapshot.prepare.pipe(
    Layer.provideMerge(Migrations.layer(snapshot.migrations).pipe(Layer.provideMerge(database))),
    Layer.orDie
  )

const STALE_LOCK_MILLIS = 10 * 60_000

/**
 * Runs `build` unless `ready` says it is done, one test process at a time per `lock` file: the others wait for
 * the first to finish instead of building the same snapshot at once. A lock older than ten minutes is left by a
 * process that died and is taken over.
 */
const onceAcrossProcesses = <A>(lock: string, ready: Effect.Effect<Option.Option<A>>, build: Effect.Effect<A>): Effect.Effect<A> =>
  Effect.gen(function*() {
    while (true) {
      const done = yield* ready
      if (Option.isSome(done)) return done.value
      const taken = yield* Effect.promise(() => NodeFs.open(lock, "wx").then((handle) => handle.close().then(() => true), () => false))
      if (taken) {
        return yield* Effect.flatMap(ready, Option.match({ onSome: Effect.succeed, onNone: () => build })).pipe(
          Effect.ensuring(Effect.promise(() => NodeFs.rm(lock, { force: true })))
        )
      }
      const age = yield* Effect.promise(() => NodeFs.stat(lock).then((stat) => Date.now() - stat.mtimeMs, () => 0))
      if (age > STALE_LOCK_MILLIS) yield* Effect.promise(() => NodeFs.rm(lock, { force: true }))
      else yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 200)))
    }
  })

const preparedPglite = <E>(folder: string, snapshot: Snapshot<E>): Layer.Layer<Database.DatabaseServices> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const file = NodePath.join(folder, `${snapshotName(snapshot)}.tar`)
      const existing = Effect.promise(() => NodeFs.readFile(file).then((bytes) => Option.some(new Uint8Array(bytes)), () => Option.none()))
      const dump = yield* onceAcrossProcesses(`${file}.lock`, existing, isolated(
        Effect.gen(function*() {
          const context = yield* Layer.build(prepareOver(Database.layerPgliteFromDump().pipe(Layer.orDie), snapshot))
          const bytes = yield* Context.get(context, Database.PgliteDump).pipe(Effect.orDie)
          // Written aside and renamed: a file in place is whole, whichever parallel test file wrote it.
          const partial = `${file}.${randomUUID()}`
          yield* Effect.promise(() => NodeFs.writeFile(partial, bytes).then(() => NodeFs.rename(partial, file)))
          return bytes
        }).pipe(Effect.scoped)
      ))
      return Database.layerPgliteFromDump(dump).pipe(Layer.orDie)
    })
  )

const preparedPostgres = <E>(
  adminUrl: Redacted.Redacted<string>,
  folder: string,
  snapshot: Snapshot<E>
): Layer.Layer<Database.DatabaseServices> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const template = `${templatePrefix(folder)}_${snapshotName(snapshot)}`
      const exists = isolated(
        Effect.gen(function*() {
          const admin = yield* PgClient.make({ url: adminUrl, maxConnections: 1 })
          const found = yield* admin`SELECT 1 FROM pg_database WHERE datname = ${template}`
          return found.length > 0 ? Option.some(true) : Option.none()
        }).pipe(Effect.scoped, Effect.provide(Reactivity.layer), Effect.orDie)
      )
      yield* onceAcrossProcesses(NodePath.join(folder, `${template}.lock`), exists, isolated(
        Effect.gen(function*() {
          const admin = yield* PgClient.make({ url: adminUrl, maxConnections: 1 })
          // Built under a name of its own and renamed, so a copy never starts from half a database (and a process
          // that took over a stale lock and renamed first wins: this build is dropped and theirs is used).
          const build = randomName(`${template}_b`).slice(0, 63)
          yield* admin`CREATE DATABASE ${admin(build)}`
          yield* Layer.build(
            prepareOver(Layer.scopedContext(connect(adminUrl, build)).pipe(Layer.provide(Reactivity.layer), Layer.orDie), snapshot)
          ).pipe(Effect.scoped)
          yield* admin`ALTER DATABASE ${admin(build)} RENAME TO ${admin(template)}`.pipe(
            Effect.catchAll(() => admin`DROP DATABASE IF EXISTS ${admin(build)} WITH (FORCE)`)
          )
          return true
        }).pipe(Effect.scoped, Effect.provide(Reactivity.layer), Effect.orDie)
      ))
      return postgresDatabase(adminUrl, template)
    })
  )

/**
 * The target's database with `snapshot` prepared: migrated, then `prepare` built over it.
 *
 * Under the test runner's global setup (`SERVICE_TEST_SNAPSHOTS` names the run's folder) the preparation
 * runs once per run and engine; every later call gets a copy (a PostgreSQL template database, a PGlite
 * dump in the folder). Without it, each call prepares its own database: the same rows, slower.
 *
 * @since 0.1.0
 * @category layers
 */
export const prepared = <E>(target: TestDatabaseTarget, snapshot: Snapshot<E>): Layer.Layer<Database.DatabaseServices> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const folder = yield* Effect.orDie(InternalConfig.testSnapshots)
      if (Option.isNone(folder)) return prepareOver(target.layer, snapshot)
      const adminUrl = adminUrlOf(target)
      return Option.isSome(adminUrl)
        ? preparedPostgres(adminUrl.value, folder.value, snapshot)
        : preparedPglite(folder.value, snapshot)
    })
  )

const STALE_SECONDS = 6 * 60 * 60

/** Drops the template databases whose names pass `matches` (when `DATABASE_URL` is set). */
const dropTemplates = (matches: (name: string) => boolean) =>
  Effect.gen(function*() {
    const url = yield* Effect.orDie(InternalConfig.databaseUrl)
    if (Option.isNone(url)) return
    const admin = yield* PgClient.make({ url: url.value, maxConnections: 1 })
    const rows = yield* admin<{ datname: string }>`SELECT datname FROM pg_database WHERE datname LIKE 'tpl\\_%'`
    for (const { datname } of rows.filter((row) => matches(row.datname))) {
      yield* admin`DROP DATABASE IF EXISTS ${admin(datname)} WITH (FORCE)`
    }
  }).pipe(
    Effect.scoped,
    Effect.provide(Reactivity.layer),
    Effect.catchAll((cause) => Effect.logWarning("Could not drop test template databases", cause))
  )

/**
 * Starts a test run's snapshots: a new folder `service-test-snapshots-<epoch>-<random>` under `parent`, to be named
 * in `SERVICE_TEST_SNAPSHOTS` for the test processes. Templates of runs started over six hours ago (a run that
 * was killed before {@link endRun}) are dropped.
 *
 * @since 0.1.0
 * @category snapshots
 */
export const startRun = (parent: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const now = Math.floor(Date.now() / 1000)
    const folder = yield* Effect.promise(() => NodeFs.mkdtemp(NodePath.join(parent, `service-test-snapshots-${now}-`)))
    yield* dropTemplates((name) => {
      const started = Number(/^tpl_(\d+)_/.exec(name)?.[1])
      return Number.isFinite(started) && now - started > STALE_SECONDS
    })
    return folder
  })

/**
 * Ends a test run's snapshots: removes the folder and drops the run's PostgreSQL templates.
 *
 * @since 0.1.0
 * @category snapshots
 */
export const endRun = (folder: string): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.promise(() => NodeFs.rm(folder, { recursive: true, force: true })),
    dropTemplates((name) => name.startsWith(`${templatePrefix(folder)}_`))
  )
