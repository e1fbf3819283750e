// Outgoing event delivery (decision 0060): the delivery worker on the WorkQueue sending signed webhooks to a local
// receiver, against plain signed POSTs to the same receiver measured in the same run.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//          npx tsx bench/delivery.ts [--events 2000] [--workers 1,4] [--concurrency 8] [--idle 250]
//          [--rate 20] [--latency-events 300] [--retry-events 100] [--keep]
//
// It creates bench_delivery_<random>, starts the application in-process (App.layer, migrations included, with
// AddressGuard.layerAllowingLoopbackForTests so deliveries may reach 127.0.0.1), a workspace, a person in it and,
// per phase, one Destination (Destinations.create) for contact.created at its own path of a node:http receiver on
// 127.0.0.1. The receiver only reads the body, records the arrival time and webhook-id and answers 204 (on
// /retry, 503 without Retry-After the first time it sees a webhook-id). A worker is one
// Delivery.make({ concurrency }).process(name, idle) on the shared queue, run either as a fiber of this process
// (sharing its event loop and pg pool of 10 with the receiver) or as a child process of this script
// (`--child-worker <name>`, the same keys, its own application and pg pool).
//
// 1. Throughput: --events contact.created events are recorded with no worker running (EventLedger.record, each
//    entry and its delivery in one transaction), then 1 (resp. 4) worker fibers start; deliveries/s counts from
//    their start to the last distinct webhook-id's arrival. Then the same with worker processes: the rows are made
//    not due while they start, and due (one UPDATE, the start of the clock) once all print that they are ready.
//    Baseline: the same number of POSTs with the same body shape
//    and Standard Webhooks headers (HMAC-SHA256 signature computed per request), node:http with agent: false (a
//    new connection per request, as the worker's postExchange), workers x concurrency in flight.
// 2. Latency: one worker runs while events are recorded at --rate per second (open loop); latency is from the
//    moment record's transaction has committed (its Effect returned) to the receiver's arrival.
// 3. Retry timeliness: one worker; the receiver answers 503 to each event's first attempt, so the queue schedules
//    the second attempt 5 s after the failure (RetrySchedule's first delay, no jitter in the queue). Lateness is
//    second arrival - (the receiver's 503 + 5 s).
// Every phase checks distinct webhook-ids at the receiver against the events recorded, counts duplicates, and
// reads the deliveries' outcomes from events.deliveries. The database is dropped unless --keep.
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import { Principal } from "@service/core/Principal"
import * as App from "@service/app/App"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Delivery from "@service/events/Delivery"
import * as Destinations from "@service/events/Destinations"
import * as EventLedger from "@service/events/EventLedger"
import { sign } from "@service/events/WebhookSignature"
import * as Database from "@service/storage/Database"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { loadavg, cpus } from "node:os"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { commitsSoFar, dropDatabase, STATS_FLUSH_MS, stats } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const events = Number(option("events") ?? "2000")
const workerCounts = (option("workers") ?? "1,4").split(",").map(Number)
const concurrency = Number(option("concurrency") ?? "8")
const idleMs = Number(option("idle") ?? "250")
const rate = Number(option("rate") ?? "20")
const latencyEvents = Number(option("latency-events") ?? "300")
const retryEvents = Number(option("retry-events") ?? "100")
const keep = args.includes("--keep")
const childName = option("child-worker")
const adminUrl = process.env["DATABASE_URL"]
if (childName === undefined && (adminUrl === undefined || adminUrl === "")) {
  console.error("DATABASE_URL is required (the server the benchmark creates its database on).")
  process.exit(2)
}
if (!(events >= 10) || workerCounts.some((n) => !(n >= 1)) || !(concurrency >= 1) || !(idleMs > 0) || !(rate > 0) || !(latencyEvents >= 10) || !(retryEvents >= 1)) {
  console.error("usage: npx tsx bench/delivery.ts [--events 2000] [--workers 1,4] [--concurrency 8] [--idle 250] [--rate 20] [--latency-events 300] [--retry-events 100] [--keep]")
  process.exit(2)
}

