import { generateWebhookSecret } from "@service/core/Crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as DoorMigrations from "../src/DoorMigrations.js"
import * as Intake from "../src/Intake.js"
import * as Sources from "../src/Sources.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"

const migrations = [CoreMigrations.migrations, CrmMigrations.migrations, EventsMigrations.migrations, DoorMigrations.migrations]

// The test clock starts at the epoch; requests are signed at the clock's current second.
const START = 1_764_000_000
const encoder = new TextEncoder()

const workspace = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`door-${Math.random().toString(36).slice(2, 10)}`)
  return (yield* accounts.createWorkspace({ slug, name: slug })).id
}).pipe(Effect.orDie)

let sequence = 0
const event = (type: string, data: unknown, id = `evt-${++sequence}`) =>
  JSON.stringify({ specversion: "1.0", id, source: "https://forms.example.com/lead", type, data })

const signed = (secret: string, body: string, options: { readonly id?: string; readonly at?: number } = {}) =>
  Effect.gen(function*() {
    const now = Math.floor((yield* TestClock.currentTimeMillis) / 1000)
    const id = options.id ?? `msg_${++sequence}`
    const timestamp = options.at ?? now
    const bytes = encoder.encode(body)
    return {
      headers: {
        "content-type": "application/cloudevents+json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": StandardWebhooks.sign({ secret, id, timestamp, body: bytes })
      },
      body: bytes
    }
  })

