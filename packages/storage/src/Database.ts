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
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import * as ClusterTemplate from "./internal/clusterTemplate.js"
import * as InternalConfig from "./internal/config.js"
import * as DataDirLock from "./internal/dataDirLock.js"
import { extractTar } from "./internal/tar.js"
import { describePostgres } from "./internal/describe.js"
import * as Notifications from "./Notifications.js"

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
 * The embedded database could not be opened. `reason` tells the cases a runtime reports differently:
 * `locked` (another process has the data folder open), `missing` (no database in the folder and the layer
 * was told not to create one), `failed` (anything else: folder not creatable, PGlite failed to start).
 *
 * @since 0.0.0
 * @category errors
 */
export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly message: string
  readonly reason?: "locked" | "missing" | "failed" | undefined
  readonly cause?: unknown
}> {}

/**
 * The services every database layer provides.
 *
 * @since 0.0.0
 * @category models
 */
export type DatabaseServices =
  | PgClient.PgClient
  | SqlClient.SqlClient
  | DatabaseInfo
  | ReadClient
  | TimedReadClient
  | Notifications.Notifications

/**
 * The client for reads that may be served by a PostgreSQL read replica (`DATABASE_READ_URL`): the market-data
 * operations read through it. Without a replica it is the primary client itself. Writes, loads, publication,
 * accounts and metering always use the primary `SqlClient`.
 *
 * @since 0.1.0
 * @category tags
 */
export class ReadClient extends Context.Tag("@service/storage/ReadClient")<ReadClient, SqlClient.SqlClient>() {}

/**
 * The {@link ReadClient}'s server with a statement timeout set when each connection opens
 * (`SERVICE_STATEMENT_TIMEOUT_MS`, default 5000): for reads that must be cancelled rather than run long (counts,
 * aggregates), with no statement or transaction per read to set it. Its own pool, connecting only when first used.
 * On PGlite, which enforces no statement timeout (decision 0037), it is the read client itself and
 * `timeoutMillis` is absent.
 *
 * @since 0.1.0
 * @category tags
 */
export class TimedReadClient extends Context.Tag("@service/storage/TimedReadClient")<
  TimedReadClient,
  { readonly sql: SqlClient.SqlClient; readonly timeoutMillis: number | undefined }
>() {}

