import { assert, describe, it } from "@effect/vitest"
import * as Operation from "@service/core/Operation"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Either from "effect/Either"
import * as CommandTree from "../src/CommandTree.js"
import * as Toy from "./support/ToyGroup.js"

const groups = [MarketOperations.group, Toy.group]
const ops = { word: "ops", description: "Operator commands.", commands: [{ word: "load", description: "Loads." }] }

const treeOf = (prefix = "service") =>
  Either.getOrThrow(CommandTree.make({ prefix, description: "d", groups, external: [ops] }))

describe("CommandTree", () => {
  it("has one command per operation served on the CLI, with the words Operation.commandWords gives", () => {
    const expected = groups.flatMap((group) =>
      Operation.servedOn(group, "cli").map((op) => Operation.commandWords("acme", group, op).join(" "))
    )
    const tree = treeOf("acme")
    assert.deepStrictEqual(CommandTree.leaves(tree).map((leaf) => leaf.words.join(" ")), expected)
    assert.deepStrictEqual(CommandTree.lines(tree), [...expected, "acme ops load"])
    assert.notInclude(CommandTree.lines(tree), "acme market capabilities compact", "capabilities_compact is HTTP-only")
  })

  it("finds an operation's leaf by group and operation", () => {
    const leaf = CommandTree.leafOf(treeOf(), "marketData", "get_supplier")
    assert.deepStrictEqual(leaf?.words, ["service", "market", "suppliers", "get"])
    assert.strictEqual(leaf?.input.positional?.field, "record_ref")
  })

  it("refuses two operations on the same words, or an operation whose words are another's prefix", () => {
    const twice = Operation.group({ ...Toy.group, name: "twice", operations: [Toy.listThings, Toy.listThings] })
    assert.isTrue(Either.isLeft(CommandTree.make({ prefix: "s", description: "", groups: [twice] })))
    const under = Operation.make({ ...Toy.listThings, cli: { words: ["things"] } })
    const prefixed = Operation.group({ ...Toy.group, name: "prefixed", operations: [Toy.listThings, under] })
    assert.isTrue(Either.isLeft(CommandTree.make({ prefix: "s", description: "", groups: [prefixed] })))
    assert.isTrue(Either.isLeft(CommandTree.make({ prefix: "s", description: "", groups, external: [{ ...ops, word: "toy" }] })))
  })

  it("hangs a hand-written command under a group's word, and refuses one under no group or on a taken word", () => {
    const listen = { word: "listen", under: "market", description: "Listens.", commands: [] }
    const tree = Either.getOrThrow(CommandTree.make({ prefix: "service", description: "d", groups, external: [ops, listen] }))
    assert.include(CommandTree.lines(tree), "service market listen")
    const resolve = (args: ReadonlyArray<string>) => CommandTree.resolve(tree, args, [])
    assert.deepInclude(resolve(["market", "listen", "--json"]), { _tag: "Parse" })
    // Its flags are its own: its help is @effect/cli's, reached by parsing.
    assert.strictEqual(resolve(["market", "listen", "--help"])._tag, "Parse")
    assert.strictEqual(resolve(["market", "--help"])._tag, "Help")
    assert.isTrue(Either.isLeft(CommandTree.make({ prefix: "s", description: "", groups, external: [{ ...listen, under: "nowhere" }] })))
    assert.isTrue(Either.isLeft(CommandTree.make({ prefix: "s", description: "", groups, external: [{ ...listen, word: "suppliers" }] })))
  })

  describe("resolve", () => {
    const tree = treeOf()
    const root = ["base-url", "api-key", "workspace"]
    const resolve = (args: ReadonlyArray<string>) => CommandTree.resolve(tree, args, root)
    const words = (resolution: CommandTree.Resolution) =>
      resolution._tag === "Help" || resolution._tag === "Parse" || resolution._tag === "Missing" || resolution._tag === "Unknown"
        ? resolution.node.words.join(" ")
        : ""

    it("skips the root's options and their values", () => {
      const r = resolve(["--base-url", "http://x", "--api-key=k", "market", "suppliers", "search", "--state", "X"])
      assert.strictEqual(r._tag, "Parse")
      assert.strictEqual(words(r), "service market suppliers search")
    })

    it("answers --help and -h for the node the words reach, wherever the flag is", () => {
      assert.deepInclude(resolve(["--help"]), { _tag: "Help" })
      assert.strictEqual(words(resolve(["--help"])), "service")
      assert.strictEqual(words(resolve(["market", "-h"])), "service market")
      assert.strictEqual(words(resolve(["market", "suppliers", "search", "--state", "X", "--help"])), "service market suppliers search")
      assert.strictEqual(words(resolve(["ops", "--help"])), "service ops")
      // Help below an operator command is @effect/cli's.
      assert.strictEqual(resolve(["ops", "load", "--help"])._tag, "Parse")
      // After `--` nothing is an option.
      assert.strictEqual(resolve(["market", "suppliers", "get", "--", "--help"])._tag, "Parse")
    })

    it("names the level of an unknown word, and a branch the words stop at", () => {
      const unknown = resolve(["market", "tenders", "search"])
      assert.strictEqual(unknown._tag, "Unknown")
      assert.strictEqual(words(unknown), "service market")
      assert.deepInclude(resolve(["ops", "unload"]), { _tag: "Unknown", word: "unload" })
      const missing = resolve(["--workspace", "w", "market", "suppliers"])
      assert.strictEqual(missing._tag, "Missing")
      assert.strictEqual(words(missing), "service market suppliers")
      assert.strictEqual(resolve([])._tag, "Missing")
    })

    it("leaves unknown root options and built-ins to @effect/cli", () => {
      assert.strictEqual(resolve(["--bogus", "market"])._tag, "Parse")
      assert.strictEqual(resolve(["--version"])._tag, "Parse")
      assert.strictEqual(resolve(["--log-level", "debug", "market", "capabilities"])._tag, "Parse")
    })
  })
})
