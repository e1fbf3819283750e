// Statements and commits per metered read over HTTP, against `npm start`'s layers in process on PostgreSQL: the
// server's `pg` statements (counted in `pg.Client.prototype.query`, so BEGIN, COMMIT and SAVEPOINT count too) and
// the database's `xact_commit` (pg_stat_database, every committed transaction, implicit ones included).
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/commits-per-read.ts [--requests 200]
//
// It creates bench_commits_<random>, migrates it, loads and publishes the demo corpus, starts Server.layer with the
// demo key and no embedded worker, warms up, then sends --requests calls of each case one after another and prints
// per request: the statements the server sent and the commits the database counted. The database is dropped at
// the end.
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { countPgStatements } from "./Timing.js"

const args = process.argv.slice(2)
const requestsArg = args.indexOf("--requests")
const requests = Number(requestsArg === -1 ? "200" : args[requestsArg + 1])
const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "" || !(requests >= 10)) {
  console.error("usage: DATABASE_URL=postgres://… npx tsx bench/commits-per-read.ts [--requests 200]")
  process.exit(2)
}
process.env["SERVICE_RATE_LIMIT_PER_MINUTE"] = "100000000"
process.env["SERVICE_MONTHLY_INSIGHT_CREDITS"] = "100000000"
// No background work in the server: what is counted is the requests'.
process.env["SERVICE_EMBEDDED_WORKER"] = "false"

const database = `bench_commits_${randomBytes(4).toString("hex")}`
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
const KEY = `svc_key_bench_${randomBytes(16).toString("hex")}`
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

// Statements sent by this process's pg clients: the server's, and the few of the benchmark's own reads around them.
const driver = countPgStatements()

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  let dispose: () => Promise<void> = () => Promise.resolve()
  try {
    const load = Effect.gen(function*() {
      yield* Migrations.run(App.migrations)
      yield* DemoCorpus.loadAndPublish
    }).pipe(Effect.provide(Layer.mergeAll(Corpus.layer, crypto).pipe(Layer.provideMerge(Database.layerPgWith({ url: Redacted.make(benchUrl) })))))
    await Effect.runPromise(load.pipe(quiet, Effect.orDie))
    const rt = ManagedRuntime.make(
      Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(
        Layer.provideMerge(App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto)),
        Layer.orDie
      )
    )
    dispose = () => rt.dispose()
    const address = await rt.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    await rt.runPromise(ensureDemo(Option.some(Redacted.make(KEY))).pipe(quiet))
    const base = `http://127.0.0.1:${address.port}/api/v1/workspaces/demo/market-data`
    const call = async (path: string, body: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "x-api-key": KEY, "content-type": "application/json" },
        body: JSON.stringify(body)
      })
      const text = await response.text()
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`)
    }
    // The statistics collector publishes a backend's counts when it goes idle (at most once a second).
    const commits = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      await admin.query("SELECT pg_stat_clear_snapshot()")
      const row = (await admin.query<{ n: string }>("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1", [database])).rows[0]
      return Number(row?.n ?? "0")
    }
    const cases = [
      { name: "search_suppliers (state)", path: "/suppliers/search", body: { state: "Zacatecas", limit: 10 } },
      { name: "count_suppliers (state)", path: "/suppliers/count", body: { state: "Zacatecas" } }
    ]
    // Anything else the server sends in a window as long as the requests' (nothing, without workers) is measured
    // right after it, with no request, and taken away.
    const window = async (body: () => Promise<void>) => {
      const commitsBefore = await commits()
      const statementsBefore = driver.count()
      const started = performance.now()
      await body()
      const sent = driver.count() - statementsBefore
      const millis = performance.now() - started
      return { sent, committed: (await commits()) - commitsBefore, millis }
    }
    console.log(`| read | requests | statements / request | commits / request | (idle: statements, commits) |`)
    console.log(`| - | - | - | - | - |`)
    for (const c of cases) {
      for (let i = 0; i < 10; i++) await call(c.path, c.body)
      const busy = await window(async () => {
        for (let i = 0; i < requests; i++) await call(c.path, c.body)
      })
      const idle = await window(() => new Promise((resolve) => setTimeout(resolve, busy.millis)))
      const per = (busy: number, idle: number) => ((busy - idle) / requests).toFixed(2)
      console.log(`| ${c.name} | ${requests} | ${per(busy.sent, idle.sent)} | ${per(busy.committed, idle.committed)} | ${idle.sent}, ${idle.committed} |`)
    }
  } finally {
    await dispose()
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined)
    await admin.end()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
