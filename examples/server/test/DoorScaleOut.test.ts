// The door as real processes on one PostgreSQL (skipped without DATABASE_URL, which is used only as the admin
// connection that makes a fresh database per test, a copy of the run's prepared demo corpus, and drops it after):
//
// - a server killed with SIGKILL in the middle of a load and started again loses no Arrival it answered 202 for,
//   and every one of them settles (Arrivals its dead worker held are taken over once their lease expires);
// - two API nodes without embedded workers and two `npm run worker` processes apply every Arrival exactly once;
// - the door's 120 requests a minute per address hold across both API nodes.
//
// The processes and the test share the key material through SERVICE_SEALING_KEYS and SERVICE_FINGERPRINT_KEY; the
// test creates the Source in-process with the same `@service/app` layers on the same database. Every wait is on a
// line a process prints or on a polled condition; the timeouts are hang guards only.
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Accounts from "@service/core/Accounts"
import * as Intake from "@service/door/Intake"
import * as Sources from "@service/door/Sources"
import * as StandardWebhooks from "@service/door/StandardWebhooks"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { request as httpRequest } from "node:http"
import * as NodeOs from "node:os"
import { adminUrl, freshDatabase, hangGuard, spawnChild, startServer, startWorker } from "./support/Processes.js"

/** The demo workspace the server bootstrapped, and a new Source in it. */
const newSource = Effect.gen(function*() {
  const workspace = yield* Effect.flatten((yield* Accounts.Accounts).findWorkspaceBySlug("demo"))
  const { secret, source } = yield* (yield* Sources.Sources).create(workspace.id, { name: "scale-out form" })
  return { workspaceId: workspace.id, sourceId: source.id, secret: Redacted.value(secret) }
}).pipe(Effect.orDie)

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
}

/** One POST on its own connection from `localAddress`; a connection error (a killed server) is `None`. */
const post = (port: number, localAddress: string, path: string, headers: Readonly<Record<string, string>>, body: string) =>
  Effect.async<Option.Option<Answer>>((resume) => {
    let done = false
    const finish = (value: Option.Option<Answer>) => {
      if (done) return
      done = true
      resume(Effect.succeed(value))
    }
    const req = httpRequest({ host: "127.0.0.1", port, localAddress, method: "POST", path, headers, agent: false }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () => finish(Option.some({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString("utf8") })))
      res.on("error", () => finish(Option.none()))
    })
    req.on("error", () => finish(Option.none()))
    req.end(body)
  })

const signed = (secret: string, webhookId: string, event: string) => {
  const body = JSON.stringify({
    specversion: "1.0",
    id: event,
    source: "https://forms.example.com/scale-out",
    type: "contact.created",
    data: { name: `Scale ${event}`, email: `${event}@acme.mx` }
  })
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    body,
    headers: {
      "content-type": "application/cloudevents+json",
      "webhook-id": webhookId,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": StandardWebhooks.sign({ secret, id: webhookId, timestamp, body: new TextEncoder().encode(body) })
    }
  }
}

const Accepted = Schema.parseJson(Schema.Struct({ arrival: Schema.String }))

/** Polls until the Arrival has left `received`; its status then. */
const settled = (workspaceId: string, id: string) =>
  Effect.flatMap(Intake.Intake, (intake) =>
    intake.arrival(workspaceId, id).pipe(
      Effect.flatMap((found) =>
        Option.isSome(found) && found.value.status !== "received" ? Effect.succeed(found.value) : Effect.fail("waiting" as const)
      ),
      Effect.retry(Schedule.spaced("200 millis"))
    ))

// Loopback addresses, each sending fewer than 120 requests a minute unless a test means to pass the limit.
const addressOf = (index: number) => `127.0.0.${10 + (index % 40)}`

const scoped = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.scoped(effect)

