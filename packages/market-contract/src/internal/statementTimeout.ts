import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { TimedReadClient } from "@service/storage/Database"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { type MarketDataRefusal, refuse } from "../MarketError.js"

/**
 * A statement timeout other than the read client's own (`SERVICE_STATEMENT_TIMEOUT_MS`), for a test that needs
 * one read cancelled at once: it is then set in a transaction of its own, the slow path. Absent by default.
 * PostgreSQL enforces it; embedded PGlite runs in one thread without timers and ignores it
 * (docs/decisions/0037-count-suppliers.md).
 */
export class StatementTimeoutMillis extends Context.Reference<StatementTimeoutMillis>()(
  "@service/market-contract/StatementTimeoutMillis",
  { defaultValue: (): number | undefined => undefined }
) {}

// SQLSTATE 57014: query_canceled, what statement_timeout raises.
const isTimeout = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  return Predicate.isRecord(cause) && cause["code"] === "57014"
}

/**
 * Runs `query` on the timed read client, whose connections cancel a statement after the timeout they were opened
 * with, so a read costs no extra statement or transaction (decision 0079); a cancellation becomes
 * `market_data_timeout`, any other SQL failure stays a defect. `query` builds its statement on the client it is
 * given; fragments built on the read client can be part of it (both compile alike).
 */
export const withStatementTimeout = (market: {
  readonly sql: SqlClient.SqlClient
  readonly timed: Context.Tag.Service<TimedReadClient> | undefined
}) =>
<A, R>(query: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError, R>): Effect.Effect<A, MarketDataRefusal, R> =>
  Effect.gen(function*() {
    const override = yield* StatementTimeoutMillis
    const millis = override ?? market.timed?.timeoutMillis ?? 5_000
    const { sql } = market
    const run = override !== undefined || market.timed === undefined
      ? sql.withTransaction(Effect.zipRight(sql`SELECT set_config('statement_timeout', ${String(millis)}, true)`, query(sql)))
      : query(market.timed.sql)
    return yield* run.pipe(
      Effect.catchAll((error) =>
        isTimeout(error)
          ? Effect.fail(
            refuse(
              "market_data_timeout",
              `The read did not finish within ${millis} ms, so it was cancelled rather than approximated.`,
              "Retry later with backoff, or narrow the request."
            )
          )
          : Effect.die(error)
      )
    )
  })
