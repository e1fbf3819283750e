/**
 * Metering on a credit ledger per workspace (one insight credit per metered call: one aggregate response costs one
 * credit whatever its group count; discovery is free). A metered operation is admitted when the balance covers its
 * price ({@link Meter.admit}, answered from the balance this node last read, minus the debits it holds) and debited
 * only once it has succeeded ({@link Meter.settle}, kept in memory and written with every other pending debit in one
 * transaction a short interval later, never taking a balance below zero), so a refused call writes nothing to the
 * ledger, a served one costs no statement of its own, and a crash or calls racing for the last credits may
 * under-charge but never over-charge (decisions 0078 and 0080). Whatever reads the balance, the usage or the ledger
 * through the Meter writes this node's pending debits first. A call the balance
 * cannot cover is refused with {@link CreditsExhausted} and recorded. Spending that must be reserved before work
 * that takes time (a contact unlock) uses {@link Meter.charge} and {@link Meter.refund}. Each workspace receives its
 * monthly allowance on its first metered call of a UTC month. What was served is read back from the same ledger (a
 * debit without a refund), so there is one record of every call.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as WriteBehind from "./internal/writeBehind.js"

/** How many ledger entries {@link Account} lists. */
const historyLength = 50

/** @since 0.1.0 @category models */
export const Usage = Schema.Struct({ operation: Schema.String, day: Schema.String, units: Schema.Number })
/** @since 0.1.0 @category models */
export type Usage = typeof Usage.Type

/**
 * One row of the workspace's credit ledger as the account shows it.
 *
 * @since 0.1.0 @category models
 */
export const LedgerEntry = Schema.Struct({
  at: Schema.String.annotations({ description: "When the entry was written (ISO 8601, UTC)." }),
  kind: Schema.Literal("grant", "debit", "refund", "refused").annotations({
    description: "grant: credits added (monthly allowance or operator); debit: a metered call charged before it ran; " +
      "refund: a debit given back because its call failed; refused: a call the balance could not cover (0 credits)."
  }),
  operation: Schema.NullOr(Schema.String).annotations({ description: "The operation charged, refunded or refused; null for grants." }),
  credits: Schema.Number.annotations({ description: "Signed as stored: grants and refunds positive, debits negative, refusals 0." }),
  request_id: Schema.NullOr(Schema.String).annotations({ description: "The request that was charged, refunded or refused; null for grants." }),
  note: Schema.NullOr(Schema.String).annotations({ description: "Why: the grant's note, the refund's reason, or the refusal's." })
}).annotations({ identifier: "CreditLedgerEntry" })
/** @since 0.1.0 @category models */
export type LedgerEntry = typeof LedgerEntry.Type

/**
 * What a workspace can see of its credits: the balance, the monthly allowance and when it renews, the
 * consumption per operation over the last 30 days (debits and refunds apart), and its latest ledger entries.
 *
 * @since 0.1.0 @category models
 */
export const Account = Schema.Struct({
  balance: Schema.Number.annotations({ description: "Insight credits left." }),
  monthly_allowance: Schema.Number.annotations({ description: "Credits granted on the first metered call of each UTC month." }),
  period: Schema.String.annotations({ description: "The current allowance period (YYYY-MM, UTC)." }),
  renews_on: Schema.String.annotations({ description: "When the next allowance is granted (YYYY-MM-DD, UTC)." }),
  consumption: Schema.Array(Schema.Struct({
    operation: Schema.String,
    calls: Schema.Number.annotations({ description: "Metered calls served in the last 30 days (debits not refunded)." }),
    credits: Schema.Number.annotations({ description: "Credits those calls cost, refunds deducted." }),
    refunds: Schema.Number.annotations({ description: "Debits of this operation refunded in the last 30 days (their calls failed)." }),
    refunded_credits: Schema.Number.annotations({ description: "Credits given back to this operation in the last 30 days." }),
    refused_for_credits: Schema.Number.annotations({ description: "Calls refused with credits_exhausted in the last 30 days." })
  })).annotations({ description: "Per operation, last 30 days, most credits first." }),
  history: Schema.Array(LedgerEntry).annotations({
    description: `The workspace's last ${historyLength} credit-ledger entries (grants, debits, refunds, refusals), newest first.`
  })
}).annotations({ identifier: "CreditAccount" })
/** @since 0.1.0 @category models */
export type Account = typeof Account.Type

