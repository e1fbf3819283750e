/**
 * Runs the migrations of every package, in dependency order, on PostgreSQL and PGlite alike.
 *
 * Each package contributes a {@link PackageMigrations} value (a structural type, so domain
 * packages do not need to import this one). Its migrations are applied by `@effect/sql`'s
 * `Migrator` and recorded in the table `<name>_migrations`, created in the first schema of the
 * search path (normally `public`).
 *
 * @since 0.0.0
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Arr from "effect/Array"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { topologicalOrder } from "./internal/topologicalOrder.js"

/**
 * The migrations one package contributes.
 *
 * Keys of `migrations` are `<id>_<name>` with a positive integer id, e.g. `"0001_create_items"`.
 * Ids only ever grow: once a migration has been applied, a new one must get a higher id.
 *
 * @since 0.0.0
 * @category models
 */
export interface PackageMigrations {
  /** Package (and migrations table) name: lower case letters, digits and `_`, e.g. `"market"`. */
  readonly name: string
  /** Packages whose migrations must be applied first. */
  readonly dependsOn?: ReadonlyArray<string> | undefined
  readonly migrations: Readonly<Record<string, Effect.Effect<unknown, unknown, SqlClient.SqlClient>>>
}

/**
 * One migration applied by a run.
 *
 * @since 0.0.0
 * @category models
 */
export interface AppliedMigration {
  readonly package: string
  readonly id: number
  readonly name: string
}

/**
 * Why migrating failed. Nothing of the failing package is kept (its run is one transaction);
 * packages ordered before it stay applied.
 *
 * @since 0.0.0
 * @category errors
 */
export class MigrationError extends Data.TaggedError("MigrationError")<{
  readonly reason:
    | "invalid-package"
    | "duplicate-package"
    | "unknown-dependency"
    | "cycle"
    | "invalid-migration"
    | "out-of-order"
    | "failed"
  readonly message: string
  readonly package?: string | undefined
  readonly migration?: string | undefined
  readonly cause?: unknown
}> {}

/**
 * The built-in first set: the extensions every other package may rely on.
 *
 * @since 0.0.0
 * @category migrations
 */
