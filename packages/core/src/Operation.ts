/**
 * The operation kernel. Every operation of every domain is declared once, here described: name, canonical
 * and model-facing input schemas, output schema, the domain's refusal codec and the codes it may return,
 * scopes, MCP annotations, metering, paging, capability text, and its HTTP and CLI bindings. Declarations
 * are gathered into {@link Group}s (one per domain surface); the `http`, `mcp` and `cli` transports derive
 * every endpoint, tool and command from groups and know no domain.
 *
 * Names shown to users (tool names, command words) are built from the transport's configured prefix
 * ({@link SurfacePrefix}), never written by the domain.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as CredentialCache from "./CredentialCache.js"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Forbidden } from "./AuthError.js"
import { requireScope } from "./Authorization.js"
import { type CreditsExhausted, Meter } from "./Meter.js"
import { isReadScope, type Principal, type Scope } from "./Principal.js"
import { RateLimiter, type RateLimited } from "./RateLimiter.js"
import * as Refusal from "./Refusal.js"
import type * as ContractCase from "./ContractCase.js"
import { isOutage } from "./internal/outage.js"
import { Caller, RequestContext, type RequestId } from "./RequestContext.js"

/**
 * MCP tool annotations, as `@effect/ai`'s `Tool` annotates them (`Readonly`, `Destructive`, `Idempotent`,
 * `OpenWorld`).
 *
 * @since 0.1.0 @category models
 */
