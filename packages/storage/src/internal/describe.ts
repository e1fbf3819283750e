import type * as PgClient from "@effect/sql-pg/PgClient"

/**
 * A human-readable name for a PostgreSQL connection that never contains the password.
 *
 * It is built from the fields `PgClient` parsed out of the connection string rather than from the
 * string itself, so nothing secret can slip through however the URL is spelled.
 *
 * @internal
 */
export const describePostgres = (config: PgClient.PgClientConfig): string =>
  `PostgreSQL ${config.username ?? "(default user)"}@${config.host ?? "localhost"}:${config.port ?? 5432}/${
    config.database ?? "(default database)"
  }`