export const storage: PackageMigrations = {
  name: "storage",
  migrations: {
    "0001_extensions": Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE EXTENSION IF NOT EXISTS unaccent`
      yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
    })
  }
}

// 63 bytes is PostgreSQL's identifier limit; keep room for the `_migrations` suffix.
const packageNamePattern = /^[a-z][a-z0-9_]{0,51}$/
const migrationKeyPattern = /^(\d+)_(.+)$/
const maxMigrationId = 2_147_483_647 // the Migrator's id column is `integer`

// First half of the two-int advisory lock key, so that these locks cannot collide with the
// application's own single-key advisory locks. Arbitrary, but must never change.
const advisoryLockNamespace = 0x5e41

/**
 * Table recording the applied migrations of one package.
 *
 * @since 0.0.0
 * @category naming
 */
export const migrationsTable = (name: string): string => `${name}_migrations`

interface ResolvedSet {
  readonly name: string
  readonly dependsOn: ReadonlyArray<string>
  readonly table: string
  readonly migrations: ReadonlyArray<{
    readonly key: string
    readonly id: number
    readonly name: string
    readonly effect: Effect.Effect<unknown, unknown, SqlClient.SqlClient>
  }>
}

const resolveSet = (set: PackageMigrations): Either.Either<ResolvedSet, MigrationError> => {
  if (!packageNamePattern.test(set.name)) {
    return Either.left(
      new MigrationError({
        reason: "invalid-package",
        package: set.name,
        message: `Invalid package name "${set.name}": use lower case letters, digits and "_" (at most 52)`
      })
    )
  }
  const migrations: Array<ResolvedSet["migrations"][number]> = []
  const ids = new Map<number, string>()
  for (const [key, effect] of Object.entries(set.migrations)) {
    const match = migrationKeyPattern.exec(key)
    const id = match === null ? Number.NaN : Number(match[1])
    const name = match?.[2]
    // `Migrator.fromRecord` silently skips keys it cannot parse, and an id of 0 would never run
    // (only ids above the latest applied one, initially 0, are run): refuse both loudly.
    if (name === undefined || !Number.isSafeInteger(id) || id < 1 || id > maxMigrationId) {
      return Either.left(
        new MigrationError({
          reason: "invalid-migration",
          package: set.name,
          migration: key,
          message: `Invalid migration key "${set.name}/${key}": expected "<id>_<name>" with an id from 1`
        })
      )
    }
    const clash = ids.get(id)
    if (clash !== undefined) {
      return Either.left(
        new MigrationError({
          reason: "invalid-migration",
          package: set.name,
          migration: key,
          message: `Migrations "${set.name}/${clash}" and "${set.name}/${key}" share the id ${id}`
        })
      )
    }
    ids.set(id, key)
    migrations.push({ key, id, name, effect })
  }
  return Either.right({
    name: set.name,
    dependsOn: set.dependsOn ?? [],
    table: migrationsTable(set.name),
    migrations: [...migrations].sort((a, b) => a.id - b.id)
  })
}

/**
 * Validates the sets and orders them: the built-in `storage` set first, then by `dependsOn`,
 * otherwise keeping the order given.
 */
const plan = (sets: ReadonlyArray<PackageMigrations>): Either.Either<ReadonlyArray<ResolvedSet>, MigrationError> =>
  Either.gen(function*() {
    const resolved: Array<ResolvedSet> = []
    const seen = new Set<string>()
    for (const set of [storage, ...sets]) {
      if (seen.has(set.name)) {
        return yield* Either.left(
          new MigrationError({
            reason: "duplicate-package",
            package: set.name,
            message: `Migrations for package "${set.name}" were given more than once${
              set.name === storage.name ? ` ("${storage.name}" is built in)` : ""
            }`
          })
        )
      }
      seen.add(set.name)
      resolved.push(yield* resolveSet(set))
    }
    return yield* Either.mapLeft(
      topologicalOrder(resolved, (set) => set.name, (set) => set.dependsOn),
      (problem) =>
        problem._tag === "Cycle"
          ? new MigrationError({
            reason: "cycle",
            message: `Migration dependencies form a cycle among: ${problem.nodes.join(", ")}`
          })
          : new MigrationError({
            reason: "unknown-dependency",
            package: problem.node,
            message: `Package "${problem.node}" depends on "${problem.dependency}", which has no migrations here`
          })
    )
  })

const describeCause = (cause: unknown): string => {
  const inner = cause instanceof SqlError && cause.cause !== undefined ? cause.cause : cause
  return inner instanceof Error ? inner.message : String(inner)
}

const failedMigration = (set: ResolvedSet, key: string, cause: unknown): MigrationError =>
  new MigrationError({
    reason: "failed",
    package: set.name,
    migration: key,
    message: `Migration "${set.name}/${key}" failed: ${describeCause(cause)}`,
    cause
  })

/**
 * Applies one package's pending migrations in a single transaction.
 *
 * `Migrator` alone is not safe for concurrent first starts: it creates its table after a failed
 * `select '<table>'::regclass`, outside its lock, so two nodes starting on a fresh database race
 * on `CREATE TABLE`. Hence the outer transaction takes a transaction-scoped advisory lock and
 * creates the table (with Migrator's exact definition) before handing over; the Migrator's own
 * `withTransaction` then nests as a savepoint and its `LOCK TABLE` finds nothing to wait for.
 * A later runner waits on the advisory lock, then sees everything applied and does nothing.
 */
const runSet = (
  sql: SqlClient.SqlClient,
  set: ResolvedSet
): Effect.Effect<ReadonlyArray<AppliedMigration>, MigrationError, SqlClient.SqlClient> => {
  // The Migrator turns a failing migration into a defect; wrapping each effect first keeps the
  // package, the key and the original cause for the report.
  const record = Object.fromEntries(
    set.migrations.map((migration) => [
      migration.key,
      migration.effect.pipe(
        Effect.asVoid,
        Effect.mapError((cause) => failedMigration(set, migration.key, cause)),
        Effect.catchAllDefect((defect) => Effect.fail(failedMigration(set, migration.key, defect)))
      )
    ])
  )
  const migrate = Migrator.make({})({ loader: Migrator.fromRecord(record), table: set.table })

  const transaction = Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${advisoryLockNamespace}, hashtext(${set.table}))`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(set.table)} (
  migration_id integer primary key,
  created_at timestamp with time zone not null default now(),
  name text not null
)`
    const applied = yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(set.table)}`
    const appliedIds = new Set(applied.map((row) => row.migration_id))
    const latest = Math.max(0, ...appliedIds)
    // The Migrator only runs ids above the latest applied one, so a migration added "in the
    // past" (e.g. after a merge) would be skipped forever without a word.
    const skipped = set.migrations.find((migration) => migration.id < latest && !appliedIds.has(migration.id))
    if (skipped !== undefined) {
      return yield* new MigrationError({
        reason: "out-of-order",
        package: set.name,
        migration: skipped.key,
        message: `Migration "${set.name}/${skipped.key}" was never applied but "${set.name}" is already at id ${latest}; give it a higher id`
      })
    }
    return yield* migrate
  })

  return sql.withTransaction(transaction).pipe(
    Effect.map(Arr.map(([id, name]): AppliedMigration => ({ package: set.name, id, name }))),
    Effect.catchAll((error) =>
      Effect.fail(
        error instanceof MigrationError
          ? error
          : new MigrationError({
            reason: error instanceof Migrator.MigrationError && error.reason === "duplicates"
              ? "invalid-migration"
              : "failed",
            package: set.name,
            message: `Migrating "${set.name}" failed: ${describeCause(error)}`,
            cause: error
          })
      )
    ),
    Effect.catchAllDefect((defect) =>
      Effect.fail(
        defect instanceof Migrator.MigrationError && defect.cause instanceof MigrationError
          ? defect.cause
          : new MigrationError({
            reason: "failed",
            package: set.name,
            message: `Migrating "${set.name}" failed: ${describeCause(defect)}`,
            cause: defect
          })
      )
    )
  )
}

