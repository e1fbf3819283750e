/**
 * Help and usage as a user reads them, in-process: each test pins one defect of @effect/cli's own help that
 * the derived help fixes, and the colour policy on everything printed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as App from "@service/app/App"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Effect from "effect/Effect"
import { ExitCode } from "../src/Failure.js"
import { runFake } from "./support/Run.js"

// The commands under `market suppliers`, read from the declarations.
const supplierCommands = MarketOperations.group.operations
  .filter((op) => op.surfaces.cli && op.cli.words[0] === "suppliers")
  .map((op) => op.cli.words[1])
  .join(", ")
// The first command words under `service market`, in declaration order as the tree lists them.
const marketCommands = [...new Set(MarketOperations.group.operations.filter((op) => op.surfaces.cli).map((op) => op.cli.words[0]))]
  .join(", ")
import * as Toy from "./support/ToyGroup.js"

const groups = [MarketOperations.group, Toy.group]
// eslint-disable-next-line no-control-regex
const ESC = /\u001b\[/

/** The option block of `--<name>` in a help text: its usage line and the indented lines under it. */
const optionBlock = (help: string, name: string): string => {
  const all = help.split("\n")
  const lines = all.slice(all.indexOf("OPTIONS"))
  const at = lines.findIndex((line) => line.startsWith(`  --${name} `) || line === `  --${name}`)
  if (at === -1) return ""
  const rest = lines.slice(at + 1)
  const end = rest.findIndex((line) => !line.startsWith("      "))
  return [lines[at], ...rest.slice(0, end === -1 ? rest.length : end)].join("\n")
}

/** The USAGE section as one line. */
const usageOf = (help: string): string => {
  const lines = help.split("\n")
  const at = lines.indexOf("USAGE")
  const rest = lines.slice(at + 1)
  const end = rest.indexOf("")
  return ` ${rest.slice(0, end === -1 ? rest.length : end).map((line) => line.trim()).join(" ")} `
}

