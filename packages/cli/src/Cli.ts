/**
 * The `service` command tree over the typed HTTP client:
 *
 * ```text
 * service [--base-url URL] [--api-key KEY] [--workspace SLUG]
 *   market capabilities [--facets states,scian_codes] [--json]
 *   market suppliers search [--query ..] [--state ..] [--scian-codes 212,213] [--rfc ..] [--limit N]
 *                           [--query-mode auto|exact_phrase|all_terms|any_terms] [--cursor ..] [--json]
 *   market suppliers get <record-ref> [--json]
 * ```
 *
 * Flags and their help text are derived from the operations' model-facing input schemas, and every input is
 * checked against that schema before the call, so a bad value is refused with the same `market_data` block
 * the server would send.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import type * as CliApp from "@effect/cli/CliApp"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as Runtime from "@effect/platform/Runtime"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Api } from "@service/http/Api"
import { QueryMode } from "@service/market-contract/Envelope"
import * as Operations from "@service/market-contract/Operations"
import { decodeInput } from "@service/market-contract/Validation"
import * as Cause from "effect/Cause"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as CorpusCli from "./CorpusCli.js"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"

/** @since 0.1.0 @category constants */
export const version = "0.1.0"

/** @since 0.1.0 @category constants */
export const defaultBaseUrl = "http://localhost:3000"

/** @since 0.1.0 @category constants */
export const defaultWorkspace = "demo"

// -----------------------------------------------------------------------------
// Help text from the schemas
// -----------------------------------------------------------------------------

/** The description annotation of one field of a struct schema (on the property, else on its type). */
const fieldDescription = (schema: Schema.Schema.AnyNoContext, field: string): string => {
  const ast = schema.ast
  if (ast._tag !== "TypeLiteral") return ""
  const property = ast.propertySignatures.find((p) => p.name === field)
  if (property === undefined) return ""
  return AST.getDescriptionAnnotation(property).pipe(
    Option.orElse(() => AST.getDescriptionAnnotation(property.type)),
    Option.getOrElse(() => "")
  )
}

const searchInput = Operations.searchSuppliers.modelInput
const describeSearch = (field: string) => Options.withDescription(fieldDescription(searchInput, field))

/** Array flags repeat or take comma-separated values: `--x a --x b,c` is `["a", "b", "c"]`. */
const splitList = (values: ReadonlyArray<string>): Array<string> =>
  values.flatMap((value) => value.split(",")).map((value) => value.trim()).filter((value) => value.length > 0)

const json = Options.boolean("json").pipe(
  Options.withDescription("Print the full response envelope as JSON instead of the compact summary.")
)

// -----------------------------------------------------------------------------
// Root: connection settings shared by every subcommand
// -----------------------------------------------------------------------------

const baseUrl = Options.text("base-url").pipe(
  Options.withDescription(`Server address, without the /api/v1 prefix (env SERVICE_BASE_URL; default ${defaultBaseUrl}).`),
  Options.withFallbackConfig(Config.string("SERVICE_BASE_URL").pipe(Config.withDefault(defaultBaseUrl)))
)

const apiKey = Options.redacted("api-key").pipe(
  Options.withDescription("API key sent as x-api-key (env SERVICE_API_KEY)."),
  Options.withFallbackConfig(Config.redacted("SERVICE_API_KEY")),
  // Optional here so a missing key is reported as an authentication failure, not a usage error.
  Options.optional
)

const workspace = Options.text("workspace").pipe(
  Options.withDescription(`Workspace slug (env SERVICE_WORKSPACE; default ${defaultWorkspace}).`),
  Options.withFallbackConfig(Config.string("SERVICE_WORKSPACE").pipe(Config.withDefault(defaultWorkspace)))
)

const service = Command.make("service", { baseUrl, apiKey, workspace })

