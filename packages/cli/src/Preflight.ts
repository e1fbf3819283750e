/**
 * Reads an operation command's arguments before @effect/cli parses them, so a newcomer's usual mistakes get a
 * useful answer rather than a parser message:
 *
 * - an unknown flag names the closest flag of that command (`--titl`: "Did you mean '--title'?");
 * - a value that is not a number for an integer or number flag says so with the flag's name, in English
 *   ("'abc' is not an integer");
 * - the positional argument may come anywhere: @effect/cli reads options only before it, so the arguments are
 *   handed on with every flag first and the positional last (after `--` when it starts with a dash);
 * - a connection option (`--api-key`, `--base-url`, `--workspace`) may come after the command words too: it is
 *   handed back to go before them, where @effect/cli reads the root's options.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as InputFlags from "./InputFlags.js"
import * as Suggest from "./Suggest.js"

/** A flag the command takes: whether it reads a value, and how to check that value. */
interface Known {
  readonly takesValue: boolean
  readonly check: (value: string) => string | undefined
}

const none = (): string | undefined => undefined

/**
 * Why `raw` is not a value of `scalar`, or `undefined` when it is one.
 *
 * @since 0.1.0 @category checks
 */
export const scalarProblem = (scalar: InputFlags.Scalar, raw: string, name: string): string | undefined => {
  const n = Number(raw)
  switch (scalar) {
    case "integer":
      return raw.trim() !== "" && Number.isInteger(n) ? undefined : `'${raw}' is not an integer (${name} takes a whole number).`
    case "number":
      return raw.trim() !== "" && Number.isFinite(n) ? undefined : `'${raw}' is not a number (${name} takes a number).`
    default:
      return undefined
  }
}

const checkOf = (kind: InputFlags.Kind, name: string): Known["check"] => {
  switch (kind._tag) {
    case "Scalar":
      return (value) => scalarProblem(kind.scalar, value, name)
    case "Choice":
      return none
    case "List":
      return (value) => {
        for (const item of InputFlags.splitList([value])) {
          const problem = scalarProblem(kind.element, item, name)
          if (problem !== undefined) return problem
        }
        return undefined
      }
  }
}

/**
 * The flags an operation command takes, by name with their dashes: its input's, then the command's own.
 *
 * @since 0.1.0 @category checks
 */
export const knownFlags = (spec: InputFlags.Spec, extras: InputFlags.Extras): ReadonlyMap<string, Known> => {
  const known = new Map<string, Known>()
  for (const flag of spec.flags) {
    const takesValue = !(flag.kind._tag === "Scalar" && flag.kind.scalar === "boolean")
    known.set(`--${flag.name}`, { takesValue, check: checkOf(flag.kind, `--${flag.name}`) })
  }
  for (const name of InputFlags.commandFlags(extras)) {
    known.set(`--${name.name}`, { takesValue: name.takesValue, check: none })
  }
  known.set("-h", { takesValue: false, check: none })
  return known
}

/**
 * Checks the arguments after an operation command's words and puts them in the order @effect/cli reads:
 * flags first, then the positional argument (`args`), and the connection options found among them apart (`root`,
 * to go before the command words). Fails with the message for the first unknown flag or bad value.
 *
 * @since 0.1.0 @category checks
 */
export const check = (
  words: ReadonlyArray<string>,
  spec: InputFlags.Spec,
  extras: InputFlags.Extras,
  args: ReadonlyArray<string>,
  rootOptions: ReadonlyArray<string> = []
): Either.Either<{ readonly root: ReadonlyArray<string>; readonly args: ReadonlyArray<string> }, string> => {
  const known = knownFlags(spec, extras)
  const command = words.join(" ")
  const root: Array<string> = []
  const flags: Array<string> = []
  const positionals: Array<string> = []
  let i = 0
  while (i < args.length) {
    const arg = args[i] ?? ""
    if (arg === "--") {
      positionals.push(...args.slice(i + 1))
      break
    }
    if (arg.startsWith("--") || arg === "-h") {
      const at = arg.indexOf("=")
      const name = at === -1 ? arg : arg.slice(0, at)
      const flag = known.get(name)
      if (flag === undefined && rootOptions.includes(name.slice(2))) {
        // Every connection option takes a value.
        const taken = at === -1 ? args.slice(i, i + 2) : [arg]
        if (at === -1 && args[i + 1] === undefined) return Either.left(`${name} needs a value. Run '${command} --help' for usage.`)
        root.push(...taken)
        i += taken.length
        continue
      }
      if (flag === undefined) {
        return Either.left(
          `unknown flag '${name}' for '${command}'.${Suggest.didYouMean(name, [...known.keys()].filter((k) => k.startsWith("--")))} ` +
            `Run '${command} --help' for usage.`
        )
      }
      const inline = at === -1 ? undefined : arg.slice(at + 1)
      const value = flag.takesValue && inline === undefined ? args[i + 1] : inline
      if (flag.takesValue && value !== undefined) {
        const problem = flag.check(value)
        if (problem !== undefined) return Either.left(`${problem} Run '${command} --help' for usage.`)
      }
      flags.push(arg)
      if (flag.takesValue && inline === undefined && value !== undefined) {
        flags.push(value)
        i += 2
      } else {
        i += 1
      }
      continue
    }
    positionals.push(arg)
    i += 1
  }
  const positional = spec.positional
  if (positional !== undefined && positional.kind._tag === "Scalar") {
    for (const value of positionals) {
      const problem = scalarProblem(positional.kind.scalar, value, `<${positional.name}>`)
      if (problem !== undefined) return Either.left(`${problem} Run '${command} --help' for usage.`)
    }
  }
  const dashed = positionals.some((value) => value.startsWith("-"))
  return Either.right({ root, args: [...flags, ...(dashed ? ["--"] : []), ...positionals] })
}
