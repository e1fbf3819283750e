// Whether the door's 401 tells an existing Source from an unknown one by its time. The spec: a 401 never reveals
// whether a Source exists; the bodies are the same, and so must the time be, within noise.
//
// Usage: npx tsx bench/door-401.ts [--requests 400] [--concurrency 1]
//        (PGlite in memory; DATABASE_URL=postgres://… to run on PostgreSQL)
//
// The real server (`Server.layer` with every bundle) on a free port, a workspace with a CloudEvents Source. It sends
// `--requests` signed CloudEvents with a wrong secret, alternating between the existing Source and an unknown id,
// each from its own loopback address (127.2.x.y) so the per-address limit never answers instead, and reports the
// median and p95 of each kind and their ratio. The baseline is the unknown Source: ratio 1.00 means the same time.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto, generateWebhookSecret } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import { Sources } from "@service/door/Sources"
import * as StandardWebhooks from "@service/door/StandardWebhooks"
import * as Server from "@service/server/Server"
import * as Database from "@service/storage/Database"
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import pg from "pg"
import { dropDatabase, stats } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`)
  const value = i === -1 ? undefined : Number(args[i + 1])
  return value === undefined || Number.isNaN(value) ? fallback : value
}
const requests = option("requests", 400)
const concurrency = option("concurrency", 1)
const adminUrl = process.env["DATABASE_URL"]
// On PostgreSQL, a throwaway database, dropped at the end.
const databaseName = `bench_door401_${randomBytes(4).toString("hex")}`
const url = adminUrl === undefined ? undefined : (() => {
  const parsed = new URL(adminUrl)
  parsed.pathname = `/${databaseName}`
  return parsed.toString()
})()

const database = url === undefined ? Database.layerPglite() : Database.layerPgWith({ url: Redacted.make(url) })
const makeRuntime = () => ManagedRuntime.make(
  Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(
    Layer.provideMerge(App.layer(database, Crypto.layerTest)),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)),
    Layer.orDie
  )
)

const post = (port: number, path: string, localAddress: string, body: Uint8Array, headers: Record<string, string>) =>
  new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const started = performance.now()
    const request = Http.request({ host: "127.0.0.1", port, path, method: "POST", localAddress, headers: { ...headers, "content-length": body.byteLength } }, (response) => {
      response.resume()
      response.on("end", () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }))
    })
    request.on("error", reject)
    request.end(body)
  })

const main = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const port = server.address.port
  const accounts = yield* Accounts.Accounts
  const workspace = yield* Effect.orDie(accounts.createWorkspace({ slug: WorkspaceSlug.make(`bench-${Date.now()}`), name: "bench" }))
  const { source } = yield* (yield* Sources).create(workspace.id, { name: "Bench form" })
  const unknown = "src_000000000000000000000000"
  const wrong = generateWebhookSecret()
  const times: Record<"existing" | "unknown", Array<number>> = { existing: [], unknown: [] }
  const statuses = new Set<number>()
  let next = 0
  const one = async (index: number) => {
    const kind = index % 2 === 0 ? "existing" : "unknown"
    const id = `msg_bench_${index}`
    const timestamp = Math.floor(Date.now() / 1000)
    const body = new TextEncoder().encode(JSON.stringify({ specversion: "1.0", id: `e${index}`, source: "https://bench", type: "contact.created", data: { email: `p${index}@acme.mx` } }))
    const headers = {
      "content-type": "application/cloudevents+json",
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": StandardWebhooks.sign({ secret: wrong, id, timestamp, body })
    }
    const answer = await post(port, `/api/v1/door/${kind === "existing" ? source.id : unknown}`, `127.2.${Math.floor(index / 250) % 250}.${1 + (index % 250)}`, body, headers)
    statuses.add(answer.status)
    // The first 10% warm the process up.
    if (index >= requests / 10) times[kind].push(answer.ms)
  }
  yield* Effect.promise(() =>
    Promise.all(Array.from({ length: concurrency }, async () => {
      for (;;) {
        const index = next++
        if (index >= requests) return
        await one(index)
      }
    }))
  )
  const existing = stats(times.existing)
  const baseline = stats(times.unknown)
  const row = (name: string, s: typeof existing) =>
    `| ${name} | ${s.n} | ${s.p50.toFixed(2)} ms | ${s.p95.toFixed(2)} ms | ${(s.p50 / baseline.p50).toFixed(2)}x |`
  console.log(`door 401 timing on ${url === undefined ? "PGlite" : "PostgreSQL"}, ${requests} requests, concurrency ${concurrency}; statuses seen: ${[...statuses].join(", ")}`)
  console.log("| Source | requests | p50 | p95 | p50 ratio to unknown |")
  console.log("| - | - | - | - | - |")
  console.log(row("unknown (baseline)", baseline))
  console.log(row("existing, wrong secret", existing))
})

const run = async () => {
  const admin = adminUrl === undefined ? undefined : new pg.Client({ connectionString: adminUrl })
  if (admin !== undefined) {
    await admin.connect()
    await admin.query(`CREATE DATABASE ${databaseName}`)
  }
  const runtime = makeRuntime()
  try {
    await runtime.runPromise(main)
  } finally {
    await runtime.dispose()
    if (admin !== undefined) {
      await dropDatabase(admin, databaseName)
      await admin.end()
    }
  }
}

await run()
