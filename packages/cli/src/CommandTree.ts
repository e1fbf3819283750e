/**
 * The command tree derived from any list of operation groups: `<prefix> <group word> <operation words...>`,
 * one leaf per operation served on the CLI, with branches for the shared words (`market`, `market
 * suppliers`). Operator subtrees written by hand (`corpus`) hang from the root as external nodes: the tree
 * knows their words and descriptions, @effect/cli their flags.
 *
 * The tree is what help, the command listing and the check of unknown commands read, so they name the real
 * choices at every level.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as InputFlags from "./InputFlags.js"

/**
 * One operation's command.
 *
 * @since 0.1.0 @category models
 */
export interface Leaf {
  readonly _tag: "Leaf"
  /** Every word, the prefix first: `["service", "market", "suppliers", "search"]`. */
  readonly words: ReadonlyArray<string>
  readonly group: Operation.Group<unknown>
  readonly operation: Operation.AnyOperation<unknown>
  readonly input: InputFlags.Spec
}

/**
 * A word with commands under it (the root, a group word, a shared operation word).
 *
 * @since 0.1.0 @category models
 */
export interface Branch {
  readonly _tag: "Branch"
  readonly words: ReadonlyArray<string>
  readonly description: string
  readonly children: ReadonlyArray<Node>
}

/**
 * A hand-written subtree (operator commands): its words and its commands' names and descriptions.
 *
 * @since 0.1.0 @category models
 */
export interface External {
  readonly _tag: "External"
  readonly words: ReadonlyArray<string>
  readonly description: string
  readonly commands: ReadonlyArray<{ readonly word: string; readonly description: string }>
}

/** @since 0.1.0 @category models */
export type Node = Leaf | Branch | External

/** @since 0.1.0 @category models */
export interface ExternalSpec {
  readonly word: string
  /** The derived branch it hangs under (`events` for `service events listen`); the root when absent. */
  readonly under?: string | undefined
  readonly description: string
  readonly commands: ReadonlyArray<{ readonly word: string; readonly description: string }>
}

/**
 * Two operations ask for the same command, or one's words are another's prefix.
 *
 * @since 0.1.0 @category errors
 */
export class CommandConflict extends Data.TaggedError("CommandConflict")<{ readonly message: string }> {}

interface MutableBranch {
  readonly words: ReadonlyArray<string>
  description: string
  readonly children: Map<string, MutableBranch | Leaf | External>
}

const freeze = (branch: MutableBranch): Branch => ({
  _tag: "Branch",
  words: branch.words,
  description: branch.description,
  children: [...branch.children.values()].map((child) => ("_tag" in child ? child : freeze(child)))
})

/**
 * The tree for `groups` under `prefix`, with `external` subtrees after the groups.
 *
 * @since 0.1.0 @category constructors
 */
export const make = (options: {
  readonly prefix: string
  readonly description: string
  readonly groups: ReadonlyArray<Operation.Group<unknown>>
  readonly external?: ReadonlyArray<ExternalSpec> | undefined
}): Either.Either<Branch, CommandConflict> => {
  const root: MutableBranch = { words: [options.prefix], description: options.description, children: new Map() }
  const conflict = (message: string) => Either.left(new CommandConflict({ message }))
  for (const group of options.groups) {
    for (const operation of Operation.servedOn(group, "cli")) {
      const words = Operation.commandWords(options.prefix, group, operation)
      const input = InputFlags.spec(operation)
      if (Either.isLeft(input)) return conflict(input.left)
      let branch = root
      for (let depth = 1; depth < words.length - 1; depth++) {
        const word = words[depth] ?? ""
        const existing = branch.children.get(word)
        if (existing !== undefined && "_tag" in existing) {
          return conflict(`${words.join(" ")}: "${words.slice(0, depth + 1).join(" ")}" is already a command`)
        }
        const next: MutableBranch = existing ??
          { words: words.slice(0, depth + 1), description: depth === 1 ? group.cli.description : "", children: new Map() }
        branch.children.set(word, next)
        branch = next
      }
      const last = words[words.length - 1] ?? ""
      if (branch.children.has(last)) return conflict(`${words.join(" ")} is declared twice or has commands under it`)
      branch.children.set(last, { _tag: "Leaf", words, group, operation, input: input.right })
    }
  }
  for (const external of options.external ?? []) {
    const parent = external.under === undefined ? root : root.children.get(external.under)
    if (parent === undefined || "_tag" in parent) {
      return conflict(`${options.prefix} ${external.under ?? ""} ${external.word}: "${options.prefix} ${external.under ?? ""}" is no command group`)
    }
    if (parent.children.has(external.word)) return conflict(`${[...parent.words, external.word].join(" ")} is already a command`)
    parent.children.set(external.word, {
      _tag: "External",
      words: [...parent.words, external.word],
      description: external.description,
      commands: external.commands
    })
  }
  return Either.right(freeze(root))
}

/**
 * {@link make}, dying on a conflict (a declaration bug).
 *
 * @since 0.1.0 @category constructors
 */
