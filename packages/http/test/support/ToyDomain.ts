/**
 * A small domain of the tests' own, so the HTTP edges are proven for any group and without a database: a
 * codec, a workspace-scoped group with a body, a small-body, a path and a query operation, and in-memory
 * Authenticator, Meter and RateLimiter.
 */
import { Unauthenticated } from "@service/core/AuthError"
import { Authenticator } from "@service/core/Authenticator"
import { CredentialId, WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { Principal, type Scope } from "@service/core/Principal"
import { RateLimited, RateLimiter } from "@service/core/RateLimiter"
import * as Refusal from "@service/core/Refusal"
import { Workspace } from "@service/core/Workspace"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

export class ToyRefusal extends Schema.TaggedError<ToyRefusal>()("ToyRefusal", {
  code: Schema.Literal("bad_value", "gone", "busy"),
  why: Schema.String,
  field: Schema.optional(Schema.String),
  allowed: Schema.optional(Schema.Array(Schema.String)),
  range: Schema.optional(Refusal.AllowedRange)
}) {}

const ToyBlock = Schema.Struct({
  code: Schema.String,
  why: Schema.String,
  field: Schema.optional(Schema.String),
  allowed_values: Schema.optional(Schema.Array(Schema.String)),
  allowed_range: Schema.optional(Refusal.AllowedRange)
}).annotations({ identifier: "ToyBlock" })

export const codec = Refusal.makeCodec({
  key: "toy",
  identifier: "Toy",
  tag: "ToyRefusal",
  is: (u: unknown): u is ToyRefusal => u instanceof ToyRefusal,
  rules: {
    bad_value: { status: 400, retryable: false, action: "fix_arguments", description: "a value is wrong" },
    gone: { status: 410, retryable: false, action: "search_again", description: "the item is gone" },
    busy: { status: 503, retryable: true, action: "retry_backoff", description: "try again later" }
  },
  code: (r) => r.code,
  message: (r) => r.why,
  toBlock: (r) => ({
    code: r.code,
    why: r.why,
    ...(r.field === undefined ? {} : { field: r.field }),
    ...(r.allowed === undefined ? {} : { allowed_values: r.allowed }),
    ...(r.range === undefined ? {} : { allowed_range: r.range })
  }),
  block: ToyBlock,
  invalidInput: (input) =>
    new ToyRefusal({
      code: "bad_value",
      why: input.why,
      ...(input.field === undefined ? {} : { field: input.field }),
      ...(input.allowedValues === undefined ? {} : { allowed: input.allowedValues }),
      ...(input.allowedRange === undefined ? {} : { range: input.allowedRange })
    }),
  invalidInputCode: "bad_value",
  codeField: "code",
  sample: (code) => new ToyRefusal({ code, why: `sample ${code}` })
})

const strict = { parseOptions: { onExcessProperty: "error" } } as const

const EchoInput = Schema.Struct({
  text: Schema.String.pipe(Schema.maxLength(100_000)).annotations({ description: "Text to echo." }),
  count: Schema.optional(Schema.Int.pipe(Schema.between(1, 10))).annotations({ description: "Repetitions, 1 to 10." }),
  mode: Schema.optional(Schema.Literal("plain", "loud"))
}).annotations({ ...strict, identifier: "EchoInput" })

const EchoOutput = Schema.Struct({ text: Schema.String, count: Schema.Number }).annotations({ identifier: "EchoOutput" })

const scopes: ReadonlyArray<Scope> = ["market_data:read"]

const base = {
  refusals: codec,
  scopes,
  annotations: Operation.readOnly,
  paginates: false
}

export const echo = Operation.make({
  ...base,
  name: "echo",
  title: "Echo",
  description: "Echoes the text.",
  input: EchoInput,
  modelInput: EchoInput,
  output: EchoOutput,
  refuses: ["busy"],
  metered: true,
  capability: { question: "Echo?", requires: "text", example: { text: "hola" } },
  http: { method: "POST", path: "/echo", input: { kind: "body" } },
  cli: { words: ["echo"] },
  run: (input) =>
    input.text === "busy"
      ? Effect.fail(new ToyRefusal({ code: "busy", why: "Busy." }))
      : input.text === "explode"
      ? Effect.dieMessage("a bug with a secret inside")
      : Effect.succeed({ text: input.mode === "loud" ? input.text.toUpperCase() : input.text, count: input.count ?? 1 })
})

/** The same with a 1 KiB body limit. */
export const echoSmall = Operation.make({
  ...base,
  name: "echo_small",
  title: "Echo (small)",
  description: "Echoes a short text.",
  input: EchoInput,
  modelInput: EchoInput,
  output: EchoOutput,
  refuses: [],
  metered: false,
  capability: { question: "Echo a little?", requires: "text", example: { text: "hola" } },
  http: { method: "POST", path: "/echo-small", input: { kind: "body", maxBodyBytes: 1024 } },
  cli: { words: ["echo-small"] },
  run: (input) => Effect.succeed({ text: input.text, count: input.count ?? 1 })
})

const ItemInput = Schema.Struct({
  item_id: Schema.String.annotations({ description: "The item's id." }),
  verbose: Schema.optional(Schema.Literal("yes", "no"))
}).annotations({ ...strict, identifier: "ItemInput" })

export const item = Operation.make({
  ...base,
  name: "get_item",
  title: "Get an item",
  description: "Reads one item by id.",
  input: ItemInput,
  modelInput: ItemInput,
  output: Schema.Struct({ item_id: Schema.String, verbose: Schema.Boolean }).annotations({ identifier: "Item" }),
  refuses: ["gone"],
  metered: true,
  capability: { question: "What is this item?", requires: "item_id", example: { item_id: "a1" } },
  http: { method: "GET", path: "/items/:itemId", input: { kind: "path", params: { itemId: "item_id" } } },
  cli: { words: ["items", "get"], positional: "item_id" },
  run: (input) =>
    input.item_id === "gone"
      ? Effect.fail(new ToyRefusal({ code: "gone", why: "That item is gone." }))
      : Effect.succeed({ item_id: input.item_id, verbose: input.verbose === "yes" })
})

const TouchInput = Schema.Struct({
  item_id: Schema.String.annotations({ description: "The item's id." }),
  note: Schema.optional(Schema.String.pipe(Schema.maxLength(20)))
}).annotations({ ...strict, identifier: "TouchInput" })

/** An action on an item: its input needs no body field (the path names the item, the note is optional). */
export const touch = Operation.make({
  ...base,
  name: "touch_item",
  title: "Touch an item",
  description: "Marks an item as seen.",
  input: TouchInput,
  modelInput: TouchInput,
  output: Schema.Struct({ item_id: Schema.String, note: Schema.NullOr(Schema.String) }).annotations({ identifier: "Touched" }),
  refuses: [],
  metered: false,
  capability: { question: "Touch an item?", requires: "item_id", example: { item_id: "a1" } },
  http: { method: "POST", path: "/items/:itemId/touch", input: { kind: "body", params: { itemId: "item_id" } } },
  cli: { words: ["items", "touch"], positional: "item_id" },
  run: (input) => Effect.succeed({ item_id: input.item_id, note: input.note ?? null })
})

const ListInput = Schema.Struct({
  prefix: Schema.optional(Schema.String).annotations({ description: "Only ids starting with this." })
}).annotations({ ...strict, identifier: "ListInput" })

export const list = Operation.make({
  ...base,
  name: "list_items",
  title: "List items",
  description: "Lists item ids.",
  input: ListInput,
  modelInput: ListInput,
  output: Schema.Struct({ items: Schema.Array(Schema.String) }).annotations({ identifier: "ItemList" }),
  refuses: [],
  metered: false,
  capability: { question: "Which items exist?", requires: "Nothing.", example: {} },
  http: { method: "GET", path: "/items", input: { kind: "query" } },
  cli: { words: ["items", "list"] },
  run: (input) => Effect.succeed({ items: ["a1", "a2", "b1"].filter((id) => id.startsWith(input.prefix ?? "")) })
})

export const group: Operation.Group<never> = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A test domain.",
  refusals: codec,
  operations: [list, echo, echoSmall, item, touch],
  http: {
    prefix: "/workspaces/:workspace/toy",
    workspaceScoped: true,
    discovery: "list_items",
    // `things` is the old name of `items`: still served, deprecated.
    aliases: [{ segment: "things", canonical: "items", since: "2026-01-01T00:00:00Z" }]
  },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "A test domain." }
})