describe.skipIf(adminUrl === "")("door scale-out on PostgreSQL (real processes)", () => {
  it.live("SIGKILL mid-load: every 202 has its Arrival after a restart and every one settles", () =>
    scoped(Effect.gen(function*() {
      // A killed worker's Arrivals are taken over when their lease runs out: a short one keeps the test short. The
      // restarted server is rarely up sooner, so the Arrivals the first one held are due when it starts.
      const { env, services } = yield* freshDatabase({ SERVICE_ARRIVAL_LEASE: "5 seconds" })
      const first = yield* startServer("server-1", env)
      const { secret, sourceId, workspaceId } = yield* Effect.provide(newSource, services)

      const accepted = new Map<string, string>() // webhook-id → Arrival
      const unanswered: Array<string> = []
      let killed = false
      let sent = 0
      const sendOne = (port: number, i: number) =>
        Effect.gen(function*() {
          const webhookId = `msg_kill_${i}`
          const request = signed(secret, webhookId, `kill-${i}`)
          const answer = yield* post(port, addressOf(i), `/api/v1/door/${sourceId}`, request.headers, request.body)
          if (Option.isNone(answer)) return unanswered.push(webhookId)
          expect(answer.value.status, answer.value.text).toBeLessThan(500)
          if (answer.value.status === 202) accepted.set(webhookId, Schema.decodeUnknownSync(Accepted)(answer.value.text).arrival)
        })
      // Four senders; the server is killed once 80 requests were accepted, while the senders are still sending.
      const killer = Effect.gen(function*() {
        yield* Effect.sync(() => accepted.size).pipe(Effect.repeat({ until: (n) => n >= 80, schedule: Schedule.spaced("20 millis") }))
        killed = true
        yield* Effect.promise(() => first.server.stop("SIGKILL"))
      })
      const senders = Effect.forEach([0, 1, 2, 3], (lane) =>
        Effect.gen(function*() {
          for (let k = 0; !killed || k === 0; k++) {
            const i = lane + 4 * k
            sent += 1
            yield* sendOne(first.port, i)
          }
        }), { concurrency: "unbounded", discard: true })
      yield* Effect.all([killer, senders], { concurrency: "unbounded", discard: true })
      expect(first.server.child.signalCode).toBe("SIGKILL")

      // Restarted on the same database: the answered Arrivals are all there, and the sender's retries of the
      // unanswered requests are taken (202) or recognised (200), never lost or doubled.
      const second = yield* startServer("server-2", env)
      for (const webhookId of unanswered) {
        const i = Number(webhookId.slice("msg_kill_".length))
        const request = signed(secret, webhookId, `kill-${i}`)
        const answer = yield* post(second.port, addressOf(i), `/api/v1/door/${sourceId}`, request.headers, request.body)
        expect(Option.map(answer, (a) => a.status)).toSatisfy((status: Option.Option<number>) =>
          Option.isSome(status) && (status.value === 202 || status.value === 200)
        )
      }
      const outcomes = yield* Effect.forEach([...accepted.values()], (id) => settled(workspaceId, id), { concurrency: 8 }).pipe(
        Effect.provide(services)
      )
      expect(outcomes.map((arrival) => arrival.status)).toEqual(outcomes.map(() => "accepted"))
      const sql = yield* Effect.provide(SqlClient.SqlClient, services)
      const rows = yield* sql`SELECT webhook_id FROM door.arrivals WHERE source_id = ${sourceId} AND webhook_id IS NOT NULL`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ webhook_id: Schema.String })))),
        Effect.orDie
      )
      // One Arrival per request, whatever its answer was.
      expect(new Set(rows.map((row) => row.webhook_id)).size).toBe(rows.length)
      expect(rows.length).toBeLessThanOrEqual(sent)
      for (const webhookId of accepted.keys()) expect(rows.map((row) => row.webhook_id)).toContain(webhookId)
      yield* Effect.logInfo(
        `kill test: ${sent} requests sent, ${accepted.size} answered 202 before the kill, ${unanswered.length} unanswered, ${rows.length} Arrivals stored`
      )
    })), hangGuard)

  it.live("two API nodes and two worker processes: every Arrival applied exactly once; 120 a minute per address across both nodes", () =>
    scoped(Effect.gen(function*() {
      // No process is killed here: a lease long enough that no claim runs out while it waits its turn in a batch on
      // a busy machine, so every Arrival takes exactly one attempt.
      const { env, services } = yield* freshDatabase({ SERVICE_ARRIVAL_LEASE: "10 seconds" })
      const apiEnv = { ...env, SERVICE_EMBEDDED_WORKER: "false" }
      // The second node after the first, so it finds the demo workspace the first bootstrapped; the workers (which
      // bootstrap nothing) start alongside it.
      const node1 = yield* startServer("api-1", apiEnv)
      const [node2, workers] = yield* Effect.all([
        startServer("api-2", apiEnv),
        Effect.all([startWorker("worker-a", env), startWorker("worker-b", env)], { concurrency: "unbounded" })
      ], { concurrency: "unbounded" })
      const { secret, sourceId, workspaceId } = yield* Effect.provide(newSource, services)

      const count = 200
      const arrivals = yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const request = signed(secret, `msg_two_${i}`, `two-${i}`)
          const port = i % 2 === 0 ? node1.port : node2.port
          const answer = yield* post(port, addressOf(i), `/api/v1/door/${sourceId}`, request.headers, request.body)
          if (Option.isNone(answer)) return yield* Effect.dieMessage(`request ${i} got no answer`)
          expect(answer.value.status, answer.value.text).toBe(202)
          return Schema.decodeUnknownSync(Accepted)(answer.value.text).arrival
        }), { concurrency: 8 })
      const outcomes = yield* Effect.forEach(arrivals, (id) => settled(workspaceId, id), { concurrency: 8 }).pipe(Effect.provide(services))
      expect(outcomes.map((arrival) => arrival.status)).toEqual(outcomes.map(() => "accepted"))

      // Exactly once: one attempt each, one arrival.settled and one contact.created each, and one contact each.
      const sql = yield* Effect.provide(SqlClient.SqlClient, services)
      const Counted = Schema.Array(Schema.Struct({ n: Schema.NumberFromString }))
      const countOf = (query: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
        query.pipe(Effect.flatMap(Schema.decodeUnknown(Counted)), Effect.map((rows) => rows[0]?.n ?? -1), Effect.orDie)
      expect(outcomes.map((arrival) => arrival.attempts)).toEqual(outcomes.map(() => 1))
      expect(yield* countOf(sql`SELECT count(*)::text AS n FROM events.ledger WHERE name = 'arrival.settled' AND subject IN ${sql.in(arrivals.map((id) => `arrival/${id}`))}`)).toBe(count)
      expect(yield* countOf(sql`SELECT count(DISTINCT subject)::text AS n FROM events.ledger WHERE name = 'arrival.settled' AND subject IN ${sql.in(arrivals.map((id) => `arrival/${id}`))}`)).toBe(count)
      expect(yield* countOf(sql`SELECT count(*)::text AS n FROM events.ledger WHERE name = 'contact.created' AND workspace_id = ${workspaceId}`)).toBe(count)
      expect(yield* countOf(sql`SELECT count(*)::text AS n FROM crm.contacts WHERE workspace_id = ${workspaceId}`)).toBe(count)
      const byWorker = yield* sql`SELECT queue_worker AS worker, count(*)::text AS n FROM door.arrivals WHERE source_id = ${sourceId} GROUP BY 1 ORDER BY 1`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ worker: Schema.String, n: Schema.NumberFromString })))),
        Effect.orDie
      )
      expect(byWorker.every((row) => row.worker === "worker-a" || row.worker === "worker-b")).toBe(true)
      yield* Effect.logInfo(`two workers: ${byWorker.map((row) => `${row.worker} ${row.n}`).join(", ")}`)
      // SIGTERM stops a worker cleanly, with its count.
      for (const worker of workers) {
        yield* Effect.promise(() => worker.stop())
        expect(worker.child.exitCode).toBe(0)
        const applied = byWorker.find((row) => row.worker === worker.label)?.n ?? 0
        expect(worker.stdout).toContain(`door.intake ${applied} Arrivals`)
        expect(worker.stdout).toContain(`Worker ${worker.label} stopped after`)
      }

      // The limit across both nodes: one address, alternating nodes. Each node counts in memory and shares its counts
      // every 100 ms (decision 0080): no request of the first 120 is refused, and once both nodes have written their
      // counts each refuses the address. Fixed one-minute windows: a run that crosses a window boundary proves
      // nothing and is repeated from a fresh address.
      let result: { readonly statuses: ReadonlyArray<number>; readonly last: ReadonlyArray<Answer> } | undefined
      for (let attempt = 0; result === undefined && attempt < 5; attempt++) {
        const address = `127.0.1.${1 + attempt}`
        const startWindow = Math.floor(Date.now() / 60_000)
        const statuses: Array<number> = []
        for (let i = 0; i < 120; i++) {
          const answer = yield* post(i % 2 === 0 ? node1.port : node2.port, address, "/api/v1/door/src_doesnotexist000000000000", { "content-type": "application/json" }, "{}")
          if (Option.isNone(answer)) return yield* Effect.dieMessage("no answer")
          statuses.push(answer.value.status)
        }
        // Polled until both nodes refuse: each answer a node admits meanwhile is the overshoot the bound allows.
        const refusedBy = (port: number) =>
          post(port, address, "/api/v1/door/src_doesnotexist000000000000", { "content-type": "application/json" }, "{}").pipe(
            Effect.flatMap((answer) => Option.isSome(answer) && answer.value.status === 429 ? Effect.succeed(answer.value) : Effect.fail("admitted")),
            Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(100)))),
            Effect.orDie
          )
        const last = [yield* refusedBy(node1.port), yield* refusedBy(node2.port)]
        if (Math.floor(Date.now() / 60_000) === startWindow) result = { statuses, last }
      }
      if (result === undefined) return yield* Effect.dieMessage("every run crossed a minute boundary")
      expect(result.statuses.filter((status) => status === 429)).toEqual([])
      for (const last of result.last) {
        expect(String(last.headers["retry-after"])).toMatch(/^\d+$/)
        expect(last.text).toContain("rate_limited")
      }
    })), hangGuard)
})

describe("npm run worker", () => {
  it.live("refuses to start without DATABASE_URL, in one line on stderr", () =>
    scoped(Effect.gen(function*() {
      const worker = yield* spawnChild("worker", "bin/worker.mjs", { SERVICE_DATA_DIR: NodeOs.tmpdir() })
      yield* Effect.promise(() => worker.exited)
      expect(worker.child.exitCode).toBe(1)
      const lines = worker.stderr.split("\n").filter((line) => line.trim().length > 0)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toContain("A separate worker needs DATABASE_URL")
    })), hangGuard)
})