const database = `bench_delivery_${randomBytes(4).toString("hex")}`
const benchUrl = process.env["BENCH_DELIVERY_URL"] ?? (() => {
  const url = new URL(adminUrl ?? "")
  url.pathname = `/${database}`
  return url.toString()
})()
// Worker processes get the parent's keys, so they open the Destinations' sealed secrets.
const keyHex = process.env["BENCH_DELIVERY_KEY"] ?? randomBytes(32).toString("hex")
const fingerprintHex = process.env["BENCH_DELIVERY_FINGERPRINT_KEY"] ?? randomBytes(32).toString("hex")
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(Buffer.from(keyHex, "hex")))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(Buffer.from(fingerprintHex, "hex")))
})
const appLayer = () =>
  App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto, {
    addressGuard: AddressGuard.layerAllowingLoopbackForTests()
  }).pipe(Layer.orDie)
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ms = (n: number) => fmt(n, 1)
const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))
const RETRY_DELAY_MS = 5000
const log = (line: string) => process.stderr.write(`${line}\n`)

// ---------------------------------------------------------------------------
// The receiver: arrival time and webhook-id per path, 204 (or 503 once per webhook-id on /retry).

interface Arrival {
  readonly at: number
  readonly status: number
}
const arrivals = new Map<string, Map<string, Array<Arrival>>>()
const receiver = http.createServer((req, res) => {
  req.on("data", () => {})
  req.on("end", () => {
    const path = (req.url ?? "/").split("?")[0] ?? "/"
    const id = String(req.headers["webhook-id"] ?? "")
    const byId = arrivals.get(path) ?? new Map<string, Array<Arrival>>()
    arrivals.set(path, byId)
    const seen = byId.get(id) ?? []
    byId.set(id, seen)
    const status = path.startsWith("/retry") && seen.length === 0 ? 503 : 204
    seen.push({ at: performance.now(), status })
    res.writeHead(status).end()
  })
})
const received = (path: string) => arrivals.get(path) ?? new Map<string, Array<Arrival>>()
/** Distinct webhook-ids answered 2xx at `path`. */
const deliveredCount = (path: string) => {
  let n = 0
  for (const list of received(path).values()) if (list.some((a) => a.status < 300)) n++
  return n
}
const waitFor = async (check: () => boolean, timeoutMs: number) => {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) return false
    await sleep(5)
  }
  return true
}

/** One plain signed POST, as the worker sends it: same headers, a new connection (agent: false). */
const plainPost = (port: number, path: string, secret: string, id: string, body: Uint8Array) =>
  new Promise<number>((resolve, reject) => {
    const timestamp = Math.floor(Date.now() / 1000)
    const req = http.request({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": body.byteLength,
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": sign({ secret, id, timestamp, body })
      }
    }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", reject)
    req.end(body)
  })

// ---------------------------------------------------------------------------
// A worker process (`--child-worker <name>`): the application on the parent's database, one Delivery.make
// processing until SIGTERM.