/**
 * A client on `client`'s server and database whose connections cancel any statement after `millis`: a second
 * pool, opened lazily, closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeTimed = (
  client: PgClient.PgClient,
  millis: number
): Effect.Effect<Context.Tag.Service<TimedReadClient>, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const config = client.config
    const sql = yield* PgClient.fromPool({
      acquire: Effect.acquireRelease(
        Effect.sync(() => {
          const pool = new Pg.Pool({
            connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
            host: config.host,
            port: config.port,
            database: config.database,
            user: config.username,
            password: config.password === undefined ? undefined : Redacted.value(config.password),
            ssl: config.ssl,
            application_name: `${config.applicationName ?? "service"}-timed`,
            // Sent in the startup packet: the session's statement_timeout from its first statement on.
            statement_timeout: millis
          })
          // An idle client's error must not crash the process; the next query reports it.
          pool.on("error", () => {})
          return pool
        }),
        (pool) => closeQuietly("the timed read pool", () => pool.end())
      )
    })
    return { sql, timeoutMillis: millis }
  })

const toContext = (
  client: PgClient.PgClient,
  info: Context.Tag.Service<DatabaseInfo>,
  notifications: Context.Tag.Service<Notifications.Notifications>,
  read: SqlClient.SqlClient = client,
  timed: Context.Tag.Service<TimedReadClient> = { sql: read, timeoutMillis: undefined }
): Context.Context<DatabaseServices> =>
  Context.make(PgClient.PgClient, client).pipe(
    Context.add(SqlClient.SqlClient, client),
    Context.add(DatabaseInfo, info),
    Context.add(ReadClient, read),
    Context.add(TimedReadClient, timed),
    Context.add(Notifications.Notifications, notifications)
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
  /** A read replica for {@link ReadClient}: its own pool, checked at start-up like the primary. */
  readonly readUrl?: Redacted.Redacted<string> | undefined
  /** The {@link TimedReadClient}'s timeout; default 5000. */
  readonly statementTimeoutMillis?: number | undefined
}): Layer.Layer<DatabaseServices, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const client = yield* PgClient.make({ url: options.url })
      const millis = options.statementTimeoutMillis ?? 5_000
      if (options.readUrl === undefined) {
        return toContext(
          client,
          { kind: "postgres", description: describePostgres(client.config) },
          yield* Notifications.fromPg(client),
          client,
          yield* makeTimed(client, millis)
        )
      }
      const read = yield* PgClient.make({ url: options.readUrl, applicationName: "service-read" })
      return toContext(
        client,
        { kind: "postgres", description: `${describePostgres(client.config)}, reads from ${describePostgres(read.config)}` },
        // Notifications come from the primary, where every change is written.
        yield* Notifications.fromPg(client),
        read,
        yield* makeTimed(read, millis)
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * PostgreSQL at `DATABASE_URL` (read with `Config.redacted`).
 *
 * @since 0.0.0
 * @category layers
 */
export const layerPg: Layer.Layer<DatabaseServices, ConfigError.ConfigError | SqlError> = Layer.unwrapEffect(
  Effect.map(
    Effect.all([Config.redacted("DATABASE_URL"), InternalConfig.statementTimeoutMillis]),
    ([url, statementTimeoutMillis]) => layerPgWith({ url, statementTimeoutMillis })
  )
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
  /**
   * With `false`, a folder that holds no database yet is refused (`DatabaseError` with reason
   * `missing`) and nothing is created on disk: for read-only tools such as a status command.
   * Default `true`.
   */
  readonly createIfMissing?: boolean | undefined
}

// Release must not fail: a close error is worth a warning, but the rest of the shutdown
// (other finalizers, the process exit) has to go on.
const closeQuietly = (what: string, close: () => Promise<void>): Effect.Effect<void> =>
  Effect.tryPromise(close).pipe(
    Effect.catchAll((cause) => Effect.logWarning(`Could not close ${what}`, cause))
  )

/** Prebuilt fresh clusters, one per PGlite version (`bin/pglite-template.ts` makes them). */
const templateDirectory = fileURLToPath(new URL("../template/", import.meta.url))

// Extensions must be registered when PGlite starts; `CREATE EXTENSION` (run by the `storage`
// migrations) can only load what is registered here.
const extensions = { unaccent, pg_trgm }

const failed = (message: string) => (cause: unknown) => new DatabaseError({ message, reason: "failed", cause })

const exists = (path: string) => Effect.promise(() => NodeFs.stat(path).then(() => true, () => false))

const startPglite = (options: { readonly dataDir?: string; readonly loadDataDir?: Blob }, where: string) =>
  Effect.tryPromise({
    try: () => PGlite.create({ ...options, extensions }),
    catch: failed(`Could not start PGlite ${where}`)
  })

const openInMemory = (from: Uint8Array<ArrayBuffer> | undefined): Effect.Effect<PGlite, DatabaseError> =>
  Effect.gen(function*() {
    const template = from ?? (yield* Effect.promise(() => ClusterTemplate.readTemplate(templateDirectory).catch(() => undefined)))
    return yield* startPglite(template === undefined ? {} : { loadDataDir: new Blob([template]) }, "in memory")
  })

/**
 * Creates the cluster in a sibling folder and renames it into place, so a process stopped halfway leaves
 * no folder that looks like a database; the leftover is removed on the next start (under the lock).
 */
const createCluster = (dataDir: string) =>
  Effect.gen(function*() {
    const parent = NodePath.dirname(dataDir)
    const prefix = `${NodePath.basename(dataDir)}.creating-`
    const leftovers = yield* Effect.promise(() => NodeFs.readdir(parent).catch(() => []))
    for (const name of leftovers.filter((n) => n.startsWith(prefix))) {
      yield* Effect.promise(() => NodeFs.rm(NodePath.join(parent, name), { recursive: true, force: true }))
    }
    const staging = NodePath.join(parent, `${prefix}${process.pid}`)
    const template = yield* Effect.tryPromise({
      try: () => ClusterTemplate.readTemplate(templateDirectory),
      catch: failed("Could not read the bundled database template")
    })
    if (template !== undefined) {
      yield* Effect.logInfo(`Creating the embedded database in ${dataDir} from the bundled template`)
      yield* Effect.tryPromise({
        try: () => extractTar(template, staging),
        catch: failed(`Could not unpack the database template into ${staging}`)
      })
    } else {
      yield* Effect.logInfo(
        `Creating the embedded database in ${dataDir} (initdb, about 5-10 s; no bundled template for PGlite ${
          ClusterTemplate.installedPgliteVersion() ?? "(unknown version)"
        })`
      )
      const pglite = yield* startPglite({ dataDir: staging }, `in ${staging}`)
      yield* Effect.tryPromise({ try: () => pglite.close(), catch: failed(`Could not close PGlite in ${staging}`) })
    }
    yield* Effect.tryPromise({
      try: async () => {
        // An empty folder in the way (made by hand or by an older version) is replaced.
        await NodeFs.rmdir(dataDir).catch(() => undefined)
        await NodeFs.rename(staging, dataDir)
      },
      catch: failed(`Could not move the new database into ${dataDir}`)
    })
  })

const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const path = `${dataDir}.lock`
      const attempt = yield* Effect.tryPromise({ try: () => DataDirLock.acquire(path), catch: failed(`Could not take the lock file ${path}`) })
      if (attempt._tag === "Held") {
        const { holder } = attempt
        return yield* new DatabaseError({
          reason: "locked",
          message: `The embedded database ${dataDir} is in use by process ${holder.pid}${
            holder.hostname === NodeOs.hostname() ? "" : ` on ${holder.hostname}`
          } (since ${holder.startedAt}): stop that process or use another data folder (SERVICE_DATA_DIR); if no such process runs, delete ${path}.`
        })
      }
      if (attempt.removedStale !== undefined) {
        yield* Effect.logInfo(`Took over the lock of ${dataDir} from process ${attempt.removedStale.pid}, which is no longer running`)
      }
      return { path, holder: attempt.holder }
    }),
    ({ holder, path }) => Effect.promise(() => DataDirLock.release(path, holder).catch(() => undefined))
  )

