/**
 * When the CLI may print ANSI colour: only when stdout is a terminal and `NO_COLOR` is not set (any
 * non-empty value, see https://no-color.org), or when `FORCE_COLOR` asks for it (a non-empty value other
 * than `0`). Otherwise every line printed (results, help, @effect/cli's own usage errors, failures) has its
 * escape sequences removed, so piped output and logs stay plain text.
 *
 * @effect/cli always renders help and errors with ANSI escapes; the policy is applied to the Console the
 * command runs with rather than to each renderer (docs/decisions/0035-cli-colour-policy.md).
 *
 * @since 0.1.0
 */
import * as Terminal from "@effect/platform/Terminal"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The environment the policy reads.
 *
 * @since 0.1.0 @category models
 */
export interface Environment {
  readonly stdoutIsTerminal: boolean
  readonly noColor: Option.Option<string>
  readonly forceColor: Option.Option<string>
}

/**
 * Whether colour is allowed.
 *
 * @since 0.1.0 @category policy
 */
export const allows = (environment: Environment): boolean => {
  const set = (value: Option.Option<string>) => Option.isSome(value) && value.value !== ""
  if (set(environment.noColor)) return false
  if (set(environment.forceColor) && Option.getOrElse(environment.forceColor, () => "") !== "0") return true
  return environment.stdoutIsTerminal
}

/**
 * The environment of this process: the terminal's `isTTY` (stdout) and `NO_COLOR` / `FORCE_COLOR` read
 * through Config.
 *
 * @since 0.1.0 @category policy
 */
export const environment: Effect.Effect<Environment, never, Terminal.Terminal> = Effect.gen(function*() {
  const terminal = yield* Terminal.Terminal
  const stdoutIsTerminal = yield* terminal.isTTY
  const noColor = yield* Config.option(Config.string("NO_COLOR")).pipe(Effect.orElseSucceed(() => Option.none<string>()))
  const forceColor = yield* Config.option(Config.string("FORCE_COLOR")).pipe(Effect.orElseSucceed(() => Option.none<string>()))
  return { stdoutIsTerminal, noColor, forceColor }
})

// CSI sequences (colours, cursor moves, erase) and OSC sequences (hyperlinks, titles).
// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g

/**
 * `text` without ANSI escape sequences.
 *
 * @since 0.1.0 @category policy
 */
export const strip = (text: string): string => text.replace(ansi, "")

const plain = (value: unknown): unknown => (typeof value === "string" ? strip(value) : value)

/**
 * A console that removes escape sequences from everything it prints.
 *
 * @since 0.1.0 @category policy
 */
export const plainConsole = (console: Console.Console): Console.Console => ({
  ...console,
  log: (...args: ReadonlyArray<unknown>) => console.log(...args.map(plain)),
  error: (...args: ReadonlyArray<unknown>) => console.error(...args.map(plain)),
  info: (...args: ReadonlyArray<unknown>) => console.info(...args.map(plain)),
  warn: (...args: ReadonlyArray<unknown>) => console.warn(...args.map(plain)),
  debug: (...args: ReadonlyArray<unknown>) => console.debug(...args.map(plain)),
  trace: (...args: ReadonlyArray<unknown>) => console.trace(...args.map(plain))
})

/**
 * Runs `effect` under the policy: with the current console when colour is allowed, with a plain one
 * otherwise.
 *
 * @since 0.1.0 @category policy
 */
export const apply = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | Terminal.Terminal> =>
  Effect.gen(function*() {
    if (allows(yield* environment)) return yield* effect
    const console = yield* Effect.console
    return yield* Effect.withConsole(effect, plainConsole(console))
  })