export interface Annotations {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/**
 * A read of our own data: no side effects, same answer for the same state, closed world.
 *
 * @since 0.1.0 @category constants
 */
export const readOnly: Annotations = { readOnly: true, destructive: false, idempotent: true, openWorld: false }

/**
 * A write that creates or changes state and is safe to repeat with the same input.
 *
 * @since 0.1.0 @category constants
 */
export const idempotentWrite: Annotations = { readOnly: false, destructive: false, idempotent: true, openWorld: false }

/**
 * A write that creates or changes state and is not safe to repeat (a second call makes a second record).
 *
 * @since 0.1.0 @category constants
 */
export const write: Annotations = { readOnly: false, destructive: false, idempotent: false, openWorld: false }

/**
 * A write that removes or irreversibly changes state.
 *
 * @since 0.1.0 @category constants
 */
export const destructive: Annotations = { readOnly: false, destructive: true, idempotent: false, openWorld: false }

/**
 * Where HTTP reads the input from.
 * - `body`: the input is the JSON body (limited to `maxBodyBytes`, default 256 KiB); `params` maps path
 *   parameters to input fields when the route also names a resource (`PUT /sources/:id/mapping`).
 * - `query`: the URL parameters are the input (comma-separated lists split by the schema).
 * - `path`: path parameters carry input fields: `params` maps each `:param` of the path to its field.
 *
 * @since 0.1.0 @category models
 */
export type HttpInput =
  | {
    readonly kind: "body"
    readonly maxBodyBytes?: number | undefined
    readonly params?: Readonly<Record<string, string>> | undefined
  }
  | { readonly kind: "query" }
  | { readonly kind: "path"; readonly params: Readonly<Record<string, string>> }

/**
 * The input fields an operation's path parameters fill (empty when the path names none).
 *
 * @since 0.1.0 @category accessors
 */
export const pathFields = (input: HttpInput): Readonly<Record<string, string>> =>
  input.kind === "query" ? {} : input.params ?? {}

/** @since 0.1.0 @category models */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/**
 * @since 0.1.0 @category models
 */
export interface HttpBinding {
  readonly method: HttpMethod
  /** Relative to the group's prefix. */
  readonly path: `/${string}`
  readonly input: HttpInput
}

/**
 * The CLI binding: the command words under the group's word, an optional positional argument, and flags
 * that nest into an object field (`{ compare_period: { from_date: "compare-from-date" } }` makes
 * `--compare-from-date X` set `compare_period.from_date`). Every other top-level input field is a flag
 * named after it with dashes.
 *
 * @since 0.1.0 @category models
 */
export interface CliBinding {
  readonly words: ReadonlyArray<string>
  /** The input field read from the positional argument. */
  readonly positional?: string | undefined
  readonly nested?: Readonly<Record<string, Readonly<Record<string, string>>>> | undefined
  /**
   * The command also takes `--follow`: it reads the first page again and again and prints each item of the
   * output's `items` array it has not printed before, oldest first, until interrupted. An item is printed again
   * when any of its `keys` fields changed (`["id", "status"]`: each new item, then each change of its status).
   * For reads whose first page is the newest (an activity feed).
   */
  readonly follow?: { readonly items: string; readonly keys: ReadonlyArray<string> } | undefined
  /**
   * The operation's own text summary of its wire output (a search's rows with the command for the next page),
   * printed instead of the CLI's generic outline; `None` for an output it does not recognise. See {@link summaryOf}.
   */
  readonly summary?: Summary | undefined
  /**
   * How the CLI tabulates the output when the generic choice reads worse: the field holding the rows and the
   * columns (dotted paths) of its text table and CSV. Without it the CLI picks both from the output itself.
   */
  readonly table?: CliTable | undefined
}

/**
 * Hints for the CLI's table of an output (see {@link CliBinding.table}).
 *
 * @since 0.1.0 @category models
 */
export interface CliTable {
  /** The output field holding the rows; when it holds one object (a `get`), the output is one record. */
  readonly rows?: string | undefined
  readonly columns?: ReadonlyArray<string> | undefined
  /** Output fields (dotted paths) the text summary leaves to `--json`, such as an envelope's echo of the request. */
  readonly omit?: ReadonlyArray<string> | undefined
}

/**
 * What a text summary may use besides the output.
 *
 * @since 0.1.0 @category models
 */
export interface SummaryContext {
  /** The input sent (wire form). */
  readonly input: Readonly<Record<string, unknown>>
  /** The command line that sends `input` with this same command (e.g. the next page's). */
  readonly commandLine: (input: Readonly<Record<string, unknown>>) => string
}

/**
 * An operation's text summary of its wire output; `None` falls back to the transport's generic outline.
 *
 * @since 0.1.0 @category models
 */
export type Summary = (output: unknown, context: SummaryContext) => Option.Option<string>

/**
 * A summary that reads the wire output with `schema` first: an output it does not decode gets `None`.
 *
 * @since 0.1.0 @category constructors
 */
export const summaryOf = <A, I>(schema: Schema.Schema<A, I>, render: (value: A, context: SummaryContext) => string): Summary => {
  const decode = Schema.decodeUnknownOption(schema)
  return (output, context) => Option.map(decode(output), (value) => render(value, context))
}

/**
 * Which surfaces serve the operation (all by default). Discovery helpers such as the compact
 * capabilities route are HTTP-only.
 *
 * @since 0.1.0 @category models
 */
export interface Surfaces {
  readonly http: boolean
  readonly mcp: boolean
  readonly cli: boolean
}

/** @since 0.1.0 @category models */
export interface CapabilityText {
  /** The question this operation answers, in a caller's words. */
  readonly question: string
  /** What the caller must send. */
  readonly requires: string
  /** A runnable example input (valid against the model-facing input schema). */
  readonly example: Readonly<Record<string, unknown>>
  /**
   * Where the example runs, when not in an ordinary workspace: `test_workspace` for an operation only a test
   * workspace takes (a test Arrival).
   */
  readonly runsIn?: "test_workspace" | undefined
  /**
   * For an example that needs a value only another call returns (a record_ref): which operation to run
   * with its own example, where to read the value in its encoded output, and which field it fills.
   */
  readonly exampleFrom?: {
    readonly operation: string
    readonly path: ReadonlyArray<string | number>
    readonly field: string
    /** More fields read from the same call (an unlock takes a quote's token, key and price). */
    readonly also?: ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly field: string }> | undefined
  } | undefined
}

/**
 * What a domain writes to declare an operation. `modelInput` defaults to `input`, `metered` and `paginates` to
 * false.
 *
 * @since 0.1.0 @category models
 */
export interface Declaration<
  Name extends string,
  I,
  IE,
  MI extends I,
  MIE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
