/**
 * The account group: what a workspace can read about itself on every surface. Today one operation, `usage`:
 * the insight-credit balance, the monthly allowance and when it renews, the last 30 days' consumption per
 * operation (debits and refunds apart) and the latest credit-ledger entries (HTTP
 * `GET /workspaces/<slug>/account/usage`, MCP `service_account_usage`, CLI `service account usage`). Free, and
 * readable with any scope.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Account, Meter } from "./Meter.js"
import * as Operation from "./Operation.js"
import { Scope } from "./Principal.js"
import * as Refusal from "./Refusal.js"
import { Caller } from "./RequestContext.js"

const defined = Refusal.define({
  key: "account",
  identifier: "Account",
  rules: {},
  outage: { code: "account_unavailable", store: "the credit ledger", suggestedCorrection: "Retry in a few seconds." },
  invalidInputDescription: "the request has a field the operation does not take",
  blockDescription: "What was wrong with the request and how to fix it."
})

/**
 * An account refusal: structural (the usage report takes no input), or the ledger out of reach.
 *
 * @since 0.1.0 @category errors
 */
export class AccountRefusal extends Schema.TaggedError<AccountRefusal>("@service/core/AccountRefusal")("AccountRefusal", defined.fields) {}

/** @since 0.1.0 @category codecs */
export const { codec } = defined.codecFor(AccountRefusal)

const NoInput = Schema.Struct({}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "UsageInput" })

/** What every declaration of the group shares: the refusal codec and the usual scopes and annotations. */
const kit = Operation.kit({ refusals: codec, scopes: Scope.literals, annotations: Operation.readOnly })

/** @since 0.1.0 @category operations */
export const usage = kit.make({
  name: "usage",
  title: "Credit balance and usage",
  description:
    "The workspace's insight-credit balance, its monthly allowance and renewal date, the last 30 days' metered calls, credits, refunds and credit refusals per operation, and its last 50 credit-ledger entries (grants, debits, refunds, refusals) newest first. Free.",
  refuses: [],
  // Any credential of the workspace may see what its calls cost.
  http: { method: "GET", path: "/usage", input: { kind: "query" } },
  cli: { words: ["usage"] },
  input: NoInput,
  output: Account,
  capability: {
    question: "How many insight credits does this workspace have left, and what has spent them?",
    requires: "Nothing.",
    example: {}
  },
  run: () => Effect.flatMap(Caller, (caller) => Effect.flatMap(Meter, (meter) => meter.account(caller.workspace.id)))
})

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Meter | Caller>()({
  name: "account",
  title: "Account",
  description: "What a workspace can read about itself: its insight-credit balance and usage.",
  operations: [usage],
  http: { prefix: "/workspaces/:workspace/account", workspaceScoped: true },
  mcp: { namespace: "account" },
  cli: { word: "account", description: "The workspace's credits and usage." }
})
