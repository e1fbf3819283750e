import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import { Principal } from "@service/core/Principal"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as ContactsMigrations from "../src/ContactsMigrations.js"
import * as Quotes from "../src/Quotes.js"

const ALLOWANCE = 12

/** A workspace with an owner, four contacts and a collection of the first three. */
const setUp = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const crm = yield* Crm.Crm
  const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(`quote-${Math.random().toString(36).slice(2, 8)}`), name: "quotes" })
  const person = yield* accounts.createPerson({ displayName: "Ana Ruiz" })
  const principal = new Principal({
    workspace,
    person: Option.some(person),
    role: "owner",
    scopes: [],
    credential: { id: CredentialId.make("cred_quotes"), kind: "api_key" }
  })
  const contactIds: Array<string> = []
  for (const [name, email] of [["Luis Pérez", "luis@norte.mx"], ["Eva Gómez", "eva@norte.mx"], ["Raúl Díaz", "raul@norte.mx"], ["Sin Colección", "otro@sur.mx"]]) {
    const outcome = yield* crm.applyContact(workspace.id, { name, email })
    if (outcome._tag !== "Created") return yield* Effect.dieMessage(`not created: ${outcome._tag}`)
    contactIds.push(outcome.contact.id)
  }
  const collection = yield* crm.createCollection(workspace.id, { name: "Norte", contactIds: contactIds.slice(0, 3) })
  return { principal, contactIds, collectionId: collection.id }
}).pipe(Effect.orDie)

const refusalCode = <A, R>(effect: Effect.Effect<A, { readonly code: string }, R>) => Effect.map(Effect.flip(effect), (refusal) => refusal.code)

for (const target of TestDatabase.targets()) {
  const Env = Quotes.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Crm.layer, Meter.layerSqlWith({ monthlyAllowance: ALLOWANCE }), Accounts.layerSql)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations, ContactsMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`contact quotes on ${target.name}`, (it) => {
    it.effect("prices every selected account, says the balance, and seals a 10-minute token bound to the selection; no coordinates", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-26T10:00:00Z"))
        const quotes = yield* Quotes.Quotes
        const meter = yield* Meter.Meter
        const { collectionId, contactIds, principal } = yield* setUp
        const selected = [contactIds[2] ?? "", contactIds[0] ?? "", contactIds[0] ?? ""]
        const quote = yield* quotes.quote(principal, { collection_id: collectionId, record_ids: selected })
        assert.deepStrictEqual(quote.accounts.map((a) => [a.record_id, a.already_unlocked, a.credits]), [
          ...[contactIds[0] ?? "", contactIds[2] ?? ""].sort().map((id) => [id, false, 5])
        ])
        assert.deepStrictEqual([quote.total_credits, quote.credits_per_account, quote.balance, quote.sufficient], [10, 5, ALLOWANCE, true])
        assert.strictEqual(quote.expires_at, "2026-11-26T10:10:00.000Z")
        assert.match(quote.idempotency_key, /^unl_[0-9a-f]{32}$/)
        assert.include(quote.summary, "Unlocking 2 accounts will cost 10 insight credits")
        assert.include(quote.summary, "must confirm spending at most 10 credits")
        // No contact coordinate anywhere in the answer.
        const text = JSON.stringify(quote)
        for (const coordinate of ["luis@norte.mx", "raul@norte.mx", "norte.mx"]) assert.notInclude(text, coordinate)

        const claims = yield* quotes.openToken(quote.quote_token)
        assert.deepStrictEqual(claims, {
          v: 1,
          workspace_id: principal.workspace.id,
          principal: `person:${Option.getOrThrow(principal.person).id}`,
          idempotency_key: quote.idempotency_key,
          collection_id: collectionId,
          record_ids: [contactIds[0] ?? "", contactIds[2] ?? ""].sort(),
          total_credits: 10,
          expires_at: "2026-11-26T10:10:00.000Z"
        })
        assert.strictEqual(yield* refusalCode(quotes.openToken(`${quote.quote_token.slice(0, -4)}AAAA`)), "invalid_field_value")
        // Quoting spends nothing.
        assert.strictEqual((yield* meter.account(principal.workspace.id)).balance, ALLOWANCE)
      }))

    it.effect("already unlocked accounts cost zero; a balance below the total is not sufficient", () =>
      Effect.gen(function*() {
        const quotes = yield* Quotes.Quotes
        const sql = yield* SqlClient.SqlClient
        const meter = yield* Meter.Meter
        const { collectionId, contactIds, principal } = yield* setUp
        // 5 of the month's 12 credits spent elsewhere: 7 left.
        yield* meter.charge({ workspaceId: principal.workspace.id, operation: "search_opportunities", requestId: "req_elsewhere", credits: 5 })
        yield* sql`INSERT INTO contacts.unlocked (workspace_id, contact_id, unlock_id, unlocked_at)
          VALUES (${principal.workspace.id}, ${contactIds[1] ?? ""}, 'unl_earlier', now())`
        const quote = yield* quotes.quote(principal, { collection_id: collectionId, record_ids: contactIds.slice(0, 3) })
        assert.deepStrictEqual(quote.accounts.filter((a) => a.already_unlocked).map((a) => [a.record_id, a.credits]), [[contactIds[1] ?? "", 0]])
        assert.deepStrictEqual([quote.total_credits, quote.balance, quote.sufficient], [10, ALLOWANCE - 5, false])
        assert.include(quote.summary, "1 account is already unlocked and free")
        assert.include(quote.summary, "not enough")
        const free = yield* quotes.quote(principal, { collection_id: collectionId, record_ids: [contactIds[1] ?? ""] })
        assert.deepStrictEqual([free.total_credits, free.sufficient], [0, true])
        assert.include(free.summary, "already unlocked: unlocking costs nothing")
      }).pipe(Effect.orDie))

    it.effect("refuses a collection of another workspace and records outside the collection", () =>
      Effect.gen(function*() {
        const quotes = yield* Quotes.Quotes
        const mine = yield* setUp
        const theirs = yield* setUp
        assert.strictEqual(yield* refusalCode(quotes.quote(mine.principal, { collection_id: theirs.collectionId, record_ids: [theirs.contactIds[0] ?? ""] })), "collection_not_found")
        const outside = yield* Effect.flip(quotes.quote(mine.principal, { collection_id: mine.collectionId, record_ids: [mine.contactIds[0] ?? "", mine.contactIds[3] ?? ""] }))
        assert.deepStrictEqual([outside.code, outside.field], ["records_not_in_collection", "record_ids"])
        assert.include(outside.why, mine.contactIds[3] ?? "?")
      }))
  })
}