const openOnDisk = (dataDir: string, createIfMissing: boolean): Effect.Effect<PGlite, DatabaseError, Scope.Scope> =>
  Effect.gen(function*() {
    const hasCluster = () => exists(NodePath.join(dataDir, "PG_VERSION"))
    if (!createIfMissing && !(yield* hasCluster())) {
      return yield* new DatabaseError({
        reason: "missing",
        message: `No embedded database in ${dataDir} yet: start the server once to create it, or point SERVICE_DATA_DIR at an existing data folder.`
      })
    }
    yield* Effect.tryPromise({
      try: () => NodeFs.mkdir(NodePath.dirname(dataDir), { recursive: true }),
      catch: failed(`Could not create the data folder ${NodePath.dirname(dataDir)}`)
    })
    // One process per folder: PGlite keeps its own buffers, so a second one would corrupt the files.
    yield* lockDataDir(dataDir)
    if (!(yield* hasCluster())) {
      const entries = yield* Effect.promise(() => NodeFs.readdir(dataDir).catch(() => []))
      if (entries.length > 0) {
        return yield* new DatabaseError({
          reason: "failed",
          message: `${dataDir} is not empty but holds no database (no PG_VERSION): move it away or delete it to start over.`
        })
      }
      yield* createCluster(dataDir)
    }
    return yield* startPglite({ dataDir }, `in ${dataDir}`)
  })

