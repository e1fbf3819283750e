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
      // The charge was written to the primary's ledger, not the replica's.
      const debits = (sql: SqlClient.SqlClient) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM core.credit_ledger WHERE kind = 'debit'`, (rows) => rows[0]?.n)
      assert.strictEqual(yield* debits(primarySql), 1)
      assert.strictEqual(yield* debits(replicaSql), 0)
    }).pipe(Effect.scoped), { timeout: 180_000 })
})