const accepted = (receipt: Intake.Receipt): string => {
  if (receipt._tag !== "Accepted") throw new Error(`expected Accepted, got ${receipt._tag}`)
  return receipt.arrivalId
}

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Intake.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer, EventLedger.layer)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`the door's intake on ${target.name}`, (it) => {
    const setup = Effect.gen(function*() {
      yield* TestClock.setTime(START * 1000)
      const ws = yield* workspace
      const { secret, source } = yield* (yield* Sources.Sources).create(ws, { name: "Web form" })
      return { ws, source, secret: Redacted.value(secret), intake: yield* Intake.Intake }
    })

    it.effect("a signed contact.created is stored, acknowledged, applied to the CRM and recorded without email or phone", () =>
      Effect.gen(function*() {
        const { ws, source, secret, intake } = yield* setup
        const request = yield* signed(secret, event("contact.created", { name: "Ana Ruiz", email: "ana@acme.mx", phone: "+52 55 1234 5678" }))
        const arrivalId = accepted(yield* intake.receive(source.id, request))
        assert.strictEqual(Option.getOrThrow(yield* intake.arrival(ws, arrivalId)).status, "received")
        assert.strictEqual(yield* intake.drain("test"), 1)
        const arrival = Option.getOrThrow(yield* intake.arrival(ws, arrivalId))
        assert.strictEqual(arrival.status, "accepted")
        const contact = Option.getOrThrow(yield* (yield* Crm.Crm).getContact(ws, arrival.contact_id ?? ""))
        assert.deepStrictEqual([contact.name, contact.email], ["Ana Ruiz", "ana@acme.mx"])
        const entries = yield* (yield* EventLedger.EventLedger).read({ workspaceId: ws, limit: 20 })
        assert.deepStrictEqual(entries.map((e) => e.name), ["arrival.received", "company.created", "contact.created", "arrival.settled"])
        const ledgerText = JSON.stringify(entries)
        assert.notInclude(ledgerText, "ana@acme.mx")
        assert.notInclude(ledgerText, "12345678")
      }))

    it.effect("a resend (same webhook-id, or same source and id) answers the first Arrival and adds nothing", () =>
      Effect.gen(function*() {
        const { ws, source, secret, intake } = yield* setup
        const body = event("contact.created", { email: "dup@acme.mx" })
        const first = yield* signed(secret, body, { id: "msg_dup_1" })
        const arrivalId = accepted(yield* intake.receive(source.id, first))
        const again = yield* intake.receive(source.id, yield* signed(secret, body, { id: "msg_dup_1" }))
        assert.deepStrictEqual(again, Intake.Receipt.Duplicate({ arrivalId, status: "received" }))
        // A retry of the same CloudEvent under a new webhook-id is the same event.
        const sameEvent = yield* intake.receive(source.id, yield* signed(secret, body, { id: "msg_dup_2" }))
        assert.isTrue(sameEvent._tag === "Duplicate" && sameEvent.arrivalId === arrivalId)
        assert.strictEqual(yield* intake.drain("test"), 1)
        const settled = yield* intake.receive(source.id, yield* signed(secret, body, { id: "msg_dup_1" }))
        assert.isTrue(settled._tag === "Duplicate" && settled.status === "accepted")
        const received = (yield* (yield* EventLedger.EventLedger).read({ workspaceId: ws, limit: 20, names: ["arrival.received"] })).length
        assert.strictEqual(received, 1)
      }))

    it.effect("an unknown Source and a bad signature get the same 401; the known Source keeps a rejected Arrival", () =>
      Effect.gen(function*() {
        const { source, intake } = yield* setup
        const body = event("contact.created", { email: "x@acme.mx" })
        const forged = yield* signed(generateWebhookSecret(), body, { id: "msg_forged" })
        const bad = yield* Effect.flip(intake.receive(source.id, forged))
        const unknown = yield* Effect.flip(intake.receive("src_doesnotexist000000000000", forged))
        assert.strictEqual(bad.code, "invalid_signature")
        assert.deepStrictEqual({ code: unknown.code, detail: unknown.detail }, { code: bad.code, detail: bad.detail })
        // Stale, both ways: the same whatever the Source.
        const stale = yield* signed(generateWebhookSecret(), body, { at: START - 301 })
        assert.strictEqual((yield* Effect.flip(intake.receive(source.id, stale))).code, "stale_timestamp")
        assert.strictEqual((yield* Effect.flip(intake.receive("src_doesnotexist000000000000", stale))).code, "stale_timestamp")
        const noHeaders = yield* Effect.flip(intake.receive(source.id, { headers: {}, body: encoder.encode(body) }))
        assert.strictEqual(noHeaders.code, "webhook_headers")
        // The known Source's refused requests are kept (its trail), written after the answer; nothing for the unknown one.
        yield* intake.refusalsKept
        const sql = yield* SqlClient.SqlClient
        const kept = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM door.arrivals WHERE source_id = ${source.id} AND status = 'rejected'`
        assert.strictEqual(kept[0]?.n, 3)
      }))

    it.effect("a refused request keeps a bounded record: its size and digest, never its body (a NUL byte in it included)", () =>
      Effect.gen(function*() {
        const { source, intake } = yield* setup
        const sql = yield* SqlClient.SqlClient
        const sizeOf = Effect.map(
          sql<{ bytes: string }>`SELECT pg_total_relation_size('door.arrivals')::text AS bytes`,
          (rows) => Number(rows[0]?.bytes ?? 0)
        )
        // A raw 0x00 byte, unsigned: refused as a bad signature, not a 500.
        const nul = yield* signed(generateWebhookSecret(), `{"specversion":"1.0","id":"x","source":"https://x","type":"contact.created","data":{"name":"a\u0000b"}}`)
        const withNul = { ...nul, body: Uint8Array.from([...nul.body.slice(0, 10), 0, ...nul.body.slice(10)]) }
        assert.strictEqual((yield* Effect.flip(intake.receive(source.id, withNul))).code, "invalid_signature")
        const before = yield* Effect.orDie(sizeOf)
        const big = "x".repeat(250 * 1024)
        for (let i = 0; i < 100; i++) {
          const forged = yield* signed(generateWebhookSecret(), event("contact.created", { name: big }), { id: `msg_big_${i}` })
          assert.strictEqual((yield* Effect.flip(intake.receive(source.id, forged))).code, "invalid_signature")
        }
        yield* intake.refusalsKept
        const grown = (yield* Effect.orDie(sizeOf)) - before
        assert.isBelow(grown, 1024 * 1024, `100 refused 250 KiB posts grew door.arrivals by ${grown} bytes`)
        const rows = yield* Effect.orDie(sql<{ body: string | null; body_bytes: number; body_sha256: string }>`SELECT body, body_bytes, body_sha256
          FROM door.arrivals WHERE source_id = ${source.id} AND status = 'rejected' ORDER BY received_at, id`)
        assert.strictEqual(rows.length, 101)
        assert.isTrue(rows.every((row) => row.body === null && row.body_sha256.length === 64))
        assert.strictEqual(rows.filter((row) => row.body_bytes > 250 * 1024).length, 100)
      }))

    it.effect("a signed event holding what no store can hold is refused before it is stored, never accepted and failed", () =>
      Effect.gen(function*() {
        const { source, secret, intake } = yield* setup
        for (const data of [`{"name":"a\\u0000b","email":"nul@acme.mx"}`, `{"name":"a\\ud800b","email":"sur@acme.mx"}`, `{"deep":${"[".repeat(100)}${"]".repeat(100)},"email":"deep@acme.mx"}`]) {
          const body = `{"specversion":"1.0","id":"evt-${++sequence}","source":"https://forms.example.com/lead","type":"contact.created","data":${data}}`
          const refused = yield* Effect.flip(intake.receive(source.id, yield* signed(secret, body)))
          assert.strictEqual(refused.code, "invalid_event", data)
        }
        yield* intake.refusalsKept
        const sql = yield* SqlClient.SqlClient
        const queued = yield* Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM door.arrivals WHERE source_id = ${source.id} AND status <> 'rejected'`)
        assert.strictEqual(queued[0]?.n, 0)
      }))

    it.effect("an invalid event is refused and kept rejected; set aside, pending decision and erased end as the spec says", () =>
      Effect.gen(function*() {
        const { ws, source, secret, intake } = yield* setup
        const invalid = yield* Effect.flip(intake.receive(source.id, yield* signed(secret, JSON.stringify({ specversion: "1.0", type: "contact.created" }))))
        assert.strictEqual(invalid.code, "invalid_event")
        const noKey = accepted(yield* intake.receive(source.id, yield* signed(secret, event("contact.created", { name: "Sin datos" }))))
        const otherType = accepted(yield* intake.receive(source.id, yield* signed(secret, event("opportunity.moved", {}))))
        const crm = yield* Crm.Crm
        yield* crm.applyContact(ws, { email: "uno@acme.mx" })
        yield* crm.applyContact(ws, { phone: "5500000001" })
        const conflict = accepted(yield* intake.receive(source.id, yield* signed(secret, event("contact.updated", { email: "uno@acme.mx", phone: "5500000001" }))))
        const gone = yield* crm.applyContact(ws, { email: "gone@acme.mx" })
        if (gone._tag !== "Created") return assert.fail(gone._tag)
        yield* crm.erase(ws, gone.contact.id)
        const erased = accepted(yield* intake.receive(source.id, yield* signed(secret, event("contact.created", { email: "gone@acme.mx" }))))
        yield* intake.drain("test")
        const statusOf = (id: string) => Effect.map(intake.arrival(ws, id), (a) => Option.getOrThrow(a).status)
        assert.strictEqual(yield* statusOf(noKey), "set_aside")
        assert.strictEqual(yield* statusOf(otherType), "set_aside")
        assert.strictEqual(yield* statusOf(conflict), "pending_decision")
        assert.strictEqual(yield* statusOf(erased), "rejected")
      }))

    it.effect("raw notices are deleted after 30 days; the Arrival and its outcome stay", () =>
      Effect.gen(function*() {
        const { ws, source, secret, intake } = yield* setup
        const arrivalId = accepted(yield* intake.receive(source.id, yield* signed(secret, event("contact.created", { email: "keep@acme.mx" }))))
        yield* intake.drain("test")
        const sql = yield* SqlClient.SqlClient
        const bodyOf = Effect.map(
          sql<{ body: string | null }>`SELECT body FROM door.arrivals WHERE id = ${arrivalId}`,
          (rows) => rows[0]?.body ?? null
        )
        yield* TestClock.adjust("30 days")
        assert.strictEqual(yield* intake.purgeExpired, 0)
        assert.include((yield* bodyOf) ?? "", "keep@acme.mx")
        yield* TestClock.adjust("1 second")
        assert.isAtLeast(yield* intake.purgeExpired, 1)
        assert.strictEqual(yield* bodyOf, null)
        assert.strictEqual(Option.getOrThrow(yield* intake.arrival(ws, arrivalId)).status, "accepted")
      }))

    it.effect("paused and archived Sources refuse after the signature; a rotated secret verifies for 24 more hours", () =>
      Effect.gen(function*() {
        const { ws, source, secret, intake } = yield* setup
        const sources = yield* Sources.Sources
        yield* sources.setStatus(ws, source.id, "paused")
        assert.strictEqual((yield* Effect.flip(intake.receive(source.id, yield* signed(secret, event("contact.created", { email: "p@acme.mx" }))))).code, "source_paused")
        yield* sources.setStatus(ws, source.id, "active")
        const fresh = Redacted.value(yield* sources.rotateSecret(ws, source.id))
        accepted(yield* intake.receive(source.id, yield* signed(secret, event("contact.created", { email: "old@acme.mx" }))))
        accepted(yield* intake.receive(source.id, yield* signed(fresh, event("contact.created", { email: "new@acme.mx" }))))
        yield* TestClock.adjust("24 hours")
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Effect.flip(intake.receive(source.id, yield* signed(secret, event("contact.created", { email: "late@acme.mx" }))))).code, "invalid_signature")
        yield* sources.setStatus(ws, source.id, "archived")
        assert.strictEqual((yield* Effect.flip(intake.receive(source.id, yield* signed(fresh, event("contact.created", { email: "a@acme.mx" }))))).code, "source_archived")
        // Archived is for good.
        assert.strictEqual((yield* sources.setStatus(ws, source.id, "active")).status, "archived")
        assert.isTrue(Either.isLeft(yield* Effect.either(sources.setStatus(yield* workspace, source.id, "paused"))))
      }))
  })
}

