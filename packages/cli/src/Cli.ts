/**
 * The `service` command tree, derived from any list of operation groups:
 *
 * ```text
 * <prefix> [--base-url URL] [--api-key KEY] [--workspace SLUG]
 *   <group word> <operation words...> [<positional>] [--<field> ...] [--input-json <object>] [--json]
 *   <operator word> ...                       (the bundles' operator commands, e.g. `corpus`, `topics-index`)
 * ```
 *
 * One command per operation served on the CLI; its flags come from the model-facing input schema
 * (`InputFlags`), the call from its HTTP binding (`Remote`), its help from the tree (`Help`). The prefix is
 * the transport's (`Operation.SurfacePrefix`, `service` unless configured), never the domain's.
 *
 * A run is an Effect: `runWith(argv, options)` needs an `HttpClient` and @effect/cli's environment, so tests
 * run it in-process with a captured Console.
 *
 * @since 0.1.0
 */
import type * as CliApp from "@effect/cli/CliApp"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Span from "@effect/cli/HelpDoc/Span"
import * as CliOptions from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as Runtime from "@effect/platform/Runtime"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Operation from "@service/core/Operation"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createRequire } from "node:module"
import * as ColorPolicy from "./ColorPolicy.js"
import * as CommandTree from "./CommandTree.js"
import * as Credentials from "./Credentials.js"
import * as Failure from "./Failure.js"
import * as Login from "./Login.js"
import * as Format from "./Format.js"
import * as Help from "./Help.js"
import * as InputFlags from "./InputFlags.js"
import * as Preflight from "./Preflight.js"
import * as Remote from "./Remote.js"
import * as Tabular from "./Tabular.js"

/**
 * This package's version, read from its manifest (`../package.json` from `src/` and from `dist/` alike), so `service
 * --version` follows each release; "unknown" when the code was bundled away from its manifest.
 *
 * @since 0.1.0 @category constants
 */
export const version: string = Either.try(() => createRequire(import.meta.url)("../package.json")).pipe(
  Either.flatMap(Schema.decodeUnknownEither(Schema.Struct({ version: Schema.String }))),
  Either.match({ onLeft: () => "unknown", onRight: (manifest) => manifest.version })
)

/** @since 0.1.0 @category constants */
export const defaultBaseUrl = "http://localhost:3000"

/** @since 0.1.0 @category constants */
export const defaultWorkspace = "demo"

/** @since 0.1.0 @category constants */
export const description = "Command line for the service API: every operation of every group, plus operator commands."

// -----------------------------------------------------------------------------
// Root: connection settings shared by every command
// -----------------------------------------------------------------------------

/** The root's options as help shows them. @since 0.1.0 @category options */
export const rootOptions: ReadonlyArray<Help.RootOption> = [
  {
    name: "base-url",
    value: "URL",
    description: `Server address, without the /api/v1 prefix. Env SERVICE_BASE_URL; default ${defaultBaseUrl}.`
  },
  { name: "api-key", value: "KEY", description: "API key sent as x-api-key. Env SERVICE_API_KEY; else the token `service login` kept for the server." },
  { name: "workspace", value: "SLUG", description: `Workspace slug. Env SERVICE_WORKSPACE; default ${defaultWorkspace}.` }
]

const rootDescription = (name: string) => rootOptions.find((o) => o.name === name)?.description ?? ""

const connection = {
  baseUrl: CliOptions.text("base-url").pipe(
    CliOptions.withDescription(rootDescription("base-url")),
    CliOptions.withFallbackConfig(Config.string("SERVICE_BASE_URL").pipe(Config.withDefault(defaultBaseUrl)))
  ),
  apiKey: CliOptions.redacted("api-key").pipe(
    CliOptions.withDescription(rootDescription("api-key")),
    CliOptions.withFallbackConfig(Config.redacted("SERVICE_API_KEY")),
    // Optional here so a missing key is reported as an authentication failure, not a usage error.
    CliOptions.optional
  ),
  workspace: CliOptions.text("workspace").pipe(
    CliOptions.withDescription(rootDescription("workspace")),
    CliOptions.withFallbackConfig(Config.string("SERVICE_WORKSPACE").pipe(Config.withDefault(defaultWorkspace)))
  )
}

