import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Accounts from "../src/Accounts.js"
import * as CoreMigrations from "../src/CoreMigrations.js"
import { CredentialId, WorkspaceSlug } from "../src/Ids.js"
import * as Meter from "../src/Meter.js"
import * as Operation from "../src/Operation.js"
import { Principal } from "../src/Principal.js"
import * as RateLimiter from "../src/RateLimiter.js"
import * as Refusal from "../src/Refusal.js"
import { RequestId } from "../src/RequestContext.js"

class Gone extends Schema.TaggedError<Gone>()("Gone", { code: Schema.Literal("gone") }) {}

const codec = Refusal.makeCodec({
  key: "toy",
  identifier: "Toy",
  tag: "Gone",
  is: (u: unknown): u is Gone => u instanceof Gone,
  rules: { gone: { status: 404, retryable: false, action: "search_again", description: "the item is gone" } },
  code: (r) => r.code,
  message: () => "It is gone.",
  toBlock: (r) => ({ code: r.code }),
  block: Schema.Struct({ code: Schema.String }),
  invalidInput: () => new Gone({ code: "gone" }),
  invalidInputCode: "gone",
  codeField: "code",
  sample: (code) => new Gone({ code })
})

const Input = Schema.Struct({ word: Schema.String })

// Metered unless it is the free twin; "gone" is refused, "boom" is a defect, anything else succeeds.
const toy = (name: string, metered: boolean) =>
  Operation.make({
    name,
    title: name,
    description: name,
    input: Input,
    modelInput: Input,
    output: Schema.Struct({ word: Schema.String }),
    refusals: codec,
    refuses: ["gone"],
    scopes: ["market_data:read"],
    annotations: Operation.readOnly,
    metered,
    paginates: false,
    capability: { question: "?", requires: "word", example: { word: "x" } },
    http: { method: "POST", path: `/${name}`, input: { kind: "body" } },
    cli: { words: [name] },
    run: (input) =>
      input.word === "gone" ? Effect.fail(new Gone({ code: "gone" })) : input.word === "boom" ? Effect.die("boom") : Effect.succeed(input)
  })
const paid = toy("toy_paid", true)
const free = toy("toy_free", false)

const allowance = 3

// The in-memory ledger (over PGlite only for the workspaces) and the SQL ledger on every engine: same tests.
const adapters = [
  { name: "memory", meter: Meter.layerMemory({ monthlyAllowance: allowance }), target: TestDatabase.pglite },
  ...TestDatabase.parityTargets().map((target) => ({
    name: `sql on ${target.name}`,
    meter: Meter.layerSqlWith({ monthlyAllowance: allowance }),
    target
  }))
]

