import { assert, describe, it } from "@effect/vitest"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ExitCode } from "../src/Failure.js"
import * as InputFlags from "../src/InputFlags.js"
import * as Remote from "../src/Remote.js"
import { runFake } from "./support/Run.js"
import * as Toy from "./support/ToyGroup.js"

const specOf = (op: Parameters<typeof InputFlags.spec>[0]) => Either.getOrThrow(InputFlags.spec(op))

describe("InputFlags", () => {
  describe("spec", () => {
    it("one flag per top-level field, named with dashes, with its description and whether the schema requires it", () => {
      const spec = specOf(MarketOperations.searchSuppliers)
      assert.sameMembers(spec.flags.map((f) => f.name), ["query", "state", "municipality", "scian-codes", "rfc", "limit", "query-mode", "cursor"])
      const limit = spec.flags.find((f) => f.name === "limit")
      assert.deepStrictEqual(limit?.kind, { _tag: "Scalar", scalar: "integer" })
      assert.strictEqual(limit?.description, "Page size, 1 to 50 (default 20).")
      assert.isFalse(limit?.required)
      assert.deepStrictEqual(spec.flags.find((f) => f.name === "scian-codes")?.kind, { _tag: "List", element: "text", choices: undefined })
      assert.deepStrictEqual(spec.flags.find((f) => f.name === "query-mode")?.kind, {
        _tag: "Choice",
        choices: [["auto", "auto"], ["exact_phrase", "exact_phrase"], ["all_terms", "all_terms"], ["any_terms", "any_terms"]]
      })
      // source_slugs is canonical-only: it is not in the model-facing schema, so it has no flag.
      assert.isUndefined(spec.flags.find((f) => f.name === "source-slugs"))
    })

    it("the positional field, nested flags into an object field, and the fields no flag expresses", () => {
      const get = specOf(Toy.getThing)
      assert.deepInclude(get.positional, { name: "thing-ref", field: "thing_ref", required: true })
      assert.deepStrictEqual(get.flags[0]?.kind, { _tag: "Choice", choices: [["1", 1], ["2", 2]] })
      const aggregate = specOf(Toy.aggregate)
      assert.deepStrictEqual(
        aggregate.flags.map((f) => [f.name, f.path.join("."), f.required]),
        [
          ["currency", "currency", true],
          ["group-by", "group_by", true],
          ["years", "years", false],
          ["ratio", "ratio", false],
          ["include-empty", "include_empty", false],
          ["compare-from-date", "compare_period.from_date", false],
          ["compare-to-date", "compare_period.to_date", false],
          ["limit", "limit", false]
        ]
      )
      assert.deepStrictEqual(aggregate.flags[1]?.kind, { _tag: "List", element: "text", choices: ["buyer", "year"] })
      assert.deepStrictEqual(aggregate.flags[2]?.kind, { _tag: "List", element: "integer", choices: undefined })
      assert.deepStrictEqual(aggregate.flags[3]?.kind, { _tag: "Scalar", scalar: "number" })
      assert.deepStrictEqual(aggregate.unflagged, ["segments"])
    })

    it("refuses a binding naming no field, and a field whose flag is reserved", () => {
      assert.isTrue(Either.isLeft(InputFlags.spec({ ...Toy.getThing, cli: { words: ["x"], positional: "nope" } })))
      assert.isTrue(Either.isLeft(InputFlags.spec({ ...Toy.aggregate, cli: { words: ["x"], nested: { compare_period: { nope: "n" } } } })))
      const Reserved = Schema.Struct({ json: Schema.optional(Schema.String) })
      assert.isTrue(Either.isLeft(InputFlags.spec({ name: "r", modelInput: Reserved, cli: { words: ["x"] } })))
    })
  })

  describe("assemble and toArgs", () => {
    const spec = specOf(Toy.aggregate)
    const none = spec.flags.map(() => Option.none<unknown>())
    const values = (flags: ReadonlyArray<Option.Option<unknown>>, inputJson?: string): InputFlags.Values => ({
      flags,
      positional: Option.none(),
      inputJson: Option.fromNullable(inputJson),
      json: false,
      follow: false,
      all: false,
      format: Option.none()
    })

    it("--input-json first, flags over it, nested flags merged into its object", () => {
      const flags = [...none]
      flags[0] = Option.some("MXN")
      flags[6] = Option.some("2024-12-31")
      const input = InputFlags.assemble(spec, values(flags, "{\"currency\":\"USD\",\"compare_period\":{\"from_date\":\"2024-01-01\"}}"))
      assert.deepStrictEqual(Either.getOrThrow(input), {
        currency: "MXN",
        compare_period: { from_date: "2024-01-01", to_date: "2024-12-31" }
      })
      assert.isTrue(Either.isLeft(InputFlags.assemble(spec, values(none, "\"text\""))))
      assert.isTrue(Either.isLeft(InputFlags.assemble(spec, values(none, "{not json"))))
    })

    it("toArgs writes what flags can say and puts the rest in --input-json", () => {
      assert.deepStrictEqual(
        InputFlags.toArgs(spec, {
          currency: "USD",
          group_by: ["buyer", "a,b"],
          include_empty: false,
          compare_period: { from_date: "2024-01-01", extra: 1 },
          unknown_field: "x"
        }),
        [
          "--currency", "USD", "--compare-from-date", "2024-01-01", "--input-json",
          JSON.stringify({ group_by: ["buyer", "a,b"], include_empty: false, compare_period: { extra: 1 }, unknown_field: "x" })
        ]
      )
      assert.deepStrictEqual(InputFlags.toArgs(specOf(Toy.getThing), { thing_ref: "t1", detail: 2 }), ["t1", "--detail", "2"])
      assert.deepStrictEqual(InputFlags.toArgs(specOf(Toy.getThing), { thing_ref: "-t", detail: 1 }), ["--detail", "1", "--", "-t"])
    })

    it("a path value no URL can carry (\".\", \"..\") is refused before anything is sent", () => {
      const connection = { baseUrl: "http://x", credential: { kind: "api_key" as const, secret: Redacted.make("k") }, pathParams: { workspace: "w" } }
      for (const ref of [".", ".."]) {
        const built = Remote.request(connection, { group: Toy.group, operation: Toy.getThing }, { thing_ref: ref })
        assert.isTrue(Either.isLeft(built))
        if (Either.isLeft(built)) {
          assert.strictEqual(built.left._tag, "Invalid")
          assert.include(built.left._tag === "Invalid" ? built.left.message : "", "thing_ref cannot be")
        }
      }
      assert.isTrue(Either.isRight(Remote.request(connection, { group: Toy.group, operation: Toy.getThing }, { thing_ref: ".a" })))
    })

    // What the conformance harness and printed next-page commands rely on: any valid input, written as a
    // command line, is sent as exactly that input.
    it.effect.prop(
      "any valid input, written with toArgs, reaches the server unchanged",
      [Toy.AggregateInput, Toy.GetInput, MarketOperations.searchSuppliers.modelInput],
      ([aggregate, get, search]) =>
        Effect.gen(function*() {
          const cases = [
            { words: ["toy", "things", "aggregate"], op: Toy.aggregate, input: Schema.encodeSync(Toy.AggregateInput)(aggregate) },
            { words: ["toy", "things", "get"], op: Toy.getThing, input: Schema.encodeSync(Toy.GetInput)(get) },
            {
              words: ["market", "suppliers", "search"],
              op: MarketOperations.searchSuppliers,
              input: Schema.encodeSync(MarketOperations.searchSuppliers.modelInput)(search)
            }
          ] as const
          for (const { input, op, words } of cases) {
            const args = InputFlags.toArgs(specOf(op), input)
            const { code, sent, stderr } = yield* runFake(["--api-key", "k", ...words, ...args], {
              groups: [Toy.group, MarketOperations.group],
              reply: { status: 410, body: { toy_block: { code: "gone", why: "Gone." }, market_data: { semantic_code: "x" } } }
            })
            assert.strictEqual(code, ExitCode.refused, `${args.join(" ")}: ${stderr}`)
            if (op === Toy.getThing) {
              const url = new URL(sent[0]?.url ?? "http://x/")
              assert.strictEqual(decodeURIComponent(url.pathname.split("/").at(-1) ?? ""), get.thing_ref)
              assert.strictEqual(url.searchParams.get("detail") ?? undefined, get.detail === undefined ? undefined : String(get.detail))
            } else {
              assert.deepStrictEqual(sent[0]?.body, JSON.parse(JSON.stringify(input)))
            }
          }
        }),
      // 120 command lines run in process: no budget beyond the runner's guard against a hang.
      { fastCheck: { numRuns: 40 }, timeout: 120_000 }
    )
  })
})
