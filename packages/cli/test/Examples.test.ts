/**
 * Every operation's printed example (the EXAMPLE line of its help, the same text `capabilities` serves) is a
 * command line that runs: pasted into the CLI it parses, and what it sends is the declared example input.
 */
import { assert, describe, it } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Operation from "@service/core/Operation"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Cli from "../src/Cli.js"
import * as CommandTree from "../src/CommandTree.js"
import { ExitCode } from "../src/Failure.js"
import { runFake } from "./support/Run.js"

const groups = App.app.groups

/** Splits a POSIX shell line of plain words and single-quoted words (what the examples use). */
export const shellWords = (line: string): Array<string> => {
  const words: Array<string> = []
  let word = ""
  let started = false
  for (let i = 0; i < line.length; i++) {
    const char = line[i] ?? ""
    if (char === "'") {
      const end = line.indexOf("'", i + 1)
      word += line.slice(i + 1, end)
      i = end
      started = true
    } else if (char === "\\") {
      word += line[i + 1] ?? ""
      i += 1
      started = true
    } else if (char === " ") {
      if (started) words.push(word)
      word = ""
      started = false
    } else {
      word += char
      started = true
    }
  }
  if (started) words.push(word)
  return words
}

/** The EXAMPLE line of a help text. */
const exampleOf = (help: string): string => {
  const lines = help.split("\n")
  return (lines[lines.indexOf("EXAMPLE") + 1] ?? "").trim()
}

describe("printed examples", () => {
  it("the shell splitter reads quoted words", () => {
    assert.deepStrictEqual(shellWords(`a --x 'b c' --y '{"k":"it'\\''s"}'`), ["a", "--x", "b c", "--y", `{"k":"it's"}`])
  })

  it.effect("compare-segments' example sends its segments and geographies (not `[object Object]`)", () =>
    Effect.gen(function*() {
      const help = yield* runFake(["market", "suppliers", "compare-segments", "--help"], { groups })
      const example = exampleOf(help.stdout)
      assert.notInclude(example, "[object Object]")
      assert.include(example, "--input-json")
      const op = groups.flatMap((g) => g.operations).find((o) => o.name === "compare_segments")
      assert.isDefined(op)
      const run = yield* runFake([...shellWords(example).slice(1), "--json"], { groups, env: { SERVICE_API_KEY: "k" } })
      assert.notStrictEqual(run.code, ExitCode.usage, run.stderr)
      const body = run.sent[0]?.body
      assert.isTrue(Predicate.isRecord(body), run.stderr)
      if (Predicate.isRecord(body)) {
        assert.deepStrictEqual(body["segments"], op?.capability.example["segments"])
        assert.deepStrictEqual(body["geographies"], op?.capability.example["geographies"])
      }
    }))

  it.effect("every operation's example parses: no `[object Object]`, no usage error", () =>
    Effect.gen(function*() {
      const tree = yield* Cli.tree({ groups })
      const bad: Array<string> = []
      for (const leaf of CommandTree.leaves(tree)) {
        const help = yield* runFake([...leaf.words.slice(1), "--help"], { groups })
        const example = exampleOf(help.stdout)
        if (example.includes("[object Object]")) bad.push(`${example}: [object Object]`)
        // The same example as capabilities serve it (the schema-blind rendering of the kernel).
        const served = Operation.cliExample("service", leaf.group, leaf.operation)
        if (served.includes("[object Object]")) bad.push(`${served}: [object Object]`)
        const run = yield* runFake([...shellWords(example).slice(1), "--json"], {
          groups,
          env: { SERVICE_API_KEY: "k" },
          reply: { status: 500, body: { code: "TEST", message: "test" } }
        })
        if (run.code === ExitCode.usage) bad.push(`${example}: ${run.stderr}`)
      }
      assert.deepStrictEqual(bad, [])
    }))
})
