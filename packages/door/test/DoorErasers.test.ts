/**
 * The door's erasers on their own, over the intake: a person's accepted Arrival loses its raw notice but keeps its
 * status, one still waiting in the queue ends `rejected` and is never applied, one naming them only in its notice
 * (the email behind a unicode escape) is found by content, a bystander's stays, and erasing again redacts nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as Erasure from "@service/core/Erasure"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as DoorErasers from "../src/DoorErasers.js"
import * as DoorMigrations from "../src/DoorMigrations.js"
import * as Intake from "../src/Intake.js"
import * as Sources from "../src/Sources.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"

const migrations = [CoreMigrations.migrations, CrmMigrations.migrations, EventsMigrations.migrations, DoorMigrations.migrations]
const encoder = new TextEncoder()

let sequence = 0
/** A CloudEvent body (as text, so an escape stays as sent), signed at the test clock's time. */
const signed = (secret: string, body: string) =>
  Effect.gen(function*() {
    const timestamp = Math.floor((yield* TestClock.currentTimeMillis) / 1000)
    const id = `msg_erasers_${++sequence}`
    const bytes = encoder.encode(body)
    const request: Intake.DoorRequest = {
      headers: {
        "content-type": "application/cloudevents+json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": StandardWebhooks.sign({ secret, id, timestamp, body: bytes })
      },
      body: bytes
    }
    return request
  })

const cloudEvent = (data: string) =>
  `{"specversion":"1.0","id":"ce-${++sequence}","source":"/forms","type":"contact.created","data":${data}}`

const arrivalIdOf = (receipt: Intake.Receipt): string => {
  if (receipt._tag !== "Accepted") throw new Error(`expected Accepted, got ${receipt._tag}`)
  return receipt.arrivalId
}

const Stored = Schema.Struct({ status: Schema.String, body: Schema.NullOr(Schema.String), erased: Schema.Boolean, queue_state: Schema.String })
const storedOf = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT status, body, erased_at IS NOT NULL AS erased, queue_state FROM door.arrivals WHERE id = ${id}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Stored))),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    ))

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Intake.layer, Accounts.layerSql, Erasure.layer(DoorErasers.erasers)).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer, EventLedger.layer)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`the door's erasers on ${target.name}`, (it) => {
    it.effect("redact the person's notices by link and by content, end a waiting one rejected, leave the bystander's", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(1_735_689_630_000)
        const accounts = yield* Accounts.Accounts
        const ws = (yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("erasers"), name: "erasers" })).id
        const sources = yield* Sources.Sources
        const intake = yield* Intake.Intake
        const created = yield* sources.create(ws, { name: "Form" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        const send = (data: string) => Effect.map(Effect.flatMap(signed(secret, cloudEvent(data)), (request) => intake.receive(created.source.id, request)), arrivalIdOf)

        const applied = yield* send(`{"name":"Lucía Méndez Paz","email":"Lucia.Mendez@Paz.mx","phone":"+52 55 4444 3333"}`)
        const bystander = yield* send(`{"name":"Otro Cliente","email":"otro@cliente.mx"}`)
        yield* intake.drain("test")
        const contactId = Option.getOrThrow(yield* intake.arrival(ws, applied)).contact_id ?? ""
        // Still in the queue when the erasure comes; it names the person only in its notice.
        const waiting = yield* send(`{"email":"lucia.mendez\\u0040paz.mx","role":"CEO"}`)
        assert.strictEqual((yield* storedOf(waiting))?.status, "received")

        const contact = Option.getOrThrow(yield* (yield* Crm.Crm).getContact(ws, contactId))
        const subject = {
          workspaceId: ws,
          contactId,
          values: { names: [contact.name ?? ""], emails: [contact.email ?? ""], phones: [contact.phone ?? ""] }
        }
        const erasure = yield* Erasure.Erasure
        const report = yield* erasure.erase(subject)
        assert.deepStrictEqual(report.stores, [
          { store: "door.arrivals", redacted: 2 },
          { store: "door.sources", redacted: 0 },
          { store: "door.sources (names)", redacted: 0 }
        ])

        assert.deepInclude(yield* storedOf(applied), { status: "accepted", body: null, erased: true })
        assert.deepInclude(yield* storedOf(waiting), { status: "rejected", body: null, erased: true, queue_state: "done" })
        assert.deepInclude(yield* storedOf(bystander), { status: "accepted", erased: false })
        assert.include((yield* storedOf(bystander))?.body ?? "", "otro@cliente.mx")
        // The worker never applies what the erasure ended.
        assert.strictEqual(yield* intake.drain("test"), 0)
        assert.strictEqual(Option.getOrThrow(yield* intake.arrival(ws, waiting)).status, "rejected")
        // A second erasure finds nothing left.
        const again = yield* erasure.erase(subject)
        assert.deepStrictEqual(again.stores.map((s) => s.redacted), [0, 0, 0])
      }))
  })
}
