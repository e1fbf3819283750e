import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as WorkQueue from "@service/core/WorkQueue"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Delivery from "../src/Delivery.js"
import * as Destinations from "../src/Destinations.js"
import * as EventLedger from "../src/EventLedger.js"
import * as RetrySchedule from "../src/RetrySchedule.js"
import * as Hub from "./support/Hub.js"
import * as Receiver from "./support/Receiver.js"
import type { Received } from "./support/Receiver.js"
import * as S from "./support/Subscriptions.js"

const seconds = (millis: number) => String(Math.floor(millis / 1000))

/** Every delivered request carries its event's id as `webhook-id`: one id per event, whatever the retries. */
const webhookIdsByEvent = (requests: ReadonlyArray<Received>) => {
  const ids = new Map<string, Set<string>>()
  for (const request of requests) {
    const body = Hub.json(request)
    const eventId = typeof body === "object" && body !== null && "eventId" in body && typeof body.eventId === "string" ? body.eventId : "?"
    ids.set(eventId, (ids.get(eventId) ?? new Set()).add(Hub.header(request, "webhook-id")))
  }
  return ids
}

/** A reply that answers the first `n` deliveries with `first`, then `rest`. */
const firstThen = (n: number, first: Receiver.Reply, rest: Receiver.Reply): Receiver.Reply => {
  let seen = 0
  return (received, response) => (seen++ < n ? first : rest)(received, response)
}

