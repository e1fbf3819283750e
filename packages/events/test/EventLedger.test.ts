import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as EventLedger from "../src/EventLedger.js"
import * as EventsMigrations from "../src/EventsMigrations.js"

const workspace = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`ev-${Math.random().toString(36).slice(2, 10)}`)
  return (yield* accounts.createWorkspace({ slug, name: slug })).id
}).pipe(Effect.orDie)

const contactPayload = (workspaceId: string, contactId: string) => ({
  workspace_id: workspaceId,
  occurred_at: "2026-11-25T12:00:00.000Z",
  contact_id: contactId,
  name: "Ana Ruiz",
  company_id: null,
  arrival_id: "arrival_1",
  changed_fields: ["name", "email"]
})

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(EventLedger.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, EventsMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`the event ledger on ${target.name}`, (it) => {
    it.effect("appends catalog events in order and reads them back per workspace, subject and name", () =>
      Effect.gen(function*() {
        const ledger = yield* EventLedger.EventLedger
        const ws = yield* workspace
        yield* TestClock.adjust("1 hour")
        const first = yield* ledger.record({ workspaceId: ws, name: "contact.created", subject: "contact/c1", payload: contactPayload(ws, "c1") })
        assert.strictEqual(first.occurred_at, "1970-01-01T01:00:00.000Z")
        yield* ledger.record({ workspaceId: ws, name: "contact.updated", subject: "contact/c1", payload: contactPayload(ws, "c1") })
        yield* ledger.record({ workspaceId: ws, name: "contact.created", subject: "contact/c2", payload: contactPayload(ws, "c2") })
        const all = yield* ledger.read({ workspaceId: ws, limit: 10 })
        assert.deepStrictEqual(all.map((e) => e.name), ["contact.created", "contact.updated", "contact.created"])
        assert.deepStrictEqual((yield* ledger.read({ workspaceId: ws, limit: 10, subject: "contact/c1" })).length, 2)
        assert.deepStrictEqual((yield* ledger.read({ workspaceId: ws, limit: 10, after: first.id })).length, 2)
        assert.deepStrictEqual((yield* ledger.read({ workspaceId: ws, limit: 10, names: ["contact.updated"] })).length, 1)
        assert.deepStrictEqual(yield* ledger.read({ workspaceId: yield* workspace, limit: 10 }), [])
      }))

    it.effect("reads in the order recorded across a change in the number of digits of the id (9 before 10)", () =>
      Effect.gen(function*() {
        const ledger = yield* EventLedger.EventLedger
        const ws = yield* workspace
        const ids: Array<string> = []
        for (let n = 0; n < 12; n++) {
          ids.push((yield* ledger.record({ workspaceId: ws, name: "contact.created", subject: `contact/n${n}`, payload: contactPayload(ws, `n${n}`) })).id)
        }
        // Ids are numbers: compared as text "10" would come before "9".
        assert.deepStrictEqual((yield* ledger.read({ workspaceId: ws, limit: 100 })).map((e) => e.id), ids)
        assert.isAbove(new Set(ids.map((id) => id.length)).size, 1, "the ids should cross a change in digit count")
      }))

    it.effect("writes only what the event's schema names: an email or a phone passed along is dropped", () =>
      Effect.gen(function*() {
        const ledger = yield* EventLedger.EventLedger
        const ws = yield* workspace
        const entry = yield* ledger.record({
          workspaceId: ws,
          name: "contact.created",
          payload: { ...contactPayload(ws, "c9"), email: "ana@acme.mx", phone: "+525511112222" }
        })
        const stored = JSON.stringify((yield* ledger.read({ workspaceId: ws, limit: 1 }))[0]?.payload)
        assert.notInclude(stored, "acme.mx")
        assert.notInclude(stored, "5511112222")
        assert.include(JSON.stringify(entry.payload), "c9")
      }))

    it.effect("an unknown event name or a payload that does not fit is a defect, and nothing is written", () =>
      Effect.gen(function*() {
        const ledger = yield* EventLedger.EventLedger
        const ws = yield* workspace
        const unknown = yield* Effect.exit(ledger.record({ workspaceId: ws, name: "contact.deleted", payload: {} }))
        assert.isTrue(Exit.isFailure(unknown))
        const misfit = yield* Effect.exit(ledger.record({ workspaceId: ws, name: "contact.created", payload: { contact_id: 1 } }))
        assert.isTrue(Exit.isFailure(misfit))
        assert.deepStrictEqual(yield* ledger.read({ workspaceId: ws, limit: 10 }), [])
      }))
  })
}