/** The parent's settings and a typed client carrying the API key. */
const connect = Effect.gen(function*() {
  const settings = yield* service
  if (Option.isNone(settings.apiKey)) return yield* Effect.fail(Failure.missingApiKey)
  const key = Redacted.value(settings.apiKey.value)
  const url = settings.baseUrl.replace(/\/+$/, "")
  const client = yield* HttpApiClient.make(Api, {
    baseUrl: url,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", key))
  })
  // The client does not escape path parameters; the server decodes them.
  return { market: client.marketData, workspace: encodeURIComponent(settings.workspace), baseUrl: url }
})

/** Checks input against the operation's model-facing schema, refusing as the server would. */
const validate = <A, I>(schema: Schema.Schema<A, I>, input: unknown): Effect.Effect<A, Failure.Failure> =>
  decodeInput(schema)(input).pipe(Effect.mapError(Failure.fromRefusal))

/** Prints the envelope as wire JSON or as a summary. */
const output = <A, I>(
  schema: Schema.Schema<A, I>,
  envelope: A,
  asJson: boolean,
  summary: (envelope: A) => string
): Effect.Effect<void> =>
  asJson
    ? Schema.encode(schema)(envelope).pipe(Effect.orDie, Effect.flatMap((wire) => Console.log(Format.json(wire))))
    : Console.log(summary(envelope))

/** `{ [key]: value }` when the flag was given, `{}` otherwise (the input schema refuses explicit undefined). */
const optionalField = <A>(key: string, value: Option.Option<A>): Record<string, A> =>
  Option.match(value, { onNone: () => ({}), onSome: (a) => ({ [key]: a }) })

// -----------------------------------------------------------------------------
// market capabilities
// -----------------------------------------------------------------------------

const capabilities = Command.make(
  "capabilities",
  {
    facets: Options.text("facets").pipe(
      Options.withDescription(fieldDescription(Operations.marketCapabilities.modelInput, "facets")),
      Options.repeated,
      Options.map(splitList)
    ),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const { baseUrl, market, workspace } = yield* connect
      const op = Operations.marketCapabilities
      const input = yield* validate(op.modelInput, opts.facets.length === 0 ? {} : { facets: opts.facets.join(",") })
      const envelope = yield* market.market_capabilities({ path: { workspace }, urlParams: input }).pipe(
        Effect.mapError((error) => Failure.fromClientError(error, baseUrl))
      )
      yield* output(op.output, envelope, opts.json, Format.capabilitiesSummary)
    })
).pipe(Command.withDescription(Operations.marketCapabilities.description))

// -----------------------------------------------------------------------------
// market suppliers search | get
// -----------------------------------------------------------------------------

const search = Command.make(
  "search",
  {
    query: Options.text("query").pipe(describeSearch("query"), Options.optional),
    state: Options.text("state").pipe(describeSearch("state"), Options.optional),
    scianCodes: Options.text("scian-codes").pipe(
      describeSearch("scian_codes"),
      Options.repeated,
      Options.map(splitList)
    ),
    rfc: Options.text("rfc").pipe(describeSearch("rfc"), Options.optional),
    limit: Options.integer("limit").pipe(describeSearch("limit"), Options.optional),
    queryMode: Options.choice("query-mode", QueryMode.literals).pipe(describeSearch("query_mode"), Options.optional),
    cursor: Options.text("cursor").pipe(describeSearch("cursor"), Options.optional),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const { baseUrl, market, workspace } = yield* connect
      const op = Operations.searchSuppliers
      const input = yield* validate(op.modelInput, {
        ...optionalField("query", opts.query),
        ...optionalField("state", opts.state),
        ...(opts.scianCodes.length === 0 ? {} : { scian_codes: opts.scianCodes }),
        ...optionalField("rfc", opts.rfc),
        ...optionalField("limit", opts.limit),
        ...optionalField("query_mode", opts.queryMode),
        ...optionalField("cursor", opts.cursor)
      })
      const envelope = yield* market.search_suppliers({ path: { workspace }, payload: input }).pipe(
        Effect.mapError((error) => Failure.fromClientError(error, baseUrl))
      )
      yield* output(op.output, envelope, opts.json, (e) => Format.searchSummary(e, input))
    })
).pipe(Command.withDescription(Operations.searchSuppliers.description))

