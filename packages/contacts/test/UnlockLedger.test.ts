/**
 * The property of issue 11: whatever interleaving of quotes, unlocks, retries, concurrent duplicates, crashes
 * and outside spending, the balance is always the grants minus what other operations spent minus the price of
 * every account an unlock holds (researching or researched), no account is paid twice, and the provider answered
 * at most once per account and idempotency key.
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
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as TestServices from "effect/TestServices"
import * as ContactsMigrations from "../src/ContactsMigrations.js"
import * as Quotes from "../src/Quotes.js"
import * as Unlocks from "../src/Unlocks.js"
import { ProviderControl, provider, workspaceWithContacts } from "./support/Harness.js"

const ALLOWANCE = 30
const PRICE = 5
const CONTACTS = 4

type Step =
  | { readonly kind: "quote"; readonly pick: ReadonlyArray<boolean> }
  | { readonly kind: "unlock" | "duplicate" | "crash"; readonly index: number }
  | { readonly kind: "resume" }
  | { readonly kind: "fail"; readonly contact: number }
  | { readonly kind: "spend"; readonly credits: number }
  | { readonly kind: "grant"; readonly credits: number }

const step: FastCheck.Arbitrary<Step> = FastCheck.oneof(
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("quote" as const), pick: FastCheck.array(FastCheck.boolean(), { minLength: CONTACTS, maxLength: CONTACTS }) }), weight: 3 },
  { arbitrary: FastCheck.record({ kind: FastCheck.constantFrom("unlock" as const, "duplicate" as const, "crash" as const), index: FastCheck.nat(5) }), weight: 6 },
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("resume" as const) }), weight: 1 },
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("fail" as const), contact: FastCheck.nat(CONTACTS - 1) }), weight: 1 },
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("spend" as const), credits: FastCheck.integer({ min: 1, max: 12 }) }), weight: 1 },
  { arbitrary: FastCheck.record({ kind: FastCheck.constant("grant" as const), credits: FastCheck.integer({ min: 1, max: 10 }) }), weight: 1 }
)

/** Refusals an interleaving may rightly meet; any other failure fails the property. */
const expected = new Set(["price_changed", "insufficient_credits", "unlock_in_progress"])

const Count = Schema.Array(Schema.Struct({ n: Schema.Number }))
const PerContact = Schema.Array(Schema.Struct({ contact: Schema.String, n: Schema.Number }))

