/**
 * Commands for the people who run the service rather than call it (load and publish the corpus, grant credits,
 * load a repository's file index), declared by a domain with its bundle and served by the CLI transport as
 * `<prefix> <group word> <command word> ...` without knowing the domain.
 *
 * A command is plain values: its input schema (the CLI reads positional arguments and flags from it the way it
 * reads an operation's), what it needs (`access`), and a run that returns its result both as text and as JSON.
 * A command with `database` access runs in-process over the application's services on the configured database
 * (DATABASE_URL, or the embedded one); one with `api` access calls operations of a running server through
 * {@link Context.call}, with the CLI's connection settings.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Refusal from "./Refusal.js"

/**
 * What a command needs to run:
 * - `database`: the application's services over the configured database, created (and migrated) when missing;
 * - `existing-database`: the same, but an embedded database that does not exist yet is refused, not created;
 * - `api`: nothing local: it calls a running server's operations.
 *
 * @since 0.1.0 @category models
 */
export type Access = "database" | "existing-database" | "api"

/**
 * A command that could not do what it was asked: a `usage` mistake (exit code of a usage error) or an
 * `unexpected` failure.
 *
 * @since 0.1.0 @category errors
 */
export class OperatorFailure extends Data.TaggedError("OperatorFailure")<{
  readonly kind: "usage" | "unexpected"
  readonly message: string
}> {}

/** @since 0.1.0 @category constructors */
export const usage = (message: string): OperatorFailure => new OperatorFailure({ kind: "usage", message })

/** @since 0.1.0 @category constructors */
export const unexpected = (message: string): OperatorFailure => new OperatorFailure({ kind: "unexpected", message })

/**
 * A call through {@link Context.call} that failed. The cause is the transport's own failure (refused, denied,
 * unreachable), already in the words and exit code the transport gives it: the command only passes it on.
 *
 * @since 0.1.0 @category errors
 */
export class CallFailed extends Data.TaggedError("CallFailed")<{ readonly cause: unknown }> {}

/**
 * A progress line for long work (a file being loaded).
 *
 * @since 0.1.0 @category models
 */
export interface Progress {
  readonly update: (done: number) => Effect.Effect<void>
  readonly finish: (summary: string) => Effect.Effect<void>
}

/**
 * What the transport gives a running command.
 *
 * @since 0.1.0 @category models
 */
export interface Context {
  /** A progress line on stderr: `label`, what is done of `total` (when known), in `unit` (default rows). */
  readonly progress: (label: string, total: Option.Option<number>, unit?: string) => Progress
  /**
   * Calls the operation `operation` of the running server with a model-facing `input`, as the CLI's own command
   * for it would, and returns its encoded output (for `api` commands).
   */
  readonly call: (operation: string, input: Readonly<Record<string, unknown>>) => Effect.Effect<unknown, CallFailed>
  /**
   * Everything piped to the command on standard input, read to its end (a password given with `--password-stdin`).
   * Ask only when the input says to: a terminal has no end to read to.
   */
  readonly stdin: Effect.Effect<string>
}

/**
 * What a command printed: `text` by default, `json` with `--json`. With `failed` the command printed its result
 * and then fails with that reason (exit code 1), e.g. a CI check that found something.
 *
 * @since 0.1.0 @category models
 */
export interface Output {
  readonly text: string
  readonly json: unknown
  readonly failed?: string | undefined
}

/**
 * A declared command.
 *
 * @since 0.1.0 @category models
 */
export interface Command<A, I, R> {
  readonly word: string
  readonly description: string
  /** A struct: each field is a flag (`retrieved_on` is `--retrieved-on`) unless it is positional. */
  readonly input: Schema.Schema<A, I>
  /** The fields read from positional arguments, in order; the last may be a list (`<files...>`). */
  readonly positional?: ReadonlyArray<string> | undefined
  readonly access: Access
  readonly run: (input: A, context: Context) => Effect.Effect<Output, OperatorFailure | CallFailed, R>
}

interface Erased {
  readonly word: string
  readonly description: string
  readonly input: Schema.Schema.AnyNoContext
  readonly positional: ReadonlyArray<string>
}

/**
 * A command that calls a running server: it needs nothing local.
 *
 * @since 0.1.0 @category models
 */
export interface ApiCommand extends Erased {
  readonly access: "api"
  /** Decodes the input (a usage mistake when it does not decode) and gives the run. */
  readonly prepare: (input: unknown, context: Context) => Effect.Effect<Effect.Effect<Output, OperatorFailure | CallFailed>, OperatorFailure>
}

/**
 * A command that works on the database through the application's services `R`.
 *
 * @since 0.1.0 @category models
 */
export interface DatabaseCommand<R> extends Erased {
  readonly access: "database" | "existing-database"
  /**
   * Decodes the input (a usage mistake when it does not decode) and gives the run, which needs the services: a
   * command line refuses a bad input before it opens any database.
   */
  readonly prepare: (
    input: unknown,
    context: Context
  ) => Effect.Effect<Effect.Effect<Output, OperatorFailure | CallFailed, R>, OperatorFailure>
}

/**
 * A command whose input type is erased: `prepare` decodes first, refusing a bad value as a usage mistake.
 *
 * @since 0.1.0 @category models
 */
export type AnyCommand<R> = ApiCommand | DatabaseCommand<R>

const erase = <A, I, R>(command: Command<A, I, R>) => {
  const decode = Schema.decodeUnknown(command.input, { onExcessProperty: "error", errors: "all" })
  return {
    word: command.word,
    description: command.description,
    input: command.input,
    positional: command.positional ?? [],
    prepare: (input: unknown, context: Context) =>
      decode(input).pipe(
        Effect.mapError((error) => {
          const invalid = Refusal.invalidInputFromIssues(command.input.ast, Refusal.issuesOf(error))
          return usage(`${invalid.why} ${invalid.suggestedCorrection}`)
        }),
        Effect.map((decoded) => command.run(decoded, context))
      )
  }
}

/**
 * Declares a command.
 *
 * @since 0.1.0 @category constructors
 */
export function make<A, I>(command: Command<A, I, never> & { readonly access: "api" }): ApiCommand
export function make<A, I, R>(command: Command<A, I, R> & { readonly access: "database" | "existing-database" }): DatabaseCommand<R>
export function make<A, I, R>(
  command:
    | (Command<A, I, never> & { readonly access: "api" })
    | (Command<A, I, R> & { readonly access: "database" | "existing-database" })
): AnyCommand<R> {
  return command.access === "api" ? { ...erase(command), access: command.access } : { ...erase(command), access: command.access }
}

/**
 * A word with its commands: `corpus` with `load`, `publish`, `status`, `generate`.
 *
 * @since 0.1.0 @category models
 */
export interface Group<R> {
  readonly word: string
  readonly description: string
  readonly commands: ReadonlyArray<AnyCommand<R>>
}

/**
 * Declares a group of commands.
 *
 * @since 0.1.0 @category constructors
 */
export const group = <R>(group: Group<R>): Group<R> => group
