/**
 * The account group: what a workspace can read about itself on every surface. Today one operation, `usage`:
 * the insight-credit balance, the monthly allowance and when it renews, and the last 30 days' consumption per
 * operation (HTTP `GET /workspaces/<slug>/account/usage`, MCP `service_account_usage`, CLI
 * `service account usage`). Free, and readable with any scope.
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
  code: Schema.Literal("invalid_field_value"),
  why: Schema.String,
  suggestedCorrection: Schema.String,
  field: Schema.optional(Schema.String),
  allowedValues: Schema.optional(Schema.Array(Schema.String)),
  allowedRange: Schema.optional(Refusal.AllowedRange)
}) {}

/** @since 0.1.0 @category models */
export const AccountBlock = Schema.Struct({
  code: Schema.Literal("invalid_field_value"),
  why: Schema.String,
  suggested_correction: Schema.String,
  retryable: Schema.Boolean,
  recovery: Schema.Struct({ action: Schema.Literal("fix_arguments") }),
  field: Schema.optional(Schema.String),
  allowed_values: Schema.optional(Schema.Array(Schema.String)),
  allowed_range: Schema.optional(Refusal.AllowedRange)
}).annotations({ identifier: "AccountBlock", description: "What was wrong with the request and how to fix it." })

/** @since 0.1.0 @category codecs */
export const codec = Refusal.makeCodec({
  key: "account",
  identifier: "Account",
  tag: "AccountRefusal",
  is: (u: unknown): u is AccountRefusal => u instanceof AccountRefusal,
  rules: {
    invalid_field_value: { status: 400, retryable: false, action: "fix_arguments", description: "the request has a field the operation does not take" }
  },
  code: (refusal) => refusal.code,
  message: (refusal) => refusal.why,
  toBlock: (refusal) => ({
    code: refusal.code,
    why: refusal.why,
    suggested_correction: refusal.suggestedCorrection,
    retryable: false,
    recovery: { action: "fix_arguments" },
    ...(refusal.field === undefined ? {} : { field: refusal.field }),
    ...(refusal.allowedValues === undefined ? {} : { allowed_values: refusal.allowedValues }),
    ...(refusal.allowedRange === undefined ? {} : { allowed_range: refusal.allowedRange })
  }),
  block: AccountBlock,
  invalidInput: (input) =>
    new AccountRefusal({
      code: "invalid_field_value",
      why: input.why,
      suggestedCorrection: input.suggestedCorrection,
      ...(input.field === undefined ? {} : { field: input.field }),
      ...(input.allowedValues === undefined ? {} : { allowedValues: input.allowedValues }),
      ...(input.allowedRange === undefined ? {} : { allowedRange: input.allowedRange })
    }),
  invalidInputCode: "invalid_field_value",
  codeField: "code",
  sample: (code) => new AccountRefusal({ code, why: "Sample refusal.", suggestedCorrection: "Send no fields." })
})

const NoInput = Schema.Struct({}).annotations({ parseOptions: { onExcessProperty: "error" }, identifier: "UsageInput" })

/** @since 0.1.0 @category operations */
export const usage = Operation.make({
  name: "usage",
  title: "Credit balance and usage",
  description:
    "The workspace's insight-credit balance, its monthly allowance and renewal date, and the last 30 days' metered calls, credits and credit refusals per operation. Free.",
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