/**
 * Applies the pending migrations of the built-in `storage` set and of every given set, ordered by
 * `dependsOn`, and returns what was applied (empty when everything was up to date).
 *
 * Each package runs in its own transaction under an advisory lock, so several processes may run
 * this at once against one PostgreSQL: one applies, the others wait and then apply nothing.
 *
 * @since 0.0.0
 * @category running
 */
export const run = (
  sets: ReadonlyArray<PackageMigrations>
): Effect.Effect<ReadonlyArray<AppliedMigration>, MigrationError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const ordered = yield* plan(sets)
    const sql = yield* SqlClient.SqlClient
    const applied = yield* Effect.forEach(ordered, (set) => runSet(sql, set))
    const flat = applied.flat()
    if (flat.length > 0) {
      yield* Effect.logInfo("Applied migrations").pipe(
        Effect.annotateLogs("migrations", flat.map((m) => `${m.package}/${m.id}_${m.name}`).join(", "))
      )
    }
    return flat
  })

/**
 * A layer that migrates the database while it is built, so that nothing depending on it starts
 * against an old schema.
 *
 * @since 0.0.0
 * @category layers
 */
export const layer = (
  sets: ReadonlyArray<PackageMigrations>
): Layer.Layer<never, MigrationError, SqlClient.SqlClient> => Layer.effectDiscard(run(sets))

/**
 * The migrations of the built-in `storage` set and of every given set that are not applied yet, as
 * `<package>/<id>_<name>` in the order they would run (empty when the database is up to date). Reads only:
 * for readiness checks and status commands.
 *
 * @since 0.1.0
 * @category running
 */
export const pending = (
  sets: ReadonlyArray<PackageMigrations>
): Effect.Effect<ReadonlyArray<string>, MigrationError | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const ordered = yield* plan(sets)
    const sql = yield* SqlClient.SqlClient
    const missing: Array<string> = []
    for (const set of ordered) {
      const [table] = yield* sql<{ readonly found: string | null }>`SELECT to_regclass(${set.table})::text AS found`
      const applied = table?.found === null || table === undefined
        ? new Set<number>()
        : new Set((yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(set.table)}`).map((r) => r.migration_id))
      for (const migration of set.migrations) {
        if (!applied.has(migration.id)) missing.push(`${set.name}/${migration.key}`)
      }
    }
    return missing
  })
