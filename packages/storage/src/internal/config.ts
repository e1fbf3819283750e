import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/**
 * `DATABASE_URL`, absent when unset or blank.
 *
 * A blank value is treated as unset because deployment templates commonly expand a missing
 * variable to an empty string; "use the embedded database" is the only sensible reading of that.
 *
 * @internal
 */
export const databaseUrl: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.option(
  Config.redacted("DATABASE_URL")
).pipe(Config.map(Option.filter((url) => Redacted.value(url).trim().length > 0)))

/**
 * `DATABASE_READ_URL`, a PostgreSQL read replica for market-data reads; absent when unset or blank.
 *
 * @internal
 */
export const databaseReadUrl: Config.Config<Option.Option<Redacted.Redacted<string>>> = Config.option(
  Config.redacted("DATABASE_READ_URL")
).pipe(Config.map(Option.filter((url) => Redacted.value(url).trim().length > 0)))

/**
 * `SERVICE_DATA_DIR`, the local data folder (embedded database in `pglite/`, generated keys), defaulting
 * to `.data` when unset or blank (the same reading as
 * Effect's own `Config.nonEmptyString`, which treats "" as missing; trimming also keeps a stray
 * space from becoming a folder named " ").
 *
 * @internal
 */
export const serviceDataDir: Config.Config<string> = Config.string("SERVICE_DATA_DIR").pipe(
  Config.map((dir) => dir.trim()),
  Config.option,
  Config.map(Option.filter((dir) => dir.length > 0)),
  Config.map(Option.getOrElse(() => ".data"))
)

/**
 * `SERVICE_TEST_SNAPSHOTS`, the folder where one test run keeps its prepared databases (set by the test
 * runner's global setup); absent when unset or blank, and then every test prepares its own database.
 *
 * @internal
 */
export const testSnapshots: Config.Config<Option.Option<string>> = Config.option(Config.string("SERVICE_TEST_SNAPSHOTS")).pipe(
  Config.map(Option.filter((dir) => dir.trim().length > 0))
)

/**
 * `SERVICE_STATEMENT_TIMEOUT_MS`, how long one timed read (counts, aggregates) may run on PostgreSQL before it is
 * cancelled; default 5000.
 *
 * @internal
 */
export const statementTimeoutMillis: Config.Config<number> = Config.integer("SERVICE_STATEMENT_TIMEOUT_MS").pipe(
  Config.withDefault(5_000),
  Config.validate({ message: "SERVICE_STATEMENT_TIMEOUT_MS must be a positive number of milliseconds", validation: (n) => n > 0 })
)