> {
  readonly name: Name
  readonly title: string
  readonly description: string
  /** Canonical input, accepted on the HTTP route. */
  readonly input: Schema.Schema<I, IE>
  /**
   * Model-facing input (MCP, CLI): the canonical input minus fields reserved for the canonical route. Default:
   * `input`.
   */
  readonly modelInput?: Schema.Schema<MI, MIE> | undefined
  readonly output: Schema.Schema<O, OE>
  readonly refusals: Refusal.RefusalCodec<E, Code>
  /** The codes this operation may return (the structural one is always possible and added). */
  readonly refuses: ReadonlyArray<NoInfer<Code>>
  /** Any one of these scopes authorizes the call. */
  readonly scopes: ReadonlyArray<Scope>
  readonly annotations: Annotations
  /** One insight credit per successful call (default false). */
  readonly metered?: boolean | undefined
  /** The output is a page with a cursor (default false). */
  readonly paginates?: boolean | undefined
  readonly capability: CapabilityText
  readonly http: HttpBinding
  readonly cli: CliBinding
  readonly surfaces?: Partial<Surfaces> | undefined
  /**
   * Who may call beyond the scopes, checked after them and before the input is decoded: a role, a person
   * behind the credential (`requireOwnerOrAdminPerson`). Absent: any holder of a scope.
   */
  readonly authorize?: ((principal: Principal) => Effect.Effect<unknown, Forbidden>) | undefined
  readonly run: (input: I) => Effect.Effect<O, E, R>
}

/**
 * A declared operation.
 *
 * @since 0.1.0 @category models
 */
export interface Operation<
  Name extends string,
  I,
  IE,
  MI extends I,
  MIE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
> extends Omit<Declaration<Name, I, IE, MI, MIE, O, OE, E, Code, R>, "modelInput" | "metered" | "paginates" | "surfaces"> {
  readonly modelInput: Schema.Schema<MI, MIE>
  readonly metered: boolean
  readonly paginates: boolean
  readonly surfaces: Surfaces
  /** Decodes unknown model-facing input (unknown properties refused), runs, and encodes the output. */
  readonly runModel: (input: unknown) => Effect.Effect<OE, E, R>
  /** The same over the canonical input (what HTTP accepts). */
  readonly runCanonical: (input: unknown) => Effect.Effect<OE, E, R>
}

/**
 * An operation whose types are erased, for transports that treat every operation alike. Failures are
 * read with `refusals.describe`; anything it does not recognise is a defect.
 *
 * @since 0.1.0 @category models
 */
export interface AnyOperation<R> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema.AnyNoContext
  readonly modelInput: Schema.Schema.AnyNoContext
  readonly output: Schema.Schema.AnyNoContext
  readonly refusals: Refusal.AnyRefusalCodec
  readonly refuses: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<Scope>
  readonly authorize?: ((principal: Principal) => Effect.Effect<unknown, Forbidden>) | undefined
  readonly annotations: Annotations
  readonly metered: boolean
  readonly paginates: boolean
  readonly capability: CapabilityText
  readonly http: HttpBinding
  readonly cli: CliBinding
  readonly surfaces: Surfaces
  readonly runModel: (input: unknown) => Effect.Effect<unknown, unknown, R>
  readonly runCanonical: (input: unknown) => Effect.Effect<unknown, unknown, R>
}

const build = <
  Name extends string,
  I,
  IE,
  MI extends I,
  MIE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
>(
  declaration: Declaration<Name, I, IE, MI, MIE, O, OE, E, Code, R>,
  modelInput: Schema.Schema<MI, MIE>
): Operation<Name, I, IE, MI, MIE, O, OE, E, Code, R> => {
  // A write never passes on a read scope: checked where it is declared, so no surface can serve it otherwise.
  const readScopes = declaration.scopes.filter(isReadScope)
  if (!declaration.annotations.readOnly && readScopes.length > 0) {
    throw new Error(`Operation ${declaration.name} writes but accepts the read scopes ${readScopes.join(", ")}.`)
  }
  if (declaration.scopes.length === 0) throw new Error(`Operation ${declaration.name} names no scope.`)
  const decodeModel = Refusal.decodeWith(declaration.refusals)(modelInput)
  const decodeCanonical = Refusal.decodeWith(declaration.refusals)(declaration.input)
  const encode = Schema.encode(declaration.output)
  // The output is produced by our own code: an encode failure is a bug, not a refusal.
  const finish = (output: O) => Effect.orDie(encode(output))
  const refuses = declaration.refuses.includes(declaration.refusals.invalidInputCode)
    ? declaration.refuses
    : [declaration.refusals.invalidInputCode, ...declaration.refuses]
  return {
    ...declaration,
    modelInput,
    metered: declaration.metered ?? false,
    paginates: declaration.paginates ?? false,
    refuses,
    surfaces: { http: true, mcp: true, cli: true, ...declaration.surfaces },
    runModel: (input) => decodeModel(input).pipe(Effect.flatMap(declaration.run), Effect.flatMap(finish)),
    runCanonical: (input) => decodeCanonical(input).pipe(Effect.flatMap(declaration.run), Effect.flatMap(finish))
  }
}