export const makeOrDie = (options: Parameters<typeof make>[0]): Effect.Effect<Branch> =>
  Either.match(make(options), { onLeft: (error) => Effect.die(error), onRight: Effect.succeed })

/**
 * Every operation command under `node`, in declaration order.
 *
 * @since 0.1.0 @category accessors
 */
export const leaves = (node: Node): ReadonlyArray<Leaf> => {
  switch (node._tag) {
    case "Leaf":
      return [node]
    case "Branch":
      return node.children.flatMap(leaves)
    case "External":
      return []
  }
}

/**
 * Every command line under `node`, as words joined by spaces: operations and external commands.
 *
 * @since 0.1.0 @category accessors
 */
export const lines = (node: Node): ReadonlyArray<string> => {
  switch (node._tag) {
    case "Leaf":
      return [node.words.join(" ")]
    case "Branch":
      return node.children.flatMap(lines)
    case "External":
      // A hand-written command without subcommands (`login`) is a command line itself.
      return node.commands.length === 0 ? [node.words.join(" ")] : node.commands.map((command) => [...node.words, command.word].join(" "))
  }
}

/**
 * The leaf of `operation` in `group`.
 *
 * @since 0.1.0 @category accessors
 */
export const leafOf = (node: Node, group: string, operation: string): Leaf | undefined =>
  leaves(node).find((leaf) => leaf.group.name === group && leaf.operation.name === operation)

/**
 * The word of a node under its parent.
 *
 * @since 0.1.0 @category accessors
 */
export const wordOf = (node: Node): string => node.words[node.words.length - 1] ?? ""

/**
 * The words to choose from under a node.
 *
 * @since 0.1.0 @category accessors
 */
export const choicesOf = (node: Branch | External): ReadonlyArray<string> =>
  node._tag === "Branch" ? node.children.map(wordOf) : node.commands.map((command) => command.word)

// -----------------------------------------------------------------------------
// Reading a command line against the tree
// -----------------------------------------------------------------------------

/**
 * What a command line asks for, read before @effect/cli parses it:
 * - `Help`: `--help` or `-h` for the node reached (an operation, a branch, or an external subtree);
 * - `Unknown`: a word that is not a command at that level;
 * - `Missing`: the words stop at a branch;
 * - `Parse`: anything else (a complete command, or options to check), left to @effect/cli; `node` is the
 *   deepest node the words reached, for the hint after a usage error.
 *
 * @since 0.1.0 @category models
 */
export type Resolution =
  | { readonly _tag: "Help"; readonly node: Node }
  | { readonly _tag: "Unknown"; readonly node: Branch | External; readonly word: string }
  | { readonly _tag: "Missing"; readonly node: Branch }
  | {
    readonly _tag: "Parse"
    readonly node: Node
    /** Where the arguments after the command words start (for a leaf: its flags and positional argument). */
    readonly at: number
  }

const isHelp = (arg: string) => arg === "--help" || arg === "-h"

/**
 * Reads `args` (without runtime, script and prefix) against the tree. `rootOptions` are the root's options
 * that take a value (`--base-url X`); built-ins that take one are known here.
 *
 * @since 0.1.0 @category parsing
 */
export const resolve = (
  root: Branch,
  args: ReadonlyArray<string>,
  rootOptions: ReadonlyArray<string>
): Resolution => {
  const end = args.indexOf("--")
  const words = end === -1 ? args : args.slice(0, end)
  const takesValue = new Set([...rootOptions.map((name) => `--${name}`), "--completions", "--log-level"])
  const help = words.some(isHelp)
  let node: Node = root
  let i = 0
  // A built-in (`--version`) needs no command words.
  let builtIn = false
  // Options of the root come before the command words.
  while (i < words.length) {
    const arg = words[i] ?? ""
    if (!arg.startsWith("-")) break
    if (isHelp(arg)) {
      i += 1
      continue
    }
    builtIn ||= arg === "--version" || arg === "--wizard" || arg === "--completions"
    if (takesValue.has(arg)) i += 2
    else if (arg.includes("=") || arg === "--version" || arg === "--wizard") i += 1
    else return { _tag: "Parse", node, at: i }
  }
  while (node._tag === "Branch" || node._tag === "External") {
    const word = words[i]
    if (word === undefined || word.startsWith("-")) {
      // A hand-written command without subcommands has its flags, which only @effect/cli's help shows.
      if (help && node._tag === "External" && node.commands.length === 0) return { _tag: "Parse", node, at: i }
      if (help) return { _tag: "Help", node }
      if (word === undefined && node._tag === "Branch" && !builtIn) return { _tag: "Missing", node }
      return { _tag: "Parse", node, at: i }
    }
    if (node._tag === "External") {
      if (!node.commands.some((command) => command.word === word)) return { _tag: "Unknown", node, word }
      // The external subtree's own help and parsing belong to @effect/cli.
      return { _tag: "Parse", node, at: i }
    }
    const next: Node | undefined = node.children.find((child) => wordOf(child) === word)
    if (next === undefined) return { _tag: "Unknown", node, word }
    node = next
    i += 1
  }
  return help ? { _tag: "Help", node } : { _tag: "Parse", node, at: i }
}