/** A second group of the same domain, not workspace-scoped, to mount beside or alone. */
export const openGroup: Operation.Group<never> = Operation.group({
  ...group,
  name: "toyOpen",
  title: "Toy (open)",
  operations: [list],
  http: { prefix: "/toy-open", workspaceScoped: false, aliases: [] }
})

export const KEY = "svc_key_toy_0123456789abcdef"
/** A key whose workspace is limited to three calls. */
export const LIMITED_KEY = "svc_key_toy_limited_0123456789"
/** A key without the market_data:read scope. */
export const UNSCOPED_KEY = "svc_key_toy_unscoped_0123456789"

const principal = (slug: string, scopes: ReadonlyArray<Scope>) =>
  new Principal({
    workspace: new Workspace({ id: WorkspaceId.make(`ws_${slug}`), slug: WorkspaceSlug.make(slug), name: slug }),
    person: Option.none(),
    role: "member",
    scopes,
    credential: { id: CredentialId.make(`cred_${slug}`), kind: "api_key" }
  })

const principals: Readonly<Record<string, Principal>> = {
  [KEY]: principal("demo", ["market_data:read"]),
  [LIMITED_KEY]: principal("limited", ["market_data:read"]),
  [UNSCOPED_KEY]: principal("unscoped", ["topics:write"])
}

export const authenticator = Layer.succeed(Authenticator, {
  authenticate: ({ secret }) => {
    const found = principals[Redacted.value(secret)]
    return found === undefined ? Effect.fail(new Unauthenticated()) : Effect.succeed(found)
  }
})

/** Meters in memory; three calls a minute for the `limited` workspace, no limit elsewhere. */
export const services = Layer.mergeAll(
  authenticator,
  // The ledger in memory; the `broke` workspace has no allowance left after its first call.
  Meter.layerMemory({ monthlyAllowance: 1_000_000 }),
  Layer.sync(RateLimiter, () => {
    let calls = 0
    return RateLimiter.of({
      consume: (workspaceId) =>
        Effect.suspend(() => {
          if (workspaceId !== "ws_limited") return Effect.void
          calls += 1
          return calls > 3 ? Effect.fail(new RateLimited({ limit: 3, retryAfterSeconds: 42 })) : Effect.void
        }),
      flush: Effect.void
    })
  })
)
