// Where the server's CPU goes on a cheap metered read: the server in this process (Server.layer over App.app on
// PostgreSQL), the load from a child process (so its fetch costs are not counted), the V8 CPU profile taken only
// around the measured requests. Prints CPU ms per request (this process's user + system time over the requests),
// commits and statements per request (pg_stat_database, and the queries sent through the pg driver), self time
// by package and the top functions.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/profile-read.ts --database <a loaded and published corpus, e.g. kept by corpus-load.ts>
//          [--requests 3000] [--concurrency 8] [--path '/suppliers/search'] [--body '{"state":"21","limit":20}']
//          [--out profile.cpuprofile]
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as Telemetry from "@service/server/Telemetry"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import pg from "pg"
import { countPgStatements } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const adminUrl = process.env["DATABASE_URL"]
const database = option("database")
const requests = Number(option("requests") ?? "3000")
const concurrency = Number(option("concurrency") ?? "8")
const path = option("path") ?? "/suppliers/search"
const body = option("body") ?? JSON.stringify({ state: "21", limit: 20 })
const out = option("out")
const summarizeOnly = option("summarize")
if (summarizeOnly === undefined && (database === undefined || !/^[a-z0-9_]+$/.test(database) || !(requests > 0) || !(concurrency > 0))) {
  console.error(
    "usage: DATABASE_URL=… npx tsx bench/profile-read.ts --database <name> [--requests N] [--concurrency C] [--path P] [--body JSON] [--out F]\n" +
      "       npx tsx bench/profile-read.ts --summarize <F.cpuprofile>"
  )
  process.exit(2)
}
process.env["SERVICE_RATE_LIMIT_PER_MINUTE"] = "100000000"
process.env["SERVICE_MONTHLY_INSIGHT_CREDITS"] = "100000000"
// No embedded worker: its idle polls would be counted as the requests' statements and commits.
process.env["SERVICE_EMBEDDED_WORKER"] = "false"

const benchUrl = (() => {
  const url = new URL(adminUrl ?? "postgres://127.0.0.1/")
  url.pathname = `/${database ?? ""}`
  return url.toString()
})()
const KEY = `svc_key_bench_${randomBytes(16).toString("hex")}`
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

// Statements sent by this process's pg clients: the server's, and the few of the benchmark's own reads around them.
const driver = countPgStatements()

// The load generator: a plain node process with keep-alive fetch, `concurrency` in flight.
const loadScript = `
const [url, key, total, conc, body] = process.argv.slice(1)
let next = 0, failed = 0, first
const worker = async () => {
  while (next < Number(total)) {
    next++
    const r = await fetch(url, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body })
    const t = await r.text()
    if (r.status !== 200) { failed++; first ??= r.status + " " + t.slice(0, 200) }
  }
}
const started = performance.now()
await Promise.all(Array.from({ length: Number(conc) }, worker))
console.log(JSON.stringify({ ms: performance.now() - started, failed, first }))
`
const runLoad = (url: string, total: number) =>
  new Promise<{ ms: number; failed: number; first?: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", loadScript, url, KEY, String(total), String(concurrency), body], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    let text = ""
    child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(text)) : reject(new Error(`load exited ${String(code)}`))))
  })

interface ProfileNode {
  readonly id: number
  readonly children?: ReadonlyArray<number> | undefined
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples?: ReadonlyArray<number> | undefined
  readonly timeDeltas?: ReadonlyArray<number> | undefined
}

const packageOf = (url: string, name: string): string => {
  if (name === "(garbage collector)") return "(gc)"
  if (name === "(program)" || name === "(idle)") return name
  if (url === "") return "(native)"
  const modules = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)
  const last = modules?.at(-1)
  if (last !== undefined) return last.replace("node_modules/", "")
  const own = url.match(/\/(packages|examples)\/([^/]+)\//)
  if (own !== null) return `@service/${own[2] ?? ""}`
  if (url.startsWith("node:")) return "node:" + (url.slice(5).split("/")[0] ?? "")
  return url
}