for (const adapter of adapters) {
  const Env = Layer.mergeAll(adapter.meter, RateLimiter.layerUnlimited, Accounts.layerSql).pipe(
    Layer.provideMerge(TestDatabase.withMigrations(adapter.target, [CoreMigrations.migrations]))
  )

  layer(Env, { timeout: "120 seconds" })(`Meter (${adapter.name})`, (it) => {
    const workspace = Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      return yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(`m${Math.random().toString(36).slice(2, 10)}`), name: "Meter" })
    })
    const principal = Effect.map(workspace, (ws) =>
      new Principal({
        workspace: ws,
        person: Option.none(),
        role: "member",
        scopes: ["market_data:read"],
        credential: { id: CredentialId.make("cred_meter"), kind: "api_key" }
      }))
    let n = 0
    const call = (who: Principal, op: typeof paid, word: string) =>
      Operation.execute(op, {
        principal: who,
        entrypoint: "http",
        requestId: RequestId.make(`req_meter_${(n += 1).toString().padStart(12, "0")}`),
        input: { word },
        canonical: true
      })

    it.effect("grants the monthly allowance once, debits each charge, refuses past zero and records the refusal", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        // Reading the balance alone grants the month's allowance too.
        assert.strictEqual(yield* meter.balance(ws.id), allowance)
        const charge = { workspaceId: ws.id, operation: "op", requestId: "req_1", credits: 1 }
        for (let i = 0; i < allowance; i++) yield* meter.charge(charge)
        const refused = yield* Effect.flip(meter.charge(charge))
        assert.strictEqual(refused._tag, "CreditsExhausted")
        assert.strictEqual(refused.balance, 0)
        assert.strictEqual(refused.semanticCode, "credits_exhausted")
        assert.match(refused.renewsOn, /^\d{4}-\d{2}-01$/)
        const account = yield* meter.account(ws.id)
        assert.strictEqual(account.balance, 0)
        assert.strictEqual(account.monthly_allowance, allowance)
        assert.deepStrictEqual(account.consumption, [
          { operation: "op", calls: allowance, credits: allowance, refunds: 0, refunded_credits: 0, refused_for_credits: 1 }
        ])
        // The refusal is the newest entry, for zero credits, with its request and reason.
        assert.deepStrictEqual(
          account.history.map(({ at: _, ...entry }) => entry)[0],
          { kind: "refused", operation: "op", credits: 0, request_id: "req_1", note: "balance below the price" }
        )
        // An operator grant makes the next charge pass.
        yield* meter.grant({ workspaceId: ws.id, credits: 2, note: "test top-up" })
        yield* meter.charge(charge)
        assert.strictEqual((yield* meter.account(ws.id)).balance, 1)
        assert.strictEqual(yield* meter.balance(ws.id), 1)
      }))

    // Only the SQL ledger takes part in a caller's transaction.
    if (adapter.name !== "memory") {
      it.effect("a first charge inside a caller's transaction that rolls back takes the month's grant with it; the next call grants it again", () =>
        Effect.gen(function*() {
          const meter = yield* Meter.Meter
          const sql = yield* SqlClient.SqlClient
          const ws = yield* workspace
          const charge = { workspaceId: ws.id, operation: "op", requestId: "req_rolled_back", credits: 1 }
          const rolledBack = yield* Effect.flip(sql.withTransaction(Effect.zipRight(meter.charge(charge), Effect.fail("roll back" as const))))
          assert.strictEqual(rolledBack, "roll back")
          assert.strictEqual(yield* meter.balance(ws.id), allowance)
          yield* meter.charge(charge)
          assert.strictEqual(yield* meter.balance(ws.id), allowance - 1)
        }))
    }

    // Only the SQL ledger holds debits in memory between writes (decision 0080).
    if (adapter.name !== "memory") {
      const debits = (workspaceId: string) =>
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`SELECT credits::int AS credits, request_id, note FROM core.credit_ledger
            WHERE workspace_id = ${workspaceId} AND kind = 'debit' ORDER BY id`.pipe(
            Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({
              credits: Schema.Number,
              request_id: Schema.String,
              note: Schema.NullOr(Schema.String)
            }))))
          )).pipe(Effect.orDie)

      it.effect("a served call's debit is held until the write, which the scope's end makes; nothing acknowledged is lost", () =>
        Effect.gen(function*() {
          const ws = yield* workspace
          const bill = (i: number) => ({ workspaceId: ws.id, operation: "op", requestId: `req_held${i}`, credits: 1 })
          yield* Effect.scoped(Effect.gen(function*() {
            // A node whose interval never comes in this test.
            const node = yield* Meter.makeSql({ monthlyAllowance: allowance, flushEvery: "1 hour" })
            yield* node.admit(bill(0))
            yield* node.settle(bill(0))
            yield* node.admit(bill(1))
            yield* node.settle(bill(1))
            // Served twice, written never: the admission counted the held debits, the table has none yet.
            assert.deepStrictEqual(yield* debits(ws.id), [])
          }))
          // The node stopped: its held debits were written in order as it closed.
          assert.deepStrictEqual((yield* debits(ws.id)).map((d) => [d.credits, d.request_id]), [[-1, "req_held0"], [-1, "req_held1"]])
        }))

      it.effect("two nodes serving the last credit: the later write clamps at zero and records the call served for nothing", () =>
        Effect.gen(function*() {
          const ws = yield* workspace
          const bill = (i: number) => ({ workspaceId: ws.id, operation: "op", requestId: `req_two${i}`, credits: 1 })
          yield* Effect.scoped(Effect.gen(function*() {
            const one = yield* Meter.makeSql({ monthlyAllowance: allowance, flushEvery: "1 hour" })
            const two = yield* Meter.makeSql({ monthlyAllowance: allowance, flushEvery: "1 hour" })
            // Each node admits up to the balance it read, minus its own held debits: together they serve more
            // than the balance covers.
            yield* two.admit(bill(10))
            for (let i = 0; i < allowance; i++) {
              yield* one.admit(bill(i))
              yield* one.settle(bill(i))
            }
            yield* two.settle(bill(10))
            yield* one.flush
            yield* two.flush
            // Never below zero, never more than served: the later write found the balance spent.
            assert.strictEqual(yield* one.balance(ws.id), 0)
            assert.isTrue(Either.isLeft(yield* Effect.either(two.admit(bill(11)))))
          }))
          const written = yield* debits(ws.id)
          assert.deepStrictEqual(written.map((d) => d.credits), [-1, -1, -1, 0])
          assert.strictEqual(written[3]?.note, "served after concurrent calls spent the balance")
        }))
    }

    it.effect("refunds a charge exactly once, however often it is asked", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        const charge = yield* meter.charge({ workspaceId: ws.id, operation: "op", requestId: "req_2", credits: 1 })
        yield* meter.refund(charge, "failed")
        yield* meter.refund(charge, "failed again")
        const account = yield* meter.account(ws.id)
        assert.strictEqual(account.balance, allowance)
        assert.deepStrictEqual(account.consumption, [{ operation: "op", calls: 0, credits: 0, refunds: 1, refunded_credits: 1, refused_for_credits: 0 }])
        // One refund row, with the first reason: the second ask wrote nothing.
        assert.deepStrictEqual(account.history.map((e) => [e.kind, e.credits, e.note]), [
          ["refund", 1, "failed"],
          ["debit", -1, null],
          ["grant", allowance, "monthly allowance"]
        ])
      }))

    it.effect("shows debits and refunds apart: consumption counts the refund, history lists every entry newest first", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        yield* meter.grant({ workspaceId: ws.id, credits: 20, note: "credits for unlocks" })
        const unlock = (requestId: string) => meter.charge({ workspaceId: ws.id, operation: "contact_unlock", requestId, credits: 5 })
        yield* unlock("req_unlock_a")
        const failed = yield* unlock("req_unlock_b")
        yield* meter.refund(failed, "provider returned nothing for the account")
        const account = yield* meter.account(ws.id)
        assert.strictEqual(account.balance, 20 + allowance - 5)
        assert.deepStrictEqual(account.consumption, [
          { operation: "contact_unlock", calls: 1, credits: 5, refunds: 1, refunded_credits: 5, refused_for_credits: 0 }
        ])
        assert.deepStrictEqual(account.history.map(({ at: _, ...entry }) => entry), [
          { kind: "refund", operation: "contact_unlock", credits: 5, request_id: "req_unlock_b", note: "provider returned nothing for the account" },
          { kind: "debit", operation: "contact_unlock", credits: -5, request_id: "req_unlock_b", note: null },
          { kind: "debit", operation: "contact_unlock", credits: -5, request_id: "req_unlock_a", note: null },
          // The month's allowance is granted on the first charge, after the operator's grant.
          { kind: "grant", operation: null, credits: allowance, request_id: null, note: "monthly allowance" },
          { kind: "grant", operation: null, credits: 20, request_id: null, note: "credits for unlocks" }
        ])
        for (const entry of account.history) assert.match(entry.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
        const times = account.history.map((e) => e.at)
        assert.deepStrictEqual(times, [...times].sort().reverse())
        // The ledger sums to the balance.
        assert.strictEqual(account.history.reduce((sum, e) => sum + e.credits, 0), account.balance)
      }))

    it.effect("history keeps the last 50 entries", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        yield* meter.grant({ workspaceId: ws.id, credits: 60, note: "many calls" })
        for (let i = 0; i < 60; i++) yield* meter.charge({ workspaceId: ws.id, operation: "op", requestId: `req_h${i}`, credits: 1 })
        const { history } = yield* meter.account(ws.id)
        assert.strictEqual(history.length, 50)
        assert.deepStrictEqual([history[0]?.request_id, history[49]?.request_id], ["req_h59", "req_h10"])
      }))

    it.effect("concurrent charges never spend more than the balance", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) =>
            Effect.either(meter.charge({ workspaceId: ws.id, operation: "op", requestId: `req_c${i}`, credits: 1 }))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Either.isRight).length, allowance)
        assert.strictEqual((yield* meter.account(ws.id)).balance, 0)
      }))

    it.effect("calls admitted together for the last credit are all served, debited down to zero and never below", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const ws = yield* workspace
        const bill = (i: number) => ({ workspaceId: ws.id, operation: "op", requestId: `req_s${i}`, credits: 1 })
        yield* meter.admit(bill(0))
        // Every call of the burst is admitted before any settles: the balance covered each when it was read.
        yield* Effect.forEach(Array.from({ length: allowance + 2 }, (_, i) => i), (i) => meter.admit(bill(i)))
        yield* Effect.all(Array.from({ length: allowance + 2 }, (_, i) => meter.settle(bill(i))), { concurrency: "unbounded" })
        const account = yield* meter.account(ws.id)
        assert.strictEqual(account.balance, 0)
        // Served calls all count; the two past the balance cost nothing (an under-charge, never an over-charge).
        assert.deepStrictEqual(account.consumption.map((c) => [c.calls, c.credits]), [[allowance + 2, allowance]])
        const exhausted = yield* Effect.flip(meter.admit(bill(99)))
        assert.strictEqual(exhausted._tag, "CreditsExhausted")
      }))

    it.effect("through execute: a success costs one credit, a refusal or a defect nothing, a free operation nothing even at zero", () =>
      Effect.gen(function*() {
        const meter = yield* Meter.Meter
        const who = yield* principal
        yield* call(who, paid, "hola")
        assert.strictEqual(Either.getLeft(yield* Effect.either(call(who, paid, "gone"))).pipe(Option.map((e) => e._tag), Option.getOrNull), "Refused")
        const defect = yield* Effect.exit(call(who, paid, "boom"))
        assert.isTrue(defect._tag === "Failure")
        let account = yield* meter.account(who.workspace.id)
        assert.strictEqual(account.balance, allowance - 1)
        // The refused call and the defect wrote nothing to the ledger: only the grant and the served call's debit.
        assert.deepStrictEqual(account.consumption, [
          { operation: "toy_paid", calls: 1, credits: 1, refunds: 0, refunded_credits: 0, refused_for_credits: 0 }
        ])
        assert.deepStrictEqual(account.history.map((entry) => entry.kind), ["debit", "grant"])
        yield* call(who, paid, "dos")
        yield* call(who, paid, "tres")
        const exhausted = yield* Effect.flip(call(who, paid, "cuatro"))
        assert.strictEqual(exhausted._tag, "CreditsExhausted")
        // Nothing ran for the refused call, and discovery-like free operations still answer.
        assert.deepStrictEqual(yield* call(who, free, "gratis"), { word: "gratis" })
        account = yield* meter.account(who.workspace.id)
        assert.strictEqual(account.balance, 0)
        assert.deepStrictEqual(account.consumption, [
          { operation: "toy_paid", calls: 3, credits: 3, refunds: 0, refunded_credits: 0, refused_for_credits: 1 }
        ])
        const served = yield* meter.usage(who.workspace.id)
        assert.deepStrictEqual(served.map((u) => [u.operation, u.units]), [["toy_paid", 3]])
      }))
  })
}
