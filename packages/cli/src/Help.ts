/**
 * Help for every node of the derived command tree, written from the tree rather than by @effect/cli's help
 * renderer, which repeats parent words in nested listings (`market market suppliers search`), marks a
 * repeatable flag as required, prints "A user-defined piece of text." under every text option and lists its
 * built-in options on every command. Here:
 *
 * - usage lines carry every word from the prefix (`service market suppliers search`);
 * - a flag is shown in brackets unless the schema requires its field;
 * - each flag's text is its field's description annotation, with its kind and choices;
 * - an operation's help adds the question it answers, what it requires, the codes it may refuse with, and
 *   its capability example as a runnable command line.
 *
 * Headings are bold; `ColorPolicy` removes the escapes when colour is off. External subtrees (`corpus`)
 * keep @effect/cli's help below their own word.
 *
 * @since 0.1.0
 */
import * as CommandTree from "./CommandTree.js"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"
import * as InputFlags from "./InputFlags.js"
import * as Suggest from "./Suggest.js"

/**
 * A root option as help shows it.
 *
 * @since 0.1.0 @category models
 */
export interface RootOption {
  readonly name: string
  readonly value: string
  readonly description: string
}

/** @since 0.1.0 @category models */
export interface Context {
  readonly version: string
  readonly rootOptions: ReadonlyArray<RootOption>
}

const bold = (text: string): string => `\u001b[1m${text}\u001b[22m`

const width = 100

/**
 * Wraps words (or usage tokens such as `[--limit <integer>]`, never split) to lines of at most `width`
 * characters, each starting with `indent`.
 *
 * @since 0.1.0 @category rendering
 */
export const wrapTokens = (tokens: ReadonlyArray<string>, indent: string): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of tokens.filter((w) => w.length > 0)) {
    if (line.length > 0 && indent.length + line.length + 1 + word.length > width) {
      lines.push(`${indent}${line}`)
      line = word
    } else {
      line = line.length === 0 ? word : `${line} ${word}`
    }
  }
  if (line.length > 0) lines.push(`${indent}${line}`)
  return lines
}

/**
 * Wraps `text` at word boundaries (see {@link wrapTokens}).
 *
 * @since 0.1.0 @category rendering
 */
export const wrap = (text: string, indent: string): Array<string> => wrapTokens(text.split(/\s+/), indent)

const firstSentence = (text: string): string => {
  const match = /^(.+?[.!?])(\s|$)/.exec(text)
  return match?.[1] ?? text
}

const connection = (context: Context): string => context.rootOptions.map((o) => `[--${o.name} ${o.value}]`).join(" ")

const valueOf = (kind: InputFlags.Kind): string => {
  switch (kind._tag) {
    case "Scalar":
      return kind.scalar === "boolean" ? "" : `<${kind.scalar}>`
    case "Choice":
      return `<${kind.choices.map(([shown]) => shown).join("|")}>`
    case "List":
      return kind.choices === undefined ? `<${kind.element}>...` : `<${kind.choices.join("|")}>...`
  }
}

const flagUsage = (flag: InputFlags.Flag): string => {
  const value = valueOf(flag.kind)
  const text = `--${flag.name}${value === "" ? "" : ` ${value}`}`
  return flag.required ? text : `[${text}]`
}

const positionalUsage = (positional: InputFlags.Positional): string =>
  positional.required ? `<${positional.name}>` : `[<${positional.name}>]`

/** The words of a leaf with its positional argument, as listings show it. */
const leafLine = (leaf: CommandTree.Leaf): string =>
  [...leaf.words, ...(leaf.input.positional === undefined ? [] : [positionalUsage(leaf.input.positional)])].join(" ")

/** Every command under `node`, one line each with its first sentence, aligned. */
const listing = (node: CommandTree.Node): Array<string> => {
  const entries: Array<readonly [string, string]> = []
  const walk = (current: CommandTree.Node) => {
    switch (current._tag) {
      case "Leaf":
        entries.push([leafLine(current), firstSentence(current.operation.title)])
        break
      case "Branch":
        current.children.forEach(walk)
        break
      case "External":
        // A hand-written command without subcommands (`login`, `events listen`) is one line itself.
        if (current.commands.length === 0) entries.push([current.words.join(" "), firstSentence(current.description)])
        for (const command of current.commands) {
          entries.push([[...current.words, command.word].join(" "), firstSentence(command.description)])
        }
    }
  }
  walk(node)
  const column = Math.min(Math.max(...entries.map(([line]) => line.length), 0) + 2, 48)
  return entries.map(([line, description]) =>
    line.length + 2 > column ? `  ${line}\n  ${" ".repeat(column)}${description}` : `  ${line.padEnd(column)}${description}`
  )
}

