/**
 * A small domain of the tests' own, so the derived command tree is proven for any group: a codec, and
 * operations whose inputs use every kind a flag can read (choices, lists of choices and of integers, a
 * number, a boolean, a nested object, an object list no flag expresses), a path-bound positional argument,
 * a query-bound input, and an operation not served on the CLI.
 */
import * as Operation from "@service/core/Operation"
import type { Scope } from "@service/core/Principal"
import * as Refusal from "@service/core/Refusal"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

export class ToyRefusal extends Schema.TaggedError<ToyRefusal>()("ToyRefusal", {
  code: Schema.Literal("bad_value", "gone"),
  why: Schema.String,
  field: Schema.optional(Schema.String),
  allowed: Schema.optional(Schema.Array(Schema.String))
}) {}

export const codec = Refusal.makeCodec({
  key: "toy_block",
  identifier: "Toy",
  tag: "ToyRefusal",
  is: (u: unknown): u is ToyRefusal => u instanceof ToyRefusal,
  rules: {
    bad_value: { status: 400, retryable: false, action: "fix_arguments", description: "a value is wrong" },
    gone: { status: 410, retryable: false, action: "search_again", description: "the thing is gone" }
  },
  code: (r) => r.code,
  message: (r) => r.why,
  toBlock: (r) => ({
    code: r.code,
    why: r.why,
    ...(r.field === undefined ? {} : { field: r.field }),
    ...(r.allowed === undefined ? {} : { allowed_values: r.allowed })
  }),
  block: Schema.Struct({
    code: Schema.String,
    why: Schema.String,
    field: Schema.optional(Schema.String),
    allowed_values: Schema.optional(Schema.Array(Schema.String))
  }),
  invalidInput: (input) =>
    new ToyRefusal({
      code: "bad_value",
      why: input.why,
      ...(input.field === undefined ? {} : { field: input.field }),
      ...(input.allowedValues === undefined ? {} : { allowed: input.allowedValues })
    }),
  invalidInputCode: "bad_value",
  codeField: "code",
  sample: (code) => new ToyRefusal({ code, why: `sample ${code}` })
})

const strict = { parseOptions: { onExcessProperty: "error" } } as const
const scopes: ReadonlyArray<Scope> = ["market_data:read"]
const base = { refusals: codec, scopes, annotations: Operation.readOnly, metered: false, paginates: false } as const

export const AggregateInput = Schema.Struct({
  currency: Schema.Literal("MXN", "USD").annotations({ description: "ISO currency of the amounts." }),
  group_by: Schema.Array(Schema.Literal("buyer", "year")).pipe(Schema.minItems(1)).annotations({
    description: "Dimensions to group by."
  }),
  years: Schema.optional(Schema.Array(Schema.Int)).annotations({ description: "Award years." }),
  ratio: Schema.optional(Schema.Finite),
  include_empty: Schema.optional(Schema.Boolean).annotations({ description: "Keep groups with no rows." }),
  compare_period: Schema.optional(Schema.Struct({
    from_date: Schema.String.annotations({ description: "First day of the earlier period, YYYY-MM-DD." }),
    to_date: Schema.String.annotations({ description: "Last day of the earlier period, YYYY-MM-DD." })
  })),
  segments: Schema.optional(Schema.Array(Schema.Struct({ id: Schema.String, query: Schema.String }))),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 10))).annotations({ description: "Groups per page, 1 to 10." })
}).annotations({ ...strict, identifier: "AggregateInput" })

export const AggregateOutput = Schema.Struct({
  groups: Schema.Array(Schema.Struct({ key: Schema.String, count: Schema.Number })),
  page: Schema.Struct({ hasMore: Schema.Boolean })
}).annotations({ identifier: "AggregateOutput" })

export const aggregate = Operation.make({
  ...base,
  name: "aggregate_things",
  title: "Aggregate things",
  description: "Groups things by the dimensions asked. A second sentence.",
  input: AggregateInput,
  modelInput: AggregateInput,
  output: AggregateOutput,
  refuses: ["gone"],
  capability: {
    question: "How many things per buyer?",
    requires: "currency and group_by",
    example: { currency: "MXN", group_by: ["buyer"], compare_period: { from_date: "2024-01-01", to_date: "2024-12-31" } }
  },
  http: { method: "POST", path: "/things/aggregate", input: { kind: "body" } },
  cli: {
    words: ["things", "aggregate"],
    nested: { compare_period: { from_date: "compare-from-date", to_date: "compare-to-date" } }
  },
  run: () => Effect.succeed({ groups: [], page: { hasMore: false } })
})

export const GetInput = Schema.Struct({
  // A path parameter: "." and ".." are dot segments no URL can carry (the CLI refuses them).
  thing_ref: Schema.String.pipe(Schema.filter((s) => s !== "." && s !== "..")).annotations({
    description: "The ref of a thing, from a list."
  }),
  detail: Schema.optional(Schema.Literal(1, 2)).annotations({ description: "How much to show." })
}).annotations({ ...strict, identifier: "GetThingInput" })

export const Thing = Schema.Struct({ ref: Schema.String, name: Schema.String, tags: Schema.Array(Schema.String) })

export const getThing = Operation.make({
  ...base,
  name: "get_thing",
  title: "Get a thing",
  description: "Reads one thing by its ref.",
  input: GetInput,
  modelInput: GetInput,
  output: Thing,
  refuses: ["gone"],
  capability: { question: "What is this thing?", requires: "thing_ref", example: { thing_ref: "t1" } },
  http: { method: "GET", path: "/things/~ref/:thingRef", input: { kind: "path", params: { thingRef: "thing_ref" } } },
  cli: { words: ["things", "get"], positional: "thing_ref" },
  run: (input) => Effect.succeed({ ref: input.thing_ref, name: "One", tags: [] })
})

export const ListInput = Schema.Struct({
  tags: Schema.optional(Schema.Array(Schema.String)),
  prefix: Schema.optional(Schema.String)
}).annotations({ ...strict, identifier: "ListThingsInput" })

export const listThings = Operation.make({
  ...base,
  name: "list_things",
  title: "List things",
  description: "Lists things.",
  input: ListInput,
  modelInput: ListInput,
  output: Schema.Struct({ things: Schema.Array(Thing) }),
  refuses: [],
  capability: { question: "Which things exist?", requires: "Nothing.", example: {} },
  http: { method: "GET", path: "/things", input: { kind: "query" } },
  cli: { words: ["things", "list"] },
  run: () => Effect.succeed({ things: [] })
})

export const hidden = Operation.make({
  ...base,
  name: "hidden_thing",
  title: "Hidden",
  description: "Served on HTTP only.",
  input: ListInput,
  modelInput: ListInput,
  output: Schema.Struct({}),
  refuses: [],
  capability: { question: "?", requires: "Nothing.", example: {} },
  http: { method: "GET", path: "/hidden", input: { kind: "query" } },
  cli: { words: ["things", "hidden"] },
  surfaces: { cli: false },
  run: () => Effect.succeed({})
})

export const group: Operation.Group<never> = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A test domain.",
  refusals: codec,
  operations: [aggregate, getThing, listThings, hidden],
  http: { prefix: "/workspaces/:workspace/toy", workspaceScoped: true },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "A test domain of things." }
})