/**
 * The root's connection settings (`--base-url`, `--api-key`, `--workspace` or their environment), provided to
 * every operator command: an operator that calls the API reads them here, so the root options work for it
 * as they do for the derived commands.
 *
 * @since 0.1.0 @category operators
 */
export class Settings extends Context.Tag("@service/cli/Cli/Settings")<Settings, {
  readonly baseUrl: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly workspace: string
}>() {}

/** What an operator command may need from the run: the HTTP client, @effect/cli's environment, the settings. @since 0.1.0 @category operators */
export type OperatorEnv = HttpClient.HttpClient | CliApp.CliApp.Environment | Settings

/** An operator command's parsed line, erased into the effect that runs it. @since 0.1.0 @category operators */
export interface OperatorRun {
  readonly name: string
  readonly run: Effect.Effect<void, Failure.Failure | Failure.Reported, OperatorEnv>
}

/**
 * A hand-written command as the tree keeps it. Commands differ in what they parse, and a command's parsed
 * type is both produced and consumed (invariant), so a list of different commands has no common type;
 * {@link operator} erases it into the run, which is all the tree needs.
 *
 * @since 0.1.0 @category operators
 */
export type Operator = Command.Command<string, OperatorEnv, Failure.Failure | Failure.Reported, OperatorRun>

/**
 * A hand-written command (a word with its subcommands; the bundles' operator commands through `Operators.commands`)
 * for `Options.operators`.
 * A failure that is not already a CLI failure is reported as unexpected.
 *
 * @since 0.1.0 @category operators
 */
export const operator = <Name extends string, R extends OperatorEnv, E, A>(command: Command.Command<Name, R, E, A>): Operator =>
  Command.fromDescriptor(
    Descriptor.map(command.descriptor, (config): OperatorRun => ({
      name: [...Descriptor.getNames(command.descriptor)][0] ?? "",
      run: command.transform(command.handler(config), config).pipe(
        Effect.catchAll((error) =>
          Failure.isFailure(error) || error instanceof Failure.Reported
            ? Effect.fail(error)
            : Effect.fail(Failure.unexpected(error instanceof Error ? error.message : String(error)))
        )
      )
    })),
    (erased: OperatorRun) => erased.run
  )

// -----------------------------------------------------------------------------
// Building the commands
// -----------------------------------------------------------------------------

/**
 * What to build the command line from.
 *
 * @since 0.1.0 @category models
 */
export interface Options<R = never, E = never, A = never, Name extends string = string> {
  /** The groups whose operations become commands (served on the CLI). */
  readonly groups: ReadonlyArray<Operation.Group<unknown>>
  /** A hand-written subtree under the root (one; see `operators` for several). */
  readonly operator?: Command.Command<Name, R, E, A> | undefined
  /** Hand-written subtrees under the root, each made with {@link operator}; they read the root's {@link Settings}. */
  readonly operators?: ReadonlyArray<Operator> | undefined
  /**
   * Hand-written commands under a derived group's word (`events listen` under `events`), each made with
   * {@link operator}; they read the root's {@link Settings} too.
   */
  readonly nested?: ReadonlyArray<{ readonly under: string; readonly command: Operator }> | undefined
  /** The first word (default: `Operation.SurfacePrefix`, `service`). */
  readonly prefix?: string | undefined
}

/** What an operation command was asked: a call, words that stopped at a branch, or a nested hand-written command. */
type Invocation =
  | { readonly _tag: "Call"; readonly leaf: CommandTree.Leaf; readonly values: InputFlags.Values }
  | { readonly _tag: "Missing"; readonly node: CommandTree.Branch }
  | { readonly _tag: "Operator"; readonly run: OperatorRun["run"] }

/** The nested hand-written commands by the words of the branch they hang under. */
type NestedByBranch = ReadonlyMap<string, ReadonlyArray<Operator>>

interface Parsed {
  readonly name: string
  readonly invocation: Invocation
}

/** What an operation command takes besides its input's flags. */
const extrasOf = (leaf: CommandTree.Leaf): InputFlags.Extras => ({ follow: leaf.operation.cli.follow !== undefined, paged: leaf.input.paged })