/** What the usage does not already say about a value. */
const kindTraits = (kind: InputFlags.Kind): ReadonlyArray<string> => {
  switch (kind._tag) {
    case "Scalar":
      return kind.scalar === "boolean" ? ["present means true"] : []
    case "Choice":
      return []
    case "List":
      return ["repeatable or comma-separated"]
  }
}

const optionEntry = (usage: string, traits: ReadonlyArray<string>, description: string | undefined): Array<string> => [
  `  ${usage}${traits.length === 0 ? "" : `  (${traits.join(", ")})`}`,
  ...(description === undefined ? [] : wrap(description, "      "))
]

const notes = (prefix: string): Array<string> => [
  ...wrap(
    `Connection options go before the command words: ${prefix} --base-url URL --api-key KEY <command>. ` +
      "Array flags repeat or take comma-separated values (--x a --x b,c). " +
      "--json prints the wire output; otherwise a summary (a table of rows, the key facts of a record); --format csv prints the rows as CSV. " +
      "Commands that page take --all: every page, rows as they come, progress on stderr. " +
      "Failures go to stderr (with --json, as the wire error body). " +
      "Colour only on a terminal, and never with NO_COLOR set.",
    "  "
  ),
  ...wrap(
    `Exit codes: ${Failure.ExitCode.ok} ok, ${Failure.ExitCode.unexpected} unexpected error, ${Failure.ExitCode.usage} usage error, ` +
      `${Failure.ExitCode.refused} refused (the domain's block on stderr), ${Failure.ExitCode.denied} authentication or authorization ` +
      `(401, 403, unknown workspace, no key), ${Failure.ExitCode.unreachable} server unreachable, ${Failure.ExitCode.interrupted} interrupted.`,
    "  "
  )
]

const rootHelp = (root: CommandTree.Branch, context: Context): string => {
  const prefix = root.words.join(" ")
  return [
    `${bold(prefix)} ${context.version}`,
    ...wrap(root.description, ""),
    "",
    bold("USAGE"),
    `  ${prefix} ${connection(context)} <command> [flags]`,
    `  ${prefix} <command> --help`,
    "",
    bold("COMMANDS"),
    ...listing(root),
    "",
    bold("OPTIONS"),
    ...context.rootOptions.flatMap((o) => optionEntry(`--${o.name} ${o.value}`, ["optional"], o.description)),
    ...optionEntry("-h, --help", [], "Show help for any command, e.g. after its words."),
    ...optionEntry("--version", [], "Show the version."),
    "",
    bold("NOTES"),
    ...notes(prefix)
  ].join("\n")
}

const branchHelp = (node: CommandTree.Branch | CommandTree.External, root: CommandTree.Branch, context: Context): string => {
  const words = node.words.join(" ")
  const prefix = root.words.join(" ")
  return [
    bold(words),
    ...wrap(node.description === "" ? `The commands under ${words}.` : node.description, ""),
    "",
    bold("USAGE"),
    // Operator commands work on the database, not through the API: no connection options.
    `  ${[prefix, ...(node._tag === "Branch" ? [connection(context)] : []), ...node.words.slice(1)].join(" ")} <command> [flags]`,
    "",
    bold("COMMANDS"),
    ...listing(node),
    "",
    `Run '${words} <command> --help' for a command's flags.`
  ].join("\n")
}

/**
 * The capability example of a leaf as a command line that runs: the inverse of how the command reads its input
 * (`InputFlags.toArgs`), so a field no flag expresses goes in `--input-json`; a placeholder positional
 * (`"<source>"`) is shown as `<source-id>`.
 *
 * @since 0.1.0 @category rendering
 */
export const example = (prefix: string, leaf: CommandTree.Leaf): string => {
  const given = leaf.operation.capability.example
  const positional = leaf.input.positional
  const value = positional === undefined ? undefined : given[positional.field]
  const placeholder = positional !== undefined && typeof value === "string" && value.startsWith("<")
  const rest = Object.fromEntries(Object.entries(given).filter(([field]) => !placeholder || field !== positional.field))
  return [
    prefix,
    ...leaf.words.slice(1),
    ...(placeholder ? [`<${positional.name}>`] : []),
    ...InputFlags.toArgs(leaf.input, rest).map(Format.shellQuote)
  ].join(" ")
}

