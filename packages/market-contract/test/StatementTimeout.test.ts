import { assert, layer } from "@effect/vitest"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import { StatementTimeoutMillis, withStatementTimeout } from "../src/internal/statementTimeout.js"

for (const target of TestDatabase.targets()) {
  layer(TestDatabase.withMigrations(target, []), { timeout: "120 seconds" })(`statement timeout on ${target.name}`, (it) => {
    it.effect("answers a read that finishes in time, on the timed client and without a transaction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const timed = yield* Database.TimedReadClient
        assert.strictEqual(timed.timeoutMillis, target.name === "pglite" ? undefined : 5_000)
        const rows = yield* withStatementTimeout({ sql, timed })((client) => client<{ n: number; timeout: string; xact: boolean }>`
          SELECT 41 + 1 AS n, current_setting('statement_timeout') AS timeout,
                 -- Outside an explicit transaction, each statement is its own: now() is the statement's start.
                 now() = statement_timestamp() AS xact`)
        assert.strictEqual(rows[0]?.n, 42)
        assert.isTrue(rows[0]?.xact)
        if (target.name !== "pglite") assert.strictEqual(rows[0]?.timeout, "5s")
      }))

    // PGlite runs in one thread without timers and does not enforce statement_timeout (decision 0037);
    // the cancellation is PostgreSQL's, so that is where it is checked.
    if (target.name !== "pglite") {
      it.effect("a timed client cancels a read past its timeout: market_data_timeout, and the pool goes on", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const timed = yield* Database.makeTimed(yield* PgClient.PgClient, 50).pipe(Effect.provide(Reactivity.layer))
          const refusal = yield* Effect.flip(withStatementTimeout({ sql, timed })((client) => client`SELECT pg_sleep(5)`))
          assert.strictEqual(refusal.semanticCode, "market_data_timeout")
          assert.isTrue(refusal.retryable)
          assert.include(refusal.message, "50 ms")
          const after = yield* withStatementTimeout({ sql, timed })((client) => client<{ n: number }>`SELECT 1 AS n`)
          assert.strictEqual(after[0]?.n, 1)
        }).pipe(Effect.scoped))

      it.effect("another timeout than the client's is set for its own transaction and refuses the same way", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const timed = yield* Database.TimedReadClient
          const refusal = yield* Effect.flip(withStatementTimeout({ sql, timed })((client) => client`SELECT pg_sleep(5)`)).pipe(
            Effect.provideService(StatementTimeoutMillis, 50)
          )
          assert.strictEqual(refusal.semanticCode, "market_data_timeout")
          assert.isTrue(refusal.retryable)
          // The connection is usable afterwards: the timeout was local to the transaction.
          const after = yield* sql<{ n: number; timeout: string }>`SELECT 1 AS n, current_setting('statement_timeout') AS timeout`
          assert.strictEqual(after[0]?.n, 1)
          assert.strictEqual(after[0]?.timeout, "0")
        }))
    }
  })
}
