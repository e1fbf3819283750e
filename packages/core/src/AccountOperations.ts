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

/**
 * An account refusal. The only one is structural: the usage report takes no input.
 *
 * @since 0.1.0 @category errors
 */
export class AccountRefusal extends Schema.TaggedError<AccountRefusal>("@service/core/AccountRefusal")("AccountRefusal", {
  ...Refusal.standardFields(Schema.Literal("invalid_field_value"))
}) {}

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeStandardCodec({
  key: "account",
  identifier: "Account",
  tag: "AccountRefusal",
  is: (u: unknown): u is AccountRefusal => u instanceof AccountRefusal,
  codes: Schema.Literal("invalid_field_value"),
  actions: Schema.Literal("fix_arguments"),
  rules: {
    invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "the request has a field the operation does not take" }
  },
  make: (fields) => new AccountRefusal(fields),
  invalidInputCode: "invalid_field_value",
  blockDescription: "What was wrong with the request and how to fix it."
})

const NoInput = Schema.Struct({}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "UsageInput" })

/** @since 0.1.0 @category operations */
export const usage = Operation.make({
  name: "usage",
  title: "Credit balance and usage",
  description:
    "The workspace's insight-credit balance, its monthly allowance and renewal date, the last 30 days' metered calls, credits, refunds and credit refusals per operation, and its last 50 credit-ledger entries (grants, debits, refunds, refusals) newest first. Free.",
  refusals: codec,
  refuses: [],
  // Any credential of the workspace may see what its calls cost.
  scopes: Scope.literals,
  annotations: Operation.readOnly,
  metered: false,
  paginates: false,
  http: { method: "GET", path: "/usage", input: { kind: "query" } },
  cli: { words: ["usage"] },
  input: NoInput,
  modelInput: NoInput,
  output: Account,
  capability: {
    question: "How many insight credits does this workspace have left, and what has spent them?",
    requires: "Nothing.",
    example: {}
  },
  run: () => Effect.flatMap(Caller, (caller) => Effect.flatMap(Meter, (meter) => meter.account(caller.workspace.id)))
})

/** @since 0.1.0 @category groups */
export const group: Operation.Group<Meter | Caller> = Operation.group({
  name: "account",
  title: "Account",
  description: "What a workspace can read about itself: its insight-credit balance and usage.",
  refusals: codec,
  operations: [usage],
  http: { prefix: "/workspaces/:workspace/account", workspaceScoped: true },
  mcp: { namespace: "account" },
  cli: { word: "account", description: "The workspace's credits and usage." }
})