const leafHelp = (leaf: CommandTree.Leaf, root: CommandTree.Branch, context: Context): string => {
  const { input, operation } = leaf
  const prefix = root.words.join(" ")
  const usage = [
    prefix,
    ...context.rootOptions.map((o) => `[--${o.name} ${o.value}]`),
    ...leaf.words.slice(1),
    ...(input.positional === undefined ? [] : [positionalUsage(input.positional)]),
    ...input.flags.map(flagUsage),
    "[--input-json <object>]",
    "[--json]",
    "[--format <text|json|csv>]",
    ...(input.paged ? ["[--all]"] : []),
    ...(operation.cli.follow === undefined ? [] : ["[--follow]"])
  ]
  const traitsOf = (flag: InputFlags.Flag): Array<string> => [flag.required ? "required" : "optional", ...kindTraits(flag.kind)]
  return [
    `${bold(leaf.words.join(" "))} — ${operation.title}`,
    ...wrap(operation.description, ""),
    "",
    bold("USAGE"),
    ...wrapTokens(usage, "  "),
    ...(input.positional === undefined ? [] : [
      "",
      bold("ARGUMENTS"),
      ...optionEntry(
        positionalUsage(input.positional),
        [input.positional.required ? "required" : "optional", ...kindTraits(input.positional.kind)],
        input.positional.description
      )
    ]),
    "",
    bold("OPTIONS"),
    ...input.flags.flatMap((flag) => optionEntry(`--${flag.name} ${valueOf(flag.kind)}`.trimEnd(), traitsOf(flag), flag.description)),
    ...optionEntry(
      "--input-json <object>",
      ["optional"],
      `Input fields as one JSON object, for fields no flag expresses${
        input.unflagged.length === 0 ? "" : ` (${input.unflagged.join(", ")})`
      }; the flags and the positional argument win over it.`
    ),
    ...optionEntry("--json", ["optional"], "Print the wire output as JSON; failures print the wire error body on stderr."),
    ...optionEntry(
      "--format <text|json|csv>",
      ["optional"],
      "text: a summary (a table of rows, key facts of a record; the default); json: as --json; csv: the rows with a header line."
    ),
    ...(input.paged
      ? optionEntry("--all", ["optional"], "Read every page (following the next cursor) and print rows as they come; progress on stderr.")
      : []),
    "",
    bold("ABOUT"),
    ...wrap(`Answers: ${operation.capability.question}`, "  "),
    ...wrap(`Requires: ${operation.capability.requires}`, "  "),
    ...wrap(`May refuse with: ${operation.refuses.join(", ")} (exit ${Failure.ExitCode.refused}).`, "  "),
    "",
    bold("EXAMPLE"),
    `  ${example(prefix, leaf)}`
  ].join("\n")
}

/**
 * The help of `node`.
 *
 * @since 0.1.0 @category rendering
 */
export const render = (node: CommandTree.Node, root: CommandTree.Branch, context: Context): string => {
  if (node === root) return rootHelp(root, context)
  switch (node._tag) {
    case "Leaf":
      return leafHelp(node, root, context)
    case "Branch":
    case "External":
      return branchHelp(node, root, context)
  }
}

/**
 * The message for a word that is not a command at its level: the real choices there, and where help is.
 *
 * @since 0.1.0 @category rendering
 */
export const unknownCommand = (node: CommandTree.Branch | CommandTree.External, word: string): string =>
  `unknown command '${word}' for '${node.words.join(" ")}'.${Suggest.didYouMean(word, CommandTree.choicesOf(node))} ` +
  `Use one of: ${CommandTree.choicesOf(node).join(", ")}. ` +
  `Run '${node.words.join(" ")} --help' for usage.`

/**
 * The message for command words that stop at a branch.
 *
 * @since 0.1.0 @category rendering
 */
export const missingCommand = (node: CommandTree.Branch): string =>
  `'${node.words.join(" ")}' needs a command. Use one of: ${CommandTree.choicesOf(node).join(", ")}. ` +
  `Run '${node.words.join(" ")} --help' for usage.`
