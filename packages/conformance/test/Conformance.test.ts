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
  run: (input) => input.word === "nada" ? Effect.fail(new ToyRefusal({ code: "gone", why: "nothing" })) : Effect.succeed({ word: input.word })
})

const wordOf = (body: unknown): unknown => (typeof body === "object" && body !== null && "word" in body ? body.word : undefined)

const group = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A toy group.",
  refusals: codec,
  operations: [echo],
  http: { prefix: "/toy", workspaceScoped: false },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "Toy commands." },
  cases: [
    {
      rule: "rule 1",
      title: "a word comes back as sent",
      operation: "echo",
      input: { word: "eco" },
      expect: { answered: (body) => (wordOf(body) === "eco" ? [] : [`got ${String(wordOf(body))}`]) }
    },
    {
      rule: "rule 2",
      title: "a value read from an earlier answer is handed to the call",
      operation: "echo",
      given: { first: { operation: "echo", input: { word: "uno" }, path: ["word"] } },
      input: (given) => ({ word: `${String(given["first"])}-dos` }),
      expect: { answered: (body) => (wordOf(body) === "uno-dos" ? [] : [`got ${String(wordOf(body))}`]) }
    },
    { rule: "errors: gone", title: "nada is gone", operation: "echo", input: { word: "nada" }, expect: { refused: "gone" } }
  ],
  invariant: (_operation, body) => (typeof wordOf(body) === "string" ? [] : ["an answer without a word"])
})

const toyHarness = (groups: ReadonlyArray<Operation.Group<never>>): Conformance.Harness => ({
  listed: Effect.succeed(Conformance.expectedNames("mcp", "service", groups)),
  forbidden: ["SECRET-SOURCE"],
  examples: { workspace: {}, test_workspace: {} },
  call: (groupName, operation, input) => {
    const g = groups.find((candidate) => candidate.name === groupName)
    const op = g?.operations.find((candidate) => candidate.name === operation)
    if (g === undefined || op === undefined) return Effect.dieMessage(`unknown ${groupName}.${operation}`)
    return op.runModel(input).pipe(
      Effect.map((body): Conformance.Outcome => ({ _tag: "Success", body, raw: JSON.stringify(body) })),
      Effect.catchAll((failure) => {
        const described = g.refusals.describe(failure)
        return described === undefined
          ? Effect.die(failure)
          : Effect.succeed<Conformance.Outcome>({
            _tag: "Refusal",
            status: described.status,
            block: described.block,
            raw: JSON.stringify(described.block)
          })
      })
    )
  }
})

describe("expectedNames", () => {
  it("derives names from the prefix, never from the domain", () => {
    assert.deepStrictEqual(Conformance.expectedNames("mcp", "acme", [group]), ["acme_toy_echo"])
    assert.deepStrictEqual(Conformance.expectedNames("cli", "acme", [group]), ["acme toy echo"])
    assert.deepStrictEqual(Conformance.expectedNames("http", "acme", [group]), ["POST /api/v1/toy/echo"])
  })
})

describe("resolveExample", () => {
  // An example naming a record by placeholder: the fixture's value fills it, in the workspace the example runs in.
  const named = Operation.make({
    name: "echo_named",
    title: "Echo a named word",
    description: "Echoes a word the fixture names.",
    input: Schema.Struct({ word: Schema.String, note: Schema.String }),
    output: Schema.Struct({ word: Schema.String }),
    refusals: codec,
    refuses: [],
    scopes: ["market_data:read"],
    annotations: Operation.readOnly,
    capability: { question: "Echo?", requires: "word", example: { word: "<word>", note: "<note>" }, runsIn: "test_workspace" },
    http: { method: "POST", path: "/named", input: { kind: "body" } },
    cli: { words: ["named"] },
    run: (input) => Effect.succeed({ word: input.word })
  })
  const harness = (examples: Conformance.Harness["examples"]): Conformance.Harness => ({ ...toyHarness([group]), examples })

  it.effect("takes the fixture's values for the workspace the example runs in, and reports what is still a placeholder", () =>
    Effect.gen(function*() {
      assert.strictEqual(Conformance.whereOf(named), "test_workspace")
      const filled = yield* Conformance.resolveExample(
        harness({ workspace: { echo_named: { word: "wrong-seat" } }, test_workspace: { echo_named: { word: "seeded", note: "n" } } }),
        [group],
        named
      )
      assert.deepStrictEqual(filled, { word: "seeded", note: "n" })
      const half = yield* Conformance.resolveExample(harness({ workspace: {}, test_workspace: { echo_named: { word: "seeded" } } }), [group], named)
      assert.deepStrictEqual(Conformance.placeholdersIn(half), ["note"])
      assert.deepStrictEqual(Conformance.placeholdersIn({ a: { b: ["<x>"] }, c: "plain" }), ["a.b"])
    }))
})

describe("runCase", () => {
  const harness = toyHarness([group])
  const run = (c: Parameters<typeof Conformance.runCase>[2]) => Conformance.runCase(harness, group, c)

  it.effect("reports an answer that breaks the check, a refusal where an answer was expected, and the reverse", () =>
    Effect.gen(function*() {
      const wrong = yield* run({ rule: "r", title: "t", operation: "echo", input: { word: "a" }, expect: { answered: () => ["broken"] } })
      assert.deepStrictEqual(wrong, ["broken"])
      const refused = yield* run({ rule: "r", title: "t", operation: "echo", input: { word: "nada" }, expect: { answered: () => [] } })
      assert.strictEqual(refused.length, 1)
      assert.match(refused[0] ?? "", /expected an answer/)
      const answered = yield* run({ rule: "r", title: "t", operation: "echo", input: { word: "a" }, expect: { refused: "gone" } })
      assert.match(answered[0] ?? "", /expected the refusal gone/)
    }))

  it.effect("reports another refusal code, a status other than the codec's, and a failed given read", () =>
    Effect.gen(function*() {
      const other = yield* run({ rule: "r", title: "t", operation: "echo", input: { word: "nada" }, expect: { refused: "bad_value" } })
      assert.match(other[0] ?? "", /expected the refusal bad_value, got gone/)
      const lying: Conformance.Harness = {
        ...harness,
        call: (g, o, i) => Effect.map(harness.call(g, o, i), (outcome) => (outcome._tag === "Refusal" ? { ...outcome, status: 500 } : outcome))
      }
      const status = yield* Conformance.runCase(lying, group, { rule: "r", title: "t", operation: "echo", input: { word: "nada" }, expect: { refused: "gone" } })
      assert.deepStrictEqual(status, ["gone came with status 500, the codec says 404"])
      const missing = yield* run({
        rule: "r",
        title: "t",
        operation: "echo",
        given: { x: { operation: "echo", input: { word: "a" }, path: ["nope"] } },
        input: { word: "a" },
        expect: { answered: () => [] }
      })
      assert.deepStrictEqual(missing, ["given x: nothing at nope of echo"])
    }))
})

Conformance.suite({
  surface: "mcp",
  groups: [group],
  harness: (groups) => Layer.succeed(Conformance.HarnessService, toyHarness(groups))
})