for (const target of TestDatabase.targets()) {
  const Env = Unlocks.layerWith({ lease: "1 minute", retryDelays: [0, 0], providerTimeout: "1 minute", waitForOthers: "2 minutes" }).pipe(
    Layer.provideMerge(Quotes.layer),
    Layer.provideMerge(provider()),
    Layer.provideMerge(Layer.mergeAll(Crm.layer, Meter.layerSqlWith({ monthlyAllowance: ALLOWANCE }), Accounts.layerSql)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations, ContactsMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "600 seconds" })(`the unlock ledger on ${target.name}`, (it) => {
    it.effect.prop(
      "balance = grants - other spending - price x accounts held; nothing paid twice; the provider answered once per account and key",
      { steps: FastCheck.array(step, { minLength: 1, maxLength: 12 }) },
      ({ steps }) =>
        TestServices.provideLive(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const meter = yield* Meter.Meter
          const unlocks = yield* Unlocks.Unlocks
          const quotes = yield* Quotes.Quotes
          const control = yield* ProviderControl
          const { collectionId, contactIds, principal } = yield* workspaceWithContacts(CONTACTS)
          const ws = principal.workspace.id
          const requests: Array<Unlocks.UnlockRequest> = []
          let grants = ALLOWANCE
          let otherSpending = 0

          const attempt = (request: Unlocks.UnlockRequest) =>
            unlocks.unlock(principal, request).pipe(
              Effect.asVoid,
              Effect.catchAll((refusal) => expected.has(refusal.code) ? Effect.void : Effect.dieMessage(`unexpected refusal ${refusal.code}: ${refusal.why}`))
            )

          const check = Effect.gen(function*() {
            const balance = (yield* meter.account(ws)).balance
            const held = (yield* sql`SELECT count(*)::int AS n FROM contacts.unlocked WHERE workspace_id = ${ws}`.pipe(
              Effect.flatMap(Schema.decodeUnknown(Count))
            ))[0]?.n ?? -1
            assert.strictEqual(balance, grants - otherSpending - PRICE * held, `steps: ${JSON.stringify(steps)}`)
            // Per account, debits not refunded: never more than one.
            const paid = yield* sql`SELECT split_part(d.request_id, ':', 2) AS contact, count(*)::int AS n FROM core.credit_ledger d
              WHERE d.workspace_id = ${ws} AND d.kind = 'debit' AND d.operation = 'contact_unlock'
                AND NOT EXISTS (SELECT 1 FROM core.credit_ledger r WHERE r.refund_of = d.id AND r.kind = 'refund')
              GROUP BY 1`.pipe(Effect.flatMap(Schema.decodeUnknown(PerContact)))
            for (const row of paid) assert.strictEqual(row.n, 1, `account ${row.contact} paid ${row.n} times`)
            const answered = new Map<string, number>()
            for (const request of yield* control.answered) {
              if (request.workspaceId !== ws) continue
              for (const account of request.accounts) {
                const key = `${request.requestKey}:${account.record_id}`
                answered.set(key, (answered.get(key) ?? 0) + 1)
              }
            }
            for (const [key, n] of answered) assert.strictEqual(n, 1, `the provider answered ${key} ${n} times`)
          }).pipe(Effect.orDie)

          for (const s of steps) {
            const request = "index" in s && requests.length > 0 ? requests[s.index % requests.length] : undefined
            switch (s.kind) {
              case "quote": {
                const ids = contactIds.filter((_, i) => s.pick[i] === true)
                if (ids.length === 0) break
                const quote = yield* quotes.quote(principal, { collection_id: collectionId, record_ids: ids }).pipe(Effect.orDie)
                requests.push(Unlocks.requestFor(quote))
                break
              }
              case "unlock":
                if (request !== undefined) yield* attempt(request)
                break
              case "duplicate":
                if (request !== undefined) yield* Effect.all([attempt(request), attempt(request)], { concurrency: 2, discard: true })
                break
              case "crash": {
                if (request === undefined) break
                // The process dies while the provider works: its row stays, held under a lease nobody renews.
                const entered = yield* control.hangNext(request.idempotency_key)
                const fiber = yield* Effect.fork(attempt(request))
                const hung = yield* Effect.raceFirst(Effect.as(Deferred.await(entered), true), Effect.as(Fiber.await(fiber), false))
                yield* control.cancelHang(request.idempotency_key)
                if (hung) {
                  yield* sql`UPDATE contacts.unlocks SET queue_lease_until = '-infinity', queue_worker = 'killed-process'
                    WHERE workspace_id = ${ws} AND idempotency_key = ${request.idempotency_key}`.pipe(Effect.orDie)
                  yield* Fiber.interrupt(fiber)
                } else {
                  yield* Fiber.join(fiber)
                }
                break
              }
              case "resume":
                yield* unlocks.resume("property-worker")
                break
              case "fail":
                yield* control.failAccounts([contactIds[s.contact] ?? ""])
                break
              case "spend": {
                const spent = yield* meter.charge({ workspaceId: ws, operation: "search_opportunities", requestId: `req_${requests.length}`, credits: s.credits }).pipe(
                  Effect.option
                )
                if (spent._tag === "Some") otherSpending += s.credits
                break
              }
              case "grant":
                yield* meter.grant({ workspaceId: ws, credits: s.credits, note: "property grant" })
                grants += s.credits
                break
            }
            yield* check
          }
          // A worker finishes whatever a crash abandoned; then no account is left researching.
          yield* unlocks.resume("property-worker")
          yield* check
          const pending = yield* sql`SELECT count(*)::int AS n FROM contacts.unlocked WHERE workspace_id = ${ws} AND outcome = 'pending'`.pipe(
            Effect.flatMap(Schema.decodeUnknown(Count)),
            Effect.orDie
          )
          assert.strictEqual(pending[0]?.n, 0)
        })),
      // No wall-clock budget: twelve runs of up to twelve unlocks are slow on a busy machine, not wrong.
      { fastCheck: { numRuns: 12 }, timeout: 0 }
    )
  })
}
