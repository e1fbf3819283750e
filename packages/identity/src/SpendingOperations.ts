/**
 * Who may spend in a workspace (decision 0092), on HTTP and the CLI (not MCP tools: an agent does not change who
 * spends):
 *
 * - `spending_get` (`GET /workspaces/<slug>/spending`, `service spending get`): whether members may spend and their
 *   monthly cap. Any person of the workspace.
 * - `spending_set` (`PUT .../spending`, `service spending set --members-may-spend true --member-monthly-cap 500`):
 *   owners only. Owners and admins always spend; members only when allowed, each up to the cap of credits per UTC
 *   month. Taking it back stops members' keys and tokens from spending at once, on every node.
 *
 * @since 0.1.0
 */
import { Accounts } from "@service/core/Accounts"
import { Forbidden } from "@service/core/AuthError"
import { requirePerson } from "@service/core/Authorization"
import * as Operation from "@service/core/Operation"
import { type Principal, Scope } from "@service/core/Principal"
import { Caller } from "@service/core/RequestContext"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { codec, refuse } from "./IdentityRefusal.js"
import { accessWrite } from "./KeyOperations.js"

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const kit = Operation.kit({ refusals: codec, scopes: accessWrite, annotations: Operation.idempotentWrite })

const maxCap = 1_000_000

/** @since 0.1.0 @category models */
export const SpendingView = Schema.Struct({
  owners_and_admins_spend: Schema.Literal(true).annotations({ description: "Owners and admins always hold and give commercial:activate." }),
  members_may_spend: Schema.Boolean,
  member_monthly_cap: Schema.NullOr(Schema.Int).annotations({
    description: "Credits each member may spend per UTC month on contact unlocks; null when members do not spend."
  })
}).annotations({ identifier: "Spending" })

const viewOf = (cap: number | null): typeof SpendingView.Type => ({
  owners_and_admins_spend: true,
  members_may_spend: cap !== null,
  member_monthly_cap: cap
})

const requireOwnerPerson = (principal: Principal) =>
  Effect.flatMap(requirePerson(principal), (person) =>
    principal.role === "owner"
      ? Effect.succeed(person)
      : Effect.fail(new Forbidden({ reason: "role_required", detail: "Only an owner decides who spends the workspace's money." })))

/** @since 0.1.0 @category operations */
export const spendingGet = kit.make({
  name: "spending_get",
  title: "Who may spend",
  description: "Who holds and gives commercial:activate in the workspace: owners and admins always; members only when an owner allowed it, each up to a monthly cap of credits.",
  refuses: [],
  annotations: Operation.readOnly,
  scopes: Scope.literals,
  authorize: requirePerson,
  surfaces: { mcp: false },
  http: { method: "GET", path: "/spending", input: { kind: "query" } },
  cli: { words: ["get"] },
  input: Schema.Struct({}).annotations({ ...strict, identifier: "SpendingGetInput" }),
  output: SpendingView,
  capability: { question: "Who may spend this workspace's credits?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const caller = yield* Caller
      return viewOf(yield* (yield* Accounts).memberSpendCap(caller.workspace.id))
    })
})

/** @since 0.1.0 @category operations */
export const spendingSet = kit.make({
  name: "spending_set",
  title: "Let members spend, or not",
  description:
    "Owner person only: lets the workspace's members hold and give commercial:activate, each spending up to member_monthly_cap credits per UTC month on contact unlocks, or takes it back (members_may_spend: false; their keys and tokens stop spending at once).",
  refuses: ["spending_cap_out_of_range"],
  authorize: requireOwnerPerson,
  surfaces: { mcp: false },
  http: { method: "PUT", path: "/spending", input: { kind: "body" } },
  cli: { words: ["set"] },
  input: Schema.Struct({
    members_may_spend: Schema.Boolean,
    member_monthly_cap: Schema.optional(Schema.Int).annotations({
      description: `Credits each member may spend per UTC month, 1 to ${maxCap}; needed when members_may_spend is true.`
    })
  }).annotations({ ...strict, identifier: "SpendingSetInput" }),
  output: SpendingView,
  capability: {
    question: "How do I let members unlock contacts, with a limit?",
    requires: "members_may_spend, and member_monthly_cap when true.",
    example: { members_may_spend: true, member_monthly_cap: 500 }
  },
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* Caller
      const cap = input.member_monthly_cap
      if (input.members_may_spend && (cap === undefined || cap < 1 || cap > maxCap)) {
        return yield* refuse("spending_cap_out_of_range", `Letting members spend needs member_monthly_cap, 1 to ${maxCap} credits.`, "Send member_monthly_cap with the credits each member may spend per month.", { field: "member_monthly_cap" })
      }
      if (!input.members_may_spend && cap !== undefined) {
        return yield* refuse("spending_cap_out_of_range", "Members who do not spend have no cap.", "Leave member_monthly_cap out, or set members_may_spend to true.", { field: "member_monthly_cap" })
      }
      const accounts = yield* Accounts
      yield* accounts.setMemberSpendCap(caller.workspace.id, input.members_may_spend ? cap ?? null : null)
      return viewOf(yield* accounts.memberSpendCap(caller.workspace.id))
    })
})

/** @since 0.1.0 @category groups */
export const group = kit.typedGroup<Accounts | Caller>()({
  name: "spending",
  title: "Spending",
  description: "Who holds and gives commercial:activate, the scope that spends money: owners and admins, and members where an owner allows it, up to a monthly cap.",
  operations: [spendingGet, spendingSet],
  http: { prefix: "/workspaces/:workspace", workspaceScoped: true },
  mcp: { namespace: "spending" },
  cli: { word: "spending", description: "See and set who may spend (commercial:activate)." }
})
