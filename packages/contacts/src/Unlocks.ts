/**
 * The contact unlock (decision 0064): the paid step after a quote, which never spends twice.
 *
 * An unlock checks, before any spend and each with its own refusal: `confirm`, the quote token (issued for this
 * workspace, caller, selection and idempotency key; not expired), the price recomputed now against the approved
 * `max_credits`, and the balance. The kernel checks the `commercial:activate` scope first, on every call.
 *
 * Then one transaction inserts the unlock under `(workspace, idempotency_key)` (unique), claims its accounts in
 * `contacts.unlocked` (an account another unlock already holds costs nothing), and debits each claimed account on
 * the credit ledger. Research follows as work on a {@link WorkQueue} row the request itself holds: it calls the
 * provider with the idempotency key as request key, settles found and not found accounts, refunds failed ones in
 * the same ledger, and stores the answer. Every retry with the key answers that stored result; a retry that finds
 * the work abandoned (its process died, its lease ran out) takes it over, and so does any worker; a provider that
 * stays unavailable is retried on the queue's schedule and, after the last attempt, everything is refunded.
 *
 * @since 0.1.0
 */
import { Meter } from "@service/core/Meter"
import type { Principal } from "@service/core/Principal"
import * as WorkQueue from "@service/core/WorkQueue"
import { Crm } from "@service/crm/Crm"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { Account, ContactProvider, Coordinates, ProviderUnavailable, type Result } from "./ContactProvider.js"
import { type ContactsRefusal, refuse } from "./ContactsRefusal.js"
import { principalKey, select, sortedUnique } from "./internal/selection.js"
import { plural } from "./internal/words.js"
import { Id, priceConfig, type Quote, QuoteRequest, Quotes } from "./Quotes.js"
import * as SandboxProvider from "./SandboxProvider.js"

/** What became of one selected account. @since 0.1.0 @category models */
export const UnlockedAccount = Schema.Struct({
  record_id: Schema.String,
  name: Schema.NullOr(Schema.String),
  outcome: Schema.Literal("found", "not_found", "failed", "already_unlocked").annotations({
    description: "found: coordinates below; not_found: researched, nothing found (paid); failed: refunded; already_unlocked: free."
  }),
  credits: Schema.Number.annotations({ description: "What this account cost, refunds deducted." }),
  coordinates: Schema.NullOr(Coordinates),
  reason: Schema.NullOr(Schema.String).annotations({ description: "Why it failed, or why an already unlocked account has no coordinates yet." })
})
/** @since 0.1.0 @category models */
export type UnlockedAccount = typeof UnlockedAccount.Type

const unlockFields = {
  unlock_id: Schema.String,
  collection_id: Schema.String,
  idempotency_key: Schema.String,
  accounts: Schema.Array(UnlockedAccount),
  charged_credits: Schema.Number.annotations({ description: "Credits spent, refunds deducted." }),
  refunded_credits: Schema.Number.annotations({ description: "Credits debited for accounts that failed, given back." }),
  balance: Schema.Number.annotations({ description: "The workspace's credits when the unlock finished." }),
  test_workspace: Schema.Boolean.annotations({ description: "A test workspace's unlock: nothing spent, the sandbox answered." }),
  summary: Schema.String
}

/** The answer every retry with the key gets. @since 0.1.0 @category models */
const Stored = Schema.Struct(unlockFields)

/** An unlock as its operation answers it. @since 0.1.0 @category models */
export const Unlock = Schema.Struct({
  ...unlockFields,
  replayed: Schema.Boolean.annotations({ description: "True when this is the stored answer of an earlier request with the same idempotency_key." })
}).annotations({ identifier: "ContactUnlock" })
/** @since 0.1.0 @category models */
export type Unlock = typeof Unlock.Type

/** An unlock request, as every surface sends it: the quote the user accepted. @since 0.1.0 @category models */
export const UnlockRequest = Schema.Struct({
  collection_id: QuoteRequest.fields.collection_id.annotations({ description: "The collection of the quote." }),
  record_ids: QuoteRequest.fields.record_ids.annotations({ description: "The record ids of the quote, unchanged." }),
  // Optional, so an unlock sent without it meets confirmation_required (ask the user), not a schema error.
  confirm: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "true once the user accepted the quote's price; an unlock without it is refused with confirmation_required."
  }),
  max_credits: Schema.Int.pipe(Schema.between(0, 1_000_000)).annotations({
    description: "The most the user approved spending: refused before any spend when the price is now higher."
  }),
  quote_token: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4000)).annotations({ description: "The quote's quote_token, unchanged." }),
  idempotency_key: Id.annotations({ description: "The quote's idempotency_key: every retry with it answers the first result, never spending again." })
}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "ContactUnlockInput" })
/** @since 0.1.0 @category models */
export type UnlockRequest = typeof UnlockRequest.Type

