import { assert, describe, it } from "@effect/vitest"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Conformance from "../src/Conformance.js"

// A toy domain, so the suite itself is exercised without a transport: the harness runs declarations
// in-process, the way the research belt does.
class ToyRefusal extends Schema.TaggedError<ToyRefusal>()("ToyRefusal", { code: Schema.Literal("bad_value", "gone"), why: Schema.String }) {}

const codec = Refusal.makeCodec({
  key: "toy",
  identifier: "Toy",
  tag: "ToyRefusal",
  is: (u: unknown): u is ToyRefusal => u instanceof ToyRefusal,
  rules: {
    bad_value: { status: 400, retryable: false, action: "fix_arguments", description: "a value is wrong" },
    gone: { status: 404, retryable: false, action: "search_again", description: "the item is gone" }
  },
  code: (r) => r.code,
  message: (r) => r.why,
  toBlock: (r) => ({ code: r.code, why: r.why }),
  block: Schema.Struct({ code: Schema.String, why: Schema.String }),
  invalidInput: (input) => new ToyRefusal({ code: "bad_value", why: input.why }),
  invalidInputCode: "bad_value",
  codeField: "code",
  sample: (code) => new ToyRefusal({ code, why: `sample ${code}` })
})

const echo = Operation.make({
  name: "echo",
  title: "Echo",
  description: "Echoes a word.",
  input: Schema.Struct({ word: Schema.String }),
  modelInput: Schema.Struct({ word: Schema.String }),
  output: Schema.Struct({ word: Schema.String }),
  refusals: codec,
  refuses: ["gone"],
  scopes: ["market_data:read"],
  annotations: Operation.readOnly,
  metered: false,
  paginates: false,
  capability: { question: "Echo?", requires: "word", example: { word: "hola" } },
  http: { method: "POST", path: "/echo", input: { kind: "body" } },
  cli: { words: ["echo"] },
  run: (input) => Effect.succeed({ word: input.word })
})

const group = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A toy group.",
  refusals: codec,
  operations: [echo],
  http: { prefix: "/toy", workspaceScoped: false },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "Toy commands." }
})

describe("expectedNames", () => {
  it("derives names from the prefix, never from the domain", () => {
    assert.deepStrictEqual(Conformance.expectedNames("mcp", "acme", [group]), ["acme_toy_echo"])
    assert.deepStrictEqual(Conformance.expectedNames("cli", "acme", [group]), ["acme toy echo"])
    assert.deepStrictEqual(Conformance.expectedNames("http", "acme", [group]), ["POST /api/v1/toy/echo"])
  })
})

Conformance.suite({
  surface: "mcp",
  groups: [group],
  harness: (groups) =>
    Layer.succeed(Conformance.HarnessService, {
      listed: Effect.succeed(Conformance.expectedNames("mcp", "service", groups)),
      call: (groupName, operation, input) => {
        const g = groups.find((candidate) => candidate.name === groupName)
        const op = g?.operations.find((candidate) => candidate.name === operation)
        if (g === undefined || op === undefined) return Effect.dieMessage(`unknown ${groupName}.${operation}`)
        return op.runModel(input).pipe(
          Effect.map((body): Conformance.Outcome => ({ _tag: "Success", body })),
          Effect.catchAll((failure) => {
            const described = g.refusals.describe(failure)
            return described === undefined
              ? Effect.die(failure)
              : Effect.succeed<Conformance.Outcome>({ _tag: "Refusal", status: described.status, block: described.block })
          })
        )
      }
    })
})
