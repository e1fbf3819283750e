/**
 * The operator commands the bundles declare (`OperatorCommand`: `corpus`, `credits`, `topics-index`), made into
 * @effect/cli commands under the root for any domain: `<prefix> <group word> <command word> <positionals...>
 * [--<field> ...] [--json]`. Arguments and flags come from the command's input schema the way an operation's do;
 * the result prints as its text, or as JSON with `--json`.
 *
 * A command with `database` or `existing-database` access runs over the services the host gives for it (the
 * application's layer on the configured database, built for that run and closed after it); one with `api`
 * access calls the running server's operations with the root's `--base-url`, `--api-key` and `--workspace`.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as CliOptions from "@effect/cli/Options"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as OperatorCommand from "@service/core/OperatorCommand"
import type * as Operation from "@service/core/Operation"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Cli from "./Cli.js"
import * as Credentials from "./Credentials.js"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"
import * as InputFlags from "./InputFlags.js"
import * as Progress from "./Progress.js"
import * as Remote from "./Remote.js"

/**
 * What the host gives the operator commands.
 *
 * @since 0.1.0 @category models
 */
export interface Options<RO> {
  readonly groups: ReadonlyArray<OperatorCommand.Group<RO>>
  /**
   * The services a `database` command runs over, built for the run: `existing-database` asks that an embedded
   * database (or key file) that does not exist yet be refused, not created.
   */
  readonly services: (access: "database" | "existing-database") => Layer.Layer<RO, unknown>
  /** The operation groups `api` commands call (the same the CLI serves). */
  readonly operations: ReadonlyArray<Operation.Group<unknown>>
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)

const failureOf = (error: OperatorCommand.OperatorFailure | OperatorCommand.CallFailed): Failure.Failure =>
  error._tag === "CallFailed"
    ? Failure.isFailure(error.cause) ? error.cause : Failure.unexpected(messageOf(error.cause))
    : error.kind === "usage"
    ? Failure.usage(error.message)
    : Failure.unexpected(error.message)

/** Calls an operation of `operations` by name over HTTP with the root's connection settings. */
const caller = (operations: ReadonlyArray<Operation.Group<unknown>>) => (name: string, input: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const settings = yield* Cli.Settings
    const credential = yield* Credentials.resolve(settings)
    if (Option.isNone(credential)) return yield* Effect.fail(Failure.missingApiKey)
    const target = operations.flatMap((group) =>
      group.operations.filter((operation) => operation.name === name).map((operation) => ({ group, operation }))
    )[0]
    if (target === undefined) return yield* Effect.fail(Failure.unexpected(`This command line has no ${name} operation.`))
    const checked = yield* Remote.check(target, input)
    const connection = { baseUrl: settings.baseUrl, credential: credential.value, pathParams: { workspace: settings.workspace } }
    return yield* Remote.call(connection, target, checked)
  }).pipe(Effect.mapError((cause) => new OperatorCommand.CallFailed({ cause })))

const positionalArgs = (positionals: ReadonlyArray<InputFlags.OperatorPositional>): Args.Args<ReadonlyArray<unknown>> =>
  Args.all(positionals.map((positional): Args.Args<unknown> => {
    const arg = InputFlags.argOf(positional)
    if (positional.list) return Args.atLeast(arg, positional.required ? 1 : 0)
    return positional.required ? arg : Args.map(Args.optional(arg), Option.getOrUndefined)
  }))

const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)))
  return Buffer.concat(chunks).toString("utf8")
})

const jsonOption = CliOptions.boolean("json").pipe(CliOptions.withDescription("Print the result as JSON."))

/** One declared command as an @effect/cli command. */
const commandOf = <RO>(declared: OperatorCommand.AnyCommand<RO>, options: Options<RO>) => {
  const spec = Either.getOrThrowWith(
    InputFlags.operatorSpec(declared.word, declared.input, declared.positional),
    (reason) => new Error(reason)
  )
  return Command.make(
    declared.word,
    { flags: CliOptions.all(spec.flags.map(InputFlags.flagOption)), json: jsonOption, positional: positionalArgs(spec.positionals) },
    (parsed) =>
      Effect.gen(function*() {
        // The flags as an operation's are assembled; the positional arguments go over them.
        const input = yield* Either.mapLeft(
          InputFlags.assemble(
            { flags: spec.flags, positional: undefined, unflagged: [], paged: false, pagedBy: undefined },
            { flags: parsed.flags, positional: Option.none(), inputJson: Option.none(), json: parsed.json, follow: false, all: false, format: Option.none() }
          ),
          Failure.usage
        )
        spec.positionals.forEach((positional, i) => {
          const value = parsed.positional[i]
          if (value !== undefined) input[positional.field] = value
        })
        const env = yield* Effect.context<Cli.Settings | HttpClient.HttpClient>()
        const context: OperatorCommand.Context = {
          progress: (label, total, unit) => Progress.make(label, Option.getOrUndefined(total), unit),
          call: (name, callInput) => Effect.provide(caller(options.operations)(name, callInput), env),
          stdin: readStdin
        }
        // A failure to build the services (a data folder in use, a database that is not there) is reported as
        // unexpected by `Cli.operator`, in its own words.
        const output = declared.access === "api"
          ? yield* Effect.flatten(declared.prepare(input, context)).pipe(Effect.mapError(failureOf))
          : yield* (yield* Effect.mapError(declared.prepare(input, context), failureOf)).pipe(
            Effect.mapError(failureOf),
            Effect.provide(options.services(declared.access))
          )
        yield* Console.log(parsed.json ? Format.json(output.json) : output.text)
        // Printed, then failed: the exit code is all that is left to give (a CI check that found something).
        if (output.failed !== undefined) return yield* Effect.fail(new Failure.Reported({ failure: Failure.unexpected(output.failed) }))
      })
  ).pipe(Command.withDescription(declared.description))
}

/**
 * The declared operator command groups as commands for `Cli.Options.operators`.
 *
 * @since 0.1.0 @category commands
 */
export const commands = <RO>(options: Options<RO>): ReadonlyArray<Cli.Operator> =>
  options.groups.map((group) => {
    const [first, ...rest] = group.commands.map((declared) => commandOf(declared, options))
    const word = Command.make(group.word).pipe(Command.withDescription(group.description))
    return first === undefined ? Cli.operator(word) : Cli.operator(word.pipe(Command.withSubcommands([first, ...rest])))
  })
