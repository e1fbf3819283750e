/**
 * A contact erased while an unlock researches it (decision 0071): the research settles after the erasure, and
 * stores neither the person's name nor the coordinates found for them; the other account of the unlock is answered
 * as usual, and so is every retry with the key.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as Meter from "@service/core/Meter"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ContactsMigrations from "../src/ContactsMigrations.js"
import * as Quotes from "../src/Quotes.js"
import * as SandboxProvider from "../src/SandboxProvider.js"
import * as Unlocks from "../src/Unlocks.js"
import { ProviderControl, provider, workspaceWithContacts } from "./support/Harness.js"

for (const target of TestDatabase.targets()) {
  const Env = Unlocks.layerWith({ lease: "1 minute", retryDelays: [0, 0], providerTimeout: "1 minute", waitForOthers: "2 minutes" }).pipe(
    Layer.provideMerge(Quotes.layer),
    Layer.provideMerge(provider()),
    Layer.provideMerge(Layer.mergeAll(Crm.layer, Meter.layerSqlWith({ monthlyAllowance: 40 }), Accounts.layerSql)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations, ContactsMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`an unlock meeting an erasure on ${target.name}`, (it) => {
    it.effect("research settled after the contact's erasure stores neither their name nor their coordinates", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const sql = yield* SqlClient.SqlClient
        const crm = yield* Crm.Crm
        const unlocks = yield* Unlocks.Unlocks
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(2)
        const ws = principal.workspace.id
        const [erasedId, keptId] = contactIds
        if (erasedId === undefined || keptId === undefined) return yield* Effect.dieMessage("two contacts expected")
        const quote = yield* (yield* Quotes.Quotes).quote(principal, { collection_id: collectionId, record_ids: contactIds })
        const request = Unlocks.requestFor(quote)

        // The first request's research hangs (its process dies); meanwhile the person is erased.
        const entered = yield* control.hangNext(request.idempotency_key)
        const zombie = yield* Effect.fork(unlocks.unlock(principal, request))
        yield* Deferred.await(entered)
        yield* crm.erase(ws, erasedId)
        yield* sql`UPDATE contacts.unlocks SET queue_lease_until = '-infinity' WHERE workspace_id = ${ws}`
        const taken = yield* unlocks.unlock(principal, request)
        yield* Fiber.interrupt(zombie)

        const theirs = taken.accounts.find((account) => account.record_id === erasedId)
        const kept = taken.accounts.find((account) => account.record_id === keptId)
        assert.deepStrictEqual([theirs?.name, theirs?.coordinates], [null, null])
        assert.match(kept?.name ?? "", /^Contacto [01]$/)
        const expected = SandboxProvider.outcomeOf({ record_id: keptId, name: null, company: null, domain: null }, new Set())
        assert.deepStrictEqual(kept?.coordinates ?? null, expected.outcome === "found" ? expected.coordinates : null)
        const stored = yield* sql<{ email: string | null; phone: string | null }>`SELECT email, phone FROM contacts.unlocked
          WHERE workspace_id = ${ws} AND contact_id = ${erasedId}`
        assert.deepStrictEqual(stored.map((row) => [row.email, row.phone]), [[null, null]])
        assert.deepStrictEqual({ ...(yield* unlocks.unlock(principal, request)), replayed: true }, { ...taken, replayed: true })
      }))
  })
}
