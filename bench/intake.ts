// Intake through the door on PostgreSQL, against a bare node:http handler measured in the same run, then Arrivals
// applied per second by 1, 2 and 4 worker processes.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/intake.ts [--seconds 15] [--concurrency 16] [--minutes 0.5] [--arrivals 2000] [--workers 1,2,4]
//          [--open bare,door,door-own] [--skip-intake] [--skip-workers] [--keep] [--profile-door <dir>]
//
// 1. It creates bench_intake_<random>, migrates it with the application's layers, bootstraps the demo workspace
//    and creates a CloudEvents Source (in-process, with key material it also gives the processes it starts).
// 2. Servers, each a child process on a free port, given the same database and keys:
//    - door: the real server (`examples/server/src/main.ts`) with SERVICE_EMBEDDED_WORKER=false, so it only
//      verifies, stores and acknowledges; measured after its background demo-corpus load has finished;
//    - bare: a node:http handler (this file with --bare-server) that verifies the same Standard Webhooks signature
//      with node:crypto (timestamp window, HMAC-SHA256, timing-safe compare), parses the CloudEvent's JSON and does
//      one INSERT … ON CONFLICT DO NOTHING RETURNING through `pg` (pool of 10, as the service's) into a table with
//      the same unique (source, webhook-id) key. It knows the secret; it reads no Source and keeps no ledger.
// 3. Closed loop: `--concurrency` requests in flight for `--seconds` (after 2 s of warm-up) against each; accepted
//    (202) requests per second. Then an open loop at half the bare handler's maximum for `--minutes` against each:
//    requests leave on a fixed schedule and latency is counted from the scheduled instant (no coordinated omission);
//    p50/p99 overall and per window (1 minute, or 10 s for runs under 2 minutes).
//    The client sets no socket limit (an open loop's requests reach the server when scheduled) and lets an address's
//    connections go only once its last request is answered, so a connection reset is the server's, never the client's.
//    The door allows 120 requests a minute per client address. The client spreads requests over loopback
//    addresses (127.1.0.0/16), 100 consecutive requests per address, so no address reaches the limit and the
//    limiter's stored counter is still written on every request; the bare handler gets the same addresses.
// 4. Workers: per count, `--arrivals` signed requests are taken by the door (no worker runs), made not due with one
//    UPDATE of the queue column (with every other pending Arrival, e.g. those of step 3, which stay not due), the
//    workers (`npm run worker`'s program) are started and awaited, then one UPDATE makes this round's Arrivals due at
//    once; Arrivals applied per second = arrivals / time until all are settled.
// The database is dropped at the end unless --keep.
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto, generateKeyMaterial, parseFingerprintKey, parseSealingKeys } from "@service/core/Crypto"
import * as Sources from "@service/door/Sources"
import { ensureDemo } from "@service/server/Demo"
import * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { type ChildProcess, spawn } from "node:child_process"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as Http from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { commitsSoFar, STATS_FLUSH_MS } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const root = fileURLToPath(new URL("..", import.meta.url))

// ---------------------------------------------------------------------------------------------------------------
// The bare handler (child process): `tsx bench/intake.ts --bare-server`, configured by BENCH_BARE_* variables.

