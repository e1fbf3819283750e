import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { type MarketDataRefusal, refuse } from "../MarketError.js"

/**
 * How long one market-data statement may run before it is cancelled and answered with
 * `market_data_timeout`. PostgreSQL enforces it; embedded PGlite runs in one thread without timers and
 * ignores it (docs/decisions/0037-count-suppliers.md).
 */
export class StatementTimeoutMillis extends Context.Reference<StatementTimeoutMillis>()(
  "@service/market-contract/StatementTimeoutMillis",
  { defaultValue: () => 5_000 }
) {}

// SQLSTATE 57014: query_canceled, what statement_timeout raises.
const isTimeout = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  return Predicate.isRecord(cause) && cause["code"] === "57014"
}

/**
 * Runs `effect` in a transaction whose statements are cancelled after the statement timeout; a
 * cancellation becomes `market_data_timeout`, any other SQL failure stays a defect.
 */
export const withStatementTimeout = (sql: SqlClient.SqlClient) =>
<A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, MarketDataRefusal, R> =>
  Effect.gen(function*() {
    const millis = yield* StatementTimeoutMillis
    return yield* sql.withTransaction(
      Effect.zipRight(sql`SELECT set_config('statement_timeout', ${String(millis)}, true)`, effect)
    ).pipe(
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
