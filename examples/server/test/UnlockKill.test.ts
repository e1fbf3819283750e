// Contact unlocks from real server processes on one PostgreSQL (skipped without DATABASE_URL): a server killed with
// SIGKILL after the unlock's debit committed, while its provider call is in flight, loses nothing and spends nothing
// twice. The retry with the same idempotency key, on another server, takes the research over once its lease ran out
// and answers it; an unlock nobody retries is finished by a worker process, and its retry reads the stored answer.
//
// The killed servers run the sandbox provider with a latency of ten minutes (`SERVICE_CONTACT_SANDBOX_LATENCY`), so
// the kill always lands between the debit and the provider's answer. Every wait is on a line a process prints or on a
// polled condition of the database; timeouts are hang guards.
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import * as Quotes from "@service/contacts/Quotes"
import * as Unlocks from "@service/contacts/Unlocks"
import * as Accounts from "@service/core/Accounts"
import * as Meter from "@service/core/Meter"
import { Crm } from "@service/crm/Crm"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { rest } from "./support/Rest.js"
import { adminUrl, freshDatabase, hangGuard, startServer, startWorker } from "./support/Processes.js"

const ACTIVATE_KEY = "svc_key_unlock_kill_activate_0123456789abcdef"
const PRICE = 5

const QuoteBody = Schema.parseJson(Quotes.Quote)
const UnlockBody = Schema.parseJson(Unlocks.Unlock)
const Counted = Schema.Array(Schema.Struct({ kind: Schema.String, n: Schema.Number }))
const Rows = Schema.Array(Schema.Struct({ id: Schema.String, done: Schema.Boolean }))

const json = { "x-api-key": ACTIVATE_KEY, "content-type": "application/json" }