/** Every derived node parses to one `Invocation`, so one handler serves the whole derived tree. */
const descriptorOf = (node: CommandTree.Leaf | CommandTree.Branch, nested: NestedByBranch): Descriptor.Command<Parsed> => {
  const word = CommandTree.wordOf(node)
  if (node._tag === "Leaf") {
    return Descriptor.make(word, InputFlags.options(node.input, extrasOf(node)), InputFlags.args(node.input)).pipe(
      Descriptor.withDescription(node.operation.description),
      Descriptor.map((parsed): Parsed => ({
        name: parsed.name,
        invocation: { _tag: "Call", leaf: node, values: { ...parsed.options, positional: parsed.args } }
      }))
    )
  }
  const hung = (nested.get(node.words.join(" ")) ?? []).map((command) =>
    [
      [...Descriptor.getNames(command.descriptor)][0] ?? "",
      Descriptor.map(command.descriptor, (erased): Parsed => ({ name: erased.name, invocation: { _tag: "Operator", run: erased.run } }))
    ] as const
  )
  const children = [
    ...node.children.flatMap((child) => child._tag === "External" ? [] : [[CommandTree.wordOf(child), descriptorOf(child, nested)] as const]),
    ...hung
  ]
  const [first, ...rest] = children
  if (first === undefined) {
    return Descriptor.make(word).pipe(Descriptor.map((parsed): Parsed => ({ name: parsed.name, invocation: { _tag: "Missing", node } })))
  }
  return Descriptor.make(word).pipe(
    Descriptor.withDescription(node.description),
    Descriptor.withSubcommands([first, ...rest]),
    Descriptor.map((parsed): Parsed => ({
      name: parsed.name,
      invocation: Option.match(parsed.subcommand, {
        onNone: (): Invocation => ({ _tag: "Missing", node }),
        onSome: ([, child]) => child.invocation
      })
    }))
  )
}

const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Sequence":
      return `${spanText(span.left)}${spanText(span.right)}`
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
  }
}

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : [doc]

/** The DESCRIPTION paragraph of @effect/cli's help for a command. */
const descriptionOf = (descriptor: Descriptor.Command<unknown>): string => {
  const blocks = flatten(Descriptor.getHelp(descriptor, CliConfig.defaultConfig))
  const at = blocks.findIndex((block) => block._tag === "Header" && spanText(block.value) === "DESCRIPTION")
  const next = at === -1 ? undefined : blocks[at + 1]
  return next?._tag === "Paragraph" ? spanText(next.value) : ""
}

/** The words and descriptions of a hand-written subtree, for the tree's help and checks. */
const externalOf = <R, E, A, Name extends string>(command: Command.Command<Name, R, E, A>): CommandTree.ExternalSpec => {
  const word = [...Descriptor.getNames(command.descriptor)][0] ?? ""
  // A command without subcommands lists itself as its only one: it has none to show (`service login`, not `login login`).
  const subcommands = [...HashMap.entries(Descriptor.getSubcommands(command.descriptor))]
    .filter(([name]) => name !== word)
    .sort(([a], [b]) => a.localeCompare(b))
  return {
    word,
    description: descriptionOf(command.descriptor),
    commands: subcommands.map(([word, descriptor]) => ({ word, description: descriptionOf(descriptor) }))
  }
}

/** How often `--follow` reads again. */
const followEvery = "2 seconds"

/**
 * `--follow`: reads the first page again and again, printing each item not printed before (by its key fields,
 * so a change of one prints it again), oldest first: one JSON object per line with `--json`, one summary line
 * otherwise. Runs until interrupted; a failed read ends it like any call.
 */
const followItems = <E, R>(
  read: Effect.Effect<unknown, E, R>,
  follow: { readonly items: string; readonly keys: ReadonlyArray<string> },
  asJson: boolean
): Effect.Effect<never, E, R> =>
  Effect.gen(function*() {
    const printed = new Set<string>()
    const itemsOf = (output: unknown): ReadonlyArray<unknown> => {
      const items = Predicate.isRecord(output) ? output[follow.items] : undefined
      return Array.isArray(items) ? items : []
    }
    const keyOf = (item: unknown): string | undefined =>
      Predicate.isRecord(item) ? JSON.stringify(follow.keys.map((field) => item[field] ?? null)) : undefined
    return yield* Effect.forever(
      Effect.gen(function*() {
        const fresh = itemsOf(yield* read).filter((item) => {
          const key = keyOf(item)
          return key !== undefined && !printed.has(key)
        })
        // The first page is newest first: print the oldest of the new ones first.
        for (const item of [...fresh].reverse()) {
          const key = keyOf(item)
          if (key !== undefined) printed.add(key)
          yield* Console.log(asJson ? JSON.stringify(item) : Format.itemLine(item))
        }
        yield* Effect.sleep(followEvery)
      })
    )
  })