/**
 * A metered call the workspace's balance cannot cover. Nothing ran and nothing was debited.
 *
 * @since 0.1.0 @category errors
 */
export class CreditsExhausted extends Schema.TaggedError<CreditsExhausted>("@service/core/CreditsExhausted")(
  "CreditsExhausted",
  {
    operation: Schema.String,
    price: Schema.Number,
    balance: Schema.Number,
    renewsOn: Schema.String
  }
) {
  override get message(): string {
    return `This workspace has ${this.balance} insight credit(s) left and ${this.operation} costs ${this.price}; ` +
      `the monthly allowance is granted again on ${this.renewsOn}.`
  }
  /** The semantic code every transport reports. */
  get semanticCode(): "credits_exhausted" {
    return "credits_exhausted"
  }
  /** The one recovery action for it. */
  get recoveryAction(): "wait_for_allowance_or_add_credits" {
    return "wait_for_allowance_or_add_credits"
  }
  get suggestedCorrection(): string {
    return `Retry after ${this.renewsOn}, when the monthly allowance is granted, or ask a workspace owner to add credits. ` +
      `Capabilities discovery stays free meanwhile.`
  }
}

/**
 * A debit made for one call; refund it if the call does not succeed.
 *
 * @since 0.1.0 @category models
 */
export interface Charge {
  readonly ledgerId: string
  readonly workspaceId: string
  readonly credits: number
}

/** @since 0.1.0 @category tags */
export class Meter extends Context.Tag("@service/core/Meter")<Meter, {
  /**
   * Admits a call when the balance covers `credits` (granting the month's allowance first when due), writing
   * nothing; a balance below the price is refused with {@link CreditsExhausted} and recorded.
   */
  readonly admit: (call: {
    readonly workspaceId: string
    readonly operation: string
    readonly requestId: string
    readonly credits: number
  }) => Effect.Effect<void, CreditsExhausted>
  /**
   * Debits a call that succeeded: held by this node and written with the others pending a short interval later (or
   * when a reader of the ledger asks, or at shutdown). When the balance no longer covers it then (concurrent calls
   * spent it), the call was served anyway: it is recorded as a debit of 0 credits (an under-charge, never a negative
   * balance).
   */
  readonly settle: (call: {
    readonly workspaceId: string
    readonly operation: string
    readonly requestId: string
    readonly credits: number
  }) => Effect.Effect<void>
  /** Reserves `credits` before work that takes time (refund what fails), granting the month's allowance first when due. */
  readonly charge: (call: {
    readonly workspaceId: string
    readonly operation: string
    readonly requestId: string
    readonly credits: number
  }) => Effect.Effect<Charge, CreditsExhausted>
  /** Gives a charge back (once, however often it is asked). */
  readonly refund: (charge: Charge, note: string) => Effect.Effect<void>
  /** The workspace's served calls (debits not refunded) per operation and UTC day, newest day first. */
  readonly usage: (workspaceId: string) => Effect.Effect<ReadonlyArray<Usage>>
  /** Adds credits outside the monthly allowance (operators, purchases, tests). */
  readonly grant: (grant: { readonly workspaceId: string; readonly credits: number; readonly note: string }) => Effect.Effect<void>
  /** Balance, allowance, the last 30 days' consumption per operation and the latest ledger entries. */
  readonly account: (workspaceId: string) => Effect.Effect<Account>
  /** Spendable credits now (the month's allowance granted first when due): the balance alone, in one read. */
  readonly balance: (workspaceId: string) => Effect.Effect<number>
  /** Writes the debits this node holds now (readers of the ledger outside the Meter, tests, shutdown). */
  readonly flush: Effect.Effect<void>
}>() {}

/**
 * Insight credits granted to every workspace each UTC month: `SERVICE_MONTHLY_INSIGHT_CREDITS`, default 10,000.
 *
 * @since 0.1.0 @category config
 */
export const monthlyAllowanceConfig = Config.integer("SERVICE_MONTHLY_INSIGHT_CREDITS").pipe(
  Config.withDefault(10_000),
  Config.validate({ message: "must be an integer of 0 or more", validation: (n) => n >= 0 }),
  Config.withDescription("Insight credits granted to each workspace on its first metered call of each UTC month.")
)

