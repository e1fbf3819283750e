import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"

/**
 * The rows of `alias` an abstracted answer may show: those of sources licensed for display. Every query and
 * every count uses this one condition, so what is visible is decided in one place.
 */
export const licensedRows = (sql: SqlClient.SqlClient, alias: string): Fragment =>
  sql`${sql.literal(alias)}.source_slug IN (SELECT slug FROM market.sources WHERE licensed_for_display)`
