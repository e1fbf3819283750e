/**
 * `service credits ...`: operator commands on a workspace's insight credits, declared with the core bundle. Like
 * `service corpus`, they work on the database directly (DATABASE_URL, or the embedded database in
 * SERVICE_DATA_DIR), not through the HTTP API: adding credits is the deployment operator's act (a purchase, a
 * goodwill grant), not a workspace member's.
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
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Accounts from "./Accounts.js"
import * as Meter from "./Meter.js"
import * as OperatorCommand from "./OperatorCommand.js"

const slug = Schema.String.annotations({ description: "The workspace, by its slug." })

const workspaceOf = (workspaceSlug: string) =>
  Effect.flatMap(Accounts.Accounts, (accounts) => accounts.findWorkspaceBySlug(workspaceSlug)).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(OperatorCommand.usage(`No workspace with the slug ${workspaceSlug}.`)),
      onSome: Effect.succeed
    }))
  )

const plural = (n: number, one: string, many: string) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`

// How many ledger entries the text output prints; --json has the account's whole history.
const historyLines = 10

/**
 * The account as text: balance, consumption per operation (refunds apart) and the latest ledger entries.
 *
 * @since 0.1.0 @category formatting
 */
export const accountText = (workspaceSlug: string, account: Meter.Account): string => {
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

/** @since 0.1.0 @category commands */
export const grant = OperatorCommand.make({
  word: "grant",
  description: "Add insight credits to a workspace, outside its monthly allowance.",
  access: "existing-database",
  positional: ["workspace_slug", "credits"],
  input: Schema.Struct({
    workspace_slug: slug,
    credits: Schema.Int.pipe(Schema.between(1, 1_000_000_000)).annotations({ description: "Insight credits to add, 1 to 1,000,000,000." }),
    note: Schema.String.annotations({ description: "Why: recorded with the grant in the credit ledger." })
  }),
  run: (input) =>
    Effect.gen(function*() {
      const note = input.note.trim()
      if (note === "") return yield* OperatorCommand.usage("--note must say why the credits are granted.")
      const workspace = yield* workspaceOf(input.workspace_slug)
      const meter = yield* Meter.Meter
      const before = (yield* meter.account(workspace.id)).balance
      yield* meter.grant({ workspaceId: workspace.id, credits: input.credits, note })
      const balance = (yield* meter.account(workspace.id)).balance
      return {
        json: { workspace: input.workspace_slug, granted: input.credits, balance_before: before, balance },
        text: `granted ${input.credits.toLocaleString("en")} credits to ${input.workspace_slug}: balance ${before.toLocaleString("en")} -> ${
          balance.toLocaleString("en")
        }`
      }
    })
})

/** @since 0.1.0 @category commands */
export const balance = OperatorCommand.make({
  word: "balance",
  description:
    "A workspace's insight credits: balance, allowance and when it renews, the last 30 days per operation (refunds apart) and the latest ledger entries.",
  access: "existing-database",
  positional: ["workspace_slug"],
  input: Schema.Struct({ workspace_slug: slug }),
  run: (input) =>
    Effect.gen(function*() {
      const workspace = yield* workspaceOf(input.workspace_slug)
      const account = yield* (yield* Meter.Meter).account(workspace.id)
      return { json: { workspace: input.workspace_slug, ...account }, text: accountText(input.workspace_slug, account) }
    })
})

/** @since 0.1.0 @category commands */
export const operators = OperatorCommand.group({
  word: "credits",
  description: "Operator commands on workspaces' insight credits (direct database access).",
  commands: [grant, balance]
})
