import { assert, describe, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { Principal } from "@service/core/Principal"
import * as RateLimiter from "@service/core/RateLimiter"
import { RequestId } from "@service/core/RequestContext"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Config from "effect/Config"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Reactivity from "@effect/experimental/Reactivity"
import { createServer, type Socket, connect } from "node:net"
import * as MarketLayer from "../src/MarketLayer.js"
import * as Operations from "../src/Operations.js"

// A read replica is a second PostgreSQL server; here it is a second database, so a read that answers proves it
// went there: only the "replica" holds a published corpus.
const postgres = TestDatabase.targets().find((target) => target.name === "postgres")
const migrations = [CoreMigrations.migrations, MarketMigrations.migrations]

describe.skipIf(postgres === undefined)("market reads with a read client (PostgreSQL, DATABASE_URL)", () => {
  it.live("market reads go to the read client; accounts, metering and the ledger stay on the primary", () =>
    Effect.gen(function*() {
      if (postgres === undefined) return
      const replica = yield* Layer.build(TestDatabase.withMigrations(postgres, migrations))
      const primary = yield* Layer.build(TestDatabase.withMigrations(postgres, migrations))
      yield* DemoCorpus.loadAndPublish.pipe(
        Effect.provide(Corpus.layer),
        Effect.provide(Crypto.layerTest),
        Effect.provide(replica),
        Effect.orDie
      )
      const replicaSql = Context.get(replica, SqlClient.SqlClient)
      // The primary's services, with the replica as the read client.
      const database = Context.add(primary, Database.ReadClient, replicaSql)
      const services = yield* Layer.build(
        Layer.mergeAll(MarketLayer.layer, Meter.layerSqlWith({ monthlyAllowance: 5 }), Accounts.layerSql, RateLimiter.layerUnlimited).pipe(
          Layer.provideMerge(Crypto.layerTest),
          Layer.provide(Layer.succeedContext(database))
        )
      )
      const accounts = Context.get(services, Accounts.Accounts)
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("replica-test"), name: "Replica" })
      const principal = new Principal({
        workspace,
        person: Option.none(),
        role: "member",
        scopes: ["market_data:read"],
        credential: { id: CredentialId.make("cred_replica"), kind: "api_key" }
      })
      const output = yield* Operation.execute(Operations.searchSuppliers, {
        principal,
        entrypoint: "http",
        requestId: RequestId.make("req_replica_0000000001"),
        input: { state: "Zacatecas", limit: 3 },
        canonical: true
      }).pipe(Effect.provide(services))
      assert.isTrue(typeof output === "object" && output !== null && "results" in output && Array.isArray(output.results) && output.results.length === 3)

      // Nothing is published on the primary: the answer can only have come from the read client.
      const primarySql = Context.get(primary, SqlClient.SqlClient)
      const published = yield* primarySql<{ n: number }>`SELECT count(*)::int AS n FROM market.snapshots WHERE status = 'active'`
      assert.strictEqual(published[0]?.n, 0)
      // The charge was written to the primary's ledger, not the replica's (once the node wrote its held debits).
      yield* Effect.flatMap(Meter.Meter, (meter) => meter.flush).pipe(Effect.provide(services))
      const debits = (sql: SqlClient.SqlClient) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM core.credit_ledger WHERE kind = 'debit'`, (rows) => rows[0]?.n)
      assert.strictEqual(yield* debits(primarySql), 1)
      assert.strictEqual(yield* debits(replicaSql), 0)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})

/**
 * A TCP relay to the PostgreSQL server that can be cut: every connection through it ends and new ones are
 * refused, as when a replica goes down under a running service.
 */
const relay = (target: URL) =>
  Effect.acquireRelease(
    Effect.async<{ readonly port: number; readonly cut: Effect.Effect<void> }>((resume) => {
      const sockets = new Set<Socket>()
      const server = createServer((inbound) => {
        const outbound = connect(Number(target.port || 5432), target.hostname)
        for (const socket of [inbound, outbound]) {
          sockets.add(socket)
          socket.on("error", () => socket.destroy())
          socket.on("close", () => sockets.delete(socket))
        }
        inbound.pipe(outbound).pipe(inbound)
      })
      const cut = Effect.async<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done(Effect.void))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(Effect.succeed({ port: typeof address === "object" && address !== null ? address.port : 0, cut }))
      })
    }),
    ({ cut }) => cut
  )

describe.skipIf(postgres === undefined)("an outage of the read client (PostgreSQL, DATABASE_URL)", () => {
  it.live("a read whose store is unreachable is market_data_unavailable, retryable, and costs nothing", () =>
    Effect.gen(function*() {
      const primary = yield* Layer.build(TestDatabase.withMigrations(postgres ?? TestDatabase.pglite, migrations))
      const adminUrl = new URL(Redacted.value(yield* Config.redacted("DATABASE_URL")))
      const { port, cut } = yield* relay(adminUrl)
      const viaRelay = new URL(adminUrl)
      viaRelay.hostname = "127.0.0.1"
      viaRelay.port = String(port)
      const replica = yield* PgClient.make({ url: Redacted.make(viaRelay.toString()), maxConnections: 2 }).pipe(
        Effect.provide(Reactivity.layer)
      )
      const services = yield* Layer.build(
        Layer.mergeAll(MarketLayer.layer, Meter.layerSqlWith({ monthlyAllowance: 5 }), Accounts.layerSql, RateLimiter.layerUnlimited).pipe(
          Layer.provideMerge(Crypto.layerTest),
          Layer.provide(Layer.succeedContext(Context.add(primary, Database.ReadClient, replica)))
        )
      )
      const accounts = Context.get(services, Accounts.Accounts)
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("outage-test"), name: "Outage" })
      const principal = new Principal({
        workspace,
        person: Option.none(),
        role: "member",
        scopes: ["market_data:read"],
        credential: { id: CredentialId.make("cred_outage"), kind: "api_key" }
      })
      yield* cut
      const calls = [
        [Operations.searchSuppliers, { state: "Zacatecas", limit: 3 }],
        [Operations.countSuppliers, { state: "Zacatecas" }]
      ] as const
      for (const [i, [op, input]] of calls.entries()) {
        const exit = yield* Operation.execute(op, {
          principal,
          entrypoint: "http",
          requestId: RequestId.make(`req_outage_00000000${i}`),
          input,
          canonical: true
        }).pipe(Effect.provide(services), Effect.exit)
        assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail", `${op.name}: ${String(exit)}`)
        if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
          const failure = exit.cause.error
          assert.strictEqual(failure._tag, "Refused")
          if (failure._tag === "Refused") {
            assert.strictEqual(failure.described.code, "market_data_unavailable")
            assert.strictEqual(failure.described.status, 503)
            assert.isTrue(failure.described.retryable)
            assert.notInclude(JSON.stringify(failure.described.block), String(port), "the block names no host or port")
          }
        }
      }
      const usage = yield* Effect.flatMap(Meter.Meter, (meter) => meter.account(workspace.id)).pipe(Effect.provide(services))
      assert.strictEqual(usage.balance, 5, "the refused calls were not charged")
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