/**
 * How long a served call's debit may wait in memory before it is written with the others: `SERVICE_CREDIT_FLUSH_MS`,
 * default 200. A crash loses the debits served since the last committed write (an under-charge): the interval plus
 * the time writes take, 0.5-0.7 s measured under load at the default (decision 0080, corrected by issue 32 row 15); a
 * balance this node read is trusted for five times the interval before it is read again.
 *
 * @since 0.1.0 @category config
 */
export const flushIntervalConfig = Config.integer("SERVICE_CREDIT_FLUSH_MS").pipe(
  Config.withDefault(200),
  Config.validate({ message: "must be a positive integer", validation: (n) => n > 0 }),
  Config.withDescription("Milliseconds a served call's debit waits in memory before this node writes its pending debits.")
)

const UsageRow = Schema.Struct({ operation: Schema.String, day: Schema.String, units: Schema.NumberFromString })
const decodeUsage = Schema.decodeUnknown(Schema.Array(UsageRow))
const IdRow = Schema.Array(Schema.Struct({ id: Schema.String }))
const decodeIds = Schema.decodeUnknown(IdRow)
const BalanceRow = Schema.Array(Schema.Struct({ balance: Schema.NumberFromString }))
const decodeBalance = Schema.decodeUnknown(BalanceRow)
const BalancesRow = Schema.Array(Schema.Struct({ workspace_id: Schema.String, balance: Schema.NumberFromString }))
const decodeBalances = Schema.decodeUnknown(BalancesRow)

/** A served call whose debit is not written yet. */
interface Served {
  readonly workspaceId: string
  readonly operation: string
  readonly requestId: string
  readonly credits: number
}

const SERVED_AFTER = "served after concurrent calls spent the balance"
const ConsumptionRow = Schema.Array(Schema.Struct({
  operation: Schema.String,
  debits: Schema.NumberFromString,
  credits: Schema.NumberFromString,
  refunds: Schema.NumberFromString,
  refunded_credits: Schema.NumberFromString,
  refused: Schema.NumberFromString
}))
const decodeConsumption = Schema.decodeUnknown(ConsumptionRow)
// bigint credits come back as text; the rest is LedgerEntry as is.
const LedgerRow = Schema.Array(Schema.Struct({ ...LedgerEntry.fields, credits: Schema.NumberFromString }))
const decodeLedger = Schema.decodeUnknown(LedgerRow)

const periodOf = (now: number) => new Date(now).toISOString().slice(0, 7)
const renewalOf = (now: number) => {
  const date = new Date(now)
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)).toISOString().slice(0, 10)
}

/**
 * The ledger in PostgreSQL. Served calls' debits are written by a fiber of the enclosing scope `flushEvery` after the
 * first one pending, and when the scope closes.
 *
 * @since 0.1.0 @category constructors
 */