const openPglite = (
  dataDir: string | undefined,
  createIfMissing: boolean,
  from?: Uint8Array<ArrayBuffer>
): Effect.Effect<PGlite, DatabaseError, Scope.Scope> =>
  Effect.acquireRelease(
    dataDir === undefined ? openInMemory(from) : openOnDisk(dataDir, createIfMissing),
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
 * On disk, the folder is locked for this process (`<dataDir>.lock`, holding the pid): a second
 * process is refused with `DatabaseError` reason `locked` and a message naming the holder; a lock
 * left by a process that is gone is taken over. A new database is unpacked from the bundled
 * template of a fresh cluster when one ships for the installed PGlite (initdb otherwise), in a
 * sibling folder renamed into place, so a start stopped halfway leaves nothing half made.
 * `createIfMissing: false` refuses a folder without a database instead of creating one.
 *
 * Caveats of the bridge: PGlite runs on the main thread and serialises everything over one
 * connection, so do not use `PgClient.listen`/`notify` (the layer's `Notifications` listens through PGlite itself)
 * and do not hold `sql.reserve` for long.
 *
 * @since 0.0.0
 * @category layers
 */
export const layerPglite = (options: PgliteOptions = {}): Layer.Layer<DatabaseServices, SqlError | DatabaseError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const dataDir = options.dataDir === undefined ? undefined : NodePath.resolve(options.dataDir)
      const pglite = yield* openPglite(dataDir, options.createIfMissing ?? true)
      const client = yield* PgClient.fromPool({ acquire: openBridgePool(pglite) })
      return toContext(client, {
        kind: "pglite",
        description: dataDir === undefined ? "PGlite (in memory)" : `PGlite in ${dataDir}`
      }, Notifications.fromPglite(pglite, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Writes an embedded database's files as a tar archive, which {@link layerPgliteFromDump} starts from.
 *
 * @since 0.1.0
 * @category models
 */
export class PgliteDump extends Context.Tag("@service/storage/PgliteDump")<PgliteDump, Effect.Effect<Uint8Array<ArrayBuffer>, DatabaseError>>() {}

/**
 * An in-memory PGlite started from a dump (`PgliteDump`) when one is given, otherwise fresh, that can dump
 * itself: test snapshots (`TestDatabase.prepared`) load a prepared database once and start every later copy
 * from its files instead of preparing it again.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPgliteFromDump = (
  dump?: Uint8Array<ArrayBuffer>
): Layer.Layer<DatabaseServices | PgliteDump, SqlError | DatabaseError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const pglite = yield* openPglite(undefined, true, dump)
      const client = yield* PgClient.fromPool({ acquire: openBridgePool(pglite) })
      const dumpFiles = Effect.tryPromise({
        try: async () => new Uint8Array(await (await pglite.dumpDataDir("none")).arrayBuffer()),
        catch: failed("Could not dump the embedded database")
      })
      return toContext(client, { kind: "pglite", description: "PGlite (in memory)" }, Notifications.fromPglite(pglite, client)).pipe(
        Context.add(PgliteDump, dumpFiles)
      )
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
 * the working directory), opened with the given PGlite options (`createIfMissing: false` for read-only tools).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromConfigWith = (
  options: Omit<PgliteOptions, "dataDir"> = {}
): Layer.Layer<DatabaseServices, ConfigError.ConfigError | SqlError | DatabaseError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const url = yield* InternalConfig.databaseUrl
      const readUrl = yield* InternalConfig.databaseReadUrl
      if (Option.isSome(url)) {
        return layerPgWith({
          url: url.value,
          readUrl: Option.getOrUndefined(readUrl),
          statementTimeoutMillis: yield* InternalConfig.statementTimeoutMillis
        })
      }
      if (Option.isSome(readUrl)) {
        return Layer.fail(
          new DatabaseError({
            reason: "failed",
            message:
              "DATABASE_READ_URL names a read replica, which needs DATABASE_URL (its primary); unset DATABASE_READ_URL to use the embedded database."
          })
        )
      }
      return layerPglite({ ...options, dataDir: NodePath.join(yield* InternalConfig.serviceDataDir, "pglite") })
    })
  )

/**
 * {@link layerFromConfigWith} with the defaults: the embedded database is created on first use.
 *
 * @since 0.0.0
 * @category layers
 */
export const layerFromConfig: Layer.Layer<
  DatabaseServices,
  ConfigError.ConfigError | SqlError | DatabaseError
> = layerFromConfigWith()
