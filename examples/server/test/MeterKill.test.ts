// The bound of decision 0080 (corrected by issue 32 row 15) on a real server process over PostgreSQL (skipped
// without DATABASE_URL): `kill -9` loses the debits of the calls served since the node's last committed write, which
// is the flush interval plus the time the write in flight takes, not "at most the last interval's". The test holds
// the workspace's balance row locked so the server's write waits (a write that takes long under load, made
// certain), kills the server more than one interval after the calls the waiting write carries, and reads the ledger
// by request id: the calls written before are there once each, every later call is missing (served free), nothing is
// charged twice, and a new server on the database goes on from that balance.
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { rest } from "./support/Rest.js"
import { adminUrl, DEMO_KEY, freshDatabase, hangGuard, startServer } from "./support/Processes.js"

const INTERVAL_MS = 1000
const search = JSON.stringify({ state: "Zacatecas", scian_codes: ["212"], limit: 5 })
const headers = { "x-api-key": DEMO_KEY, "content-type": "application/json" }

const RequestIds = Schema.Array(Schema.Struct({ request_id: Schema.String }))
const Count = Schema.Tuple(Schema.Struct({ n: Schema.Number }))
const Balance = Schema.Struct({ balance: Schema.Number })

describe.skipIf(adminUrl === "")("write-behind debits when the server is killed (PostgreSQL)", () => {
  it.live("kill -9 loses the calls served since the last committed write (the interval and the write in flight), nothing else and nothing twice", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env, services } = yield* freshDatabase({ SERVICE_CREDIT_FLUSH_MS: String(INTERVAL_MS) })
      const first = yield* startServer("meter-killed", env)
      const sql = yield* Effect.provide(SqlClient.SqlClient, services)
      const workspaceId = yield* Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        return Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo")).id
      }).pipe(Effect.provide(services), Effect.orDie)

      /** A metered read on `port`, answered 200; its request id. */
      const read = (port: number) =>
        Effect.gen(function*() {
          const answer = yield* rest(port, "POST", "/api/v1/workspaces/demo/market-data/suppliers/search", headers, search)
          assert.strictEqual(answer.status, 200, answer.text)
          const id = answer.headers["x-request-id"]
          assert.isString(id)
          return typeof id === "string" ? id : ""
        })
      const debited = sql`SELECT request_id FROM core.credit_ledger WHERE workspace_id = ${workspaceId} AND kind = 'debit'
        AND operation = 'search_suppliers' ORDER BY id`.pipe(
        Effect.flatMap(Schema.decodeUnknown(RequestIds)),
        Effect.map((rows) => rows.map((row) => row.request_id)),
        Effect.orDie
      )
      const count = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(Schema.decodeUnknown(Count)), Effect.map(([row]) => row.n), Effect.orDie)
      const waitUntil = (check: Effect.Effect<boolean>) =>
        check.pipe(Effect.flatMap((ok) => (ok ? Effect.void : Effect.fail("waiting" as const))), Effect.retry(Schedule.spaced("50 millis")), Effect.orDie)
      const balanceOn = (port: number) =>
        rest(port, "GET", "/api/v1/workspaces/demo/account/usage", headers).pipe(
          Effect.map((answer) => Schema.decodeUnknownSync(Schema.parseJson(Balance))(answer.text).balance)
        )

      // 1. Three calls, then a balance read: it writes this node's pending debits first, so they are committed.
      const written = [yield* read(first.port), yield* read(first.port), yield* read(first.port)]
      const balanceAfterWritten = yield* balanceOn(first.port)
      assert.deepStrictEqual(yield* debited, written)

      // 2. The balance row held by another transaction: the server's next write waits for it.
      const locked = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      yield* Effect.forkScoped(
        sql.withTransaction(
          sql`SELECT balance FROM core.credit_balances WHERE workspace_id = ${workspaceId} FOR UPDATE`.pipe(
            Effect.zipRight(Deferred.succeed(locked, undefined)),
            Effect.zipRight(Deferred.await(release))
          )
        ).pipe(Effect.orDie)
      )
      yield* Deferred.await(locked)

      // 3. Calls the next write carries; the write starts within an interval and waits on the lock.
      const carried = [yield* read(first.port), yield* read(first.port)]
      yield* waitUntil(count(sql`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`).pipe(Effect.map((n) => n >= 1)))
      // 4. Calls served while that write waits, then the kill, more than an interval after the carried calls.
      const during = [yield* read(first.port), yield* read(first.port)]
      yield* Effect.sleep(INTERVAL_MS + 200)
      yield* Effect.promise(() => first.server.stop("SIGKILL"))
      yield* Deferred.succeed(release, undefined)
      // The killed server's transaction ends once its backend finds the client gone.
      yield* waitUntil(count(sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
        AND (wait_event_type = 'Lock' OR state LIKE 'idle in transaction%')`).pipe(Effect.map((n) => n === 0)))

      // What was committed before the kill is there once; the carried calls (older than one interval) and the calls
      // during the write are lost: served free, never charged twice.
      const ledger = yield* debited
      assert.deepStrictEqual(ledger, written)
      for (const id of [...carried, ...during]) assert.notInclude(ledger, id)

      // 5. A new server goes on from the committed balance, and writes its own debits.
      const second = yield* startServer("meter-after-kill", env)
      assert.strictEqual(yield* balanceOn(second.port), balanceAfterWritten)
      const after = yield* read(second.port)
      yield* balanceOn(second.port)
      assert.deepStrictEqual(yield* debited, [...written, after])
    })), hangGuard)
})