const get = Command.make(
  "get",
  {
    recordRef: Args.text({ name: "record-ref" }).pipe(
      Args.withDescription(fieldDescription(Operations.getSupplier.modelInput, "record_ref"))
    ),
    json
  },
  (opts) =>
    Effect.gen(function*() {
      const { baseUrl, market, workspace } = yield* connect
      const op = Operations.getSupplier
      const input = yield* validate(op.modelInput, { record_ref: opts.recordRef })
      const envelope = yield* market.get_supplier({
        path: { workspace, recordRef: encodeURIComponent(input.record_ref) }
      }).pipe(Effect.mapError((error) => Failure.fromClientError(error, baseUrl)))
      yield* output(op.output, envelope, opts.json, Format.supplierSummary)
    })
).pipe(Command.withDescription(Operations.getSupplier.description))

// -----------------------------------------------------------------------------
// Groups and root
// -----------------------------------------------------------------------------

const suppliers = Command.make("suppliers").pipe(
  Command.withDescription("Published supplier observations: search, then get one by its record_ref."),
  Command.withSubcommands([search, get])
)

const market = Command.make("market").pipe(
  Command.withDescription("Read-only market data behind a semantic contract."),
  Command.withSubcommands([capabilities, suppliers])
)

const rootDescription = [
  "Command line for the service API. Connection options go before `market`.",
  "Environment: SERVICE_BASE_URL, SERVICE_API_KEY, SERVICE_WORKSPACE.",
  "Array flags repeat or take comma-separated values (--scian-codes 212 --scian-codes 213,214).",
  "--json prints the full envelope; otherwise a compact summary. Failures go to stderr.",
  `Exit codes: ${Failure.ExitCode.ok} ok, ${Failure.ExitCode.unexpected} unexpected error, ${Failure.ExitCode.usage} usage error, ` +
  `${Failure.ExitCode.refused} market-data refusal, ${Failure.ExitCode.denied} authentication/authorization (401, 403, unknown workspace, no key), ` +
  `${Failure.ExitCode.unreachable} server unreachable.`
].join(" ")

/**
 * The root `service` command with its subcommand tree.
 *
 * @since 0.1.0 @category commands
 */
export const command = service.pipe(
  Command.withDescription(rootDescription),
  Command.withSubcommands([market, CorpusCli.command])
)

const cli = Command.run(command, { name: "service", version })

/**
 * Runs the command line (`argv` as in `process.argv`: runtime and script first) with the given `HttpClient`.
 * Failures are printed on stderr here and stay in the error channel for {@link teardown} to turn into an
 * exit code; usage errors were already printed by @effect/cli.
 *
 * @since 0.1.0 @category running
 */
export const runWith = (
  argv: ReadonlyArray<string>
): Effect.Effect<
  void,
  Failure.Failure | ValidationError.ValidationError,
  HttpClient.HttpClient | CliApp.CliApp.Environment
> =>
  cli(argv).pipe(
    Effect.tapError((error) => Failure.isFailure(error) ? Console.error(Format.failure(error)) : Effect.void),
    Effect.tapDefect((cause) => Console.error(`error: unexpected defect\n${Cause.pretty(cause)}`))
  )

/**
 * Runs the command line over the undici HTTP client. Provide `NodeContext.layer` and run it with
 * `NodeRuntime.runMain({ disableErrorReporting: true, teardown })`.
 *
 * @since 0.1.0 @category running
 */
export const run = (
  argv: ReadonlyArray<string>
): Effect.Effect<void, Failure.Failure | ValidationError.ValidationError, CliApp.CliApp.Environment> =>
  runWith(argv).pipe(Effect.provide(NodeHttpClient.layerUndici))

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
      Failure.isFailure(error)
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