export const makeSql = (options: {
  readonly monthlyAllowance: number
  readonly flushEvery?: Duration.DurationInput | undefined
}): Effect.Effect<Meter["Type"], never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const interval = Duration.toMillis(options.flushEvery ?? Duration.millis(200))

    const credit = (workspaceId: string, credits: number) =>
      sql`INSERT INTO core.credit_balances (workspace_id, balance) VALUES (${workspaceId}, ${credits})
          ON CONFLICT (workspace_id) DO UPDATE SET balance = core.credit_balances.balance + EXCLUDED.balance`

    // Periods already granted, per workspace: after the first call of a month no charge writes the grant again.
    const granted = new Set<string>()

    // The month's allowance, at most once per workspace and period (the unique index decides under races).
    const grantAllowance = (workspaceId: string, now: number) =>
      Effect.gen(function*() {
        const inserted = yield* sql`INSERT INTO core.credit_ledger (workspace_id, kind, credits, period, note)
          VALUES (${workspaceId}, 'grant', ${options.monthlyAllowance}, ${periodOf(now)}, 'monthly allowance')
          ON CONFLICT (workspace_id, period) WHERE kind = 'grant' DO NOTHING
          RETURNING id::text AS id`.pipe(Effect.flatMap(decodeIds))
        if (inserted.length > 0) {
          yield* credit(workspaceId, options.monthlyAllowance)
          known.delete(workspaceId)
        }
      })

    // Grants the month's allowance when due. It is remembered only once committed: inside a caller's transaction
    // (an unlock's debits, say) the grant may still roll back, and must then be made again by the next call.
    const ensureAllowance = (workspaceId: string, now: number) =>
      Effect.gen(function*() {
        if (granted.has(`${workspaceId}\u0000${periodOf(now)}`)) return
        const enclosing = yield* Effect.serviceOption(SqlClient.TransactionConnection)
        yield* sql.withTransaction(grantAllowance(workspaceId, now))
        if (Option.isNone(enclosing)) granted.add(`${workspaceId}\u0000${periodOf(now)}`)
      })

    // The stored balance per workspace as this node last read or wrote it, and when: admissions read it instead of
    // the table, minus what this node owes. Another node's debits and grants are seen once it is read again.
    const known = new Map<string, { readonly balance: number; readonly at: number }>()
    // Debits of served calls not written yet, in the order served; credits owed per workspace (pending or being
    // written), so an admission never counts them as spendable.
    let pending: Array<Served> = []
    const owed = new Map<string, number>()
    const owe = (workspaceId: string, credits: number) => {
      const left = (owed.get(workspaceId) ?? 0) + credits
      if (left === 0) owed.delete(workspaceId)
      else owed.set(workspaceId, left)
    }

    const balanceOf = (workspaceId: string) =>
      Effect.flatMap(
        sql`SELECT balance::text AS balance FROM core.credit_balances WHERE workspace_id = ${workspaceId}`.pipe(
          Effect.flatMap(decodeBalance)
        ),
        (rows) =>
          Effect.map(Clock.currentTimeMillis, (at) => {
            const balance = rows[0]?.balance ?? 0
            known.set(workspaceId, { balance, at })
            return balance
          })
      )

    // Spendable as far as this node knows: the stored balance (read again once older than five intervals) minus
    // the debits it has not written.
    const spendable = (workspaceId: string, now: number) =>
      Effect.map(
        Effect.suspend(() => {
          const cached = known.get(workspaceId)
          return cached !== undefined && now - cached.at < 5 * interval ? Effect.succeed(cached.balance) : balanceOf(workspaceId)
        }),
        (balance) => balance - (owed.get(workspaceId) ?? 0)
      )

    // Writes every pending debit in one transaction: the balances locked in a fixed order, each call in the order
    // served debited while its workspace's balance covers it and recorded at 0 credits otherwise (the clamp: never
    // below zero, never more than was served), the balances and the ledger rows written in one statement each.
    const write = (schedule: Effect.Effect<void>) => Effect.gen(function*() {
      if (pending.length === 0) return
      const batch = pending
      pending = []
      const ids = [...new Set(batch.map((call) => call.workspaceId))].sort()
      const written = yield* sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`SELECT workspace_id, balance::text AS balance FROM core.credit_balances
          WHERE workspace_id IN ${sql.in(ids)} ORDER BY workspace_id FOR UPDATE`.pipe(Effect.flatMap(decodeBalances))
        const balances = new Map(rows.map((row) => [row.workspace_id, row.balance]))
        const debited = batch.map((call) => {
          const balance = balances.get(call.workspaceId) ?? 0
          const covered = balance >= call.credits
          if (covered) balances.set(call.workspaceId, balance - call.credits)
          return { ...call, covered }
        })
        const spent = ids.map((id) => debited.reduce((sum, call) => sum + (call.covered && call.workspaceId === id ? call.credits : 0), 0))
        yield* sql`UPDATE core.credit_balances b SET balance = b.balance - t.spent
          FROM unnest(${ids}::text[], ${spent}::bigint[]) AS t(workspace_id, spent)
          WHERE b.workspace_id = t.workspace_id AND t.spent > 0`
        // A workspace deleted meanwhile takes its debits with it, rather than failing everyone's.
        yield* sql`INSERT INTO core.credit_ledger (workspace_id, kind, credits, operation, request_id, note)
          SELECT t.workspace_id, 'debit', t.credits, t.operation, t.request_id, t.note
          FROM unnest(${debited.map((c) => c.workspaceId)}::text[], ${debited.map((c) => (c.covered ? 0 - c.credits : 0))}::bigint[],
            ${debited.map((c) => c.operation)}::text[], ${debited.map((c) => c.requestId)}::text[],
            ${debited.map((c) => (c.covered ? null : SERVED_AFTER))}::text[]) WITH ORDINALITY AS t(workspace_id, credits, operation, request_id, note, n)
          WHERE EXISTS (SELECT 1 FROM core.workspaces w WHERE w.id = t.workspace_id)
          ORDER BY t.n`
        return balances
      })).pipe(Effect.either)
      if (written._tag === "Left") {
        // Kept, ahead of what was served since, for the next write: a failed write loses no debit.
        pending = [...batch, ...pending]
        yield* Effect.logWarning("Could not write the pending credit debits; retrying at the next interval", written.left)
        return yield* schedule
      }
      const at = yield* Clock.currentTimeMillis
      for (const call of batch) owe(call.workspaceId, 0 - call.credits)
      for (const id of ids) known.set(id, { balance: written.right.get(id) ?? 0, at })
    })
    const { flush: flushAll, schedule } = yield* WriteBehind.make(Duration.millis(interval), write)
    // Inside a caller's transaction the debits would roll back with it, after they left memory: they wait for the
    // next write instead.
    const flush = Effect.flatMap(
      Effect.serviceOption(SqlClient.TransactionConnection),
      (enclosing) => Option.isSome(enclosing) ? Effect.void : flushAll
    )

    // One statement, so one round trip and no transaction to open: the debit and its ledger row commit together or
    // not at all, and a balance below the price debits nothing (no id comes back).
    const debit = (workspaceId: string, operation: string, requestId: string, credits: number) =>
      sql`WITH debited AS (
          UPDATE core.credit_balances SET balance = balance - ${credits}
          WHERE workspace_id = ${workspaceId} AND balance >= ${credits}
          RETURNING workspace_id)
        INSERT INTO core.credit_ledger (workspace_id, kind, credits, operation, request_id)
        SELECT workspace_id, 'debit', ${-credits}, ${operation}, ${requestId} FROM debited
        RETURNING id::text AS id`.pipe(Effect.flatMap(decodeIds))

    const charge = ({ credits, operation, requestId, workspaceId }: Parameters<Meter["Type"]["charge"]>[0]) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // The calls served before it are debited before it.
        yield* flush
        yield* ensureAllowance(workspaceId, now).pipe(Effect.orDie)
        const ids = yield* debit(workspaceId, operation, requestId, credits).pipe(Effect.orDie)
        known.delete(workspaceId)
        const ledgerId = ids[0]?.id
        if (ledgerId === undefined) {
          const balance = yield* balanceOf(workspaceId).pipe(Effect.orDie)
          return yield* refuse(workspaceId, operation, requestId, credits, now, balance)
        }
        return { ledgerId, workspaceId, credits }
      }).pipe(Effect.withSpan("Meter.charge", { captureStackTrace: false }))

    const refuse = (workspaceId: string, operation: string, requestId: string, credits: number, now: number, balance: number) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO core.credit_ledger (workspace_id, kind, credits, operation, request_id, note)
          VALUES (${workspaceId}, 'refused', 0, ${operation}, ${requestId}, 'balance below the price')`.pipe(Effect.orDie)
        return yield* new CreditsExhausted({ operation, price: credits, balance: Math.max(0, balance), renewsOn: renewalOf(now) })
      })

    const admit = ({ credits, operation, requestId, workspaceId }: Parameters<Meter["Type"]["admit"]>[0]) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* ensureAllowance(workspaceId, now).pipe(Effect.orDie)
        if ((yield* spendable(workspaceId, now).pipe(Effect.orDie)) >= credits) return
        // Before refusing: this node's debits written and the balance read again (another node or an operator may
        // have added credits), so a refusal is decided on the stored balance and ordered after the calls served.
        yield* flush
        const balance = (yield* balanceOf(workspaceId).pipe(Effect.orDie)) - (owed.get(workspaceId) ?? 0)
        if (balance < credits) return yield* refuse(workspaceId, operation, requestId, credits, now, balance)
      }).pipe(Effect.withSpan("Meter.admit", { captureStackTrace: false }))

    const settle = (call: Parameters<Meter["Type"]["settle"]>[0]) =>
      Effect.suspend(() => {
        pending.push({ workspaceId: call.workspaceId, operation: call.operation, requestId: call.requestId, credits: call.credits })
        owe(call.workspaceId, call.credits)
        return schedule
      }).pipe(Effect.withSpan("Meter.settle", { captureStackTrace: false }))

    const refund = (charge: Charge, note: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const refunded = yield* sql`INSERT INTO core.credit_ledger (workspace_id, kind, credits, operation, request_id, refund_of, note)
          SELECT workspace_id, 'refund', ${charge.credits}, operation, request_id, id, ${note}
          FROM core.credit_ledger WHERE id = ${charge.ledgerId}::bigint AND kind = 'debit'
          ON CONFLICT (refund_of) WHERE kind = 'refund' DO NOTHING
          RETURNING id::text AS id`.pipe(Effect.flatMap(decodeIds))
        if (refunded.length > 0) yield* credit(charge.workspaceId, charge.credits)
        known.delete(charge.workspaceId)
      })).pipe(Effect.orDie, Effect.withSpan("Meter.refund", { captureStackTrace: false }))

    const usage = (workspaceId: string) =>
      Effect.zipRight(flush, sql`SELECT d.operation, to_char((d.created_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, count(*)::text AS units
          FROM core.credit_ledger d
          WHERE d.workspace_id = ${workspaceId} AND d.kind = 'debit'
            AND NOT EXISTS (SELECT 1 FROM core.credit_ledger r WHERE r.refund_of = d.id AND r.kind = 'refund')
          GROUP BY 1, 2 ORDER BY 2 DESC, 1`).pipe(
        Effect.flatMap(decodeUsage),
        Effect.orDie
      )

    const grant = ({ credits, note, workspaceId }: Parameters<Meter["Type"]["grant"]>[0]) =>
      Effect.zipRight(
        flush,
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO core.credit_ledger (workspace_id, kind, credits, note)
            VALUES (${workspaceId}, 'grant', ${credits}, ${note})`
          yield* credit(workspaceId, credits)
          known.delete(workspaceId)
        }))
      ).pipe(Effect.orDie, Effect.withSpan("Meter.grant", { captureStackTrace: false }))

    const account = (workspaceId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const since = new Date(now - 30 * 24 * 3600 * 1000).toISOString()
        // Reading the account writes this node's pending debits and grants the month's allowance when due, so the
        // balance shown is spendable and the calls just served are in it.
        yield* flush
        yield* ensureAllowance(workspaceId, now)
        // Inside a caller's transaction the debits held here are not written yet: they are spent all the same.
        const balance = Math.max(0, (yield* balanceOf(workspaceId)) - (owed.get(workspaceId) ?? 0))
        // A refund row carries its debit's operation, so one pass over the window counts both.
        const rows = yield* sql`SELECT operation, debits::text AS debits, credits::text AS credits, refunds::text AS refunds,
            refunded_credits::text AS refunded_credits, refused::text AS refused
          FROM (
            SELECT operation,
              count(*) FILTER (WHERE kind = 'debit') AS debits,
              -coalesce(sum(credits) FILTER (WHERE kind IN ('debit', 'refund')), 0) AS credits,
              count(*) FILTER (WHERE kind = 'refund') AS refunds,
              coalesce(sum(credits) FILTER (WHERE kind = 'refund'), 0) AS refunded_credits,
              count(*) FILTER (WHERE kind = 'refused') AS refused
            FROM core.credit_ledger
            WHERE workspace_id = ${workspaceId} AND operation IS NOT NULL AND created_at >= ${since}::timestamptz
            GROUP BY operation
          ) t ORDER BY credits DESC, operation`.pipe(Effect.flatMap(decodeConsumption))
        const history = yield* sql`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at,
            kind, operation, credits::text AS credits, request_id, note
          FROM core.credit_ledger WHERE workspace_id = ${workspaceId}
          ORDER BY created_at DESC, id DESC LIMIT ${historyLength}`.pipe(Effect.flatMap(decodeLedger))
        return {
          balance,
          monthly_allowance: options.monthlyAllowance,
          period: periodOf(now),
          renews_on: renewalOf(now),
          consumption: rows.map((row) => ({
            operation: row.operation,
            // A refunded call was not served.
            calls: row.debits - row.refunds,
            credits: row.credits,
            refunds: row.refunds,
            refunded_credits: row.refunded_credits,
            refused_for_credits: row.refused
          })),
          history
        }
      }).pipe(Effect.orDie, Effect.withSpan("Meter.account", { captureStackTrace: false }))

    const balance = (workspaceId: string) =>
      Effect.gen(function*() {
        yield* flush
        yield* ensureAllowance(workspaceId, yield* Clock.currentTimeMillis)
        return Math.max(0, (yield* balanceOf(workspaceId)) - (owed.get(workspaceId) ?? 0))
      }).pipe(Effect.orDie, Effect.withSpan("Meter.balance", { captureStackTrace: false }))

    return Meter.of({ admit, settle, charge, refund, usage, grant, account, balance, flush })
  })