/**
 * The unlock of a quote as the user accepted it: its selection, `confirm: true`, its total as `max_credits`, its
 * token and key. For hosts that run the flow in-process.
 *
 * @since 0.1.0 @category constructors
 */
export const requestFor = (quote: Quote): UnlockRequest => ({
  collection_id: quote.collection_id,
  record_ids: quote.accounts.map((account) => account.record_id),
  confirm: true,
  max_credits: quote.total_credits,
  quote_token: quote.quote_token,
  idempotency_key: quote.idempotency_key
})

/** What the queue row carries to research (again, after a crash) and to answer. */
const Work = Schema.Struct({
  test: Schema.Boolean,
  /** The member whose monthly cap this unlock counts against (decision 0092); absent for owners, admins and keys. */
  spender: Schema.optional(Schema.Struct({ person_id: Schema.String, period: Schema.String })),
  research: Schema.Array(Schema.Struct({ account: Account, ledger_id: Schema.NullOr(Schema.String), credits: Schema.Number })),
  already: Schema.Array(Schema.Struct({ record_id: Schema.String, name: Schema.NullOr(Schema.String) }))
})
type Work = typeof Work.Type

const UnlockRow = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  idempotency_key: Schema.String,
  collection_id: Schema.String,
  work: Work,
  result: Schema.NullOr(Stored),
  queue_state: Schema.Literal("pending", "running", "done", "dead"),
  queue_last_error: Schema.NullOr(Schema.String)
})
type UnlockRow = typeof UnlockRow.Type
const decodeRows = Schema.decodeUnknown(Schema.Array(UnlockRow))

const ClaimedRow = Schema.Array(Schema.Struct({
  contact_id: Schema.String,
  outcome: Schema.Literal("pending", "found", "not_found"),
  email: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String)
}))

/** @since 0.1.0 @category tags */
export class Unlocks extends Context.Tag("@service/contacts/Unlocks")<Unlocks, {
  readonly unlock: (principal: Principal, request: UnlockRequest) => Effect.Effect<Unlock, ContactsRefusal>
  /** Works unlocks whose research is due (abandoned by a dead process, or retrying) until none is: what workers run. */
  readonly resume: (worker: string) => Effect.Effect<number>
  /** {@link resume} for ever: what workers run. */
  readonly watch: (worker: string) => Effect.Effect<never>
}>() {}

/** @since 0.1.0 @category models */
export interface Options {
  /** How long a research attempt holds its unlock before another process may take it over (default 2 minutes). */
  readonly lease?: Duration.DurationInput | undefined
  /** Waits between research attempts while the provider is unavailable (default 10 s, 1 min, 10 min, 1 h). */
  readonly retryDelays?: ReadonlyArray<Duration.DurationInput> | undefined
  /** How long one provider request may take (default 30 s). */
  readonly providerTimeout?: Duration.DurationInput | undefined
  /** How long a retry waits for research another process is doing before answering `unlock_in_progress` (default 20 s). */
  readonly waitForOthers?: Duration.DurationInput | undefined
}

/**
 * How long a research attempt holds its unlock: `SERVICE_CONTACT_UNLOCK_LEASE`, default 2 minutes.
 *
 * @since 0.1.0 @category config
 */
export const leaseConfig = Config.duration("SERVICE_CONTACT_UNLOCK_LEASE").pipe(
  Config.withDefault(Duration.minutes(2)),
  Config.withDescription("How long an unlock's research holds its row before another process may take it over.")
)

const OPERATION = "contact_unlock"