const bareServer = async () => {
  const secret = process.env["BENCH_BARE_SECRET"] ?? ""
  const sourceId = process.env["BENCH_BARE_SOURCE"] ?? ""
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const pool = new pg.Pool({ connectionString: process.env["BENCH_BARE_URL"], max: 10 })
  const answer = (res: Http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  }
  const verify = (req: Http.IncomingMessage, body: Buffer): string | undefined => {
    const id = req.headers["webhook-id"]
    const timestamp = req.headers["webhook-timestamp"]
    const signature = req.headers["webhook-signature"]
    if (typeof id !== "string" || typeof timestamp !== "string" || typeof signature !== "string") return undefined
    const seconds = Number(timestamp)
    if (!Number.isInteger(seconds) || Math.abs(Math.floor(Date.now() / 1000) - seconds) > 300) return undefined
    const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest()
    for (const part of signature.split(" ")) {
      if (!part.startsWith("v1,")) continue
      const given = Buffer.from(part.slice(3), "base64")
      if (given.length === expected.length && timingSafeEqual(given, expected)) return id
    }
    return undefined
  }
  const server = Http.createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 }, (req, res) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= 256 * 1024) chunks.push(chunk)
    })
    req.on("end", () => {
      if (size > 256 * 1024) return answer(res, 413, { code: "payload_too_large" })
      const body = Buffer.concat(chunks)
      const webhookId = verify(req, body)
      if (webhookId === undefined) return answer(res, 401, { code: "invalid_signature" })
      let event: unknown
      try {
        event = JSON.parse(body.toString("utf8"))
      } catch {
        return answer(res, 400, { code: "invalid_event" })
      }
      const field = (name: string) => (Predicate.isRecord(event) ? event[name] : undefined)
      const [ceId, ceSource, ceType] = [field("id"), field("source"), field("type")]
      if (field("specversion") !== "1.0" || typeof ceId !== "string" || typeof ceSource !== "string" || typeof ceType !== "string") {
        return answer(res, 400, { code: "invalid_event" })
      }
      const id = `arr_${randomBytes(12).toString("hex")}`
      pool.query(
        `INSERT INTO bench_bare_arrivals (id, source_id, received_at, webhook_id, event_key, event_type, content_type, headers, body)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9) ON CONFLICT DO NOTHING RETURNING id`,
        [id, sourceId, new Date().toISOString(), webhookId, JSON.stringify([ceSource, ceId]), ceType, req.headers["content-type"] ?? null,
          JSON.stringify(req.headers), body.toString("utf8")]
      ).then(
        (result) => answer(res, result.rowCount === 1 ? 202 : 200, { arrival: id }),
        () => answer(res, 500, { code: "internal" })
      )
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    console.log(`bare listening on ${address !== null && typeof address !== "string" ? address.port : 0}`)
  })
  const stop = () => server.close(() => void pool.end().then(() => process.exit(0)))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes.

class Child {
  readonly child: ChildProcess
  output = ""
  readonly exited: Promise<void>
  private readonly waiters: Array<() => void> = []

  constructor(
    readonly label: string,
    argv: ReadonlyArray<string>,
    env: Readonly<Record<string, string>>,
    nodeArgs: ReadonlyArray<string> = []
  ) {
    const inherited = { ...process.env }
    for (const name of ["DATABASE_URL", "DATABASE_READ_URL", "SERVICE_DEMO_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT", "PORT", "HOST"]) {
      delete inherited[name]
    }
    this.child = spawn(process.execPath, [...nodeArgs, "--conditions=@service/source", "--import", "tsx", ...argv], { cwd: root, env: { ...inherited, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString("utf8")
      for (const waiter of this.waiters.splice(0)) waiter()
    }
    this.child.stdout?.on("data", collect)
    this.child.stderr?.on("data", collect)
    this.exited = new Promise((resolve) =>
      this.child.once("exit", () => {
        resolve()
        for (const waiter of this.waiters.splice(0)) waiter()
      })
    )
  }

  waitFor(pattern: RegExp): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.output)
        if (match !== null) return resolve(match)
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          return reject(new Error(`${this.label} exited before printing ${pattern}:\n${this.output.slice(-3000)}`))
        }
        this.waiters.push(check)
      }
      check()
    })
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM")
    await this.exited
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The client: signed CloudEvents from rotating loopback addresses.

const PER_ADDRESS = 100

// Address blocks are handed out once per run, across every client, so no address is used twice in a minute.
let nextAddressBlock = 0

/** The connections of one loopback source address, and how many of its requests await their answer. */
interface Sender {
  readonly agent: Http.Agent
  readonly address: string
  inFlight: number
}

class Client {
  private counter = 0
  /** Connection errors (answered as status 0) by code. */
  readonly errors = new Map<string, number>()
  /** The bodies of the first 5xx answers. */
  readonly serverErrors: Array<string> = []
  private used = PER_ADDRESS
  private readonly agents: Array<Sender> = []

