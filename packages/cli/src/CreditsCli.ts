/**
 * `service credits ...`: operator commands on a workspace's insight credits. Like `service corpus`, they work on the
 * database directly (DATABASE_URL, or the embedded database in SERVICE_DATA_DIR), not through the HTTP API: adding
 * credits is the deployment operator's act (a purchase, a goodwill grant), not a workspace member's.
 *
 * ```text
 * service credits grant <workspace-slug> <credits> --note <why> [--json]
 * service credits balance <workspace-slug> [--json]
 * ```
 *
 * A grant is a `grant` row of the credit ledger with its note; the workspace's usage route shows the balance it
 * makes. `balance` prints the last 30 days per operation (refunds apart) and the latest ledger entries; `--json`
 * prints the whole account. The embedded database is single-process: stop a running server on the same
 * SERVICE_DATA_DIR first.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import * as Meter from "@service/core/Meter"
import * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"

/** Accounts and the credit ledger over the configured database (which must exist already). @since 0.1.0 @category layers */
export const layer = Layer.mergeAll(Accounts.layerSql, Meter.layerSql).pipe(
  Layer.provideMerge(Migrations.layer([CoreMigrations.migrations])),
  Layer.provideMerge(Database.layerFromConfigWith({ createIfMissing: false }))
)

const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON."))
const slug = Args.text({ name: "workspace-slug" }).pipe(Args.withDescription("The workspace, by its slug."))

const withCredits = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(layer),
    Effect.catchAll((error) =>
      Failure.isFailure(error)
        ? Effect.fail(error)
        : Effect.fail(Failure.unexpected(error instanceof Error ? error.message : String(error)))
    )
  )

const workspaceOf = (workspaceSlug: string) =>
  Effect.flatMap(Accounts.Accounts, (accounts) => accounts.findWorkspaceBySlug(workspaceSlug)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(Failure.usage(`No workspace with the slug ${workspaceSlug}.`)),
      onSome: Effect.succeed
    }))
  )

const grant = Command.make(
  "grant",
  {
    slug,
    credits: Args.integer({ name: "credits" }).pipe(Args.withDescription("Insight credits to add, 1 to 1,000,000,000.")),
    note: Options.text("note").pipe(Options.withDescription("Why: recorded with the grant in the credit ledger.")),
    json
  },
  (opts) =>
    withCredits(Effect.gen(function*() {
      if (opts.credits < 1 || opts.credits > 1_000_000_000) {
        return yield* Effect.fail(Failure.usage(`credits must be a whole number from 1 to 1,000,000,000 (got ${opts.credits}).`))
      }
      if (opts.note.trim() === "") return yield* Effect.fail(Failure.usage("--note must say why the credits are granted."))
      const workspace = yield* workspaceOf(opts.slug)
      const meter = yield* Meter.Meter
      const before = (yield* meter.account(workspace.id)).balance
      yield* meter.grant({ workspaceId: workspace.id, credits: opts.credits, note: opts.note.trim() })
      const balance = (yield* meter.account(workspace.id)).balance
      yield* Console.log(
        opts.json
          ? Format.json({ workspace: opts.slug, granted: opts.credits, balance_before: before, balance })
          : `granted ${opts.credits.toLocaleString("en")} credits to ${opts.slug}: balance ${before.toLocaleString("en")} -> ${balance.toLocaleString("en")}`
      )
    }))
).pipe(Command.withDescription("Add insight credits to a workspace, outside its monthly allowance."))

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`

// How many ledger entries the text output prints; --json has the account's whole history.
const historyLines = 10

/** The account as text: balance, consumption per operation (refunds apart) and the latest ledger entries. */
const accountText = (workspaceSlug: string, account: Meter.Account): string => {
  const lines = [
    `${workspaceSlug}: ${account.balance.toLocaleString("en")} credits (allowance ${account.monthly_allowance.toLocaleString("en")} a month, renews ${account.renews_on})`
  ]
  if (account.consumption.length > 0) {
    lines.push("last 30 days:")
    for (const c of account.consumption) {
      const apart = [
        ...(c.refunds > 0 ? [`${plural(c.refunds, "refund", "refunds")}, ${plural(c.refunded_credits, "credit", "credits")} back`] : []),
        ...(c.refused_for_credits > 0 ? [`${c.refused_for_credits.toLocaleString("en")} refused for credits`] : [])
      ]
      lines.push(
        `  ${c.operation}: ${plural(c.calls, "call", "calls")}, ${plural(c.credits, "credit", "credits")}` +
          (apart.length > 0 ? ` (${apart.join("; ")})` : "")
      )
    }
  }
  if (account.history.length > 0) {
    lines.push(`latest ledger entries (newest first${account.history.length > historyLines ? `, ${historyLines} shown, --json for ${account.history.length}` : ""}):`)
    for (const e of account.history.slice(0, historyLines)) {
      const credits = e.credits > 0 ? `+${e.credits.toLocaleString("en")}` : e.credits.toLocaleString("en")
      const fields = [e.at, e.kind.padEnd(7), credits.padStart(7), e.operation, e.request_id, e.note === null ? null : `"${e.note}"`]
      lines.push(`  ${fields.filter((f) => f !== null).join("  ")}`)
    }
  }
  return lines.join("\n")
}

const balance = Command.make("balance", { slug, json }, (opts) =>
  withCredits(Effect.gen(function*() {
    const workspace = yield* workspaceOf(opts.slug)
    const account = yield* (yield* Meter.Meter).account(workspace.id)
    yield* Console.log(opts.json ? Format.json({ workspace: opts.slug, ...account }) : accountText(opts.slug, account))
  }))).pipe(
    Command.withDescription(
      "A workspace's insight credits: balance, allowance and when it renews, the last 30 days per operation (refunds apart) and the latest ledger entries."
    )
  )

/**
 * The `credits` command group.
 *
 * @since 0.1.0 @category commands
 */
export const command = Command.make("credits").pipe(
  Command.withDescription("Operator commands on workspaces' insight credits (direct database access)."),
  Command.withSubcommands([grant, balance])
)