/** @since 0.1.0 @category constructors */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* Effect.context<SqlClient.SqlClient | Crm>()
    const meter = yield* Meter
    const crm = yield* Crm
    const quotes = yield* Quotes
    const provider = yield* ContactProvider
    const price = yield* Effect.orDie(priceConfig)
    // A test workspace calls no provider: its research is the sandbox's, and it spends nothing.
    const sandbox = (yield* SandboxProvider.make()).provider
    const queue = yield* WorkQueue.make({
      table: "contacts.unlocks",
      lease: options.lease ?? Duration.minutes(2),
      retryDelays: options.retryDelays ?? [Duration.seconds(10), Duration.minutes(1), Duration.minutes(10), Duration.hours(1)]
    })
    const providerTimeout = options.providerTimeout ?? Duration.seconds(30)
    const waitForOthers = Duration.toMillis(options.waitForOthers ?? Duration.seconds(20))

    const rowsWhere = (where: Statement.Fragment) =>
      sql`SELECT id, workspace_id, idempotency_key, collection_id, work, result, queue_state, queue_last_error
        FROM contacts.unlocks WHERE ${where}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
    const rowById = (id: string) => Effect.map(rowsWhere(sql`id = ${id}`), (rows) => Option.fromNullable(rows[0]))
    // Unlock rows are never deleted but with their workspace.
    const existingRow = (id: string) =>
      Effect.flatMap(rowById(id), Option.match({ onNone: () => Effect.dieMessage(`unlock ${id} vanished`), onSome: Effect.succeed }))
    const rowByKey = (workspaceId: string, key: string) =>
      Effect.map(rowsWhere(sql`workspace_id = ${workspaceId} AND idempotency_key = ${key}`), (rows) => Option.fromNullable(rows[0]))

    const researchOf = (work: Work, row: { readonly workspace_id: string; readonly idempotency_key: string }) =>
      (work.test ? sandbox : provider).research({
        workspaceId: row.workspace_id,
        requestKey: row.idempotency_key,
        accounts: work.research.map((item) => item.account)
      }).pipe(
        Effect.timeoutFail({
          duration: providerTimeout,
          onTimeout: () => new ProviderUnavailable({ provider: provider.name, reason: `no answer in ${Duration.format(providerTimeout)}` })
        }),
        // A short outage is retried at once; a longer one goes back to the queue's schedule.
        Effect.retry({ schedule: Schedule.exponential(Duration.millis(200)), times: 2 })
      )

    // Settles the accounts, refunds the failed ones and stores the answer, in one transaction fenced by the claim:
    // a process whose lease was taken over commits nothing.
    const settle = <E>(fence: Effect.Effect<void, E>, row: UnlockRow, results: ReadonlyMap<string, Result>) =>
      sql.withTransaction(Effect.gen(function*() {
        const { work } = row
        // A contact erased while it was researched gets neither its name nor coordinates stored (decision 0071). The
        // lock waits for an erasure in progress (it locks the contact first), or holds the erasure until this commits;
        // taken before anything else here, so neither waits for a row the other holds.
        const ids = [...work.research.map((item) => item.account.record_id), ...work.already.map((item) => item.record_id)]
        const contactRows = ids.length === 0 ? [] : yield* sql`SELECT id, erased_at IS NOT NULL AS erased FROM crm.contacts
          WHERE workspace_id = ${row.workspace_id} AND id IN ${sql.in(ids)} FOR SHARE`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String, erased: Schema.Boolean })))),
          Effect.orDie
        )
        const erased = new Set(contactRows.filter((r) => r.erased).map((r) => r.id))
        yield* fence
        const nameOf = (id: string, name: string | null) => (erased.has(id) ? null : name)
        const accounts: Array<UnlockedAccount> = []
        let charged = 0
        let refunded = 0
        for (const item of work.research) {
          const id = item.account.record_id
          const result = results.get(id) ?? { record_id: id, outcome: "failed" as const, reason: "the provider gave no result for it" }
          if (result.outcome === "failed") {
            yield* sql`DELETE FROM contacts.unlocked WHERE workspace_id = ${row.workspace_id} AND contact_id = ${id} AND unlock_id = ${row.id}`
            if (item.ledger_id !== null) {
              yield* meter.refund({ ledgerId: item.ledger_id, workspaceId: row.workspace_id, credits: item.credits }, `contact unlock ${row.id}: ${result.reason}`)
              yield* unspend(row.workspace_id, work, item.credits)
              refunded += item.credits
            }
            accounts.push({ record_id: id, name: nameOf(id, item.account.name), outcome: "failed", credits: 0, coordinates: null, reason: result.reason })
            continue
          }
          const coordinates = result.outcome === "found" && !erased.has(id) ? result.coordinates : null
          yield* sql`UPDATE contacts.unlocked SET outcome = ${result.outcome}, email = ${coordinates?.email ?? null},
              phone = ${coordinates?.phone ?? null}
            WHERE workspace_id = ${row.workspace_id} AND contact_id = ${id} AND unlock_id = ${row.id}`
          charged += item.credits
          accounts.push({ record_id: id, name: nameOf(id, item.account.name), outcome: result.outcome, credits: item.credits, coordinates, reason: null })
        }
        const earlier = work.already.length === 0 ? [] : yield* sql`SELECT contact_id, outcome, email, phone FROM contacts.unlocked
          WHERE workspace_id = ${row.workspace_id} AND contact_id IN ${sql.in(work.already.map((a) => a.record_id))}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(ClaimedRow))
        )
        for (const item of work.already) {
          const found = earlier.find((e) => e.contact_id === item.record_id)
          accounts.push({
            record_id: item.record_id,
            name: nameOf(item.record_id, item.name),
            outcome: "already_unlocked",
            credits: 0,
            coordinates: found?.outcome === "found" ? { email: found.email, phone: found.phone } : null,
            reason: found?.outcome === "pending" ? "another unlock is researching it; read it again later" : null
          })
        }
        accounts.sort((a, b) => a.record_id.localeCompare(b.record_id))
        const balance = yield* meter.balance(row.workspace_id)
        const stored: typeof Stored.Type = {
          unlock_id: row.id,
          collection_id: row.collection_id,
          idempotency_key: row.idempotency_key,
          accounts,
          charged_credits: charged,
          refunded_credits: refunded,
          balance,
          test_workspace: work.test,
          summary: summaryOf(accounts, charged, refunded, balance, work.test)
        }
        yield* sql`UPDATE contacts.unlocks SET result = ${JSON.stringify(Schema.encodeSync(Stored)(stored))}::jsonb, finished_at = now()
          WHERE id = ${row.id}`
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    // One research attempt of an unlock (the request's own, a retry's takeover or a worker's).
    const handler = (claim: WorkQueue.Claim) =>
      Effect.gen(function*() {
        const row = yield* existingRow(claim.id)
        if (row.result !== null) return
        const answered = row.work.research.length === 0 ? [] : yield* researchOf(row.work, row).pipe(
          Effect.catchTag("ProviderUnavailable", (e) => Effect.fail(new WorkQueue.RetryLater({ error: e.message })))
        )
        yield* settle(queue.extend(claim), row, new Map(answered.map((result) => [result.record_id, result])))
      }).pipe(Effect.annotateLogs({ unlock: claim.id }), Effect.withSpan("Unlocks.research", { captureStackTrace: false }))

    // After the last attempt: every debit back, every claim released, and an answer that says so.
    const onDead = (claim: WorkQueue.Claim, error: string) =>
      Effect.gen(function*() {
        const row = yield* rowById(claim.id)
        if (Option.isNone(row) || row.value.result !== null) return
        const results = new Map(row.value.work.research.map((item): [string, Result] => [
          item.account.record_id,
          { record_id: item.account.record_id, outcome: "failed", reason: `research failed after every attempt: ${error}` }
        ]))
        // The dead row is held by no one: the row lock and its missing result fence it (one onDead settles it).
        const fence = sql`SELECT id FROM contacts.unlocks WHERE id = ${claim.id} AND queue_state = 'dead' AND result IS NULL FOR UPDATE`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => rows.length === 0 ? Effect.fail(new WorkQueue.LeaseLost({ id: claim.id, attempt: claim.attempt })) : Effect.void)
        )
        yield* settle(fence, row.value, results).pipe(Effect.catchTag("LeaseLost", () => Effect.void))
      }).pipe(Effect.orDie)

    const processOptions = (worker: string): WorkQueue.ProcessOptions<unknown, never> => ({
      worker,
      handler,
      transactional: false,
      onDead
    })

    // The stored answer, working the row when it is due, waiting while another process works it.
    const answer = (id: string, worker: string, replayed: boolean): Effect.Effect<Unlock, ContactsRefusal> =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        // Research of a few accounts takes tens of milliseconds: poll soon, then less often.
        let pause = 10
        while (true) {
          const row = yield* existingRow(id)
          if (row.result !== null) return { ...row.result, replayed }
          const claim = yield* queue.claimRow(worker, id)
          if (Option.isSome(claim)) {
            yield* queue.handle(processOptions(worker), claim.value)
            continue
          }
          // Not due: waiting for its next attempt (the provider was unavailable), or worked by another process.
          if (row.queue_state === "pending") {
            return yield* refuse(
              "unlock_in_progress",
              `The research did not finish (${row.queue_last_error ?? "the provider is unavailable"}). The credits stay reserved and the research is retried automatically; if every attempt fails, everything is refunded.`,
              `Retry later with the same idempotency_key (${row.idempotency_key}) to read the result; it never spends again.`
            )
          }
          if ((yield* Clock.currentTimeMillis) - started >= waitForOthers) {
            return yield* refuse(
              "unlock_in_progress",
              "This unlock is still being researched by another request.",
              `Retry in a few seconds with the same idempotency_key (${row.idempotency_key}); it never spends again.`
            )
          }
          yield* Effect.sleep(Duration.millis(pause))
          pause = Math.min(200, pause * 2)
        }
      })

    // A member spends only where the workspace lets members spend, up to its monthly cap: read and counted under locks
    // (the workspace row against a change of the cap, the member's month against their other unlocks), in the
    // transaction that charges. Owners, admins and keys answered for by them are not capped.
    const memberSpend = (principal: Principal, total: number, now: number) =>
      Effect.gen(function*() {
        if (principal.role !== "member" || Option.isNone(principal.person) || total === 0) return undefined
        const personId = principal.person.value.id
        const workspaceId = principal.workspace.id
        const caps = yield* sql`SELECT member_spend_cap AS cap FROM core.workspaces WHERE id = ${workspaceId} FOR SHARE`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ cap: Schema.NullOr(Schema.Number) })))),
          Effect.orDie
        )
        const cap = caps[0]?.cap ?? null
        if (cap === null) {
          return yield* refuse(
            "spending_not_allowed",
            `Only the owners and admins of ${principal.workspace.slug} spend its credits.`,
            "Ask an owner or admin to unlock, or an owner to let members spend (spending_set)."
          )
        }
        const period = new Date(now).toISOString().slice(0, 7)
        yield* sql`INSERT INTO contacts.member_spend (workspace_id, person_id, period) VALUES (${workspaceId}, ${personId}, ${period})
          ON CONFLICT DO NOTHING`
        const rows = yield* sql`SELECT credits FROM contacts.member_spend
          WHERE workspace_id = ${workspaceId} AND person_id = ${personId} AND period = ${period} FOR UPDATE`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ credits: Schema.Number })))),
          Effect.orDie
        )
        const already = rows[0]?.credits ?? 0
        if (already + total > cap) {
          return yield* refuse(
            "spending_cap_reached",
            `Members of ${principal.workspace.slug} spend at most ${plural(cap, "credit", "credits")} a month; you spent ${already} this month and this unlock costs ${total}.`,
            "Unlock fewer accounts, ask an owner or admin to unlock them, or an owner to raise the cap (spending_set)."
          )
        }
        return { person_id: personId, period }
      })

    const unspend = (workspaceId: string, work: Work, credits: number) =>
      work.spender === undefined ? Effect.void : sql`UPDATE contacts.member_spend SET credits = greatest(0, credits - ${credits})
        WHERE workspace_id = ${workspaceId} AND person_id = ${work.spender.person_id} AND period = ${work.spender.period}`.pipe(Effect.asVoid)

    const unlock = (principal: Principal, request: UnlockRequest) =>
      Effect.gen(function*() {
        const workspaceId = principal.workspace.id
        if (!request.confirm) {
          return yield* refuse(
            "confirmation_required",
            "An unlock spends insight credits: it needs confirm: true, sent once the user accepted the quote.",
            "Show the user the quote's summary, and send the unlock with confirm: true only once they accept it.",
            { field: "confirm" }
          )
        }
        const claims = yield* quotes.openToken(request.quote_token)
        const selected = sortedUnique(request.record_ids)
        const mismatch = (why: string, field: string) =>
          refuse("quote_mismatch", why, "Send the quote_token and idempotency_key of one quote with its own record_ids, or ask for a new quote.", {
            field
          })
        if (claims.workspace_id !== workspaceId) return yield* mismatch("The quote_token was issued for another workspace.", "quote_token")
        if (claims.idempotency_key !== request.idempotency_key) {
          return yield* mismatch("The idempotency_key is not the one this quote_token was issued with.", "idempotency_key")
        }
        // The same request as the quote, by the same caller: also for a retry, whose answer holds coordinates.
        if (claims.principal !== principalKey(principal)) return yield* mismatch("The quote was asked by another caller.", "quote_token")
        if (claims.collection_id !== request.collection_id) {
          return yield* mismatch("The quote was for another collection.", "collection_id")
        }
        if (selected.join("\u0000") !== claims.record_ids.join("\u0000")) {
          return yield* mismatch("The record_ids are not the ones quoted.", "record_ids")
        }
        const worker = `request-${randomBytes(6).toString("hex")}`
        // A retry: the first request's answer, whatever changed since (the token may have expired meanwhile).
        const existing = yield* rowByKey(workspaceId, request.idempotency_key)
        if (Option.isSome(existing)) return yield* answer(existing.value.id, worker, true)
        const now = yield* Clock.currentTimeMillis
        if (now >= Date.parse(claims.expires_at)) {
          return yield* refuse("quote_expired", `The quote expired at ${claims.expires_at}.`, "Ask for a new quote; quotes are free and valid 10 minutes.", {
            field: "quote_token"
          })
        }
        const selection = yield* select(workspaceId, request.collection_id, selected).pipe(Effect.provide(context))
        const fresh = selection.recordIds.filter((id) => !selection.unlocked.has(id))
        const isTest = principal.workspace.isTest
        const total = isTest ? 0 : fresh.length * price
        if (total > request.max_credits) {
          return yield* refuse(
            "price_changed",
            `Unlocking now costs ${plural(total, "credit", "credits")}, more than the approved max_credits of ${request.max_credits}.`,
            "Ask for a new quote and have the user approve its price.",
            { field: "max_credits" }
          )
        }
        const balance = yield* meter.balance(workspaceId)
        const insufficient = (have: number) =>
          refuse(
            "insufficient_credits",
            `The workspace has ${plural(have, "credit", "credits")} and this unlock costs ${plural(total, "credit", "credits")}.`,
            "Ask a workspace owner to add credits (service credits grant), or select fewer accounts; nothing was spent."
          )
        if (balance < total) return yield* insufficient(balance)

        const companies = new Map<string, { readonly name: string; readonly domain: string | null }>()
        for (const id of fresh) {
          const companyId = selection.contacts.get(id)?.company_id ?? null
          if (companyId === null || companies.has(companyId)) continue
          const company = yield* crm.getCompany(workspaceId, companyId)
          if (Option.isSome(company)) companies.set(companyId, company.value)
        }
        const accountOf = (id: string): Account => {
          const contact = selection.contacts.get(id)
          const company = contact?.company_id === null || contact === undefined ? undefined : companies.get(contact.company_id)
          const website = contact?.website ?? null
          return { record_id: id, name: contact?.name ?? null, company: company?.name ?? null, domain: company?.domain ?? website }
        }
        const unlockId = `unl_${randomBytes(12).toString("hex")}`
        const inserted = yield* sql.withTransaction(Effect.gen(function*() {
          const spent = yield* memberSpend(principal, total, now)
          const rows = yield* sql`INSERT INTO contacts.unlocks (id, workspace_id, idempotency_key, principal, collection_id, record_ids,
              max_credits, work)
            VALUES (${unlockId}, ${workspaceId}, ${request.idempotency_key}, ${claims.principal}, ${request.collection_id},
              ${JSON.stringify(selected)}::jsonb, ${request.max_credits}, '{}'::jsonb)
            ON CONFLICT (workspace_id, idempotency_key) DO NOTHING RETURNING id`
          // A concurrent request with the same key inserted first: answer as its retry.
          if (rows.length === 0) return Option.none()
          // The claim decides who pays: an account another unlock claimed meanwhile costs nothing here.
          const claimed = fresh.length === 0 ? [] : (yield* sql<{ contact_id: string }>`INSERT INTO contacts.unlocked
              (workspace_id, contact_id, unlock_id, unlocked_at, outcome)
            SELECT ${workspaceId}, id, ${unlockId}, now(), 'pending' FROM jsonb_array_elements_text(${JSON.stringify(fresh)}::jsonb) AS id
            ON CONFLICT (workspace_id, contact_id) DO NOTHING RETURNING contact_id`).map((row) => row.contact_id).sort()
          const research: Array<Work["research"][number]> = []
          for (const id of claimed) {
            const charge = isTest ? undefined : yield* meter.charge({ workspaceId, operation: OPERATION, requestId: `${unlockId}:${id}`, credits: price })
            research.push({ account: accountOf(id), ledger_id: charge?.ledgerId ?? null, credits: charge?.credits ?? 0 })
          }
          const claimedSet = new Set(claimed)
          const charged = research.reduce((sum, item) => sum + item.credits, 0)
          if (spent !== undefined && charged > 0) {
            yield* sql`UPDATE contacts.member_spend SET credits = credits + ${charged}
              WHERE workspace_id = ${workspaceId} AND person_id = ${spent.person_id} AND period = ${spent.period}`
          }
          const work: Work = {
            test: isTest,
            ...(spent === undefined ? {} : { spender: spent }),
            research,
            already: selected.filter((id) => !claimedSet.has(id)).map((id) => ({ record_id: id, name: selection.contacts.get(id)?.name ?? null }))
          }
          yield* sql`UPDATE contacts.unlocks SET work = ${JSON.stringify(Schema.encodeSync(Work)(work))}::jsonb WHERE id = ${unlockId}`
          // Held by this request from the start: no worker takes it while the request researches.
          return yield* queue.claimRow(worker, unlockId)
        })).pipe(
          Effect.catchTag("CreditsExhausted", (e) => Effect.fail(insufficient(e.balance))),
          Effect.catchTag("SqlError", Effect.die)
        )
        if (Option.isNone(inserted)) {
          const racer = yield* rowByKey(workspaceId, request.idempotency_key)
          if (Option.isNone(racer)) return yield* Effect.dieMessage("an unlock with this key conflicted, then vanished")
          return yield* answer(racer.value.id, worker, true)
        }
        yield* queue.handle(processOptions(worker), inserted.value)
        return yield* answer(unlockId, worker, false)
      }).pipe(Effect.withSpan("Unlocks.unlock", { captureStackTrace: false }))

    const resume = (worker: string) => queue.drain(processOptions(worker))
    const watch = (worker: string) => queue.process({ ...processOptions(worker), idle: Duration.seconds(5) })

    return Unlocks.of({ unlock, resume, watch })
  })