// A CRM that is down: every application dies, as an outage would.
const crmDown = Layer.effect(
  Crm.Crm,
  Effect.map(Crm.make, (crm) => Crm.Crm.of({ ...crm, applyContact: () => Effect.dieMessage("the CRM database is down") }))
)

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Intake.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, crmDown, EventLedger.layer)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`the door's intake with the CRM down, on ${target.name}`, (it) => {
    it.effect("an Arrival is tried five times on the schedule, then it is failed, and the ledger says so; nothing was applied", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(START * 1000)
        const ws = yield* workspace
        const { secret, source } = yield* (yield* Sources.Sources).create(ws, { name: "Form" })
        const intake = yield* Intake.Intake
        const arrivalId = accepted(yield* intake.receive(source.id, yield* signed(Redacted.value(secret), event("contact.created", { email: "down@acme.mx" }))))
        const attempts: Array<number> = []
        for (const wait of ["0 seconds", "10 seconds", "1 minute", "5 minutes", "30 minutes", "1 day"] as const) {
          yield* TestClock.adjust(wait)
          yield* intake.drain("test")
          attempts.push(Option.getOrThrow(yield* intake.arrival(ws, arrivalId)).attempts)
        }
        assert.deepStrictEqual(attempts, [1, 2, 3, 4, 5, 5])
        const arrival = Option.getOrThrow(yield* intake.arrival(ws, arrivalId))
        assert.strictEqual(arrival.status, "failed")
        assert.include(arrival.status_detail ?? "", "down")
        const names = (yield* (yield* EventLedger.EventLedger).read({ workspaceId: ws, limit: 20 })).map((e) => e.name)
        assert.deepStrictEqual(names, ["arrival.received", "arrival.settled"])
        const settled = (yield* (yield* EventLedger.EventLedger).read({ workspaceId: ws, limit: 20, names: ["arrival.settled"] }))[0]
        assert.include(JSON.stringify(settled?.payload), "failed")
      }))
  })
}
