/**
 * Database layers: PostgreSQL over `pg`, and embedded PGlite through its node-postgres bridge.
 *
 * Every layer provides the same three services (`PgClient`, `SqlClient` and `DatabaseInfo`) and
 * both run on the same `PgClient`, SQL compiler and `pg` type parsing, so code written against
 * one behaves the same on the other. Schema work (including the `unaccent` and `pg_trgm`
 * extensions) is left to `Migrations`; these layers only connect.
 *
 * @since 0.0.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { unaccent } from "@electric-sql/pglite/contrib/unaccent"
import { createPgConfig } from "@electric-sql/pglite/node-postgres"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Pg from "pg"
import * as InternalConfig from "./internal/config.js"
import { describePostgres } from "./internal/describe.js"

/**
 * Which engine a layer connected to.
 *
 * @since 0.0.0
 * @category models
 */
export type DatabaseKind = "pglite" | "postgres"

/**
 * What the running database is, for logs, health output and tests. The description never
 * contains credentials.
 *
 * @since 0.0.0
 * @category tags
 */
export class DatabaseInfo extends Context.Tag("@service/storage/DatabaseInfo")<
  DatabaseInfo,
  {
    readonly kind: DatabaseKind
    readonly description: string
  }
>() {}

/**
 * The embedded database could not be opened (data folder not creatable, PGlite failed to start).
 *
 * @since 0.0.0
 * @category errors
 */
export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The services every database layer provides.
 *
 * @since 0.0.0
 * @category models
 */
export type DatabaseServices = PgClient.PgClient | SqlClient.SqlClient | DatabaseInfo

const toContext = (
  client: PgClient.PgClient,
  info: Context.Tag.Service<DatabaseInfo>
): Context.Context<DatabaseServices> =>
  Context.make(PgClient.PgClient, client).pipe(
    Context.add(SqlClient.SqlClient, client),
    Context.add(DatabaseInfo, info)
  )

/**
 * PostgreSQL at the given connection URL.
 *
 * Building the layer runs `SELECT 1`, so an unreachable server fails at start-up (after the
 * `PgClient` connect timeout of 5 s) instead of on the first request. The pool is closed on
 * release.
 *
 * @since 0.0.0
 * @category layers
 */
export const layerPgWith = (options: {
  readonly url: Redacted.Redacted<string>
}): Layer.Layer<DatabaseServices, SqlError> =>
  Layer.scopedContext(
    Effect.map(
      PgClient.make({ url: options.url }),
      (client) => toContext(client, { kind: "postgres", description: describePostgres(client.config) })
    )
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * PostgreSQL at `DATABASE_URL` (read with `Config.redacted`).
 *
 * @since 0.0.0
 * @category layers
 */
export const layerPg: Layer.Layer<DatabaseServices, ConfigError.ConfigError | SqlError> = Layer.unwrapEffect(
  Effect.map(Config.redacted("DATABASE_URL"), (url) => layerPgWith({ url }))
)

/**
 * Options for {@link layerPglite}.
 *
 * @since 0.0.0
 * @category models
 */
export interface PgliteOptions {
  /**
   * Folder holding the database files, created (with its parents) when missing and reopened on
   * the next start. Relative paths are resolved against the current working directory. Omit it
   * for a throw-away in-memory database.
   */
  readonly dataDir?: string | undefined
}

// Release must not fail: a close error is worth a warning, but the rest of the shutdown
// (other finalizers, the process exit) has to go on.
const closeQuietly = (what: string, close: () => Promise<void>): Effect.Effect<void> =>
  Effect.tryPromise(close).pipe(
    Effect.catchAll((cause) => Effect.logWarning(`Could not close ${what}`, cause))
  )

const openPglite = (dataDir: string | undefined): Effect.Effect<PGlite, DatabaseError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      if (dataDir !== undefined) {
        // PGlite's node filesystem only creates the last path segment, so a fresh nested
        // folder such as `.data/pglite` would fail with ENOENT without this.
        yield* Effect.tryPromise({
          try: () => NodeFs.mkdir(dataDir, { recursive: true }),
          catch: (cause) => new DatabaseError({ message: `Could not create the data folder ${dataDir}`, cause })
        })
      }
      return yield* Effect.tryPromise({
        try: () =>
          PGlite.create({
            ...(dataDir === undefined ? {} : { dataDir }),
            // Extensions must be registered when PGlite starts; `CREATE EXTENSION` (run by the
            // `storage` migrations) can only load what is registered here.
            extensions: { unaccent, pg_trgm }
          }),
        catch: (cause) =>
          new DatabaseError({
            message: `Could not start PGlite ${dataDir === undefined ? "in memory" : `in ${dataDir}`}`,
            cause
          })
      })
    }),
    (pglite) => closeQuietly("PGlite", () => pglite.close())
  )

const openBridgePool = (pglite: PGlite): Effect.Effect<Pg.Pool, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      // The bridge shares one connection object between all pool clients, so the pool must
      // stay at one client, and that client must never be dropped for idleness.
      const pool = new Pg.Pool({ ...createPgConfig(pglite), max: 1, idleTimeoutMillis: 0 })
      // An unhandled "error" event from an idle client would crash the process; the next
      // query reports the failure through the normal SqlError path instead.
      pool.on("error", () => {})
      return pool
    }),
    (pool) => closeQuietly("the PGlite pool", () => pool.end())
  )

/**
 * Embedded PGlite through its node-postgres bridge (`createPgConfig` + `pg.Pool` +
 * `PgClient.fromPool`), with the `unaccent` and `pg_trgm` extensions registered.
 *
 * Without `dataDir` the database lives in memory. On release the pool is ended first and PGlite
 * is closed after it (scope finalizers run in reverse order), which also flushes an on-disk
 * database.
 *
 * Caveats of the bridge: PGlite runs on the main thread and serialises everything over one
 * connection, so do not use `PgClient.listen`/`notify` and do not hold `sql.reserve` for long.
 *
 * @since 0.0.0
 * @category layers
 */
export const layerPglite = (options: PgliteOptions = {}): Layer.Layer<DatabaseServices, SqlError | DatabaseError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const dataDir = options.dataDir === undefined ? undefined : NodePath.resolve(options.dataDir)
      const pglite = yield* openPglite(dataDir)
      const client = yield* PgClient.fromPool({ acquire: openBridgePool(pglite) })
      return toContext(client, {
        kind: "pglite",
        description: dataDir === undefined ? "PGlite (in memory)" : `PGlite in ${dataDir}`
      })
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The local data folder: `SERVICE_DATA_DIR`, default `.data` (relative to the working directory).
 *
 * @since 0.0.0
 * @category config
 */
export const dataDirConfig: Config.Config<string> = InternalConfig.serviceDataDir

/**
 * The database chosen by configuration: PostgreSQL when `DATABASE_URL` is set (and not blank),
 * otherwise PGlite in `<SERVICE_DATA_DIR>/pglite` (SERVICE_DATA_DIR defaults to `.data` when unset or blank, relative to
 * the working directory).
 *
 * @since 0.0.0
 * @category layers
 */
export const layerFromConfig: Layer.Layer<
  DatabaseServices,
  ConfigError.ConfigError | SqlError | DatabaseError
> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const url = yield* InternalConfig.databaseUrl
    if (Option.isSome(url)) {
      return layerPgWith({ url: url.value })
    }
    return layerPglite({ dataDir: NodePath.join(yield* InternalConfig.serviceDataDir, "pglite") })
  })
)