describe.skipIf(adminUrl === "")("contact unlocks from server processes on PostgreSQL", () => {
  it.live("SIGKILL between the debit and the provider's answer: the retry finishes it without a second debit; a worker finishes one nobody retries", () =>
    Effect.scoped(Effect.gen(function*() {
      // A killed server's research is taken over once its lease runs out: a short one keeps the test short. No
      // embedded worker, so the retry itself takes the first unlock over.
      const { env, services } = yield* freshDatabase({ SERVICE_CONTACT_UNLOCK_LEASE: "2 seconds", SERVICE_EMBEDDED_WORKER: "false" })
      const slow = { ...env, SERVICE_CONTACT_SANDBOX_LATENCY: "10 minutes" }
      const first = yield* startServer("unlock-server-killed-1", slow)

      // A key that may spend, owned by the demo workspace's owner, and a collection of four contacts.
      const { collectionId, contactIds, workspaceId } = yield* Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        const crm = yield* Crm
        const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
        const owner = (yield* accounts.listMembers(demo.id)).find((member) => member.role === "owner")
        yield* accounts.issueCredential({
          workspaceId: demo.id,
          kind: "api_key",
          label: "unlock kill",
          scopes: ["commercial:read", "commercial:activate"],
          secret: Redacted.make(ACTIVATE_KEY),
          personId: owner?.person.id
        })
        const ids: Array<string> = []
        for (const name of ["Ana", "Luis", "Eva", "Raúl"]) {
          const outcome = yield* crm.applyContact(demo.id, { name, email: `${name.toLowerCase()}@kill-${name.length}.mx` })
          if (outcome._tag !== "Created") return yield* Effect.dieMessage(`not created: ${outcome._tag}`)
          ids.push(outcome.contact.id)
        }
        const collection = yield* crm.createCollection(demo.id, { name: "Kill", contactIds: ids })
        return { collectionId: collection.id, contactIds: [...ids].sort(), workspaceId: demo.id }
      }).pipe(Effect.provide(services), Effect.orDie)

      const ledger = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT kind, count(*)::int AS n FROM core.credit_ledger
          WHERE workspace_id = ${workspaceId} AND operation = 'contact_unlock' GROUP BY kind ORDER BY kind`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Counted)),
          Effect.map((rows) => Object.fromEntries(rows.map((row) => [row.kind, row.n])))
        )).pipe(Effect.provide(services), Effect.orDie)
      const balance = Effect.flatMap(Meter.Meter, (meter) => meter.account(workspaceId)).pipe(
        Effect.map((account) => account.balance),
        Effect.provide(services)
      )
      const unlockRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`SELECT id, result IS NOT NULL AS done FROM contacts.unlocks WHERE workspace_id = ${workspaceId} ORDER BY created_at`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Rows))
        )).pipe(Effect.provide(services), Effect.orDie)
      const waitFor = <A>(read: Effect.Effect<A>, ready: (a: A) => boolean) =>
        read.pipe(Effect.flatMap((a) => (ready(a) ? Effect.succeed(a) : Effect.fail("waiting" as const))), Effect.retry(Schedule.spaced("100 millis")))

      /** Quotes `ids` on `port` and sends the unlock without waiting for an answer that will never come. */
      const quoteAndSend = (port: number, ids: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const quoted = yield* rest(port, "POST", "/api/v1/workspaces/demo/contacts/quote", json, JSON.stringify({ collection_id: collectionId, record_ids: ids }))
          assert.strictEqual(quoted.status, 200, quoted.text)
          const body = JSON.stringify(Unlocks.requestFor(Schema.decodeUnknownSync(QuoteBody)(quoted.text)))
          // The connection dies with the server: what a client sees is a network error, and it retries.
          yield* Effect.forkScoped(Effect.exit(rest(port, "POST", "/api/v1/workspaces/demo/contacts/unlock", json, body)))
          return body
        })

      const before = yield* balance
      // 1. The first server debits two accounts and dies while its provider call is in flight.
      const firstBody = yield* quoteAndSend(first.port, contactIds.slice(0, 2))
      yield* waitFor(ledger, (counted) => counted["debit"] === 2)
      yield* Effect.promise(() => first.server.stop("SIGKILL"))
      assert.strictEqual(yield* balance, before - 2 * PRICE)
      assert.deepStrictEqual((yield* unlockRows).map((row) => row.done), [false])

      // The client retries with the same key on another server: it waits out the lease, takes the research over and
      // answers; nothing is debited again.
      const second = yield* startServer("unlock-server", env)
      const retried = yield* rest(second.port, "POST", "/api/v1/workspaces/demo/contacts/unlock", json, firstBody)
      assert.strictEqual(retried.status, 200, retried.text)
      const answer = Schema.decodeUnknownSync(UnlockBody)(retried.text)
      assert.isTrue(answer.replayed)
      assert.deepStrictEqual([answer.charged_credits, answer.refunded_credits], [2 * PRICE, 0])
      assert.deepStrictEqual(answer.accounts.map((a) => a.record_id), contactIds.slice(0, 2))
      for (const account of answer.accounts) assert.include(["found", "not_found"], account.outcome)
      assert.deepStrictEqual(yield* ledger, { debit: 2 })
      assert.strictEqual(yield* balance, before - 2 * PRICE)

      // 2. Another server dies the same way, and nobody retries: a worker process finishes the research.
      const third = yield* startServer("unlock-server-killed-2", slow)
      const thirdBody = yield* quoteAndSend(third.port, contactIds.slice(2))
      yield* waitFor(ledger, (counted) => counted["debit"] === 4)
      yield* Effect.promise(() => third.server.stop("SIGKILL"))
      const worker = yield* startWorker("unlock-worker", env)
      const rows = yield* waitFor(unlockRows, (all) => all.length === 2 && all.every((row) => row.done))
      yield* Effect.promise(() => worker.stop())
      // Its retry reads the stored answer.
      const late = yield* rest(second.port, "POST", "/api/v1/workspaces/demo/contacts/unlock", json, thirdBody)
      assert.strictEqual(late.status, 200, late.text)
      const lateAnswer = Schema.decodeUnknownSync(UnlockBody)(late.text)
      assert.deepStrictEqual([lateAnswer.unlock_id, lateAnswer.replayed, lateAnswer.charged_credits], [rows[1]?.id, true, 2 * PRICE])
      assert.deepStrictEqual(yield* ledger, { debit: 4 })
      assert.strictEqual(yield* balance, before - 4 * PRICE)
    })), hangGuard)
})