const summaryOf = (accounts: ReadonlyArray<UnlockedAccount>, charged: number, refunded: number, balance: number, test: boolean): string => {
  const count = (outcome: UnlockedAccount["outcome"]) => accounts.filter((a) => a.outcome === outcome).length
  const parts = [
    count("found") > 0 ? `${plural(count("found"), "account", "accounts")} found` : undefined,
    count("not_found") > 0 ? `${plural(count("not_found"), "account", "accounts")} researched with nothing found` : undefined,
    count("failed") > 0 ? `${plural(count("failed"), "account", "accounts")} failed and refunded` : undefined,
    count("already_unlocked") > 0 ? `${plural(count("already_unlocked"), "account was", "accounts were")} already unlocked (free)` : undefined
  ].filter((part) => part !== undefined)
  return test
    ? `Test workspace: ${parts.join("; ")}. Nothing was spent and no provider was called (sandbox results).`
    : `${parts.join("; ")}. Spent ${plural(charged, "credit", "credits")}${refunded > 0 ? ` (${plural(refunded, "credit", "credits")} refunded)` : ""}; ` +
      `${plural(balance, "credit", "credits")} left.`
}

/** @since 0.1.0 @category layers */
export const layerWith = (options: Options = {}): Layer.Layer<Unlocks, never, SqlClient.SqlClient | Crm | Meter | Quotes | ContactProvider> =>
  Layer.effect(Unlocks, make(options))

/** {@link layerWith}, its lease from `SERVICE_CONTACT_UNLOCK_LEASE`. @since 0.1.0 @category layers */
export const layer: Layer.Layer<Unlocks, never, SqlClient.SqlClient | Crm | Meter | Quotes | ContactProvider> = Layer.effect(
  Unlocks,
  Effect.flatMap(Effect.orDie(leaseConfig), (lease) => make({ lease }))
)
