/**
 * The command line run in-process with its output captured: what a host embedding the CLI (a chat tool, a
 * notebook) and the tests need. Same tree, same calls, same exit code as the binary; stdout and stderr are
 * collected instead of written.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as Effect from "effect/Effect"
import * as Cli from "./Cli.js"
import type * as Failure from "./Failure.js"

/**
 * What a run printed and how it ended.
 *
 * @since 0.1.0 @category models
 */
export interface Captured {
  readonly code: Failure.ExitCode
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `<prefix> <args>` (no runtime or script in `args`) and returns what it printed, one `Console.log` or
 * `Console.error` call per line.
 *
 * @since 0.1.0 @category running
 */
export const run = <R = never, E = never, A = never, Name extends string = string>(
  args: ReadonlyArray<string>,
  options: Cli.Options<R, E, A, Name>
): Effect.Effect<Captured, never, HttpClient.HttpClient | CliApp.CliApp.Environment | R> =>
  Effect.gen(function*() {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const console = yield* Effect.console
    const exit = yield* Cli.runWith(["node", "cli", ...args], options).pipe(
      Effect.withConsole({
        ...console,
        log: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void stdout.push(parts.map(String).join(" "))),
        error: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void stderr.push(parts.map(String).join(" ")))
      }),
      Effect.exit
    )
    return { code: Cli.exitCodeOf(exit), stdout: stdout.join("\n"), stderr: stderr.join("\n") }
  })