for (const target of TestDatabase.targets()) {
  layer(S.env(target), { timeout: "120 seconds" })(`Delivery on ${target.name}`, (it) => {
    it.effect("record fans out one delivery per active Destination whose event and subject match, in the entry's transaction", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const ledger = yield* EventLedger.EventLedger
        const destinations = yield* Destinations.Destinations
        const sql = yield* SqlClient.SqlClient
        const url = yield* hub.route("/fan/a", Hub.subscriber(Receiver.answer(204)))
        const urlB = yield* hub.route("/fan/b", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const secret = S.newSecret()
        const contacts = (yield* S.subscribe(principal, url, secret)).id
        const oneOpportunity = (yield* S.subscribe(principal, url, secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o1" } })).id
        const allOpportunities = (yield* S.subscribe(principal, url, secret, { name: "opportunity.moved" })).id
        const stopped = (yield* S.subscribe(principal, urlB, secret)).id
        yield* destinations.unsubscribe(principal, { name: "contact.created", arguments: {}, url: urlB })
        const other = yield* S.subscriber
        const elsewhere = (yield* S.subscribe(other, url, secret)).id

        const targetsOf = (entry: EventLedger.Entry) =>
          Effect.map(S.deliveryRows({ workspace: ws.id }), (rows) =>
            rows.filter((r) => r.ledger_id === entry.id).map((r) => r.destination_id).sort())
        const record = (name: string, subject: string | undefined, payload: unknown) => ledger.record({ workspaceId: ws.id, name, subject, payload })

        assert.deepStrictEqual(yield* targetsOf(yield* S.recordContact(ws, "c1")), [contacts])
        assert.deepStrictEqual(yield* targetsOf(yield* record("opportunity.moved", "opportunity/o1", S.opportunity(ws, "o1"))), [oneOpportunity, allOpportunities].sort())
        assert.deepStrictEqual(yield* targetsOf(yield* record("opportunity.moved", "opportunity/o2", S.opportunity(ws, "o2"))), [allOpportunities])
        assert.deepStrictEqual(yield* targetsOf(yield* record("opportunity.moved", undefined, S.opportunity(ws, "o1"))), [allOpportunities])
        assert.deepStrictEqual(yield* targetsOf(yield* record("opportunity.created", "opportunity/o1", S.opportunity(ws, "o1"))), [])
        assert.deepStrictEqual(yield* targetsOf(yield* record("contact.updated", "contact/c1", S.contact(ws, "c1"))), [])
        // The other workspace's subscription got nothing of this one's, and its own event.
        assert.deepStrictEqual(yield* S.deliveryRows({ destination: stopped }), [])
        assert.deepStrictEqual(yield* S.deliveryRows({ destination: elsewhere }), [])
        yield* S.recordContact(other.workspace, "c1")
        assert.strictEqual((yield* S.deliveryRows({ destination: elsewhere })).length, 1)

        // A test workspace delivers nothing, even to a Destination it has (here written directly: nothing can
        // subscribe there); the same row in the real workspace gets its delivery.
        const sandbox = yield* S.workspace(ws)
        const crypto = yield* Crypto
        const sealed = yield* crypto.seal("events.destination-secret", secret)
        const now = new Date(yield* TestClock.currentTimeMillis).toISOString()
        for (const [id, workspaceId] of [[`dst_sandbox_${sandbox.id}`, sandbox.id], [`dst_real_${ws.id}`, ws.id]] as const) {
          yield* sql`INSERT INTO events.destinations (id, workspace_id, kind, owner_key, url, events, secret, state, state_at, created_at, updated_at)
            VALUES (${id}, ${workspaceId}, 'destination', ${workspaceId}, ${url}, ARRAY['contact.created']::text[], ${sealed}, 'active',
              ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)`.pipe(Effect.orDie)
        }
        yield* ledger.record({ workspaceId: sandbox.id, name: "contact.created", subject: "contact/c1", payload: S.contact(sandbox, "c1") })
        assert.deepStrictEqual(yield* S.deliveryRows({ workspace: sandbox.id }), [])
        assert.deepStrictEqual(yield* targetsOf(yield* S.recordContact(ws, "c2")), [contacts, `dst_real_${ws.id}`].sort())

        // Recorded inside a transaction that fails: neither the entry nor its deliveries exist.
        const before = (yield* S.deliveryRows({ workspace: ws.id })).length
        const rolledBack = yield* Effect.exit(sql.withTransaction(Effect.zipRight(S.recordContact(ws, "c-rollback"), Effect.fail("the caller failed"))))
        assert.isTrue(Exit.isFailure(rolledBack))
        assert.deepStrictEqual(yield* ledger.read({ workspaceId: ws.id, subject: "contact/c-rollback", limit: 10 }), [])
        assert.strictEqual((yield* S.deliveryRows({ workspace: ws.id })).length, before)
        // And in one that commits, both are there.
        const committed = yield* sql.withTransaction(S.recordContact(ws, "c-commit"))
        assert.deepStrictEqual(yield* targetsOf(committed), [contacts, `dst_real_${ws.id}`].sort())
      }))

    it.effect("a delivery: the body, the Standard Webhooks headers and x-mcp-subscription-id; 2xx is delivered with its attempt", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/ok", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const secret = S.newSecret()
        const { id } = yield* S.subscribe(principal, url, secret)
        const now = yield* TestClock.currentTimeMillis
        const entry = yield* S.recordContact(ws, "c1")

        assert.strictEqual(yield* S.drain(), 1)
        const [request, ...more] = Hub.deliveries(yield* hub.requests("/dlv/ok"))
        assert.deepStrictEqual(more, [])
        if (request === undefined) return assert.fail("nothing delivered")
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(Hub.header(request, "content-type"), "application/json")
        assert.strictEqual(Hub.header(request, "webhook-id"), `evt_${entry.id}`)
        assert.strictEqual(Hub.header(request, "webhook-timestamp"), seconds(now))
        assert.match(Hub.header(request, "webhook-signature"), /^v1,[A-Za-z0-9+/]+=*$/)
        assert.strictEqual(Hub.header(request, "x-mcp-subscription-id"), id)
        assert.isTrue(Receiver.verifies(secret, request))
        assert.isFalse(Receiver.verifies(S.newSecret(), request))
        assert.deepStrictEqual(Hub.json(request), {
          eventId: `evt_${entry.id}`,
          name: "contact.created",
          timestamp: new Date(now).toISOString(),
          data: S.contact(ws, "c1"),
          cursor: null
        })
        assert.strictEqual(entry.occurred_at, new Date(now).toISOString())

        const [row] = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual([row?.outcome, row?.settled, row?.queue_state, row?.queue_attempts], ["delivered", true, "done", 1])
        const attempts = yield* S.attemptRows(row?.id ?? "")
        assert.deepStrictEqual(
          attempts.map((a) => [a.attempt, a.status, a.result, a.error, a.next_ms]),
          [[1, 204, "delivered", null, null]]
        )
        assert.isAtLeast(attempts[0]?.latency_ms ?? -1, 0)
        assert.strictEqual((yield* S.destinationRow(id)).consecutive_failures, 0)
        // Delivered is done: nothing more is sent.
        yield* TestClock.adjust("1 day")
        assert.strictEqual(yield* S.drain(), 0)
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/ok")).length, 1)
      }))

    it.effect("410 disables the subscription: its pending deliveries settle disabled unsent, later events get none", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/gone", Hub.subscriber(Receiver.answer(410)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        for (const c of ["c1", "c2", "c3"]) yield* S.recordContact(ws, c)
        // One delivery at a time, so the 410 is in before the next one comes up.
        const oneByOne = yield* Delivery.make({ concurrency: 1 })
        assert.strictEqual(yield* oneByOne.drain("w"), 3)
        const rows = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(rows.map((r) => r.outcome).sort(), ["disabled", "disabled", "gone"])
        assert.isTrue(rows.every((r) => r.settled && r.queue_state === "done"))
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/gone")).length, 1)
        const gone = rows.find((r) => r.outcome === "gone")
        assert.deepStrictEqual((yield* S.attemptRows(gone?.id ?? "")).map((a) => [a.status, a.result]), [[410, "gone"]])
        for (const r of rows.filter((r) => r.outcome === "disabled")) assert.deepStrictEqual(yield* S.attemptRows(r.id), [])
        const row = yield* S.destinationRow(id)
        assert.strictEqual(row.state, "disabled")
        assert.include(row.state_reason ?? "", "410")

        yield* S.recordContact(ws, "c4")
        assert.strictEqual((yield* S.deliveryRows({ destination: id })).length, 3)
        yield* TestClock.adjust("1 day")
        assert.strictEqual(yield* S.drain(), 0)
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/gone")).length, 1)
      }))

    it.effect("413 drops that event (too_large) and the next ones are still delivered", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route(
          "/dlv/large",
          Hub.subscriber(Hub.byData((data) => data.contact_id === "big" ? Receiver.answer(413) : Receiver.answer(200)))
        )
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        yield* S.recordContact(ws, "big")
        yield* S.recordContact(ws, "small")
        assert.strictEqual(yield* S.drain(), 2)
        const rows = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(rows.map((r) => [r.outcome, r.queue_state]), [["too_large", "done"], ["delivered", "done"]])
        assert.deepStrictEqual((yield* S.attemptRows(rows[0]?.id ?? "")).map((a) => [a.status, a.result, a.next_ms]), [[413, "too_large", null]])
        assert.strictEqual((yield* S.destinationRow(id)).state, "active")
        // Not retried.
        yield* TestClock.adjust("1 day")
        yield* S.recordContact(ws, "after")
        assert.strictEqual(yield* S.drain(), 1)
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((r) => r.outcome), ["too_large", "delivered", "delivered"])
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/large")).length, 3)
      }))

    it.effect("500 is retried on the schedule with the same webhook-id and a new timestamp; after the 10th attempt the delivery failed", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/500", Hub.subscriber(Receiver.answer(500)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const { id } = yield* S.subscribe(principal, url, secret)
        const entry = yield* S.recordContact(principal.workspace, "c1")
        const start = yield* TestClock.currentTimeMillis

        assert.strictEqual(yield* S.drain(), 1)
        const [first] = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual([first?.outcome, first?.queue_state, first?.queue_attempts, first?.next_ms], ["pending", "pending", 1, start + 5_000])
        // Each later attempt: not due a millisecond before its wait, due at it.
        const sentAt = [start]
        for (const delay of RetrySchedule.DELAYS_SECONDS.slice(1)) {
          yield* TestClock.adjust(delay * 1000 - 1)
          assert.strictEqual(yield* S.drain(), 0, `not due before ${delay} s`)
          yield* TestClock.adjust(1)
          assert.strictEqual(yield* S.drain(), 1, `due at ${delay} s`)
          sentAt.push(yield* TestClock.currentTimeMillis)
        }
        assert.strictEqual(sentAt.length, RetrySchedule.ATTEMPTS)

        const [row] = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual([row?.outcome, row?.settled, row?.queue_state, row?.queue_attempts], ["failed", true, "dead", 10])
        const attempts = yield* S.attemptRows(row?.id ?? "")
        assert.deepStrictEqual(attempts.map((a) => a.attempt), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        assert.isTrue(attempts.every((a) => a.status === 500 && a.result === "status" && a.error === "the receiver answered 500"))
        assert.deepStrictEqual(attempts.map((a) => a.next_ms), [...sentAt.slice(1), null])

        const sent = Hub.deliveries(yield* hub.requests("/dlv/500"))
        assert.strictEqual(sent.length, 10)
        assert.deepStrictEqual([...new Set(sent.map((r) => Hub.header(r, "webhook-id")))], [`evt_${entry.id}`])
        assert.deepStrictEqual(sent.map((r) => Hub.header(r, "webhook-timestamp")), sentAt.map(seconds))
        assert.strictEqual(new Set(sent.map((r) => r.body.toString("utf8"))).size, 1)
        assert.isTrue(sent.every((r) => Hub.signedWith(secret, r)))

        // Five failures in a row over an hour (the fifth at 2.6 hours) opened the circuit; every later attempt of the
        // schedule came when the hourly probe was due, so the schedule above held.
        const destination = yield* S.destinationRow(id)
        assert.deepStrictEqual([destination.state, destination.consecutive_failures], ["paused", 10])
        yield* TestClock.adjust("7 days")
        assert.strictEqual(yield* S.drain(), 0)
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/500")).length, 10)
      }))

    it.effect("429 with Retry-After: 600 is not retried before 600 seconds", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route(
          "/dlv/429",
          Hub.subscriber(firstThen(1, Receiver.answer(429, { "retry-after": "600" }), Receiver.answer(202)))
        )
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        yield* S.recordContact(principal.workspace, "c1")
        const start = yield* TestClock.currentTimeMillis
        assert.strictEqual(yield* S.drain(), 1)
        const [row] = yield* S.deliveryRows({ destination: id })
        assert.strictEqual(row?.next_ms, start + 600_000)
        assert.deepStrictEqual((yield* S.attemptRows(row?.id ?? "")).map((a) => [a.status, a.next_ms]), [[429, start + 600_000]])
        yield* TestClock.adjust(600_000 - 1)
        assert.strictEqual(yield* S.drain(), 0)
        yield* TestClock.adjust(1)
        assert.strictEqual(yield* S.drain(), 1)
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((r) => r.outcome), ["delivered"])
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/429")).length, 2)
      }))

    it.effect("no answer within 10 seconds is retried on the schedule", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/slow", Hub.subscriber(Receiver.silent))
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        assert.isTrue(Hub.isChallenge(yield* hub.next("/dlv/slow")))
        const entry = yield* S.recordContact(principal.workspace, "c1")
        const start = yield* TestClock.currentTimeMillis
        const draining = yield* Effect.fork(S.drain())
        yield* hub.next("/dlv/slow")
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(yield* Fiber.join(draining), 1)
        const [row] = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual([row?.outcome, row?.queue_state, row?.next_ms], ["pending", "pending", start + 15_000])
        assert.deepStrictEqual((yield* S.attemptRows(row?.id ?? "")).map((a) => [a.status, a.result]), [[null, "timeout"]])

        yield* hub.route("/dlv/slow", Hub.subscriber(Receiver.answer(200)))
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(yield* S.drain(), 1)
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((r) => r.outcome), ["delivered"])
        const sent = Hub.deliveries(yield* hub.requests("/dlv/slow"))
        assert.deepStrictEqual(sent.map((r) => Hub.header(r, "webhook-id")), [`evt_${entry.id}`, `evt_${entry.id}`])
      }))

    it.effect("an event too large to send (over 256 KiB) is too_large without a POST; the next one is delivered", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const ledger = yield* EventLedger.EventLedger
        const url = yield* hub.route("/dlv/huge", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        yield* ledger.record({ workspaceId: ws.id, name: "contact.created", payload: { ...S.contact(ws, "huge"), name: "x".repeat(300 * 1024) } })
        yield* S.recordContact(ws, "small")
        assert.strictEqual(yield* S.drain(), 2)
        const rows = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(rows.map((r) => [r.outcome, r.queue_state]), [["too_large", "done"], ["delivered", "done"]])
        // No receiver answered: the attempt has no status, and its error says why nothing was sent.
        assert.deepStrictEqual((yield* S.attemptRows(rows[0]?.id ?? "")).map((a) => [a.status, a.result]), [[null, "too_large"]])
        const sent = Hub.deliveries(yield* hub.requests("/dlv/huge"))
        assert.strictEqual(sent.length, 1)
        assert.deepStrictEqual(sent.map((r) => Hub.data(r).contact_id), ["small"])
      }))

    it.effect("an address that now resolves to a refused range is not sent to: the delivery fails at once; a host that does not resolve is retried", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        let resolvesTo: ReadonlyArray<string> = ["127.0.0.1"]
        const guard = AddressGuard.layerAllowingLoopbackForTests({ resolve: (host) => Effect.sync(() => host === "moving.test" ? resolvesTo : []) })
        const destinations = yield* Destinations.make.pipe(Effect.provide(guard))
        const delivery = yield* Delivery.make().pipe(Effect.provide(guard))
        yield* hub.route("/dlv/moving", Hub.subscriber(Receiver.answer(204)))
        const url = hub.url("/dlv/moving").replace("127.0.0.1", "moving.test")
        const principal = yield* S.subscriber
        const { id } = yield* destinations.subscribe(principal, S.request(url, S.newSecret()))
        yield* S.recordContact(principal.workspace, "c1")
        resolvesTo = ["10.0.0.7"]
        assert.strictEqual(yield* delivery.drain("w"), 1)
        const [refused] = yield* S.deliveryRows({ destination: id })
        // Waiting does not fix a private address: failed now, not after 75 hours of retries.
        assert.deepStrictEqual([refused?.outcome, refused?.queue_state], ["failed", "done"])
        const [attempt] = yield* S.attemptRows(refused?.id ?? "")
        assert.deepStrictEqual([attempt?.status, attempt?.result], [null, "url_rejected"])
        assert.include(attempt?.error ?? "", "10.0.0.7")
        assert.deepStrictEqual(Hub.deliveries(yield* hub.requests("/dlv/moving")), [])

        // A host that does not resolve may resolve again: retried on the schedule, then sent.
        resolvesTo = []
        const entry = yield* S.recordContact(principal.workspace, "c2")
        const start = yield* TestClock.currentTimeMillis
        assert.strictEqual(yield* delivery.drain("w"), 1)
        const pending = (yield* S.deliveryRows({ destination: id })).find((row) => row.outcome === "pending")
        assert.deepStrictEqual([pending?.queue_state, pending?.next_ms], ["pending", start + 5_000])
        resolvesTo = ["127.0.0.1"]
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(yield* delivery.drain("w"), 1)
        const sent = Hub.deliveries(yield* hub.requests("/dlv/moving"))
        assert.deepStrictEqual(sent.map((r) => [Hub.header(r, "webhook-id"), Hub.header(r, "host")]), [[`evt_${entry.id}`, new URL(url).host]])
      }))

    it.effect("two workers draining at once send each delivery once", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/workers", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        const entries: Array<EventLedger.Entry> = []
        for (let n = 0; n < 12; n++) entries.push(yield* S.recordContact(principal.workspace, `c${n}`))
        const [a, b] = yield* Effect.all([S.drain("a"), S.drain("b")], { concurrency: 2 })
        assert.strictEqual(a + b, 12)
        assert.isTrue((yield* S.deliveryRows({ destination: id })).every((r) => r.outcome === "delivered" && r.queue_attempts === 1))
        const sent = Hub.deliveries(yield* hub.requests("/dlv/workers"))
        assert.deepStrictEqual(sent.map((r) => Hub.header(r, "webhook-id")).sort(), entries.map((e) => `evt_${e.id}`).sort())
      }))

    it.effect("when the ttl elapses, pending deliveries settle expired without a POST and new events are not scheduled", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/ttl", Hub.subscriber(Receiver.answer(500)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const secret = S.newSecret()
        const { id } = yield* S.subscribe(principal, url, secret, { ttlMs: 1 })
        yield* S.recordContact(ws, "retrying")
        assert.strictEqual(yield* S.drain(), 1)
        yield* TestClock.adjust("30 minutes")
        yield* S.recordContact(ws, "waiting")
        yield* hub.route("/dlv/ttl", Hub.subscriber(Receiver.answer(200)))
        yield* TestClock.adjust("30 minutes")
        // Both come up (one due for its retry, one never tried) after the subscription's hour.
        assert.strictEqual(yield* S.drain(), 2)
        const rows = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(rows.map((r) => [r.outcome, r.settled, r.queue_state]), [["expired", true, "done"], ["expired", true, "done"]])
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/ttl")).length, 1)
        assert.strictEqual((yield* S.attemptRows(rows[0]?.id ?? "")).length, 1)
        assert.deepStrictEqual(yield* S.attemptRows(rows[1]?.id ?? ""), [])
        yield* S.recordContact(ws, "late")
        assert.strictEqual((yield* S.deliveryRows({ destination: id })).length, 2)
        assert.strictEqual(yield* S.drain(), 0)
        // Subscribing again with the same values makes it live again (the address is challenged: a day passed).
        yield* TestClock.adjust("1 day")
        const renewed = yield* S.subscribe(principal, url, secret, { ttlMs: 1 })
        assert.strictEqual(renewed.id, id)
        yield* S.recordContact(ws, "renewed")
        assert.strictEqual(yield* S.drain(), 1)
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((r) => r.outcome), ["expired", "expired", "delivered"])
        assert.strictEqual(Hub.challenges(yield* hub.requests("/dlv/ttl")).length, 2)
      }))

    it.effect("a worker that dies holding a delivery loses nothing: after the 60 s lease another sends it, under the same webhook-id", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/dead", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        const entries: Array<EventLedger.Entry> = []
        for (const c of ["c1", "c2", "c3"]) entries.push(yield* S.recordContact(principal.workspace, c))
        // A worker claims one delivery through the queue and dies: its claim is committed, nothing else happens.
        const queue = yield* WorkQueue.make(Delivery.queueSpec)
        const [held, ...others] = yield* queue.claim("doomed", 1)
        assert.deepStrictEqual(others, [])
        if (held === undefined) return assert.fail("nothing claimed")
        assert.strictEqual(yield* S.drain("survivor"), 2)
        yield* TestClock.adjust("59 seconds")
        assert.strictEqual(yield* S.drain("survivor"), 0)
        yield* TestClock.adjust("2 seconds")
        assert.strictEqual(yield* S.drain("survivor"), 1)

        const rows = yield* S.deliveryRows({ destination: id })
        assert.isTrue(rows.every((r) => r.outcome === "delivered"))
        const taken = rows.find((r) => r.id === held.id)
        assert.strictEqual(taken?.queue_attempts, 2)
        assert.deepStrictEqual((yield* S.attemptRows(held.id)).map((a) => [a.attempt, a.result]), [[2, "delivered"]])
        // The receiver saw every event once, each under its own event id.
        const sent = Hub.deliveries(yield* hub.requests("/dlv/dead"))
        assert.strictEqual(sent.length, 3)
        const ids = webhookIdsByEvent(sent)
        assert.deepStrictEqual([...ids.keys()].sort(), entries.map((e) => `evt_${e.id}`).sort())
        for (const [eventId, webhookIds] of ids) assert.deepStrictEqual([...webhookIds], [eventId])
        // The dead worker, back, can no longer settle it.
        assert.isTrue(Either.isLeft(yield* Effect.either(queue.complete(held))))
      }))

    it.effect("a worker interrupted mid-POST gives the delivery back; the next sends it again under the same webhook-id", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/interrupted", Hub.subscriber(firstThen(1, Receiver.silent, Receiver.answer(204))))
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        assert.isTrue(Hub.isChallenge(yield* hub.next("/dlv/interrupted")))
        const entries = [yield* S.recordContact(principal.workspace, "c1"), yield* S.recordContact(principal.workspace, "c2")]
        const worker = yield* Effect.fork(S.drain("stopping"))
        // Both POSTs are out; one of them hangs.
        yield* hub.next("/dlv/interrupted")
        yield* hub.next("/dlv/interrupted")
        yield* Fiber.interrupt(worker)
        // Whatever was not settled is due again at once (the interrupted attempt is not counted), without
        // waiting for a lease.
        assert.isAtLeast(yield* S.drain("next"), 1)
        const rows = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(rows.map((r) => r.outcome), ["delivered", "delivered"])
        const sent = Hub.deliveries(yield* hub.requests("/dlv/interrupted"))
        assert.isAtLeast(sent.length, 3)
        const ids = webhookIdsByEvent(sent)
        assert.deepStrictEqual([...ids.keys()].sort(), entries.map((e) => `evt_${e.id}`).sort())
        for (const [eventId, webhookIds] of ids) assert.deepStrictEqual([...webhookIds], [eventId])
      }))

    it.effect("the circuit breaker: sustained failure pauses (destination.paused), deliveries wait uncounted, an hourly probe, success resumes", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const ledger = yield* EventLedger.EventLedger
        let healthy = false
        const url = yield* hub.route("/dlv/breaker", Hub.subscriber((received, response) => Receiver.answer(healthy ? 204 : 500)(received, response)))
        const watched = yield* hub.route("/dlv/breaker-watch", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const ws = principal.workspace
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        // The owner hears of the circuit through the same catalog.
        yield* S.subscribe(principal, watched, S.newSecret(), { name: "destination.paused" })
        yield* S.subscribe(principal, watched, S.newSecret(), { name: "destination.resumed" })
        // Three failures over 30 minutes open it; one delivery at a time keeps the probe deterministic.
        const delivery = yield* Delivery.make({ concurrency: 1, breaker: { failures: 3, after: "30 minutes", probeEvery: "1 hour" } })
        const drain = delivery.drain("breaker")
        const start = yield* TestClock.currentTimeMillis
        const posts = Effect.map(hub.requests("/dlv/breaker"), (all) => Hub.deliveries(all).length)
        const watchedNames = Effect.map(hub.requests("/dlv/breaker-watch"), (all) => Hub.deliveries(all).map((r) => Hub.json(r)))

        yield* S.recordContact(ws, "c1")
        // Attempts at 0, 5 s and 305 s: three failures, but within minutes: no outage yet.
        assert.strictEqual(yield* drain, 1)
        for (const delay of [5, 300]) {
          yield* TestClock.adjust(`${delay} seconds`)
          assert.strictEqual(yield* drain, 1)
        }
        assert.deepStrictEqual([(yield* S.destinationRow(id)).state, (yield* S.destinationRow(id)).consecutive_failures], ["active", 3])
        // The fourth, 30 minutes later, fails over 30 minutes after the first: paused, and the ledger says so.
        yield* TestClock.adjust("1800 seconds")
        const pausedAt = yield* TestClock.currentTimeMillis
        assert.strictEqual(yield* drain, 2, "the failed attempt, then the destination.paused delivery to the owner")
        const paused = yield* S.destinationRow(id)
        assert.strictEqual(paused.state, "paused")
        assert.include(paused.state_reason ?? "", "4 failed attempts in a row")
        const [entry] = yield* ledger.read({ workspaceId: ws.id, names: ["destination.paused"], limit: 10 })
        assert.strictEqual(entry?.subject, `destination/${id}`)
        assert.deepStrictEqual(entry?.payload, {
          workspace_id: ws.id,
          occurred_at: new Date(pausedAt).toISOString(),
          destination_id: id,
          kind: "subscription",
          origin: new URL(url).origin,
          consecutive_failures: 4,
          failing_since: new Date(start).toISOString(),
          last_error: "the receiver answered 500",
          probe_at: new Date(pausedAt + 3_600_000).toISOString()
        })
        assert.deepStrictEqual((yield* watchedNames).map((body) => typeof body === "object" && body !== null && "name" in body ? body.name : "?"), ["destination.paused"])
        assert.strictEqual(yield* posts, 4)
        // Renewing proves no delivery gets through: it stays paused.
        yield* S.subscribe(principal, url, S.newSecret())
        assert.deepStrictEqual([(yield* S.destinationRow(id)).state, (yield* S.destinationRow(id)).consecutive_failures], ["paused", 4])

        // While paused, a new event's delivery waits for the probe: not sent, its attempt not counted.
        yield* S.recordContact(ws, "c2")
        assert.strictEqual(yield* drain, 1)
        const c2 = (yield* S.deliveryRows({ destination: id }))[1]
        assert.deepStrictEqual([c2?.outcome, c2?.queue_state, c2?.queue_attempts, c2?.next_ms], ["pending", "pending", 0, pausedAt + 3_600_000])
        assert.strictEqual(yield* posts, 4)
        assert.strictEqual(yield* drain, 0)

        // At the probe time one delivery is tried; it fails, the destination stays paused, the next probe is an hour on.
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(yield* drain, 1)
        assert.strictEqual(yield* posts, 5)
        assert.deepStrictEqual([(yield* S.destinationRow(id)).state, (yield* S.destinationRow(id)).consecutive_failures], ["paused", 5])
        // c2 failed its probe: its retry 5 s later finds no probe due and waits again, uncounted.
        yield* TestClock.adjust("5 seconds")
        assert.strictEqual(yield* drain, 1)
        assert.strictEqual(yield* posts, 5)

        // The receiver is back: the next probe succeeds, the circuit closes, and everything waiting goes out at once.
        healthy = true
        yield* TestClock.adjust("3595 seconds")
        assert.isAtLeast(yield* drain, 3)
        const resumed = yield* S.destinationRow(id)
        assert.deepStrictEqual([resumed.state, resumed.consecutive_failures, resumed.state_reason], ["active", 0, null])
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((r) => r.outcome), ["delivered", "delivered"])
        assert.strictEqual(yield* posts, 7)
        const [back] = yield* ledger.read({ workspaceId: ws.id, names: ["destination.resumed"], limit: 10 })
        const circuit = Schema.decodeUnknownSync(Schema.Struct({
          consecutive_failures: Schema.Number,
          failing_since: Schema.NullOr(Schema.String),
          probe_at: Schema.NullOr(Schema.String)
        }))(back?.payload)
        // What the run of failures was, as it ended.
        assert.deepStrictEqual(
          [circuit.consecutive_failures, circuit.failing_since, circuit.probe_at],
          [5, new Date(start).toISOString(), null]
        )
        assert.deepStrictEqual(
          (yield* watchedNames).map((body) => typeof body === "object" && body !== null && "name" in body ? body.name : "?"),
          ["destination.paused", "destination.resumed"]
        )
        // The receiver answered: nothing further is due.
        yield* TestClock.adjust("1 day")
        assert.strictEqual(yield* drain, 0)
      }))

    it.effect("a delivery still waiting on a paused destination when its event is older than the retry window has failed, unsent", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/dlv/breaker-window", Hub.subscriber(Receiver.answer(503)))
        const principal = yield* S.subscriber
        const { id } = yield* S.subscribe(principal, url, S.newSecret())
        const delivery = yield* Delivery.make({ concurrency: 1, breaker: { failures: 1, after: "0 seconds", probeEvery: "100 hours" } })
        yield* S.recordContact(principal.workspace, "first")
        assert.strictEqual(yield* delivery.drain("w"), 1)
        assert.strictEqual((yield* S.destinationRow(id)).state, "paused")
        yield* S.recordContact(principal.workspace, "waiting")
        assert.strictEqual(yield* delivery.drain("w"), 1)
        // Past the window (about 75 hours) and before the next probe: the waiting delivery has failed without a POST.
        yield* TestClock.adjust(Duration.sum(RetrySchedule.window, "1 minute"))
        assert.isAtLeast(yield* delivery.drain("w"), 1)
        const waiting = (yield* S.deliveryRows({ destination: id }))[1]
        assert.deepStrictEqual([waiting?.outcome, waiting?.queue_state], ["failed", "done"])
        assert.deepStrictEqual(
          (yield* S.attemptRows(waiting?.id ?? "")).map((a) => [a.status, a.result]),
          [[null, "paused"]]
        )
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/dlv/breaker-window")).length, 1)
      }))
  })
}
