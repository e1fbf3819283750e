import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import { StatementTimeoutMillis, withStatementTimeout } from "../src/internal/statementTimeout.js"

for (const target of TestDatabase.targets()) {
  layer(TestDatabase.withMigrations(target, []), { timeout: "120 seconds" })(`statement timeout on ${target.name}`, (it) => {
    it.effect("answers a read that finishes in time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* withStatementTimeout(sql)(sql<{ n: number }>`SELECT 41 + 1 AS n`)
        assert.strictEqual(rows[0]?.n, 42)
      }))

    // PGlite runs in one thread without timers and does not enforce statement_timeout (decision 0037);
    // the cancellation is PostgreSQL's, so that is where it is checked.
    if (target.name !== "pglite") {
      it.effect("cancels a read past the timeout and refuses with market_data_timeout, never a partial answer", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const refusal = yield* Effect.flip(withStatementTimeout(sql)(sql`SELECT pg_sleep(5)`)).pipe(
            Effect.provideService(StatementTimeoutMillis, 50)
          )
          assert.strictEqual(refusal.semanticCode, "market_data_timeout")
          assert.isTrue(refusal.retryable)
          // The connection is usable afterwards: the timeout was local to the transaction.
          const after = yield* sql<{ n: number }>`SELECT 1 AS n`
          assert.strictEqual(after[0]?.n, 1)
        }))
    }
  })
}