  constructor(readonly port: number, readonly sourceId: string, readonly secret: string, readonly prefix: string) {}

  private agentFor(): Sender {
    const current = this.agents[this.agents.length - 1]
    if (current !== undefined && this.used < PER_ADDRESS) {
      this.used += 1
      return current
    }
    const index = nextAddressBlock++
    // No socket limit: an open loop's requests reach the server when scheduled, never wait in the client's queue.
    const next: Sender = { agent: new Http.Agent({ keepAlive: true }), address: `127.1.${Math.floor(index / 250) % 250}.${1 + (index % 250)}`, inFlight: 0 }
    this.agents.push(next)
    this.used = 1
    // An address no longer used is let go once its last request is answered: destroying its agent earlier would
    // reset the requests still in flight (an overloaded server's), and count them as the server's resets.
    for (const old of this.agents.splice(0, this.agents.length - 1)) {
      if (old.inFlight === 0) old.agent.destroy()
      else this.retiring.add(old)
    }
    return next
  }

  private readonly retiring = new Set<Sender>()

  private answered(sender: Sender) {
    sender.inFlight -= 1
    if (sender.inFlight === 0 && this.retiring.delete(sender)) sender.agent.destroy()
  }

  /** Sends the next event; its status and latency in ms. */
  send(): Promise<{ readonly status: number; readonly ms: number }> {
    const n = this.counter++
    const webhookId = `msg_${this.prefix}_${n}`
    const body = JSON.stringify({
      specversion: "1.0",
      id: `${this.prefix}-${n}`,
      source: "https://forms.example.com/bench",
      type: "contact.created",
      data: { name: `Bench ${n}`, email: `${this.prefix}.${n}@bench.example.com` }
    })
    const timestamp = String(Math.floor(Date.now() / 1000))
    const key = Buffer.from(this.secret.slice("whsec_".length), "base64")
    const signature = `v1,${createHmac("sha256", key).update(`${webhookId}.${timestamp}.${body}`).digest("base64")}`
    const sender = this.agentFor()
    const { address, agent } = sender
    sender.inFlight += 1
    const started = performance.now()
    return new Promise<{ readonly status: number; readonly ms: number }>((resolve) => {
      const req = Http.request(
        {
          host: "127.0.0.1",
          port: this.port,
          localAddress: address,
          agent,
          method: "POST",
          path: `/api/v1/door/${this.sourceId}`,
          headers: {
            "content-type": "application/cloudevents+json",
            "content-length": Buffer.byteLength(body),
            "webhook-id": webhookId,
            "webhook-timestamp": timestamp,
            "webhook-signature": signature
          }
        },
        (res) => {
          const status = res.statusCode ?? 0
          const parts: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => {
            if (status >= 500) parts.push(chunk)
          })
          res.on("end", () => {
            if (status >= 500 && this.serverErrors.length < 5) this.serverErrors.push(`${status} ${Buffer.concat(parts).toString("utf8")}`)
            resolve({ status, ms: performance.now() - started })
          })
        }
      )
      req.on("error", (error) => {
        const code = "code" in error && typeof error.code === "string" ? error.code : error.message
        this.errors.set(code, (this.errors.get(code) ?? 0) + 1)
        resolve({ status: 0, ms: performance.now() - started })
      })
      req.end(body)
    }).finally(() => this.answered(sender))
  }

  close() {
    for (const { agent } of this.agents.splice(0)) agent.destroy()
    for (const { agent } of this.retiring) agent.destroy()
    this.retiring.clear()
    this.used = PER_ADDRESS
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

/** `concurrency` lanes sending back to back for `seconds`; 202s per second and the statuses seen. */
const closedLoop = async (client: Client, concurrency: number, seconds: number) => {
  const statuses = new Map<number, number>()
  let accepted = 0
  let measuring = false
  const warmUntil = performance.now() + 2_000
  const endAt = warmUntil + seconds * 1000
  let measuredFrom = 0
  const lane = async () => {
    while (performance.now() < endAt) {
      const { status } = await client.send()
      const now = performance.now()
      if (now < warmUntil || now > endAt) continue
      if (!measuring) {
        measuring = true
        measuredFrom = now
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      if (status === 202) accepted += 1
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  const elapsed = (performance.now() - Math.max(measuredFrom, warmUntil)) / 1000
  return { perSecond: accepted / Math.max(elapsed, 0.001), statuses }
}

/** Requests on a fixed schedule of `rate` a second for `minutes`; latency from each scheduled instant. */
const openLoop = async (client: Client, rate: number, minutes: number) => {
  const windowMs = minutes >= 2 ? 60_000 : 10_000
  const durationMs = minutes * 60_000
  const samples: Array<{ readonly at: number; readonly ms: number; readonly status: number }> = []
  const pending: Array<Promise<void>> = []
  const start = performance.now()
  const interval = 1000 / rate
  let n = 0
  let skipped = 0
  let inFlight = 0
  while (true) {
    const now = performance.now()
    if (now - start >= durationMs) break
    while (start + n * interval <= now && n * interval < durationMs) {
      const scheduled = start + n * interval
      n += 1
      // Past 2,000 in flight the target cannot keep up; such requests are counted, not sent.
      if (inFlight >= 2_000) {
        skipped += 1
        continue
      }
      inFlight += 1
      pending.push(client.send().then(({ status }) => {
        inFlight -= 1
        samples.push({ at: scheduled - start, ms: performance.now() - scheduled, status })
      }))
    }
    await sleep(1)
  }
  await Promise.all(pending)
  const ok = samples.filter((s) => s.status === 202)
  const sorted = ok.map((s) => s.ms).sort((a, b) => a - b)
  const windows: Array<{ readonly from: number; readonly p50: number; readonly p99: number; readonly count: number }> = []
  for (let from = 0; from < durationMs; from += windowMs) {
    const inWindow = ok.filter((s) => s.at >= from && s.at < from + windowMs).map((s) => s.ms).sort((a, b) => a - b)
    windows.push({ from, p50: percentile(inWindow, 50), p99: percentile(inWindow, 99), count: inWindow.length })
  }
  const statuses = new Map<number, number>()
  for (const sample of samples) statuses.set(sample.status, (statuses.get(sample.status) ?? 0) + 1)
  return {
    statuses,
    sent: samples.length,
    failed: samples.length - ok.length,
    skipped,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    windows,
    windowMs
  }
}

// ---------------------------------------------------------------------------------------------------------------

const fmt = (value: number, digits = 1) => (Number.isFinite(value) ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "-")
const ratio = (value: number, base: number) => `${fmt(value / base, 2)}x`

const main = async () => {
  const adminUrl = process.env["DATABASE_URL"]
  if (adminUrl === undefined || adminUrl.trim() === "") {
    console.error("DATABASE_URL is required: the PostgreSQL the benchmark creates its database on.")
    process.exit(2)
  }
  const seconds = Number(option("seconds") ?? "15")
  const concurrency = Number(option("concurrency") ?? "16")
  const minutes = Number(option("minutes") ?? "0.5")
  const arrivals = Number(option("arrivals") ?? "2000")
  const workerCounts = (option("workers") ?? "1,2,4").split(",").map(Number)
  const keep = args.includes("--keep")
  // Which open loops run: the bare handler and the door at half the bare maximum, the door at half its own.
  const openTargets = (option("open") ?? "bare,door,door-own").split(",")
  if (!(seconds > 0) || !(concurrency >= 1) || !(minutes > 0) || !(arrivals >= 1) || workerCounts.some((k) => !(k >= 1))) {
    console.error("usage: npx tsx bench/intake.ts [--seconds 15] [--concurrency 16] [--minutes 0.5] [--arrivals 2000] [--workers 1,2,4] [--keep]")
    process.exit(2)
  }

  const database = `bench_intake_${randomBytes(4).toString("hex")}`
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  const benchUrl = url.toString()
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const dataDir = await NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "bench-intake-"))
  const keys = generateKeyMaterial()
  const env = {
    DATABASE_URL: benchUrl,
    SERVICE_DATA_DIR: dataDir,
    SERVICE_DEMO_API_KEY: `svc_key_bench_${randomBytes(16).toString("hex")}`,
    SERVICE_SEALING_KEYS: keys.sealingKeys,
    SERVICE_FINGERPRINT_KEY: keys.fingerprintKey
  }
  const crypto = Layer.unwrapEffect(
    Either.all({ keyring: parseSealingKeys(keys.sealingKeys), fingerprintKey: parseFingerprintKey(keys.fingerprintKey) }).pipe(
      Effect.mapError((reason) => new Error(reason)),
      Effect.map(Crypto.layer)
    )
  )
  const runtime = ManagedRuntime.make(
    App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto).pipe(
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning)),
      Layer.orDie
    )
  )
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 })
  const children: Array<Child> = []
  const startChild = (label: string, argv: ReadonlyArray<string>, extra: Readonly<Record<string, string>>, nodeArgs: ReadonlyArray<string> = []) => {
    const child = new Child(label, argv, { ...env, ...extra }, nodeArgs)
    children.push(child)
    return child
  }
  try {
    console.log(`database ${database}; ${NodeOs.cpus().length} cores, load average ${NodeOs.loadavg().map((l) => l.toFixed(1)).join(" ")}`)
    const { secret, sourceId } = await runtime.runPromise(Effect.gen(function*() {
      const demo = yield* ensureDemo(Option.some(Redacted.make(env.SERVICE_DEMO_API_KEY)))
      const workspace = yield* Effect.flatten((yield* Accounts.Accounts).findWorkspaceBySlug(demo.slug))
      const created = yield* (yield* Sources.Sources).create(workspace.id, { name: "bench" })
      return { secret: Redacted.value(created.secret), sourceId: created.source.id }
    }).pipe(Effect.orDie))
    await pool.query(`CREATE TABLE bench_bare_arrivals (id text PRIMARY KEY, source_id text NOT NULL, received_at timestamptz NOT NULL,
      webhook_id text NOT NULL, event_key text NOT NULL, event_type text, content_type text, headers jsonb NOT NULL, body text,
      UNIQUE (source_id, webhook_id))`)

    // The door (no embedded worker), measured once its demo corpus load is over.
    // --profile-door <dir>: the door server writes a V8 CPU profile there when it stops.
    const profile = option("profile-door")
    const door = startChild(
      "door server",
      ["examples/server/src/main.ts"],
      { PORT: "0", HOST: "127.0.0.1", SERVICE_EMBEDDED_WORKER: "false" },
      profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${NodePath.resolve(profile)}`]
    )
    const doorPort = Number((await door.waitFor(/Listening on http:\/\/127\.0\.0\.1:(\d+)/))[1])
    await door.waitFor(/API key\s+svc_key_/)
    await door.waitFor(/Published the demo corpus|Could not load the demo corpus|Corpus\s+\S+, published/)
    const bare = startChild("bare handler", ["bench/intake.ts", "--bare-server"], {
      BENCH_BARE_URL: benchUrl,
      BENCH_BARE_SECRET: secret,
      BENCH_BARE_SOURCE: sourceId
    })
    const barePort = Number((await bare.waitFor(/bare listening on (\d+)/))[1])

    if (!args.includes("--skip-intake")) {
      console.log(`\nclosed loop: ${concurrency} in flight, ${seconds} s each after 2 s of warm-up`)
      const bareClient = new Client(barePort, sourceId, secret, "bare")
      const doorClient = new Client(doorPort, sourceId, secret, "door")
      const bareMax = await closedLoop(bareClient, concurrency, seconds)
      const doorMax = await closedLoop(doorClient, concurrency, seconds)
      const statuses = (m: Map<number, number>) => [...m.entries()].map(([s, n]) => `${s}: ${n}`).join(", ")
      console.log("\n| target | accepted requests/s | vs bare | statuses |")
      console.log("| - | -: | -: | - |")
      console.log(`| bare node:http + pg INSERT | ${fmt(bareMax.perSecond)} | 1.00x | ${statuses(bareMax.statuses)} |`)
      console.log(`| door (server, no embedded worker) | ${fmt(doorMax.perSecond)} | ${ratio(doorMax.perSecond, bareMax.perSecond)} | ${statuses(doorMax.statuses)} |`)

      const rate = Math.max(1, Math.round(bareMax.perSecond / 2))
      const doorRate = Math.max(1, Math.round(doorMax.perSecond / 2))
      console.log(`\nopen loop (${openTargets.join(", ")}): ${rate} requests/s (half the bare maximum), door-own at ${doorRate}/s (half the door's maximum), ${minutes} min each`)
      const none = { statuses: new Map<number, number>(), sent: 0, failed: 0, skipped: 0, p50: Number.NaN, p99: Number.NaN, windows: [], windowMs: minutes >= 2 ? 60_000 : 10_000 }
      const bareOpen = openTargets.includes("bare") ? await openLoop(bareClient, rate, minutes) : none
      const doorOpen = openTargets.includes("door") ? await openLoop(doorClient, rate, minutes) : none
      const doorOwn = openTargets.includes("door-own") ? await openLoop(doorClient, doorRate, minutes) : none
      console.log("\n| target | sent | statuses | not sent (over 2,000 in flight) | p50 ms | p99 ms | p99 vs bare |")
      console.log("| - | -: | - | -: | -: | -: | -: |")
      for (const [label, r] of [[`bare at ${rate}/s`, bareOpen], [`door at ${rate}/s`, doorOpen], [`door at ${doorRate}/s`, doorOwn]] as const) {
        console.log(`| ${label} | ${r.sent} | ${statuses(r.statuses)} | ${r.skipped} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${ratio(r.p99, bareOpen.p99)} |`)
      }
      console.log(`\np50 / p99 ms per ${doorOpen.windowMs / 1000} s window (from the scheduled send):`)
      console.log(`\n| window | bare at ${rate}/s | door at ${rate}/s | door 202s | door at ${doorRate}/s | door 202s |`)
      console.log("| - | -: | -: | -: | -: | -: |")
      const longest = [bareOpen, doorOpen, doorOwn].reduce((a, b) => (b.windows.length > a.windows.length ? b : a))
      longest.windows.forEach((window, i) => {
        const b = bareOpen.windows[i]
        const w = doorOpen.windows[i]
        const own = doorOwn.windows[i]
        const pair = (x: { readonly p50: number; readonly p99: number } | undefined) => `${fmt(x?.p50 ?? Number.NaN)} / ${fmt(x?.p99 ?? Number.NaN)}`
        console.log(
          `| ${(window.from / 1000).toFixed(0)}-${((window.from + longest.windowMs) / 1000).toFixed(0)} s | ${pair(b)} | ${pair(w)} | ${w?.count ?? 0} | ${pair(own)} | ${own?.count ?? 0} |`
        )
      })
      const errors = (client: Client) => [...client.errors.entries()].map(([code, n]) => `${code} ${n}`).join(", ")
      if (bareClient.errors.size + doorClient.errors.size > 0) {
        console.log(`\nstatus 0 is a connection error: bare ${errors(bareClient) || "none"}; door ${errors(doorClient) || "none"}`)
      }
      bareClient.close()
      doorClient.close()
    }

    if (!args.includes("--skip-workers")) {
      console.log(`\nworkers: ${arrivals} Arrivals taken by the door, then released to the workers at once`)
      const rows: Array<{
        readonly workers: number
        readonly perSecond: number
        readonly seconds: number
        readonly commitsPerArrival: number
        readonly spread: string
      }> = []
      for (const [round, count] of workerCounts.entries()) {
        const prefix = `w${round}`
        const client = new Client(doorPort, sourceId, secret, prefix)
        let taken = 0
        const fill = async () => {
          while (taken < arrivals) {
            taken += 1
            const { status } = await client.send()
            if (status !== 202) throw new Error(`prefill answered ${status}: ${client.serverErrors.join("; ")}`)
          }
        }
        await Promise.all(Array.from({ length: 8 }, fill))
        client.close()
        // Nothing else is due while the workers run: this round's Arrivals and any left by the intake phases (which
        // ran without workers) wait; only this round's are released below.
        await pool.query(`UPDATE door.arrivals SET queue_next_attempt_at = 'infinity' WHERE queue_state = 'pending'`)
        const workers = Array.from({ length: count }, (_, i) =>
          startChild(`worker ${i + 1}/${count}`, ["examples/server/src/worker-main.ts"], {
            // Woken by the release's notification: the default fallback poll (10 s) never comes into it.
            SERVICE_WORKER_NAME: `bench-${prefix}-${i + 1}`
          }))
        await Promise.all(workers.map((w) => w.waitFor(/is running .*door\.intake/)))
        // Commits per Arrival: every commit in the database from here until the workers have exited, less this
        // script's own statements (counted below); the wait lets the door's and the workers' backends report theirs.
        await sleep(STATS_FLUSH_MS)
        const commitsBefore = await commitsSoFar(pool)
        let ownStatements = 2
        const started = performance.now()
        await pool.query(`UPDATE door.arrivals SET queue_next_attempt_at = '-infinity' WHERE queue_state = 'pending' AND webhook_id LIKE $1`, [`msg_${prefix}_%`])
        while (true) {
          ownStatements++
          const result = await pool.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM door.arrivals WHERE webhook_id LIKE $1 AND queue_state IN ('pending', 'running')`,
            [`msg_${prefix}_%`]
          )
          if (Number(result.rows[0]?.n ?? "1") === 0) break
          await sleep(50)
        }
        const elapsed = (performance.now() - started) / 1000
        ownStatements++
        const spread = await pool.query<{ worker: string; n: string; statuses: string }>(
          `SELECT queue_worker AS worker, count(*)::text AS n, string_agg(DISTINCT status, ',') AS statuses FROM door.arrivals
           WHERE webhook_id LIKE $1 GROUP BY 1 ORDER BY 1`,
          [`msg_${prefix}_%`]
        )
        await Promise.all(workers.map((w) => w.stop()))
        await sleep(STATS_FLUSH_MS)
        const commits = (await commitsSoFar(pool)) - commitsBefore - ownStatements
        rows.push({
          workers: count,
          perSecond: arrivals / elapsed,
          seconds: elapsed,
          commitsPerArrival: commits / arrivals,
          spread: spread.rows.map((r) => `${r.n} (${r.statuses})`).join(" / ")
        })
      }
      const base = rows[0]?.perSecond ?? Number.NaN
      console.log("\n| worker processes | Arrivals | seconds | applied/s | vs 1 worker | commits per Arrival | per worker (statuses) |")
      console.log("| -: | -: | -: | -: | -: | -: | - |")
      for (const row of rows) {
        console.log(
          `| ${row.workers} | ${arrivals} | ${fmt(row.seconds)} | ${fmt(row.perSecond)} | ${ratio(row.perSecond, base)} | ${row.commitsPerArrival.toFixed(2)} | ${row.spread} |`
        )
      }
    }
  } catch (error) {
    // What the door logged about failures, to go with the error.
    for (const child of children) {
      const lines = child.output.split("\n").filter((line) => /level=(ERROR|FATAL|WARN)|Error|error/.test(line))
      if (lines.length > 0) console.error(`${child.label}, last error lines:\n${lines.slice(-15).join("\n")}`)
    }
    throw error
  } finally {
    await Promise.all(children.map((c) => c.stop()))
    await runtime.dispose()
    await pool.end()
    await NodeFs.rm(dataDir, { recursive: true, force: true })
    if (keep) console.log(`kept database ${database}`)
    else await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)
    await admin.end()
  }
}

if (args.includes("--bare-server")) {
  void bareServer()
} else {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
