import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as Meter from "@service/core/Meter"
import { Principal } from "@service/core/Principal"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as ContactsMigrations from "../src/ContactsMigrations.js"
import * as Quotes from "../src/Quotes.js"
import * as SandboxProvider from "../src/SandboxProvider.js"
import * as Unlocks from "../src/Unlocks.js"
import { ProviderControl, provider, workspaceWithContacts } from "./support/Harness.js"

const ALLOWANCE = 40
const PRICE = 5

const LedgerRows = Schema.Array(Schema.Struct({ kind: Schema.String, credits: Schema.Number, request_id: Schema.NullOr(Schema.String) }))

/** The workspace's contact_unlock debits and refunds. */
const ledger = (workspaceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT kind, credits::int AS credits, request_id FROM core.credit_ledger
      WHERE workspace_id = ${workspaceId} AND operation = 'contact_unlock' ORDER BY id`.pipe(Effect.flatMap(Schema.decodeUnknown(LedgerRows)))
    return {
      debits: rows.filter((r) => r.kind === "debit").map((r) => r.request_id ?? ""),
      refunds: rows.filter((r) => r.kind === "refund").map((r) => r.request_id ?? "")
    }
  }).pipe(Effect.orDie)

const balanceOf = (workspaceId: string) => Effect.map(Effect.flatMap(Meter.Meter, (meter) => meter.account(workspaceId)), (a) => a.balance)

const quoteAndRequest = (principal: Principal, collectionId: string, recordIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const quote = yield* (yield* Quotes.Quotes).quote(principal, { collection_id: collectionId, record_ids: recordIds })
    return { quote, request: Unlocks.requestFor(quote) }
  }).pipe(Effect.orDie)

const unlock = (principal: Principal, request: Unlocks.UnlockRequest) => Effect.flatMap(Unlocks.Unlocks, (u) => u.unlock(principal, request))

const refusal = <A, R>(effect: Effect.Effect<A, { readonly code: string; readonly field?: string | undefined }, R>) =>
  Effect.map(Effect.flip(effect), (r) => `${r.code}${r.field === undefined ? "" : `@${r.field}`}`)

for (const target of TestDatabase.targets()) {
  const Env = Unlocks.layerWith({ lease: "1 minute", retryDelays: [0, 0], providerTimeout: "1 minute", waitForOthers: "2 minutes" }).pipe(
    Layer.provideMerge(Quotes.layer),
    Layer.provideMerge(provider()),
    Layer.provideMerge(Layer.mergeAll(Crm.layer, Meter.layerSqlWith({ monthlyAllowance: ALLOWANCE }), Accounts.layerSql)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations, ContactsMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`contact unlocks on ${target.name}`, (it) => {
    it.effect("debits each account once, answers coordinates, and every retry with the key answers the same result", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(3)
        const ws = principal.workspace.id
        const { quote, request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        assert.strictEqual(quote.total_credits, 3 * PRICE)
        const first = yield* unlock(principal, request)
        assert.isFalse(first.replayed)
        assert.deepStrictEqual(first.accounts.map((a) => a.record_id), contactIds)
        for (const account of first.accounts) {
          assert.include(["found", "not_found"], account.outcome)
          assert.strictEqual(account.credits, PRICE)
          if (account.outcome === "found") assert.match(account.coordinates?.email ?? "", /@sandbox\.invalid$/)
          else assert.isNull(account.coordinates)
        }
        assert.deepStrictEqual([first.charged_credits, first.refunded_credits, first.balance], [15, 0, ALLOWANCE - 15])
        assert.include(first.summary, "Spent 15 credits")
        const again = yield* unlock(principal, request)
        assert.deepStrictEqual({ ...again, replayed: false }, first)
        assert.isTrue(again.replayed)
        // The stored answer holds coordinates: only the caller who asked reads it, with the same selection.
        const other = yield* workspaceWithContacts(0)
        const colleague = new Principal({ ...principal, person: other.principal.person })
        assert.strictEqual(yield* refusal(unlock(colleague, request)), "quote_mismatch@quote_token")
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, record_ids: contactIds.slice(0, 1) })), "quote_mismatch@record_ids")
        const { debits, refunds } = yield* ledger(ws)
        assert.deepStrictEqual(debits.map((d) => d.split(":")[1]), contactIds)
        assert.deepStrictEqual(refunds, [])
        assert.strictEqual(yield* balanceOf(ws), ALLOWANCE - 15)
        const answered = (yield* control.answered).filter((r) => r.workspaceId === ws)
        assert.deepStrictEqual(answered.map((r) => [r.requestKey, r.accounts.length]), [[request.idempotency_key, 3]])
      }))

    it.effect("refuses before any spend: no confirm, another quote's key or records, another caller, expiry, a higher price, a short balance", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const meter = yield* Meter.Meter
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(3)
        const other = yield* workspaceWithContacts(1)
        const ws = principal.workspace.id
        const { request } = yield* quoteAndRequest(principal, collectionId, contactIds.slice(0, 2))
        const second = yield* quoteAndRequest(principal, collectionId, contactIds.slice(0, 2))
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, confirm: false })), "confirmation_required@confirm")
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, idempotency_key: second.request.idempotency_key })), "quote_mismatch@idempotency_key")
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, record_ids: contactIds })), "quote_mismatch@record_ids")
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, quote_token: "forged" })), "invalid_field_value@quote_token")
        assert.strictEqual(yield* refusal(unlock(other.principal, request)), "quote_mismatch@quote_token")
        // A colleague in the same workspace may not spend a quote someone else was shown.
        const colleague = new Principal({ ...principal, person: other.principal.person })
        assert.strictEqual(yield* refusal(unlock(colleague, request)), "quote_mismatch@quote_token")
        assert.strictEqual(yield* refusal(unlock(principal, { ...request, max_credits: 9 })), "price_changed@max_credits")
        // The balance fell below the price since the quote.
        yield* meter.charge({ workspaceId: ws, operation: "search_opportunities", requestId: "req_elsewhere", credits: ALLOWANCE - 9 })
        assert.strictEqual(yield* refusal(unlock(principal, request)), "insufficient_credits")
        yield* meter.grant({ workspaceId: ws, credits: 100, note: "test top-up" })
        yield* TestClock.adjust("11 minutes")
        assert.strictEqual(yield* refusal(unlock(principal, request)), "quote_expired@quote_token")
        // Nothing of it was spent, claimed or researched.
        assert.deepStrictEqual(yield* ledger(ws), { debits: [], refunds: [] })
        assert.strictEqual(yield* balanceOf(ws), 9 + 100)
        assert.deepStrictEqual((yield* control.reached).filter((r) => r.workspaceId === ws), [])
        const sql = yield* SqlClient.SqlClient
        assert.deepStrictEqual(yield* sql`SELECT contact_id FROM contacts.unlocked WHERE workspace_id = ${ws}`, [])
      }))

    it.effect("already unlocked accounts cost nothing and answer their coordinates; failed accounts are refunded in the ledger", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(4)
        const ws = principal.workspace.id
        const [a, b, c, d] = contactIds
        const firstRun = yield* unlock(principal, (yield* quoteAndRequest(principal, collectionId, [a ?? "", b ?? ""])).request)
        yield* control.failAccounts([d ?? ""])
        const { quote, request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        assert.deepStrictEqual(quote.accounts.map((x) => x.credits), [0, 0, PRICE, PRICE])
        const result = yield* unlock(principal, request)
        const byId = new Map(result.accounts.map((x) => [x.record_id, x]))
        assert.deepStrictEqual([byId.get(a ?? "")?.outcome, byId.get(a ?? "")?.credits], ["already_unlocked", 0])
        assert.deepStrictEqual(byId.get(a ?? "")?.coordinates, firstRun.accounts.find((x) => x.record_id === a)?.coordinates ?? null)
        assert.deepStrictEqual([byId.get(d ?? "")?.outcome, byId.get(d ?? "")?.credits, byId.get(d ?? "")?.reason], ["failed", 0, "told to fail it"])
        assert.deepStrictEqual([result.charged_credits, result.refunded_credits], [PRICE, PRICE])
        assert.include(result.summary, "1 account failed and refunded")
        assert.include(result.summary, "2 accounts were already unlocked (free)")
        const { debits, refunds } = yield* ledger(ws)
        assert.strictEqual(debits.length, 4)
        assert.deepStrictEqual(refunds.map((r) => r.split(":")[1]), [d])
        assert.strictEqual(yield* balanceOf(ws), ALLOWANCE - 3 * PRICE)
        // The failed account is not unlocked: quoted again, it costs its price.
        const requote = yield* quoteAndRequest(principal, collectionId, [c ?? "", d ?? ""])
        assert.deepStrictEqual(requote.quote.accounts.map((x) => [x.record_id, x.credits]), [[c, 0], [d, PRICE]])
      }))

    it.effect("a test workspace spends nothing and calls no provider", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(2, { test: true })
        const ws = principal.workspace.id
        const { quote, request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        assert.deepStrictEqual([quote.total_credits, quote.credits_per_account, request.max_credits], [0, 0, 0])
        assert.include(quote.summary, "Test workspace: unlocking 2 accounts costs nothing")
        const result = yield* unlock(principal, request)
        assert.isTrue(result.test_workspace)
        assert.deepStrictEqual([result.charged_credits, result.balance], [0, ALLOWANCE])
        assert.include(result.summary, "Nothing was spent and no provider was called")
        assert.deepStrictEqual(yield* ledger(ws), { debits: [], refunds: [] })
        assert.deepStrictEqual((yield* control.reached).filter((r) => r.workspaceId === ws), [])
        assert.deepStrictEqual((yield* (yield* SandboxProvider.SandboxCalls).worked).filter((r) => r.workspaceId === ws), [])
      }))

    it.effect("concurrent identical requests debit and research once and answer the same unlock", () =>
      // On the live clock: a request that finds another one researching polls until it finishes.
      TestServices.provideLive(Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(2)
        const ws = principal.workspace.id
        const { request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        const results = yield* Effect.all([unlock(principal, request), unlock(principal, request), unlock(principal, request)], {
          concurrency: "unbounded"
        })
        assert.strictEqual(new Set(results.map((r) => r.unlock_id)).size, 1)
        assert.strictEqual(results.filter((r) => !r.replayed).length, 1)
        assert.strictEqual((yield* ledger(ws)).debits.length, 2)
        assert.strictEqual((yield* control.answered).filter((r) => r.workspaceId === ws).length, 1)
      })))

    it.effect("a crash after the debit: the retry with the key researches under the same key and debits nothing again", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(2)
        const ws = principal.workspace.id
        const { request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        yield* control.dieNext(request.idempotency_key)
        // The request's own attempt died; the queue retries at once (retry delays of 0 here).
        const result = yield* unlock(principal, request)
        assert.isFalse(result.replayed)
        assert.strictEqual(result.charged_credits, 2 * PRICE)
        assert.strictEqual((yield* ledger(ws)).debits.length, 2)
        assert.deepStrictEqual((yield* control.answered).filter((r) => r.workspaceId === ws).map((r) => r.requestKey), [request.idempotency_key])
      }))

    it.effect("a provider down for a while is retried on the queue; down for every attempt, everything is refunded", () =>
      // On the live clock: short outages are retried after 200 ms, then 400 ms.
      TestServices.provideLive(Effect.gen(function*() {
        const control = yield* ProviderControl
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(4)
        const ws = principal.workspace.id
        // Down for the whole first attempt (3 calls), up for the second.
        const brief = yield* quoteAndRequest(principal, collectionId, contactIds.slice(0, 2))
        yield* control.downFor(brief.request.idempotency_key, 3)
        const recovered = yield* unlock(principal, brief.request)
        assert.deepStrictEqual([recovered.charged_credits, recovered.refunded_credits], [2 * PRICE, 0])
        // Down for all 3 attempts: the unlock ends failed, every debit refunded, the accounts free to quote again.
        const long = yield* quoteAndRequest(principal, collectionId, contactIds.slice(2))
        yield* control.downFor(long.request.idempotency_key, 9)
        const failed = yield* unlock(principal, long.request)
        assert.deepStrictEqual(failed.accounts.map((a) => a.outcome), ["failed", "failed"])
        assert.match(failed.accounts[0]?.reason ?? "", /research failed after every attempt/)
        assert.deepStrictEqual([failed.charged_credits, failed.refunded_credits], [0, 2 * PRICE])
        const { debits, refunds } = yield* ledger(ws)
        assert.deepStrictEqual([debits.length, refunds.length], [4, 2])
        assert.strictEqual(yield* balanceOf(ws), ALLOWANCE - 2 * PRICE)
        assert.deepStrictEqual((yield* quoteAndRequest(principal, collectionId, contactIds.slice(2))).quote.total_credits, 2 * PRICE)
        // Its retry answers the stored failure: no new research.
        const reachedBefore = (yield* control.reached).length
        assert.deepStrictEqual({ ...(yield* unlock(principal, long.request)), replayed: false }, failed)
        assert.strictEqual((yield* control.reached).length, reachedBefore)
      })))

    it.effect("a process that died mid-research: after its lease the retry takes over, and the dead process can commit nothing", () =>
      Effect.gen(function*() {
        const control = yield* ProviderControl
        const sql = yield* SqlClient.SqlClient
        const { collectionId, contactIds, principal } = yield* workspaceWithContacts(2)
        const ws = principal.workspace.id
        const { request } = yield* quoteAndRequest(principal, collectionId, contactIds)
        const entered = yield* control.hangNext(request.idempotency_key)
        const zombie = yield* Effect.fork(unlock(principal, request))
        yield* Deferred.await(entered)
        // What a killed process leaves: its row running under a lease nobody renews any more.
        yield* sql`UPDATE contacts.unlocks SET queue_lease_until = '-infinity', queue_worker = 'killed-process' WHERE workspace_id = ${ws}`
        const taken = yield* unlock(principal, request)
        assert.isTrue(taken.replayed)
        assert.strictEqual(taken.charged_credits, 2 * PRICE)
        yield* Fiber.interrupt(zombie)
        assert.strictEqual((yield* ledger(ws)).debits.length, 2)
        assert.deepStrictEqual((yield* ledger(ws)).refunds, [])
        const reached = (yield* control.reached).filter((r) => r.workspaceId === ws)
        assert.deepStrictEqual(reached.map((r) => r.requestKey), [request.idempotency_key, request.idempotency_key])
        assert.strictEqual((yield* control.answered).filter((r) => r.workspaceId === ws).length, 1)
        assert.strictEqual(yield* balanceOf(ws), ALLOWANCE - 2 * PRICE)
      }))
  })
}