const summarize = (profile: Profile) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  const deltas = profile.timeDeltas ?? []
  ;(profile.samples ?? []).forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0)))
  const byPackage = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let total = 0
  for (const [id, us] of self) {
    const node = byId.get(id)
    if (node === undefined) continue
    const { functionName, lineNumber, url } = node.callFrame
    if (functionName === "(idle)") continue
    total += us
    const pkg = packageOf(url, functionName)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us)
    const key = `${functionName || "(anonymous)"} ${pkg}${url === "" ? "" : `:${lineNumber + 1}`} ${url.split("/").at(-1) ?? ""}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
  }
  // Each sample charged to the nearest frame of the project's own code above it (Effect's runtime, the driver and
  // the garbage collector under a request are charged to the module that asked for them).
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const byOwnFrame = new Map<string, number>()
  for (const [id, us] of self) {
    const node = byId.get(id)
    if (node === undefined || node.callFrame.functionName === "(idle)") continue
    let at: number | undefined = id
    let owner = "(no project frame)"
    while (at !== undefined) {
      const frame = byId.get(at)?.callFrame
      if (frame !== undefined && /\/(packages|examples)\//.test(frame.url)) {
        owner = `${frame.url.replace(/^.*\/(packages|examples)\//, "")}:${frame.lineNumber + 1} ${frame.functionName || "(anonymous)"}`
        break
      }
      at = parent.get(at)
    }
    byOwnFrame.set(owner, (byOwnFrame.get(owner) ?? 0) + us)
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, us]) => `| ${k} | ${fmt(us / 1000, 0)} | ${fmt((100 * us) / total, 1)}% |`)
  console.log(`\nself time (idle excluded): ${fmt(total / 1000)} ms\n\n| package | ms | share |\n| - | -: | -: |`)
  console.log(top(byPackage, 18).join("\n"))
  console.log(`\n| function | ms | share |\n| - | -: | -: |`)
  console.log(top(byFunction, 30).join("\n"))
  console.log(`\n| nearest project frame | ms | share |\n| - | -: | -: |`)
  console.log(top(byOwnFrame, 25).join("\n"))
}

const main = async () => {
  if (adminUrl === undefined || database === undefined) return
  const admin = new pg.Client({ connectionString: benchUrl })
  await admin.connect()
  const services = App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto)
  // As `npm start` runs it: with telemetry as configured (off unless OTEL_EXPORTER_OTLP_ENDPOINT is set).
  const rt = ManagedRuntime.make(
    Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(Layer.provideMerge(services), Layer.provideMerge(Telemetry.layer), Layer.orDie)
  )
  try {
    const address = await rt.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
    if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
    // A corpus kept by an older checkout gets this checkout's migrations (its notification triggers among them).
    await rt.runPromise(Migrations.run(App.migrations).pipe(quiet))
    await rt.runPromise(ensureDemo(Option.some(Redacted.make(KEY))).pipe(quiet))
    const url = `http://127.0.0.1:${address.port}/api/v1/workspaces/demo/market-data${path}`
    const warm = await runLoad(url, Math.min(500, requests))
    if (warm.failed > 0) throw new Error(`warm-up: ${warm.failed} failed, first: ${warm.first ?? ""}`)
    const commits = async () =>
      Number((await admin.query<{ c: string }>(`SELECT xact_commit::text AS c FROM pg_stat_database WHERE datname = $1`, [database])).rows[0]?.c)
    // pg_stat_database is updated when a backend reports its counters; ask for a fresh snapshot each time.
    await admin.query(`SELECT pg_stat_clear_snapshot()`)
    const session = new Session()
    session.connect()
    await session.post("Profiler.enable")
    await session.post("Profiler.setSamplingInterval", { interval: 200 })
    const commitsBefore = await commits()
    const statementsBefore = driver.count()
    const cpuBefore = process.cpuUsage()
    await session.post("Profiler.start")
    const run = await runLoad(url, requests)
    const { profile } = await session.post("Profiler.stop")
    const cpu = process.cpuUsage(cpuBefore)
    // The counters of other backends reach pg_stat_database at their next report (at most every 0.5-1 s).
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await admin.query(`SELECT pg_stat_clear_snapshot()`)
    const commitsAfter = await commits()
    const perRequest = (n: number) => fmt(n / requests, 2)
    console.log(`${requests} requests of POST ${path} ${body} at concurrency ${concurrency}: ${fmt(run.ms)} ms, ${fmt((requests * 1000) / run.ms)} requests/s, ${run.failed} failed`)
    console.log(`server CPU per request: ${fmt((cpu.user + cpu.system) / 1000 / requests, 2)} ms (user ${fmt(cpu.user / 1000 / requests, 2)}, system ${fmt(cpu.system / 1000 / requests, 2)})`)
    // The harness's own reads (two commits) are inside the window; they are subtracted.
    console.log(`commits per request: ${perRequest(commitsAfter - commitsBefore - 2)}; statements per request: ${perRequest(driver.count() - statementsBefore - 2)}`)
    if (out !== undefined) writeFileSync(out, JSON.stringify(profile))
    summarize(profile)
  } finally {
    await admin.end()
    await rt.dispose()
  }
}

const entry = summarizeOnly === undefined
  ? main()
  : Promise.resolve().then(() => summarize(JSON.parse(readFileSync(summarizeOnly, "utf8"))))
entry.then(() => process.exit(0), (error: unknown) => {
  console.error(error)
  process.exit(1)
})