/** @since 0.1.0 @category layers */
export const layerSql: Layer.Layer<Meter, ConfigError.ConfigError, SqlClient.SqlClient> = Layer.scoped(
  Meter,
  Effect.gen(function*() {
    const monthlyAllowance = yield* monthlyAllowanceConfig
    const flushEvery = Duration.millis(yield* flushIntervalConfig)
    return yield* makeSql({ monthlyAllowance, flushEvery })
  })
)

/**
 * {@link makeSql} with a fixed allowance, for tests.
 *
 * @since 0.1.0 @category layers
 */
export const layerSqlWith = (options: {
  readonly monthlyAllowance: number
  readonly flushEvery?: Duration.DurationInput | undefined
}): Layer.Layer<Meter, never, SqlClient.SqlClient> => Layer.scoped(Meter, makeSql(options))

/**
 * The same ledger in memory, for in-process hosts without a database and for transport tests. Single
 * process only: nothing is shared between processes or kept across restarts.
 *
 * @since 0.1.0 @category layers
 */
export const layerMemory = (options: { readonly monthlyAllowance: number }): Layer.Layer<Meter> =>
  Layer.sync(Meter, () => {
    interface Entry {
      readonly id: number
      readonly workspaceId: string
      readonly kind: "grant" | "debit" | "refund" | "refused"
      readonly credits: number
      readonly operation: string | null
      readonly requestId: string | null
      readonly note: string | null
      readonly period: string | null
      readonly refundOf: number | null
      readonly at: number
    }
    const ledger: Array<Entry> = []
    const balances = new Map<string, number>()
    // Columns a row leaves empty default to null, as in core.credit_ledger.
    const append = (
      entry: Pick<Entry, "workspaceId" | "kind" | "credits" | "at"> & Partial<Pick<Entry, "operation" | "requestId" | "note" | "period" | "refundOf">>
    ) => {
      const id = ledger.length + 1
      ledger.push({ operation: null, requestId: null, note: null, period: null, refundOf: null, ...entry, id })
      if (entry.kind !== "debit") balances.set(entry.workspaceId, (balances.get(entry.workspaceId) ?? 0) + entry.credits)
      return id
    }
    const grantAllowance = (workspaceId: string, now: number) => {
      const period = periodOf(now)
      if (!ledger.some((e) => e.kind === "grant" && e.workspaceId === workspaceId && e.period === period)) {
        append({ workspaceId, kind: "grant", credits: options.monthlyAllowance, period, note: "monthly allowance", at: now })
      }
    }
    return Meter.of({
      admit: ({ credits, operation, requestId, workspaceId }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          grantAllowance(workspaceId, now)
          const balance = balances.get(workspaceId) ?? 0
          if (balance >= credits) return Effect.void
          append({ workspaceId, kind: "refused", credits: 0, operation, requestId, note: "balance below the price", at: now })
          return Effect.fail(new CreditsExhausted({ operation, price: credits, balance, renewsOn: renewalOf(now) }))
        }),
      settle: ({ credits, operation, requestId, workspaceId }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            const balance = balances.get(workspaceId) ?? 0
            if (balance < credits) {
              append({ workspaceId, kind: "debit", credits: 0, operation, requestId, note: "served after concurrent calls spent the balance", at: now })
              return
            }
            balances.set(workspaceId, balance - credits)
            append({ workspaceId, kind: "debit", credits: 0 - credits, operation, requestId, at: now })
          })),
      charge: ({ credits, operation, requestId, workspaceId }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          grantAllowance(workspaceId, now)
          const balance = balances.get(workspaceId) ?? 0
          if (balance < credits) {
            append({ workspaceId, kind: "refused", credits: 0, operation, requestId, note: "balance below the price", at: now })
            return Effect.fail(new CreditsExhausted({ operation, price: credits, balance, renewsOn: renewalOf(now) }))
          }
          balances.set(workspaceId, balance - credits)
          // 0 - x, not -x: a free charge must not be stored as -0.
          const id = append({ workspaceId, kind: "debit", credits: 0 - credits, operation, requestId, at: now })
          return Effect.succeed({ ledgerId: String(id), workspaceId, credits })
        }),
      refund: (charge, note) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            const debit = ledger.find((e) => String(e.id) === charge.ledgerId && e.kind === "debit")
            if (debit === undefined || ledger.some((e) => e.kind === "refund" && e.refundOf === debit.id)) return
            append({
              workspaceId: debit.workspaceId,
              kind: "refund",
              credits: charge.credits,
              operation: debit.operation,
              requestId: debit.requestId,
              note,
              refundOf: debit.id,
              at: now
            })
          })),
      usage: (workspaceId) =>
        Effect.sync(() => {
          // Served = debited and not refunded, per operation and UTC day, newest day first.
          const refunded = new Set(ledger.filter((e) => e.kind === "refund").map((e) => e.refundOf))
          const counts = new Map<string, { operation: string; day: string; units: number }>()
          for (const e of ledger) {
            if (e.workspaceId !== workspaceId || e.kind !== "debit" || refunded.has(e.id)) continue
            const day = new Date(e.at).toISOString().slice(0, 10)
            const key = `${day}\u0000${e.operation ?? ""}`
            const current = counts.get(key)
            counts.set(key, { operation: e.operation ?? "", day, units: (current?.units ?? 0) + 1 })
          }
          return [...counts.values()].sort((a, b) => b.day.localeCompare(a.day) || a.operation.localeCompare(b.operation))
        }),
      grant: ({ credits, note, workspaceId }) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => void append({ workspaceId, kind: "grant", credits, note, at: now }))),
      balance: (workspaceId) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            grantAllowance(workspaceId, now)
            return balances.get(workspaceId) ?? 0
          })),
      account: (workspaceId) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.sync(() => {
            grantAllowance(workspaceId, now)
            const recent = ledger.filter((e) => e.workspaceId === workspaceId && e.operation !== null && e.at >= now - 30 * 24 * 3600 * 1000)
            const operations = [...new Set(recent.map((e) => e.operation ?? ""))]
            const consumption = operations.map((operation) => {
              const mine = recent.filter((e) => e.operation === operation)
              const refunds = mine.filter((e) => e.kind === "refund")
              return {
                operation,
                calls: mine.filter((e) => e.kind === "debit").length - refunds.length,
                // 0 - x, not -x: a net of zero must not read as -0.
                credits: 0 - mine.filter((e) => e.kind === "debit" || e.kind === "refund").reduce((sum, e) => sum + e.credits, 0),
                refunds: refunds.length,
                refunded_credits: refunds.reduce((sum, e) => sum + e.credits, 0),
                refused_for_credits: mine.filter((e) => e.kind === "refused").length
              }
            }).sort((a, b) => b.credits - a.credits || a.operation.localeCompare(b.operation))
            const history = ledger
              .filter((e) => e.workspaceId === workspaceId)
              .sort((a, b) => b.at - a.at || b.id - a.id)
              .slice(0, historyLength)
              .map((e) => ({
                at: new Date(e.at).toISOString(),
                kind: e.kind,
                operation: e.operation,
                credits: e.credits,
                request_id: e.requestId,
                note: e.note
              }))
            return {
              balance: balances.get(workspaceId) ?? 0,
              monthly_allowance: options.monthlyAllowance,
              period: periodOf(now),
              renews_on: renewalOf(now),
              consumption,
              history
            }
          })),
      flush: Effect.void
    })
  })