/**
 * Declares an operation. Without `modelInput` the model-facing input is the canonical one.
 *
 * @since 0.1.0 @category constructors
 */
export function make<
  const Name extends string,
  I,
  IE,
  MI extends I,
  MIE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
>(
  declaration: Declaration<Name, I, IE, MI, MIE, O, OE, E, Code, R> & { readonly modelInput: Schema.Schema<MI, MIE> }
): Operation<Name, I, IE, MI, MIE, O, OE, E, Code, R>
export function make<const Name extends string, I, IE, O, OE, E extends { readonly _tag: string }, Code extends string, R>(
  declaration: Declaration<Name, I, IE, I, IE, O, OE, E, Code, R> & { readonly modelInput?: undefined }
): Operation<Name, I, IE, I, IE, O, OE, E, Code, R>
export function make<
  Name extends string,
  I,
  IE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
>(
  declaration: Declaration<Name, I, IE, I, IE, O, OE, E, Code, R>
): Operation<Name, I, IE, I, IE, O, OE, E, Code, R> {
  return build(declaration, declaration.modelInput ?? declaration.input)
}

/**
 * What a domain's declarations share, given once: the refusal codec, and defaults for the scopes and annotations
 * (an operation may set its own) and for metering and paging.
 *
 * @since 0.1.0 @category models
 */
export interface Defaults<E extends { readonly _tag: string }, Code extends string> {
  readonly refusals: Refusal.RefusalCodec<E, Code>
  readonly scopes: ReadonlyArray<Scope>
  readonly annotations: Annotations
  readonly metered?: boolean | undefined
  readonly paginates?: boolean | undefined
}

/** What an operation of a {@link Kit} writes: its declaration without the shared codec, scopes and annotations optional. @since 0.1.0 @category models */
export type KitDeclaration<
  Name extends string,
  I,
  IE,
  MI extends I,
  MIE,
  O,
  OE,
  E extends { readonly _tag: string },
  Code extends string,
  R
> =
  & Omit<Declaration<Name, I, IE, MI, MIE, O, OE, E, Code, R>, "refusals" | "scopes" | "annotations">
  & { readonly scopes?: ReadonlyArray<Scope> | undefined; readonly annotations?: Annotations | undefined }

/**
 * A domain's declarations with their shared {@link Defaults}: `make` declares an operation with the codec and
 * the defaults, `group` gathers operations under the same codec (so they cannot disagree).
 *
 * @since 0.1.0 @category models
 */
export interface Kit<E extends { readonly _tag: string }, Code extends string> {
  readonly refusals: Refusal.RefusalCodec<E, Code>
  readonly make: {
    <const Name extends string, I, IE, MI extends I, MIE, O, OE, R>(
      declaration: KitDeclaration<Name, I, IE, MI, MIE, O, OE, E, Code, R> & { readonly modelInput: Schema.Schema<MI, MIE> }
    ): Operation<Name, I, IE, MI, MIE, O, OE, E, Code, R>
    <const Name extends string, I, IE, O, OE, R>(
      declaration: KitDeclaration<Name, I, IE, I, IE, O, OE, E, Code, R> & { readonly modelInput?: undefined }
    ): Operation<Name, I, IE, I, IE, O, OE, E, Code, R>
  }
  readonly group: <R>(group: Omit<Group<R>, "refusals">) => Group<R>
  /**
   * The same, keeping each operation's own type (name, schemas, codes) in the group's type, so a typed client
   * (`@service/client`) can be derived from the group: `kit.typedGroup<Requirements>()({ ... })`.
   */
  readonly typedGroup: <R>() => <const Ops extends ReadonlyArray<AnyOperation<R>>>(
    group: Omit<Group<R>, "refusals" | "operations"> & { readonly operations: Ops }
  ) => TypedGroup<R, Ops>
}

/**
 * Starts a domain's declarations: the codec and defaults once, then `kit.make(...)` per operation and
 * `kit.group(...)` for the group.
 *
 * @since 0.1.0 @category constructors
 */
