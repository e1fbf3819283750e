// The contact unlock (decision 0064) in-process on PostgreSQL: latency of an unlock of fresh accounts (the
// transaction that inserts the unlock, claims and debits each account, claims the queue row; the sandbox provider's
// research; the settling transaction), of its replay under the same key, and of eight identical requests racing,
// against the quote of the same selection measured in the same run (the baseline: it reads the same selection and the
// balance, and seals a token).
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/unlock.ts [--iterations 60] [--keep]
//
// It creates bench_unlock_<random>, starts the application in-process (App.layer, migrations included, the sandbox
// provider without latency), a workspace with an owner, 10 x iterations x 2 contacts in one collection, and grants
// enough credits. Every iteration quotes then unlocks new accounts (1, then 10), replays that unlock, and races 8
// identical unlocks of another quote; it checks each unlock debited each account once. The database is dropped
// unless --keep.
import * as App from "@service/app/App"
import * as Quotes from "@service/contacts/Quotes"
import * as Unlocks from "@service/contacts/Unlocks"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import { Principal } from "@service/core/Principal"
import { Crm } from "@service/crm/Crm"
import * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { randomBytes } from "node:crypto"
import { cpus, loadavg } from "node:os"
import pg from "pg"
import { dropDatabase, stats } from "./Timing.js"

const args = process.argv.slice(2)
const option = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const iterations = Number(option("iterations") ?? "60")
const keep = args.includes("--keep")
const adminUrl = process.env["DATABASE_URL"]
if (adminUrl === undefined || adminUrl === "" || !(iterations >= 5)) {
  console.error("usage: DATABASE_URL=postgres://… npx tsx bench/unlock.ts [--iterations 60] [--keep]")
  process.exit(2)
}
const database = `bench_unlock_${randomBytes(4).toString("hex")}`
const benchUrl = (() => {
  const url = new URL(adminUrl)
  url.pathname = `/${database}`
  return url.toString()
})()
const crypto = Crypto.layer({
  keyring: { active: "bench", keys: new Map([["bench", Redacted.make(new Uint8Array(randomBytes(32)))]]) },
  fingerprintKey: Redacted.make(new Uint8Array(randomBytes(32)))
})
const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 })
const log = (line: string) => process.stderr.write(`${line}\n`)

const main = async () => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${database}`)
  const rt = ManagedRuntime.make(App.layer(Database.layerPgWith({ url: Redacted.make(benchUrl) }), crypto).pipe(Layer.orDie))
  try {
    const perIteration = 1 + 10 + 10
    const { collectionId, contactIds, principal } = await rt.runPromise(quiet(Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const crm = yield* Crm
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("bench-unlock"), name: "bench unlock" })
      const person = yield* accounts.createPerson({ displayName: "Bench owner" })
      yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "owner" })
      const ids: Array<string> = []
      for (let i = 0; i < iterations * perIteration; i++) {
        const outcome = yield* crm.applyContact(workspace.id, { name: `Contacto ${i}`, email: `c${i}@bench-${i % 97}.mx` })
        if (outcome._tag === "Created") ids.push(outcome.contact.id)
      }
      const collection = yield* crm.createCollection(workspace.id, { name: "Bench", contactIds: ids })
      yield* (yield* Meter.Meter).grant({ workspaceId: workspace.id, credits: 1_000_000, note: "bench" })
      return {
        collectionId: collection.id,
        contactIds: ids,
        principal: new Principal({
          workspace,
          person: Option.some(person),
          role: "owner",
          scopes: ["commercial:read", "commercial:activate"],
          credential: { id: CredentialId.make("cred_bench_unlock"), kind: "api_key" }
        })
      }
    }).pipe(Effect.orDie)))
    log(`${database}: ${contactIds.length} contacts, ${iterations} iterations`)

    const samples = { quote1: [] as Array<number>, unlock1: [] as Array<number>, quote10: [] as Array<number>, unlock10: [] as Array<number>, replay10: [] as Array<number>, race8: [] as Array<number> }
    let next = 0
    const take = (n: number) => contactIds.slice(next, (next += n))
    const time = async <A>(bucket: Array<number>, f: () => Promise<A>): Promise<A> => {
      const started = performance.now()
      const result = await f()
      bucket.push(performance.now() - started)
      return result
    }
    const run = <A, E>(effect: Effect.Effect<A, E, Quotes.Quotes | Unlocks.Unlocks>) => rt.runPromise(quiet(Effect.orDie(effect)))
    const quote = (ids: ReadonlyArray<string>) => run(Effect.flatMap(Quotes.Quotes, (q) => q.quote(principal, { collection_id: collectionId, record_ids: ids })))
    const unlock = (request: Unlocks.UnlockRequest) => run(Effect.flatMap(Unlocks.Unlocks, (u) => u.unlock(principal, request)))
    let failures = 0
    for (let i = 0; i < iterations; i++) {
      const one = take(1)
      const q1 = await time(samples.quote1, () => quote(one))
      const u1 = await time(samples.unlock1, () => unlock(Unlocks.requestFor(q1)))
      const ten = take(10)
      const q10 = await time(samples.quote10, () => quote(ten))
      const u10 = await time(samples.unlock10, () => unlock(Unlocks.requestFor(q10)))
      const again = await time(samples.replay10, () => unlock(Unlocks.requestFor(q10)))
      const raced = take(10)
      const qr = await quote(raced)
      const answers = await time(samples.race8, () => Promise.all(Array.from({ length: 8 }, () => unlock(Unlocks.requestFor(qr)))))
      if (u1.charged_credits !== q1.total_credits || u10.charged_credits !== q10.total_credits || !again.replayed || again.unlock_id !== u10.unlock_id) failures++
      if (new Set(answers.map((a) => a.unlock_id)).size !== 1 || answers.filter((a) => !a.replayed).length !== 1) failures++
    }
    const debits = await new pg.Client({ connectionString: benchUrl })
    await debits.connect()
    const counted = await debits.query("SELECT count(*)::int AS n, count(DISTINCT split_part(request_id, ':', 2))::int AS accounts FROM core.credit_ledger WHERE kind = 'debit' AND operation = 'contact_unlock'")
    await debits.end()
    const row: unknown = counted.rows[0]
    const base = stats(samples.quote1).p50
    const base10 = stats(samples.quote10).p50
    console.log(`Contact unlock on PostgreSQL, ${iterations} iterations, ${cpus().length} cores, load ${loadavg().map((n) => n.toFixed(1)).join(" ")}`)
    console.log("| call | p50 ms | p95 ms | p50 vs the quote of the same selection |")
    console.log("| - | -: | -: | -: |")
    const line = (label: string, xs: Array<number>, baseline: number) => {
      const s = stats(xs)
      console.log(`| ${label} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${fmt(s.p50 / baseline)}x |`)
    }
    line("quote, 1 account (baseline)", samples.quote1, base)
    line("unlock, 1 account", samples.unlock1, base)
    line("quote, 10 accounts (baseline)", samples.quote10, base10)
    line("unlock, 10 accounts", samples.unlock10, base10)
    line("replay of that unlock (same key)", samples.replay10, base10)
    line("8 identical unlocks of 10 racing (all answered)", samples.race8, base10)
    console.log(`checks: ${failures} failed iterations; debits ${JSON.stringify(row)} (one per account unlocked: ${iterations * perIteration})`)
  } finally {
    await rt.dispose()
    if (!keep) await dropDatabase(admin, database)
    await admin.end()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