/** The table hints of a leaf: its operation's, else its group's. */
const tableOf = (leaf: CommandTree.Leaf): Operation.CliTable | undefined => leaf.operation.cli.table ?? leaf.group.cli.table

/** One output as `format` prints it: the wire JSON, its rows as CSV (a single record as one row), or the summary. */
const render = (leaf: CommandTree.Leaf, format: InputFlags.OutputFormat, output: unknown, input: Readonly<Record<string, unknown>>): string => {
  const table = tableOf(leaf)
  switch (format) {
    case "json":
      return Format.json(output)
    case "csv": {
      const rows = Tabular.rowsOf(output, table)?.rows ?? (Predicate.isRecord(output) ? [output] : [])
      const columns = Tabular.columnsOf(rows, table, true)
      return [Tabular.csvHeader(columns), ...rows.map((row) => Tabular.csvRow(columns, row))].join("\n")
    }
    case "text":
      return Format.summary(leaf.operation.cli.summary, output, {
        input,
        commandLine: (next) => [...leaf.words, ...InputFlags.toArgs(leaf.input, next)].map(Format.shellQuote).join(" ")
      }, { table, paged: leaf.input.paged, pagedBy: leaf.input.pagedBy })
  }
}

/**
 * `--all`: reads page after page, following the output's next cursor (or the offset past the rows read while it
 * says `has_more`), and prints each page's rows as they come:
 * a table whose columns and widths the first page sets (text), CSV records under one header, or one JSON object
 * per line. Progress goes to stderr; a refused page ends the run with its refusal after the rows already printed.
 */
const readAll = <R>(
  read: (input: Readonly<Record<string, unknown>>) => Effect.Effect<unknown, Failure.Failure, R>,
  first: Readonly<Record<string, unknown>>,
  table: Operation.CliTable | undefined,
  format: InputFlags.OutputFormat,
  pagedBy: "cursor" | "offset"
): Effect.Effect<void, Failure.Failure, R> =>
  Effect.gen(function*() {
    let input = first
    let page = 0
    let count = 0
    let layout: { readonly columns: ReadonlyArray<Tabular.Column>; readonly widths: ReadonlyArray<number> } | undefined
    while (true) {
      const output = yield* read(input)
      page += 1
      const rows = Tabular.rowsOf(output, table)?.rows ?? []
      if (layout === undefined && (rows.length > 0 || format === "csv")) {
        const columns = Tabular.columnsOf(rows, table, format === "csv")
        layout = { columns, widths: Tabular.widthsOf(columns, rows) }
        if (format === "text") yield* Console.log(Tabular.headerLine(columns, layout.widths))
        if (format === "csv") yield* Console.log(Tabular.csvHeader(columns))
      }
      for (const row of rows) {
        yield* Console.log(
          format === "json"
            ? JSON.stringify(row)
            : layout === undefined
            ? Format.itemLine(row)
            : format === "csv"
            ? Tabular.csvRow(layout.columns, row)
            : Tabular.rowLine(layout.columns, layout.widths, row)
        )
      }
      count += rows.length
      const next = Tabular.nextPageInput(pagedBy, input, output, rows.length)
      yield* Console.error(`page ${page}, ${count} row${count === 1 ? "" : "s"}${next === undefined ? " (last page)" : "…"}`)
      if (next === undefined) return
      input = next
    }
  })

/** Prints a failure the way the command was asked to (`--json` or text) and marks it as printed. */
const report = (asJson: boolean) => (failure: Failure.Failure) =>
  Console.error(asJson ? Format.failureJson(failure) : Format.failure(failure)).pipe(
    Effect.zipRight(Effect.fail(new Failure.Reported({ failure })))
  )

const treeFor = <R, E, A, Name extends string>(prefix: string, options: Options<R, E, A, Name>) =>
  CommandTree.makeOrDie({
    prefix,
    description,
    groups: options.groups,
    external: [
      ...(options.operator === undefined ? [] : [externalOf(options.operator)]),
      ...(options.operators ?? []).map(externalOf),
      ...(options.nested ?? []).map(({ command, under }) => ({ ...externalOf(command), under }))
    ]
  })