export const kit = <E extends { readonly _tag: string }, Code extends string>(defaults: Defaults<E, Code>): Kit<E, Code> => {
  const { refusals } = defaults
  function kitMake<Name extends string, I, IE, O, OE, R>(
    declaration: KitDeclaration<Name, I, IE, I, IE, O, OE, E, Code, R>
  ): Operation<Name, I, IE, I, IE, O, OE, E, Code, R> {
    const full: Declaration<Name, I, IE, I, IE, O, OE, E, Code, R> = {
      metered: defaults.metered,
      paginates: defaults.paginates,
      ...declaration,
      refusals,
      scopes: declaration.scopes ?? defaults.scopes,
      annotations: declaration.annotations ?? defaults.annotations
    }
    return build(full, full.modelInput ?? full.input)
  }
  return {
    refusals,
    make: kitMake,
    group: (declared) => group({ ...declared, refusals }),
    typedGroup: () => (declared) => {
      const checked = group({ ...declared, refusals })
      return { ...checked, declared: declared.operations }
    }
  }
}

// -----------------------------------------------------------------------------
// Groups
// -----------------------------------------------------------------------------

/**
 * One domain surface: a list of declarations sharing a refusal codec, an HTTP prefix, an MCP tool
 * namespace and a CLI word.
 *
 * @since 0.1.0 @category models
 */
export interface Group<R> {
  /** Identifier of the HTTP group and OpenAPI tag, e.g. `marketData`. */
  readonly name: string
  readonly title: string
  readonly description: string
  readonly refusals: Refusal.AnyRefusalCodec
  readonly operations: ReadonlyArray<AnyOperation<R>>
  readonly http: {
    /** Under `/api/v1`, e.g. `/workspaces/:workspace/market-data`. */
    readonly prefix: `/${string}`
    /** The `:workspace` segment must be the principal's own workspace. */
    readonly workspaceScoped: boolean
    /**
     * Unknown paths under the prefix answer 404 with the list of operations and this operation's route
     * as `documentation_url`.
     */
    readonly discovery?: string | undefined
    /**
     * Deprecated path segments still served: every route whose path has the `canonical` segment is also
     * served with `segment` in its place, answering with `Deprecation` (since `since`) and a `Link` to the
     * canonical path, and marked deprecated in OpenAPI.
     */
    readonly aliases?: ReadonlyArray<{ readonly segment: string; readonly canonical: string; readonly since: string }> | undefined
  }
  /** Tool names are `<prefix>_<namespace>_<operation>` (the namespace is not repeated). */
  readonly mcp: { readonly namespace: string }
  readonly cli: {
    readonly word: string
    readonly description: string
    /** The CLI table hints of every operation of the group that declares none (a shared envelope's rows). */
    readonly table?: CliTable | undefined
  }
  /** The contract's requirements as calls the conformance suite runs on every transport. */
  readonly cases?: ReadonlyArray<ContractCase.Case> | undefined
  /** Requirements shown by a test of their own, with the reason no call can show them. */
  readonly elsewhere?: ReadonlyArray<ContractCase.Elsewhere> | undefined
  /**
   * What every answer of the group must satisfy (the envelope's invariants), checked by the conformance
   * suite on every success it sees. Returns the violations found.
   */
  readonly invariant?: ((operation: string, body: unknown) => ReadonlyArray<string>) | undefined
}

/**
 * A group whose type still lists its operations with their own types (see `Kit.typedGroup`).
 *
 * @since 0.1.0 @category models
 */
export interface TypedGroup<R, Ops extends ReadonlyArray<AnyOperation<R>>> extends Group<R> {
  /** The same operations as `operations`, each with its own type (`operations` erases them for transports). */
  readonly declared: Ops
}

/**
 * Declares a group.
 *
 * @since 0.1.0 @category constructors
 */
export const group = <R>(declared: Group<R>): Group<R> => {
  // The group's codec reads every failure of its operations: one declared with another codec would answer
  // refusals the transports cannot read.
  const foreign = declared.operations.filter((op) => op.refusals !== declared.refusals).map((op) => op.name)
  if (foreign.length > 0) {
    throw new Error(`Group ${declared.name}: ${foreign.join(", ")} declare another refusal codec than the group's (${declared.refusals.identifier})`)
  }
  return declared
}

/**
 * The prefix of every user-visible name (tool names, command words): `service` unless the host sets its
 * own.
 *
 * @since 0.1.0 @category references
 */