describe("Help", () => {
  it.effect("the root lists every command with all its words once, from the prefix (no `market market ...`)", () =>
    Effect.gen(function*() {
      const { code, stdout } = yield* runFake(["--help"], { groups })
      assert.strictEqual(code, ExitCode.ok)
      for (
        const line of [
          "service market capabilities",
          "service market suppliers search",
          "service market suppliers get <record-ref>",
          "service toy things aggregate",
          "service toy things get <thing-ref>",
          "service toy things list"
        ]
      ) assert.include(stdout, `  ${line} `)
      assert.notMatch(stdout, /\b(\w[\w-]*) \1\b/, "no word is repeated")
      assert.notInclude(stdout, "things hidden", "an operation not served on the CLI has no command")
    }))

  it.effect("a group's help lists its commands with their full words", () =>
    Effect.gen(function*() {
      const { stdout } = yield* runFake(["market", "--help"], { groups })
      assert.include(stdout, "  service market suppliers search ")
      assert.notMatch(stdout, /market market/)
      const nested = yield* runFake(["market", "suppliers", "-h"], { groups })
      assert.include(nested.stdout, "  service market suppliers get <record-ref> ")
      assert.notInclude(nested.stdout, "service market capabilities")
    }))

  it.effect("optional flags are shown optional; only what the schema requires is shown required", () =>
    Effect.gen(function*() {
      const search = yield* runFake(["market", "suppliers", "search", "--help"], { groups })
      // Every search field is optional, including the repeatable one @effect/cli showed as required.
      const usage = usageOf(search.stdout)
      assert.include(usage, " service [--base-url URL] [--api-key KEY] [--workspace SLUG] market suppliers search ")
      assert.include(usage, " [--scian-codes <text>...] ")
      assert.include(usage, " [--query-mode <auto|exact_phrase|all_terms|any_terms>] ")
      assert.include(optionBlock(search.stdout, "scian-codes"), "(optional, repeatable or comma-separated)")
      assert.notInclude(search.stdout, "required")
      const aggregate = yield* runFake(["toy", "things", "aggregate", "--help"], { groups })
      const aggregateUsage = usageOf(aggregate.stdout)
      assert.include(aggregateUsage, " --currency <MXN|USD> ")
      assert.include(aggregateUsage, " --group-by <buyer|year>... ")
      assert.include(aggregateUsage, " [--limit <integer>] ")
      assert.include(optionBlock(aggregate.stdout, "currency"), "(required)")
      // Nested flags are required only if the object is: compare_period is optional.
      assert.include(aggregateUsage, " [--compare-from-date <text>] ")
      const get = yield* runFake(["market", "suppliers", "get", "--help"], { groups })
      assert.include(usageOf(get.stdout), " market suppliers get <record-ref> ")
      assert.include(get.stdout, "ARGUMENTS")
    }))

  it.effect("a field with a default is optional in OPTIONS and USAGE, as ABOUT says (topics create --body)", () =>
    Effect.gen(function*() {
      const { stdout } = yield* runFake(["topics", "create", "--help"], { groups: App.app.groups })
      assert.include(optionBlock(stdout, "body"), "(optional)")
      assert.include(usageOf(stdout), " [--body <text>] ")
      assert.include(optionBlock(stdout, "title"), "(required)")
      assert.include(stdout, "optionally body")
    }))

  it.effect("each flag's text is its field's description, never \"A user-defined piece of text.\"", () =>
    Effect.gen(function*() {
      const { stdout } = yield* runFake(["market", "suppliers", "search", "--help"], { groups })
      assert.notInclude(stdout, "A user-defined piece of text")
      assert.include(optionBlock(stdout, "state"), "State name, code or common alias (CDMX, Edomex, NL, Jalisco, 14...).")
      assert.include(optionBlock(stdout, "limit"), "Page size, 1 to 50 (default 20).")
      const aggregate = yield* runFake(["toy", "things", "aggregate", "--help"], { groups })
      assert.include(optionBlock(aggregate.stdout, "compare-from-date"), "First day of the earlier period, YYYY-MM-DD.")
      assert.include(optionBlock(aggregate.stdout, "input-json"), "(segments)")
    }))

  it.effect("an operation's help says what it answers, requires and refuses, with its example as a command line", () =>
    Effect.gen(function*() {
      const { stdout } = yield* runFake(["market", "suppliers", "search", "--help"], { groups })
      assert.include(stdout, "Answers: Which establishments or organizations were published")
      assert.include(stdout, "May refuse with: query_too_broad, query_not_selective, unknown_state, invalid_field_value")
      assert.include(stdout, "  service market suppliers search --state Zacatecas --scian-codes 212 --limit 5")
      const aggregate = yield* runFake(["toy", "things", "aggregate", "--help"], { groups })
      assert.include(aggregate.stdout, "--compare-from-date 2024-01-01 --compare-to-date 2024-12-31")
    }))

  describe("unknown and missing commands", () => {
    for (
      const [args, level, choices] of [
        [["markt"], "service", "Did you mean 'market'? Use one of: market, toy"],
        [["market", "supplier", "search"], "service market", `Did you mean 'suppliers'? Use one of: ${marketCommands}`],
        [["market", "suppliers", "frobnicate"], "service market suppliers", supplierCommands],
        [["--api-key", "k", "toy", "things", "delete"], "service toy things", "aggregate, get, list"]
      ] as const
    ) {
      it.effect(`${args.join(" ")}: names the real choices at that level and suggests --help`, () =>
        Effect.gen(function*() {
          const { code, stderr, stdout } = yield* runFake(args, { groups })
          assert.strictEqual(code, ExitCode.usage)
          assert.strictEqual(stdout, "")
          assert.include(stderr, `for '${level}'. ${choices.startsWith("Did") ? "" : "Use one of: "}${choices}.`)
          assert.include(stderr, `Run '${level} --help' for usage.`)
        }))
    }

    it.effect("words that stop at a group ask for a command", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake(["toy"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.include(stderr, "'service toy' needs a command. Use one of: things.")
      }))

    it.effect("an unknown flag is a usage error pointing at the command's help", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake(["--api-key", "k", "market", "suppliers", "search", "--limt", "3"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.include(stderr, "'--limt'")
        assert.include(stderr, "Run 'service market suppliers search --help' for usage.")
      }))
  })

  describe("did you mean", () => {
    it.effect("a mistyped command word names the closest command", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake(["market", "suppliers", "serch"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.include(stderr, "unknown command 'serch' for 'service market suppliers'. Did you mean 'search'?")
      }))

    it.effect("a mistyped flag names the closest flag of that command", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake(["--api-key", "k", "market", "suppliers", "search", "--limt", "3"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.include(stderr, "unknown flag '--limt' for 'service market suppliers search'. Did you mean '--limit'?")
      }))

    it.effect("a connection option may come after the command words too", () =>
      Effect.gen(function*() {
        const after = yield* runFake(["market", "suppliers", "search", "--state", "32", "--api-key", "k", "--workspace=acme"], {
          groups,
          reply: { status: 200, body: {} }
        })
        assert.notStrictEqual(after.code, ExitCode.usage, after.stderr)
        assert.strictEqual(after.sent[0]?.apiKey, "k")
        assert.include(after.sent[0]?.url ?? "", "/workspaces/acme/")
        const dangling = yield* runFake(["market", "suppliers", "search", "--api-key"], { groups })
        assert.strictEqual(dangling.code, ExitCode.usage)
        assert.include(dangling.stderr, "--api-key needs a value")
      }))

    it.effect("nothing close: no guess, only the pointer to help", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake(["--api-key", "k", "market", "suppliers", "search", "--zzzzzzzz"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.notInclude(stderr, "Did you mean")
        assert.include(stderr, "Run 'service market suppliers search --help' for usage.")
      }))
  })

  describe("numbers", () => {
    it.effect("a value that is not a number says so in English, naming the flag", () =>
      Effect.gen(function*() {
        const { code, stderr, sent } = yield* runFake(["--api-key", "k", "market", "suppliers", "search", "--limit", "abc"], { groups })
        assert.strictEqual(code, ExitCode.usage)
        assert.include(stderr, "'abc' is not an integer (--limit takes a whole number).")
        assert.notInclude(stderr, "a integer")
        assert.strictEqual(sent.length, 0)
      }))

    it.effect("the positional argument may come before the flags", () =>
      Effect.gen(function*() {
        const { code, sent } = yield* runFake(["--api-key", "k", "toy", "things", "get", "thr_1", "--json"], {
          groups,
          reply: { status: 500, body: { code: "X", message: "x" } }
        })
        assert.notStrictEqual(code, ExitCode.usage)
        assert.strictEqual(sent.length, 1)
      }))
  })

  describe("colour", () => {
    it.effect("help on a terminal is bold where it should be", () =>
      Effect.gen(function*() {
        const { stdout } = yield* runFake(["--help"], { groups, tty: true })
        assert.match(stdout, ESC)
      }))

    it.effect("no escape sequence when stdout is not a terminal: help, usage errors, refusals", () =>
      Effect.gen(function*() {
        for (
          const args of [
            ["--help"],
            ["market", "suppliers", "search", "--help"],
            ["--api-key", "k", "market", "suppliers", "search", "--query-mode", "fuzzy"],
            ["--api-key", "k", "market", "suppliers", "search", "--limit", "0"],
            ["nope"]
          ]
        ) {
          const { stdout, stderr } = yield* runFake(args, { groups, tty: false })
          assert.notMatch(stdout, ESC, args.join(" "))
          assert.notMatch(stderr, ESC, args.join(" "))
        }
      }))

    it.effect("NO_COLOR turns colour off on a terminal too; FORCE_COLOR turns it on when piped", () =>
      Effect.gen(function*() {
        const noColor = yield* runFake(["--help"], { groups, tty: true, env: { NO_COLOR: "1" } })
        assert.notMatch(noColor.stdout, ESC)
        const usage = yield* runFake(["--api-key", "k", "market", "suppliers", "search", "--query-mode", "fuzzy"], {
          groups,
          tty: true,
          env: { NO_COLOR: "1" }
        })
        assert.notMatch(usage.stderr, ESC)
        const forced = yield* runFake(["--help"], { groups, tty: false, env: { FORCE_COLOR: "1" } })
        assert.match(forced.stdout, ESC)
      }))
  })
})