const build = <R, E, A, Name extends string>(prefix: string, options: Options<R, E, A, Name>) =>
  Effect.gen(function*() {
    const operator = options.operator
    const tree = yield* treeFor(prefix, options)
    const root = Command.make(prefix, connection)

    const call = (leaf: CommandTree.Leaf, values: InputFlags.Values) => {
      const format: InputFlags.OutputFormat = values.json ? "json" : Option.getOrElse(values.format, (): InputFlags.OutputFormat => "text")
      return Effect.gen(function*() {
        const input = yield* Either.mapLeft(InputFlags.assemble(leaf.input, values), Failure.usage)
        const settings = yield* root
        const credential = yield* Credentials.resolve(settings)
        if (Option.isNone(credential)) return yield* Effect.fail(Failure.missingApiKey)
        const checked = yield* Remote.check(leaf, input)
        const connection = { baseUrl: settings.baseUrl, credential: credential.value, pathParams: { workspace: settings.workspace } }
        // A refusal of the credential says which one was sent, and whether a kept login went unused (issue 32 row 18).
        const sent = Effect.map(Login.hasKept(settings.baseUrl), (kept) => ({
          source: credential.value.source,
          loginUnused: credential.value.kind === "api_key" && kept
        }))
        return yield* Effect.gen(function*() {
          const follow = leaf.operation.cli.follow
          if (values.follow && follow !== undefined) return yield* followItems(Remote.call(connection, leaf, checked), follow, format === "json")
          const read = (input: Readonly<Record<string, unknown>>) => Remote.call(connection, leaf, input)
          if (values.all && leaf.input.pagedBy !== undefined) return yield* readAll(read, checked, tableOf(leaf), format, leaf.input.pagedBy)
          const output = yield* read(checked)
          yield* Console.log(render(leaf, format, output, checked))
        }).pipe(
          Effect.catchAll((failure) =>
            Failure.Failure.$is("Denied")(failure) && failure.credential === undefined
              ? Effect.flatMap(sent, (credential) => Effect.fail(Failure.Failure.Denied({ ...failure, credential })))
              : Effect.fail(failure)
          )
        )
      }).pipe(Effect.catchAll(report(format === "json")))
    }

    const handle = (invocation: Invocation) =>
      invocation._tag === "Missing"
        ? report(false)(Failure.usage(Help.missingCommand(invocation.node)))
        : invocation._tag === "Operator"
        ? Effect.provideServiceEffect(invocation.run, Settings, root)
        : call(invocation.leaf, invocation.values)

    const nested = new Map<string, Array<Operator>>()
    for (const { command, under } of options.nested ?? []) {
      const words = `${prefix} ${under}`
      nested.set(words, [...(nested.get(words) ?? []), command])
    }
    const derived = tree.children.flatMap((node) =>
      node._tag === "External" ? [] : [Command.fromDescriptor(descriptorOf(node, nested), (parsed: Parsed) => handle(parsed.invocation))]
    )
    // Operators run below the root: the root's parsed options are there to hand them as Settings.
    const operators = (options.operators ?? []).map((command) => Command.provideEffect(command, Settings, root))
    const [first, ...rest] = [...operators, ...derived]
    const app = { name: prefix, version }
    const run = operator !== undefined
      ? Command.run(root.pipe(Command.withSubcommands([operator, ...operators, ...derived])), app)
      : first !== undefined
      ? Command.run(root.pipe(Command.withSubcommands([first, ...rest])), app)
      : Command.run(root, app)
    return { tree, run }
  })

/**
 * The command tree `runWith` builds for `options` (for listings and tests).
 *
 * @since 0.1.0 @category accessors
 */
export const tree = <R = never, E = never, A = never, Name extends string = string>(
  options: Options<R, E, A, Name>
): Effect.Effect<CommandTree.Branch> =>
  Effect.flatMap(
    options.prefix === undefined ? Operation.SurfacePrefix : Effect.succeed(options.prefix),
    (prefix) => treeFor(prefix, options)
  )