export class SurfacePrefix extends Context.Reference<SurfacePrefix>()("@service/core/Operation/SurfacePrefix", {
  defaultValue: () => "service"
}) {}

/**
 * The MCP tool name: `<prefix>_<namespace>_<operation>`, without repeating the namespace when the
 * operation already starts with it (`market_capabilities` is `service_market_capabilities`).
 *
 * @since 0.1.0 @category naming
 */
export const toolName = (prefix: string, namespace: string, operation: string): string =>
  `${prefix}_${namespace}_${operation.startsWith(`${namespace}_`) ? operation.slice(namespace.length + 1) : operation}`

/**
 * A field's CLI flag name: `scian_codes` is `scian-codes`.
 *
 * @since 0.1.0 @category naming
 */
export const flagName = (field: string): string => field.replaceAll("_", "-")

/**
 * The full path of an operation's route under `/api/v1`.
 *
 * @since 0.1.0 @category naming
 */
export const httpPath = (group: { readonly http: { readonly prefix: string } }, op: { readonly http: HttpBinding }): string =>
  `/api/v1${group.http.prefix}${op.http.path}`

/**
 * The command words of an operation: `service market suppliers search`.
 *
 * @since 0.1.0 @category naming
 */
export const commandWords = (
  prefix: string,
  group: { readonly cli: { readonly word: string } },
  op: { readonly cli: CliBinding }
): ReadonlyArray<string> => [prefix, group.cli.word, ...op.cli.words]