const runChild = async (name: string) => {
  const rt = ManagedRuntime.make(appLayer())
  const delivery = await rt.runPromise(quiet(Delivery.make({ concurrency })))
  const fiber = rt.runFork(quiet(delivery.process(name, Duration.millis(idleMs))))
  console.log("BENCH_WORKER_READY")
  const stop = () => void rt.runPromise(Fiber.interrupt(fiber)).then(() => rt.dispose()).then(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

/** `n` worker processes; resolves once each printed ready. */
const spawnWorkers = async (n: number, label: string) => {
  const script = fileURLToPath(import.meta.url)
  const children: Array<{ child: ChildProcess; output: string }> = []
  for (let i = 0; i < n; i++) {
    const env: Record<string, string | undefined> = {
      ...process.env,
      BENCH_DELIVERY_URL: benchUrl,
      BENCH_DELIVERY_KEY: keyHex,
      BENCH_DELIVERY_FINGERPRINT_KEY: fingerprintHex
    }
    delete env["DATABASE_URL"]
    const child = spawn(process.execPath, ["--conditions=@service/source", "--import", "tsx", script, "--child-worker", `bench-${label}-${i}`, "--concurrency", String(concurrency), "--idle", String(idleMs)], {
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const entry = { child, output: "" }
    child.stdout?.on("data", (chunk: Buffer) => (entry.output += chunk.toString("utf8")))
    child.stderr?.on("data", (chunk: Buffer) => (entry.output += chunk.toString("utf8")))
    children.push(entry)
  }
  const ready = await waitFor(() => children.every((c) => c.output.includes("BENCH_WORKER_READY") || c.child.exitCode !== null), 120_000)
  const failed = children.find((c) => !c.output.includes("BENCH_WORKER_READY"))
  if (!ready || failed !== undefined) throw new Error(`a worker process did not start:\n${(failed?.output ?? "").slice(-3000)}`)
  return {
    stop: () =>
      Promise.all(children.map(({ child }) =>
        child.exitCode !== null || child.signalCode !== null
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
            child.once("exit", () => resolve())
            child.kill("SIGTERM")
          })
      ))
  }
}

// ---------------------------------------------------------------------------
// Run

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  console.log(`database ${database}`)
  const pool = new pg.Pool({ connectionString: benchUrl, max: 2 })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  if (address === null || typeof address === "string") throw new Error("expected a TCP address")
  const port = address.port
  const base = `http://127.0.0.1:${port}`
  let dispose: () => Promise<void> = () => Promise.resolve()
  const startLoad = loadavg()
  try {
    const rt = ManagedRuntime.make(appLayer())
    dispose = () => rt.dispose()
    const run = <A, E>(effect: Effect.Effect<A, E, ManagedRuntime.ManagedRuntime.Context<typeof rt>>) => rt.runPromise(quiet(effect))

    const principal = await run(Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("bench-delivery"), name: "Delivery bench" })
      const person = yield* accounts.createPerson({ displayName: "Bench Subscriber" })
      yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "member" })
      return new Principal({
        workspace,
        person: Option.some(person),
        role: "member",
        scopes: [],
        credential: { id: CredentialId.make("cred_bench_delivery"), kind: "bearer" }
      })
    }).pipe(Effect.orDie))
    const ws = principal.workspace

    /** A Destination at `path` for contact.created; the previous one is stopped so each phase has one. */
    let current: string | undefined
    const destinationAt = (path: string) =>
      run(Effect.gen(function*() {
        const destinations = yield* Destinations.Destinations
        if (current !== undefined) yield* destinations.stop(ws.id, current)
        const created = yield* destinations.create(principal, { url: `${base}${path}`, events: ["contact.created"] })
        current = created.id
        return created
      }).pipe(Effect.orDie))

    let contact = 0
    /** Records one contact.created; resolves with its webhook-id once committed, and the commit instant. */
    const record = () => {
      const contactId = `c${++contact}`
      return run(Effect.flatMap(EventLedger.EventLedger, (ledger) =>
        ledger.record({
          workspaceId: ws.id,
          name: "contact.created",
          subject: `contact/${contactId}`,
          payload: {
            workspace_id: ws.id,
            occurred_at: new Date().toISOString(),
            contact_id: contactId,
            name: "Ana Ruiz",
            company_id: null,
            arrival_id: null,
            changed_fields: ["name"]
          }
        }))).then((entry) => ({ id: Delivery.eventId(entry.id), committed: performance.now(), entry }))
    }

    /** `n` workers (fibers of this process), each its own Delivery.make on the shared queue. */
    const startWorkers = (n: number, label: string) =>
      rt.runFork(quiet(Effect.gen(function*() {
        const made = yield* Effect.all(Array.from({ length: n }, () => Delivery.make({ concurrency })))
        return yield* Effect.all(made.map((d, i) => d.process(`bench-${label}-${i}`, Duration.millis(idleMs))), { concurrency: "unbounded" })
      })))

    const outcomes = async (destinationId: string) =>
      (await pool.query(
        `SELECT outcome, count(*)::int AS n, sum(a.attempts)::int AS attempts FROM events.deliveries d
           JOIN LATERAL (SELECT count(*) AS attempts FROM events.delivery_attempts x WHERE x.delivery_id = d.id) a ON true
         WHERE destination_id = $1 GROUP BY outcome ORDER BY outcome`,
        [destinationId]
      )).rows.map((r: { outcome: string; n: number; attempts: number }) => `${r.outcome}: ${fmt(r.n)} (${fmt(r.attempts)} attempts)`).join(", ")

    const checks: Array<string> = []
    const check = (phase: string, path: string, expected: ReadonlyArray<string>, outcome: string, perId = 1) => {
      const byId = received(path)
      const total = [...byId.values()].reduce((n, list) => n + list.length, 0)
      const missing = expected.filter((id) => !(byId.get(id) ?? []).some((a) => a.status < 300)).length
      const extra = [...byId.keys()].filter((id) => !expected.includes(id)).length
      const duplicates = total - perId * byId.size
      checks.push(`| ${phase} | ${fmt(expected.length)} | ${fmt(byId.size)} | ${fmt(total)} | ${fmt(missing)} | ${fmt(duplicates)} | ${fmt(extra)} | ${outcome} |`)
    }

    // 1. Throughput
    const throughput: Array<string> = []
    const body = (id: string, i: number) =>
      new TextEncoder().encode(JSON.stringify({
        eventId: id,
        name: "contact.created",
        timestamp: new Date().toISOString(),
        data: { workspace_id: ws.id, occurred_at: new Date().toISOString(), contact_id: `b${i}`, name: "Ana Ruiz", company_id: null, arrival_id: null, changed_fields: ["name"] },
        cursor: null
      }))
    // Warm-up (not reported): 200 deliveries by one worker fiber and 200 plain POSTs, so the first measured cell
    // does not pay for this process's JIT and pool. Worker processes start cold in their own cells.
    {
      const warmPath = "/warmup"
      const warm = await destinationAt(warmPath)
      await Promise.all(Array.from({ length: 200 }, () => record()))
      const fiber = startWorkers(1, "warmup")
      await waitFor(() => deliveredCount(warmPath) >= 200, 120_000)
      await rt.runPromise(Fiber.interrupt(fiber))
      const secret = Redacted.value(warm.secret)
      await Promise.all(Array.from({ length: 200 }, (_, i) => plainPost(port, "/warmup-baseline", secret, `msg_warm_${i}`, body(`msg_warm_${i}`, i))))
    }
    const queueRates = new Map<string, number>()
    for (const workers of workerCounts) {
      let destination: Destinations.CreatedDestination | undefined
      for (const mode of ["fibers", "processes"] as const) {
        const path = `/throughput-${mode}-${workers}`
        destination = await destinationAt(path)
        const recordStart = performance.now()
        const ids: Array<string> = []
        let next = 0
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next < events) {
            next++
            ids.push((await record()).id)
          }
        }))
        const recordSeconds = (performance.now() - recordStart) / 1000
        log(`  ${workers} worker ${mode}: recorded ${fmt(events)} events in ${fmt(recordSeconds, 1)} s (${fmt(events / recordSeconds)}/s, 8 at a time)`)

        let started: number
        let stop: () => Promise<unknown>
        // Commits per delivery: every commit in the database while the workers run, less this script's own two (the
        // reading and the release); the waits let every backend report its counts (the recording's before, the
        // workers' after).
        let commitsBefore = Number.NaN
        if (mode === "fibers") {
          await sleep(STATS_FLUSH_MS)
          commitsBefore = await commitsSoFar(pool)
          started = performance.now()
          const fiber = startWorkers(workers, `tp${workers}`)
          stop = () => rt.runPromise(Fiber.interrupt(fiber))
        } else {
          // Not due while the processes start (tsx, the application, migrations checked); due at once when all are ready.
          await pool.query(`UPDATE events.deliveries SET queue_next_attempt_at = 'infinity' WHERE destination_id = $1`, [destination.id])
          const children = await spawnWorkers(workers, `tp${workers}p`)
          await sleep(STATS_FLUSH_MS)
          commitsBefore = await commitsSoFar(pool)
          started = performance.now()
          await pool.query(`UPDATE events.deliveries SET queue_next_attempt_at = '-infinity' WHERE destination_id = $1`, [destination.id])
          stop = children.stop
        }
        const done = await waitFor(() => deliveredCount(path) >= events, 600_000)
        const last = Math.max(...[...received(path).values()].map((list) => list[list.length - 1]?.at ?? 0))
        await sleep(500)
        await stop()
        const queueSeconds = ((done ? last : performance.now()) - started) / 1000
        await sleep(STATS_FLUSH_MS)
        const commits = (await commitsSoFar(pool)) - commitsBefore - (mode === "fibers" ? 1 : 2)
        check(`throughput, ${workers} worker ${mode}`, path, ids, await outcomes(destination.id))
        const queueRate = deliveredCount(path) / queueSeconds
        queueRates.set(`${mode}-${workers}`, queueRate)
        const line = `| ${workers} ${mode === "fibers" ? "fiber(s), one process" : "process(es)"} | ${workers * concurrency} | ${fmt(events)} | ` +
          `${fmt(queueSeconds, 2)} | ${fmt(queueRate)} | @BASE${workers}@ | ${(commits / events).toFixed(2)} | ${fmt(events / recordSeconds)} |`
        throughput.push(line)
        log(line)
      }
      if (destination === undefined) continue

      // Baseline: the same number of signed POSTs, workers x concurrency in flight.
      const secret = Redacted.value(destination.secret)
      const basePath = `/baseline-${workers}`
      const baseIds = Array.from({ length: events }, (_, i) => `msg_base_${workers}_${i}`)
      let failed = 0
      let b = 0
      const baseStart = performance.now()
      await Promise.all(Array.from({ length: workers * concurrency }, async () => {
        while (b < events) {
          const i = b++
          const id = baseIds[i] ?? ""
          const status = await plainPost(port, basePath, secret, id, body(id, i)).catch(() => 0)
          if (status < 200 || status >= 300) failed++
        }
      }))
      const baseSeconds = (performance.now() - baseStart) / 1000
      check(`baseline, ${workers * concurrency} in flight`, basePath, baseIds, `${fmt(events - failed)} answered 2xx`)
      const baseRate = events / baseSeconds
      for (let i = 0; i < throughput.length; i++) {
        const line = throughput[i] ?? ""
        const mode = line.includes("process(es)") ? "processes" : "fibers"
        const queueRate = queueRates.get(`${mode}-${workers}`) ?? NaN
        throughput[i] = line.replace(`@BASE${workers}@`, `${fmt(baseRate)} | ${fmt(baseRate / queueRate, 1)}x`)
      }
      log(`  baseline ${workers * concurrency} in flight: ${fmt(baseRate)} POSTs/s`)
    }

    // 2. Latency from commit to receipt, one worker, open loop at `rate`.
    const latencyPath = "/latency"
    const latencyDestination = await destinationAt(latencyPath)
    const latencyFiber = startWorkers(1, "latency")
    await sleep(500)
    const committed = new Map<string, number>()
    const pending: Array<Promise<unknown>> = []
    const latencyStart = performance.now()
    for (let i = 0; i < latencyEvents; i++) {
      const due = latencyStart + (i * 1000) / rate
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      pending.push(record().then((r) => committed.set(r.id, r.committed)))
    }
    await Promise.all(pending)
    await waitFor(() => deliveredCount(latencyPath) >= latencyEvents, 120_000)
    await sleep(500)
    await rt.runPromise(Fiber.interrupt(latencyFiber))
    const latencies: Array<number> = []
    for (const [id, at] of committed) {
      const first = received(latencyPath).get(id)?.[0]
      if (first !== undefined) latencies.push(first.at - at)
    }
    const lat = stats(latencies)
    check(`latency, 1 worker at ${fmt(rate)}/s`, latencyPath, [...committed.keys()], await outcomes(latencyDestination.id))
    log(`  latency p50 ${ms(lat.p50)} / p95 ${ms(lat.p95)} / p99 ${ms(lat.p99)} ms`)

    // 3. Retry timeliness: 503 on each first attempt, second attempt due 5 s after it.
    const retryPath = "/retry"
    const retryDestination = await destinationAt(retryPath)
    const retryFiber = startWorkers(1, "retry")
    await sleep(500)
    const retryIds: Array<string> = []
    const retryStart = performance.now()
    const retryPending: Array<Promise<unknown>> = []
    for (let i = 0; i < retryEvents; i++) {
      const due = retryStart + (i * 1000) / rate
      const wait = due - performance.now()
      if (wait > 0) await sleep(wait)
      retryPending.push(record().then((r) => retryIds.push(r.id)))
    }
    await Promise.all(retryPending)
    await waitFor(() => deliveredCount(retryPath) >= retryEvents, 120_000)
    await sleep(500)
    await rt.runPromise(Fiber.interrupt(retryFiber))
    const lateness: Array<number> = []
    for (const id of retryIds) {
      const [first, second] = received(retryPath).get(id) ?? []
      if (first !== undefined && second !== undefined) lateness.push(second.at - (first.at + RETRY_DELAY_MS))
    }
    // Split at the row's queue_next_attempt_at (left as scheduled once the second attempt succeeds): how far the
    // schedule itself is from failure + 5 s, and how long the due row waited for a poll and its POST.
    const scheduledRows = (await pool.query(
      `SELECT 'evt_' || ledger_id::text AS id, (extract(epoch FROM queue_next_attempt_at) * 1000)::float8 AS next
         FROM events.deliveries WHERE destination_id = $1`,
      [retryDestination.id]
    )).rows as Array<{ id: string; next: number }>
    const scheduledOf = new Map(scheduledRows.map((r) => [r.id, r.next - performance.timeOrigin]))
    const scheduleOffset: Array<number> = []
    const waitedForPoll: Array<number> = []
    for (const id of retryIds) {
      const [first, second] = received(retryPath).get(id) ?? []
      const scheduled = scheduledOf.get(id)
      if (first === undefined || second === undefined || scheduled === undefined) continue
      scheduleOffset.push(scheduled - (first.at + RETRY_DELAY_MS))
      waitedForPoll.push(second.at - scheduled)
    }
    const offset = stats(scheduleOffset)
    const waited = stats(waitedForPoll)
    const late = stats(lateness)
    const within = lateness.filter((x) => Math.abs(x) <= 1000).length
    check(`retry, 1 worker at ${fmt(rate)}/s`, retryPath, retryIds, await outcomes(retryDestination.id), 2)

    const endLoad = loadavg()
    console.log()
    console.log(
      `${cpus().length} cores; load average at start ${startLoad.map((x) => fmt(x, 2)).join(" / ")}, ` +
        `at end ${endLoad.map((x) => fmt(x, 2)).join(" / ")} (1 / 5 / 15 min). Each worker is one Delivery.make(...).process ` +
        `(concurrency ${concurrency}, batch 32, idle ${idleMs} ms): fibers of this process (sharing its event loop, its pg pool of 10 and ` +
        `the receiver's), or worker processes (\`--child-worker\`, a pool of 10 each). Latency and retry use one fiber worker.`
    )
    console.log()
    console.log(
      "| workers | in flight | events | seconds | deliveries/s | baseline POSTs/s (same in flight) | baseline vs queue | commits per delivery | recorded/s (8 at a time) |"
    )
    console.log("| -: | -: | -: | -: | -: | -: | -: | -: | -: |")
    for (const line of throughput) console.log(line)
    console.log()
    console.log("| commit to receipt, 1 worker | rate | events | p50 / p95 / p99 ms | mean ms | max ms |")
    console.log("| - | -: | -: | -: | -: | -: |")
    console.log(`| idle ${idleMs} ms | ${fmt(rate)}/s | ${fmt(lat.n)} | ${ms(lat.p50)} / ${ms(lat.p95)} / ${ms(lat.p99)} | ${ms(lat.mean)} | ${ms(Math.max(...latencies))} |`)
    console.log()
    console.log("| retry after a 503, 1 worker | events | second attempts | within 1 s of failure + 5 s | lateness p50 / p95 ms | min / max ms |")
    console.log("| - | -: | -: | -: | -: | -: |")
    console.log(
      `| idle ${idleMs} ms, ${fmt(rate)}/s | ${fmt(retryIds.length)} | ${fmt(late.n)} | ${fmt(within)} (${fmt((100 * within) / Math.max(1, late.n), 1)}%) | ` +
        `${ms(late.p50)} / ${ms(late.p95)} | ${ms(Math.min(...lateness))} / ${ms(Math.max(...lateness))} |`
    )
    console.log()
    console.log("| part of the lateness | p50 / p95 ms | min / max ms |")
    console.log("| - | -: | -: |")
    console.log(`| queue_next_attempt_at - (503 + 5 s): the schedule counts from the worker's fail(), after its writes | ${ms(offset.p50)} / ${ms(offset.p95)} | ${ms(Math.min(...scheduleOffset))} / ${ms(Math.max(...scheduleOffset))} |`)
    console.log(`| arrival - queue_next_attempt_at: waiting for a claim (idle poll, a round in progress) and the POST | ${ms(waited.p50)} / ${ms(waited.p95)} | ${ms(Math.min(...waitedForPoll))} / ${ms(Math.max(...waitedForPoll))} |`)
    console.log()
    console.log("| phase | events | distinct webhook-ids received | requests | not delivered | duplicates | unexpected ids | outcomes in events.deliveries |")
    console.log("| - | -: | -: | -: | -: | -: | -: | - |")
    for (const line of checks) console.log(line)
  } finally {
    await dispose()
    await pool.end()
    receiver.close()
    if (keep) {
      console.log(`kept database ${database}`)
    } else {
      await dropDatabase(admin, database)
    }
    await admin.end()
  }
}

const entry = childName === undefined ? main() : runChild(childName)
entry.catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