/**
 * Runs a command line (`argv` as in `process.argv`: runtime and script first). Help, unknown and missing
 * commands are answered from the derived tree; everything else is parsed by @effect/cli. Failures are
 * printed on stderr and stay in the error channel for {@link exitCodeOf}; output follows `ColorPolicy`.
 *
 * @since 0.1.0 @category running
 */
export const runWith = <R = never, E = never, A = never, Name extends string = string>(
  argv: ReadonlyArray<string>,
  options: Options<R, E, A, Name>
): Effect.Effect<
  void,
  Failure.Failure | Failure.Reported | ValidationError.ValidationError | E,
  HttpClient.HttpClient | CliApp.CliApp.Environment | R
> =>
  Effect.gen(function*() {
    const prefix = options.prefix ?? (yield* Operation.SurfacePrefix)
    const app = yield* build(prefix, options)
    const resolution = CommandTree.resolve(app.tree, argv.slice(2), rootOptions.map((o) => o.name))
    const context = { version, rootOptions }
    switch (resolution._tag) {
      case "Help":
        return yield* Console.log(Help.render(resolution.node, app.tree, context))
      case "Unknown":
        return yield* Effect.fail(Failure.usage(Help.unknownCommand(resolution.node, resolution.word)))
      case "Missing":
        return yield* Effect.fail(Failure.usage(Help.missingCommand(resolution.node)))
      case "Parse": {
        // An operation command's arguments are checked (unknown flags, numbers) and put in @effect/cli's order first.
        const node = resolution.node
        const start = 2 + resolution.at
        const { args: ordered, root } = node._tag === "Leaf"
          ? yield* Either.mapLeft(Preflight.check(node.words, node.input, extrasOf(node), argv.slice(start), rootOptions.map((o) => o.name)), Failure.usage)
          : { args: argv.slice(start), root: [] }
        return yield* app.run([...argv.slice(0, 2), ...root, ...argv.slice(2, start), ...ordered]).pipe(
          // Help below an operator command is @effect/cli's: without its built-in options on every command.
          Effect.provide(CliConfig.layer({ showBuiltIns: false })),
          Effect.tapError((error) =>
            ValidationError.isValidationError(error) && !ValidationError.isHelpRequested(error)
              ? Console.error(`Run '${resolution.node.words.join(" ")} --help' for usage.`)
              : Effect.void
          )
        )
      }
    }
  }).pipe(
    Effect.tapError((error) => (Failure.isFailure(error) ? Console.error(Format.failure(error)) : Effect.void)),
    Effect.tapDefect((cause) => Console.error(`error: unexpected defect\n${Cause.pretty(cause)}`)),
    ColorPolicy.apply
  )

/**
 * {@link runWith} over the undici HTTP client. Provide `NodeContext.layer` and run it with
 * `NodeRuntime.runMain({ disableErrorReporting: true, teardown })`.
 *
 * @since 0.1.0 @category running
 */
export const run = <R = never, E = never, A = never, Name extends string = string>(
  argv: ReadonlyArray<string>,
  options: Options<R, E, A, Name>
): Effect.Effect<
  void,
  Failure.Failure | Failure.Reported | ValidationError.ValidationError | E,
  CliApp.CliApp.Environment | Exclude<R, HttpClient.HttpClient>
> => runWith(argv, options).pipe(Effect.provide(NodeHttpClient.layerUndici))

/**
 * The exit code for how a run ended (see {@link Failure.ExitCode}).
 *
 * @since 0.1.0 @category running
 */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): Failure.ExitCode => {
  if (Exit.isSuccess(exit)) return Failure.ExitCode.ok
  if (Cause.isInterruptedOnly(exit.cause)) return Failure.ExitCode.interrupted
  return Option.match(Cause.failureOption(exit.cause), {
    onNone: () => Failure.ExitCode.unexpected,
    onSome: (error) =>
      error instanceof Failure.Reported
        ? Failure.exitCode(error.failure)
        : Failure.isFailure(error)
        ? Failure.exitCode(error)
        : ValidationError.isValidationError(error)
        ? Failure.ExitCode.usage
        : Failure.ExitCode.unexpected
  })
}

/**
 * A `runMain` teardown that exits with {@link exitCodeOf}.
 *
 * @since 0.1.0 @category running
 */
export const teardown: Runtime.Teardown = (exit, onExit) => onExit(exitCodeOf(exit))