const shellWord = (value: string): string =>
  /^[A-Za-z0-9_./:=,@%+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`

const isFlagScalar = (value: unknown): value is string | number | boolean =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * The flag value of an example field, or `undefined` when no flag can carry it: an object, an array holding
 * anything but scalars, or an array element the comma split would change (those go in `--input-json`).
 */
const flagValue = (value: unknown): string | undefined => {
  if (Array.isArray(value)) {
    const items: Array<string> = []
    for (const item of value) {
      if (!isFlagScalar(item)) return undefined
      const text = String(item)
      if (text === "" || text.includes(",") || text.trim() !== text) return undefined
      items.push(text)
    }
    return items.length === 0 ? undefined : shellWord(items.join(","))
  }
  return isFlagScalar(value) ? shellWord(String(value)) : undefined
}

/**
 * The runnable command line of the capability example. Fields no flag can carry (objects, arrays of
 * objects) go in one `--input-json` object, quoted for a POSIX shell, as the CLI reads it.
 *
 * @since 0.1.0 @category naming
 */
export const cliExample = (
  prefix: string,
  group: { readonly cli: { readonly word: string } },
  op: { readonly cli: CliBinding; readonly capability: CapabilityText }
): string => {
  const words: Array<string> = [...commandWords(prefix, group, op)]
  const rest: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(op.capability.example)) {
    if (value === undefined) continue
    if (key === op.cli.positional) {
      const word = typeof value === "string" && value.startsWith("<") ? `<${flagName(key)}>` : flagValue(value)
      if (word === undefined) rest[key] = value
      else words.push(word)
      continue
    }
    const nested = op.cli.nested?.[key]
    if (nested !== undefined && typeof value === "object" && value !== null && !Array.isArray(value)) {
      const innerRest: Record<string, unknown> = {}
      for (const [inner, innerValue] of Object.entries(value)) {
        const flag = nested[inner]
        const word = flag === undefined ? undefined : flagValue(innerValue)
        if (flag !== undefined && word !== undefined) words.push(`--${flag}`, word)
        else innerRest[inner] = innerValue
      }
      if (Object.keys(innerRest).length > 0) rest[key] = innerRest
      continue
    }
    if (value === true) words.push(`--${flagName(key)}`)
    else if (value !== false) {
      const word = flagValue(value)
      if (word === undefined) rest[key] = value
      else words.push(`--${flagName(key)}`, word)
    }
  }
  if (Object.keys(rest).length > 0) words.push("--input-json", shellWord(JSON.stringify(rest)))
  return words.join(" ")
}

/**
 * The operations of a group served on one surface.
 *
 * @since 0.1.0 @category accessors
 */
export const servedOn = <R>(group: Group<R>, surface: keyof Surfaces): ReadonlyArray<AnyOperation<R>> =>
  group.operations.filter((op) => op.surfaces[surface])

// -----------------------------------------------------------------------------
// Execution: what every transport does with a call
// -----------------------------------------------------------------------------

/**
 * A domain refusal, read through the operation's codec.
 *
 * @since 0.1.0 @category errors
 */
/**
 * What {@link execute} provides every operation it runs: the request context and the caller.
 *
 * @since 0.1.0 @category models
 */
export type Provided = RequestContext | Caller

export class Refused extends Data.TaggedError("Refused")<{ readonly described: Refusal.Described }> {}

/** @since 0.1.0 @category models */
export interface Invocation {
  readonly principal: Principal
  readonly entrypoint: "http" | "mcp" | "cli" | "belt"
  readonly requestId: RequestId
  readonly input: unknown
  /** Decode with the canonical input (HTTP) rather than the model-facing one (MCP, CLI). */
  readonly canonical: boolean
}

/**
 * Whether `principal` may call `op`: it holds one of the operation's scopes (any-of) and the declared `authorize`
 * (a role, a person behind the key) admits it. The first check of {@link execute}; transports that show only what a
 * credential can call (the MCP tool list) ask the same question.
 *
 * @since 0.1.0 @category execution
 */
export const permits = (
  op: { readonly scopes: ReadonlyArray<Scope>; readonly authorize?: ((principal: Principal) => Effect.Effect<unknown, Forbidden>) | undefined },
  principal: Principal
): Effect.Effect<void, Forbidden> =>
  Effect.zipRight(requireScope(principal, op.scopes), op.authorize === undefined ? Effect.void : Effect.asVoid(op.authorize(principal)))

/**
 * Runs one call the same way on every transport: scope check (any-of), the declared `authorize` (role,
 * person), the workspace's rate limit, the
 * operation (decode, run, encode) with the request context, and one metered unit on success. A failure
 * the operation's codec does not recognise is a defect; a database outage is the codec's outage refusal
 * when it declares one.
 *
 * @since 0.1.0 @category execution
 */
export const execute = <R>(
  op: AnyOperation<R>,
  invocation: Invocation
): Effect.Effect<unknown, Forbidden | RateLimited | CreditsExhausted | Refused, Exclude<R, Provided> | Meter | RateLimiter> =>
  Effect.gen(function*() {
    const { principal } = invocation
    yield* permits(op, principal)
    const limiter = yield* RateLimiter
    yield* limiter.consume(principal.workspace.id)
    const meter = yield* Meter
    // Admitted on a read of the balance and debited only once it succeeded: a refusal, a defect or an
    // interruption writes nothing to the credit ledger; a crash or a race for the last credits may under-charge,
    // never over-charge (decision 0078). A test workspace spends nothing.
    const metered = op.metered && !principal.workspace.isTest
    const bill = { workspaceId: principal.workspace.id, operation: op.name, requestId: invocation.requestId, credits: 1 }
    if (metered) yield* meter.admit(bill)
    const run = invocation.canonical ? op.runCanonical : op.runModel
    const output = yield* run(invocation.input).pipe(
      Effect.catchAll((failure) => {
        const described = op.refusals.describe(failure)
        return described === undefined ? Effect.die(failure) : Effect.fail(new Refused({ described }))
      }),
      // An unreachable store is the domain's retryable refusal, not an internal error.
      Effect.catchSomeDefect((defect) => {
        if (!isOutage(defect)) return Option.none()
        const described = op.refusals.describeOutage(String(defect))
        return described === undefined
          ? Option.none()
          : Option.some(Effect.zipRight(Effect.logWarning("store outage", defect), Effect.fail(new Refused({ described }))))
      }),
      Effect.provide(
        Context.make(RequestContext, { requestId: invocation.requestId, entrypoint: invocation.entrypoint }).pipe(
          Context.add(Caller, principal)
        )
      )
    )
    // Served: the debit is not given up to an interruption that arrives now.
    if (metered) yield* Effect.uninterruptible(meter.settle(bill))
    // A change this node has committed (a key revoked, a member removed) is seen by its very next request, before
    // the credential tables' notification of it comes back (decision 0079).
    if (!op.annotations.readOnly) yield* CredentialCache.signalChanged(op.name)
    return output
  }).pipe(
    Effect.annotateLogs({ operation: op.name, requestId: invocation.requestId }),
    Effect.withSpan(`Operation.${op.name}`, {
      captureStackTrace: false,
      attributes: { operation: op.name, entrypoint: invocation.entrypoint, "request.id": invocation.requestId }
    })
  )
