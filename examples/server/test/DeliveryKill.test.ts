// Outgoing deliveries from real worker processes on one PostgreSQL (skipped without DATABASE_URL): a worker killed
// with SIGKILL while its POSTs are in flight loses no event. After another worker starts, every event is delivered,
// and an event sent twice (once to the dead worker's hanging connection, once again) carries the same webhook-id
// both times, so a receiver that deduplicates on it sees each event once.
//
// The workers run `Worker.programWith` through `support/delivery-worker.ts`, which admits the test's loopback
// receiver in code. The test records the events in-process with the same layers and keys on the same database.
// Every wait is on a line a process prints, on the receiver, or on a polled condition; timeouts are hang guards.
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import { Principal } from "@service/core/Principal"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Destinations from "@service/events/Destinations"
import * as EventLedger from "@service/events/EventLedger"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { Webhook } from "standardwebhooks"
import { adminUrl, freshDatabase, hangGuard, startWorker } from "./support/Processes.js"

const EVENTS = 24
const WORKER_ENTRY = "test/support/delivery-worker.ts"

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly answered: boolean
}

/**
 * A receiver on loopback. While `holding`, a delivery gets no answer (its connection stays open until the sender
 * dies); afterwards every delivery is answered 204 at once.
 */
const receiver = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly received: Array<Received>; release: () => void; readonly close: () => void }>((resume) => {
    const received: Array<Received> = []
    let holding = true
    const held: Array<() => void> = []
    const server = createServer((request, response) => {
      const parts: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => parts.push(chunk))
      request.on("end", () => {
        const body = Buffer.concat(parts).toString("utf8")
        if (holding) {
          received.push({ headers: request.headers, body, answered: false })
          held.push(() => response.destroy())
          return
        }
        received.push({ headers: request.headers, body, answered: true })
        response.writeHead(204).end()
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(Effect.succeed({
        url: `http://127.0.0.1:${port}/hooks/deliveries`,
        received,
        release: () => {
          holding = false
        },
        close: () => {
          for (const drop of held.splice(0)) drop()
          server.close()
        }
      }))
    })
  }),
  (hook) => Effect.sync(() => hook.close())
)

const Body = Schema.parseJson(Schema.Struct({ eventId: Schema.String, name: Schema.String }))

const headersOf = (received: Received): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(received.headers)) if (typeof value === "string") out[name] = value
  return out
}

const Outcomes = Schema.Array(Schema.Struct({ outcome: Schema.String, n: Schema.Number }))

/** The deliveries' outcomes, counted. */
const outcomes = (destinationId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT outcome, count(*)::int AS n FROM events.deliveries WHERE destination_id = ${destinationId} GROUP BY outcome ORDER BY outcome`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Outcomes)),
      Effect.map((rows) => Object.fromEntries(rows.map((row) => [row.outcome, row.n]))),
      Effect.orDie
    ))

/** Polls until `received` holds at least `n` requests. */
const waitForReceived = (received: ReadonlyArray<Received>, n: number) =>
  Effect.suspend(() => (received.length >= n ? Effect.void : Effect.fail("waiting" as const))).pipe(
    Effect.retry(Schedule.spaced("100 millis"))
  )

describe.skipIf(adminUrl === "")("event delivery from worker processes on PostgreSQL", () => {
  it.live("SIGKILL with POSTs in flight: after a restart every event is delivered, each under one webhook-id", () =>
    Effect.scoped(Effect.gen(function*() {
      // A killed worker's deliveries are taken over when their lease runs out: a short one keeps the test short.
      const { env, services } = yield* freshDatabase(
        { SERVICE_DELIVERY_LEASE: "5 seconds", SERVICE_WORKER_IDLE: "200 millis" },
        { addressGuard: AddressGuard.layerAllowingLoopbackForTests() }
      )
      const hook = yield* receiver

      // An owner's Destination for contact.created, and the events, recorded by the test on the shared database.
      const { destination, secret, entries } = yield* Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("kill-deliveries"), name: "kill deliveries" })
        const person = yield* accounts.createPerson({ displayName: "Ana Ruiz" })
        yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "owner" })
        const owner = new Principal({
          workspace,
          person: Option.some(person),
          role: "owner",
          scopes: [],
          credential: { id: CredentialId.make("cred_kill_deliveries"), kind: "api_key" }
        })
        const created = yield* (yield* Destinations.Destinations).create(owner, { url: hook.url, events: ["contact.created"] })
        const ledger = yield* EventLedger.EventLedger
        const recorded = yield* Effect.forEach(Array.from({ length: EVENTS }, (_, i) => `contact_${i}`), (contactId) =>
          ledger.record({
            workspaceId: workspace.id,
            name: "contact.created",
            subject: `contact/${contactId}`,
            payload: {
              workspace_id: workspace.id,
              occurred_at: new Date().toISOString(),
              contact_id: contactId,
              name: "Ana Ruiz",
              company_id: null,
              arrival_id: null,
              changed_fields: ["name"]
            }
          }))
        return { destination: created.id, secret: Redacted.value(created.secret), entries: recorded }
      }).pipe(Effect.provide(services), Effect.orDie)

      // The first worker takes a batch and sends eight at once; none is answered. It dies with them in flight.
      const first = yield* startWorker("delivery-worker-1", env, WORKER_ENTRY)
      yield* waitForReceived(hook.received, 8)
      yield* Effect.promise(() => first.stop("SIGKILL"))
      const inFlight = hook.received.length
      assert.deepStrictEqual(yield* Effect.provide(outcomes(destination), services), { pending: EVENTS })

      // The receiver is back; a second worker starts, takes over the dead one's deliveries after their lease and
      // sends the rest.
      hook.release()
      const second = yield* startWorker("delivery-worker-2", env, WORKER_ENTRY)
      yield* Effect.provide(outcomes(destination), services).pipe(
        Effect.flatMap((counted) => (counted["delivered"] === EVENTS ? Effect.void : Effect.fail("waiting" as const))),
        Effect.retry(Schedule.spaced("200 millis"))
      )
      yield* Effect.promise(() => second.stop())

      // Every event arrived answered, each under the webhook-id of its ledger entry, signed with the secret.
      const expected = entries.map((entry) => `evt_${entry.id}`).sort()
      const answered = hook.received.filter((r) => r.answered)
      const idsByEvent = new Map<string, Set<string>>()
      for (const received of hook.received) {
        const body = Schema.decodeUnknownSync(Body)(received.body)
        new Webhook(secret).verify(received.body, headersOf(received))
        idsByEvent.set(body.eventId, (idsByEvent.get(body.eventId) ?? new Set()).add(String(received.headers["webhook-id"])))
      }
      assert.deepStrictEqual([...idsByEvent.keys()].sort(), expected)
      for (const [eventId, ids] of idsByEvent) assert.deepStrictEqual([...ids], [eventId])
      assert.deepStrictEqual([...new Set(answered.map((r) => Schema.decodeUnknownSync(Body)(r.body).eventId))].sort(), expected)
      // The ones in flight at the kill were sent again (at least once), and nothing else twice.
      assert.isAtLeast(inFlight, 8)
      assert.strictEqual(answered.length, EVENTS)
    })), hangGuard)
})
