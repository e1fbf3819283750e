/**
 * The 30-day retention of raw notices and Source examples (spec: "Raw notice and example retention: 30 days"), run
 * as the worker every host runs (`door.retention`), on the test clock: one run deletes a notice 31 days old and a
 * Source example older than 30 days, keeps one 29 days old, counts each once when several workers run at once, and
 * does nothing more on its next run; reprocessing then reports the deleted notice `expired`.
 */
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
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as DoorMigrations from "../src/DoorMigrations.js"
import * as DoorWorkers from "../src/DoorWorkers.js"
import * as Intake from "../src/Intake.js"
import * as Mappings from "../src/Mappings.js"
import * as Sources from "../src/Sources.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"

const migrations = [CoreMigrations.migrations, CrmMigrations.migrations, EventsMigrations.migrations, DoorMigrations.migrations]
const NOW = 1_735_689_630_000
const encoder = new TextEncoder()

let sequence = 0
/** A notice signed at the test clock's time, as the Source's tool sends it. */
const signed = (secret: string, value: unknown) =>
  Effect.gen(function*() {
    const timestamp = Math.floor((yield* TestClock.currentTimeMillis) / 1000)
    const id = `msg_retention_${++sequence}`
    const body = encoder.encode(JSON.stringify(value))
    const request: Intake.DoorRequest = {
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": StandardWebhooks.sign({ secret, id, timestamp, body })
      },
      body
    }
    return request
  })

const arrivalIdOf = (receipt: Intake.Receipt): string => {
  if (receipt._tag !== "Accepted") throw new Error(`expected Accepted, got ${receipt._tag}`)
  return receipt.arrivalId
}

const mapping: Mappings.MappingInput = {
  event_type: ["type"],
  accepted_events: ["signup"],
  notice_id: ["id"],
  items: null,
  fields: { email: ["contact.email"] }
}

/** Whether an Arrival still has its raw notice. */
const kept = (arrivalId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT body IS NOT NULL AS kept FROM door.arrivals WHERE id = ${arrivalId}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ kept: Schema.Boolean })))),
      Effect.map((rows) => rows[0]?.kept ?? false),
      Effect.orDie
    ))

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Intake.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer, EventLedger.layer)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`retention on ${target.name}`, (it) => {
    it.scoped("one run of the worker deletes what is older than 30 days, once, whatever the number of workers", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(NOW)
        const accounts = yield* Accounts.Accounts
        const ws = (yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("retention"), name: "retention" })).id
        const sources = yield* Sources.Sources
        const intake = yield* Intake.Intake
        const created = yield* sources.create(ws, { name: "Signups", type: "webhook" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        const id = created.source.id

        // The first notice becomes the Source's example; the second arrives two days later.
        const old = arrivalIdOf(yield* intake.receive(id, yield* signed(secret, { type: "signup", id: "n-old", contact: { email: "vieja@acme.mx" } })))
        yield* TestClock.adjust("2 days")
        const young = arrivalIdOf(yield* intake.receive(id, yield* signed(secret, { type: "signup", id: "n-young", contact: { email: "joven@acme.mx" } })))
        yield* TestClock.adjust("29 days")
        assert.isNotNull(Option.getOrThrow(yield* sources.detail(ws, id)).example)

        // Two workers, as two processes would run them: each reports what its run deleted.
        const runs = yield* Queue.unbounded<number>()
        const context = (name: string) => ({ name, poll: Duration.seconds(1), done: (units: number) => Queue.offer(runs, units) })
        yield* Effect.forkScoped(DoorWorkers.retention.run(context("worker-a")))
        yield* Effect.forkScoped(DoorWorkers.retention.run(context("worker-b")))
        const a = yield* Queue.take(runs)
        const b = yield* Queue.take(runs)
        // The notice 31 days old and the example stored then, each counted once.
        assert.strictEqual(a + b, 2)
        assert.deepStrictEqual([yield* kept(old), yield* kept(young)], [false, true])
        const detail = Option.getOrThrow(yield* sources.detail(ws, id))
        assert.deepStrictEqual([detail.example, detail.example_received_at], [null, null])
        const arrival = Option.getOrThrow(yield* intake.arrival(ws, old))
        assert.strictEqual(arrival.status, "unmapped")

        // An hour later they run again: nothing more is old enough.
        yield* TestClock.adjust("1 hour")
        assert.deepStrictEqual([yield* Queue.take(runs), yield* Queue.take(runs)], [0, 0])
        assert.isTrue(yield* kept(young))

        // Reprocessing after a mapping: the deleted notice cannot be read again, the kept one is.
        yield* sources.confirmMapping(ws, id, mapping)
        assert.deepStrictEqual(yield* intake.reprocess(ws, id), { requeued: 1, changed: 1, unchanged: 0, expired: 1, created: 1 })
      }))
  })
}
