/**
 * Refusal codecs: how a domain's expected failures cross every wire. A domain declares one codec: the tag
 * of its refusal class, a table from each semantic code to its HTTP status, retryability and recovery
 * action, the block every surface attaches (`market_data`, `door`, `topics`...), and how a structural
 * validation failure becomes one of its refusals. Transports read only this value; they never import a
 * domain's error class.
 *
 * `MarketError`'s `codeRules` was the model: one row per code, exactly one recovery action each.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as EffectRecord from "effect/Record"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as Text from "./Text.js"

/**
 * HTTP statuses a refusal may carry. 401, 403 and the workspace 404 are the platform's, not a domain's.
 *
 * @since 0.1.0 @category models
 */
export type RefusalStatus = 400 | 402 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 503 | 504

/**
 * One row of a codec's table.
 *
 * @since 0.1.0 @category models
 */
export interface RefusalRule {
  readonly status: RefusalStatus
  readonly retryable: boolean
  /** The recovery action, from the domain's closed vocabulary. */
  readonly action: string
  /** One line for OpenAPI and capabilities: when the code fires. */
  readonly description: string
}

/**
 * A structural validation failure, before it becomes a domain refusal.
 *
 * @since 0.1.0 @category models
 */
export interface InvalidInput {
  /** Dotted path of the field at fault, when there is one. */
  readonly field?: string | undefined
  readonly why: string
  readonly suggestedCorrection: string
  /** The closed set of values (or accepted property names) at that position, when known. */
  readonly allowedValues?: ReadonlyArray<string> | undefined
  /** The inclusive numeric range at that position, when the schema declares one. */
  readonly allowedRange?: AllowedRange | undefined
}

/**
 * An inclusive numeric range a value missed.
 *
 * @since 0.1.0 @category models
 */
export const AllowedRange = Schema.Struct({
  minimum: Schema.optional(Schema.Number),
  maximum: Schema.optional(Schema.Number)
}).annotations({ identifier: "AllowedRange", description: "The inclusive range the value must fall in." })
/** @since 0.1.0 @category models */
export type AllowedRange = typeof AllowedRange.Type

/**
 * The platform code every domain refusal carries beside its block.
 *
 * @since 0.1.0 @category constants
 */
export const platformCode = "VALIDATION_FAILED" as const

/**
 * What a transport knows about a refusal once the codec has read it.
 *
 * @since 0.1.0 @category models
 */
export interface Described {
  readonly code: string
  readonly status: RefusalStatus
  readonly retryable: boolean
  readonly action: string
  readonly message: string
  /** The wire block, encoded (plain JSON). */
  readonly block: Readonly<Record<string, unknown>>
}

/**
 * What a domain writes to declare its codec.
 *
 * @since 0.1.0 @category models
 */
export interface CodecSpec<E extends { readonly _tag: string }, Code extends string> {
  /** The body field carrying the block, e.g. `market_data`. */
  readonly key: string
  /** A short name for OpenAPI identifiers, e.g. `MarketData`. */
  readonly identifier: string
  /** The `_tag` of `E`. */
  readonly tag: E["_tag"]
  readonly is: (u: unknown) => u is E
  readonly rules: { readonly [K in Code]: RefusalRule }
  readonly code: (refusal: E) => Code
  /** The human message, repeated as the platform `message`. */
  readonly message: (refusal: E) => string
  /** The wire block, encoded (plain JSON). */
  readonly toBlock: (refusal: E) => Readonly<Record<string, unknown>>
  /** The block's schema, for OpenAPI and typed clients. */
  readonly block: Schema.Schema.AnyNoContext
  /** The refusal for a structural validation failure. */
  readonly invalidInput: (input: InvalidInput) => E
  /** The code `invalidInput` produces, so its status is known without building one. */
  readonly invalidInputCode: NoInfer<Code>
  /** A representative refusal for each code: what conformance tests send through every transport. */
  readonly sample: (code: Code) => E
  /** The block field naming the code (`semantic_code`), so a wire block can be read back. */
  readonly codeField: string
  /**
   * The refusal for an outage of the domain's store (unreachable, connection lost): the kernel gives it,
   * retryable, instead of an internal error. Without it an outage stays a defect.
   */
  readonly outage?: ((cause: string) => E) | undefined
}

/**
 * A codec whose types are erased: everything a transport needs.
 *
 * @since 0.1.0 @category models
 */
export interface AnyRefusalCodec {
  readonly key: string
  readonly identifier: string
  readonly tag: string
  readonly codeField: string
  readonly rules: { readonly [code: string]: RefusalRule | undefined }
  readonly block: Schema.Schema.AnyNoContext
  readonly invalidInputCode: string
  /** Reads a failure: `undefined` when it is not this codec's refusal. */
  readonly describe: (failure: unknown) => Described | undefined
  /** The described structural refusal for a validation failure. */
  readonly describeInvalidInput: (input: InvalidInput) => Described
  /** A representative refusal for `code` (undefined for a code the codec does not know). */
  readonly sampleOf: (code: string) => unknown
  /** The described outage refusal, when the codec declares one. */
  readonly describeOutage: (cause: string) => Described | undefined
}

/**
 * A domain's refusal codec. `E` is the domain's refusal class (a `Schema.TaggedError`), `Code` its closed
 * vocabulary of semantic codes.
 *
 * @since 0.1.0 @category models
 */
export interface RefusalCodec<E extends { readonly _tag: string }, Code extends string> extends CodecSpec<E, Code> {
  readonly describe: (failure: unknown) => Described | undefined
  readonly describeInvalidInput: (input: InvalidInput) => Described
  readonly sampleOf: (code: string) => E | undefined
  readonly describeOutage: (cause: string) => Described | undefined
}

/**
 * Declares a codec.
 *
 * @since 0.1.0 @category constructors
 */
export const makeCodec = <E extends { readonly _tag: string }, const Code extends string>(
  spec: CodecSpec<E, Code>
): RefusalCodec<E, Code> => {
  const describe = (failure: unknown): Described | undefined => {
    if (!spec.is(failure)) return undefined
    const code = spec.code(failure)
    const rule: RefusalRule = spec.rules[code]
    return {
      code,
      status: rule.status,
      retryable: rule.retryable,
      action: rule.action,
      message: spec.message(failure),
      block: spec.toBlock(failure)
    }
  }
  const codes: ReadonlyArray<string> = Object.keys(spec.rules)
  const isCode = (code: string): code is Code => codes.includes(code)
  return {
    ...spec,
    describe,
    sampleOf: (code) => (isCode(code) ? spec.sample(code) : undefined),
    describeOutage: (cause) => (spec.outage === undefined ? undefined : describe(spec.outage(cause))),
    describeInvalidInput: (input) => {
      const described = describe(spec.invalidInput(input))
      if (described === undefined) throw new Error(`Codec ${spec.identifier}: invalidInput built a foreign value.`)
      return described
    }
  }
}

/**
 * The fields of a standard refusal: a code, why, how to correct it, and where the fault is.
 *
 * @since 0.1.0 @category models
 */
export interface Standard<Code extends string> {
  readonly code: Code
  readonly why: string
  readonly suggestedCorrection: string
  readonly field?: string | undefined
  readonly allowedValues?: ReadonlyArray<string> | undefined
  readonly allowedRange?: AllowedRange | undefined
}

/**
 * The schema fields of {@link Standard}, with the domain's code schema.
 *
 * @since 0.1.0 @category models
 */
export type StandardFields<C extends Schema.Schema.AnyNoContext> = {
  readonly code: C
  readonly why: typeof Schema.String
  readonly suggestedCorrection: typeof Schema.String
  readonly field: Schema.optional<typeof Schema.String>
  readonly allowedValues: Schema.optional<Schema.Array$<typeof Schema.String>>
  readonly allowedRange: Schema.optional<typeof AllowedRange>
}

/**
 * The fields of a domain's refusal error class built on {@link Standard}:
 * `Schema.TaggedError<X>(...)("X", { ...Refusal.standardFields(Codes) })`.
 *
 * @since 0.1.0 @category models
 */
export const standardFields = <C extends Schema.Schema.AnyNoContext>(code: C): StandardFields<C> => ({
  code,
  why: Schema.String,
  suggestedCorrection: Schema.String,
  field: Schema.optional(Schema.String),
  allowedValues: Schema.optional(Schema.Array(Schema.String)),
  allowedRange: Schema.optional(AllowedRange)
})

/**
 * A codec for a refusal built on {@link Standard}: the wire block (`code`, `why`, `suggested_correction`,
 * `retryable`, `recovery.action`, and the fault's `field`, `allowed_values`, `allowed_range`), the structural,
 * sample and outage refusals, all from the rules. `list` carries one more list of texts a domain's refusal may
 * hold (a mapping's problems, an edit's conflicting fields) under its wire name.
 *
 * @since 0.1.0 @category constructors
 */
export const makeStandardCodec = <E extends { readonly _tag: string } & Standard<Code>, const Code extends string, Action extends string>(
  spec: {
    readonly key: string
    readonly identifier: string
    readonly tag: E["_tag"]
    readonly is: (u: unknown) => u is E
    readonly codes: Schema.Schema<Code>
    readonly actions: Schema.Schema<Action>
    readonly rules: { readonly [K in Code]: RefusalRule & { readonly action: Action } }
    /** Builds the domain's refusal from standard fields (structural, sample and outage refusals). */
    readonly make: (fields: Standard<Code>) => E
    readonly invalidInputCode: NoInfer<Code>
    /** The refusal of a store outage, when the domain gives one. */
    readonly outage?: { readonly code: NoInfer<Code>; readonly why: string; readonly suggestedCorrection: string } | undefined
    readonly list?: { readonly wire: string; readonly read: (refusal: E) => ReadonlyArray<string> | undefined } | undefined
    readonly blockDescription?: string | undefined
  }
): RefusalCodec<E, Code> => {
  const fields = {
    code: spec.codes,
    why: Schema.String,
    suggested_correction: Schema.String,
    retryable: Schema.Boolean,
    recovery: Schema.Struct({ action: spec.actions }),
    field: Schema.optional(Schema.String),
    allowed_values: Schema.optional(Schema.Array(Schema.String)),
    allowed_range: Schema.optional(AllowedRange)
  }
  const annotations = {
    identifier: `${spec.identifier}Block`,
    description: spec.blockDescription ?? "What was refused, why, and what to do next."
  }
  const block: Schema.Schema.AnyNoContext = spec.list === undefined
    ? Schema.Struct(fields).annotations(annotations)
    : Schema.Struct({ ...fields, [spec.list.wire]: Schema.optional(Schema.Array(Schema.String)) }).annotations(annotations)
  const { list, outage, rules } = spec
  return makeCodec({
    key: spec.key,
    identifier: spec.identifier,
    tag: spec.tag,
    is: spec.is,
    rules,
    code: (refusal) => refusal.code,
    message: (refusal) => refusal.why,
    toBlock: (refusal) => {
      const listed = list?.read(refusal)
      return {
        code: refusal.code,
        why: refusal.why,
        suggested_correction: refusal.suggestedCorrection,
        retryable: rules[refusal.code].retryable,
        recovery: { action: rules[refusal.code].action },
        ...(refusal.field === undefined ? {} : { field: refusal.field }),
        ...(refusal.allowedValues === undefined ? {} : { allowed_values: refusal.allowedValues }),
        ...(refusal.allowedRange === undefined ? {} : { allowed_range: refusal.allowedRange }),
        ...(list === undefined || listed === undefined ? {} : { [list.wire]: listed })
      }
    },
    block,
    invalidInput: (input) =>
      spec.make({
        code: spec.invalidInputCode,
        why: input.why,
        suggestedCorrection: input.suggestedCorrection,
        ...(input.field === undefined ? {} : { field: input.field }),
        ...(input.allowedValues === undefined ? {} : { allowedValues: input.allowedValues }),
        ...(input.allowedRange === undefined ? {} : { allowedRange: input.allowedRange })
      }),
    invalidInputCode: spec.invalidInputCode,
    codeField: "code",
    outage: outage === undefined ? undefined : () => spec.make(outage),
    sample: (code) => spec.make({ code, why: `Sample ${code} refusal.`, suggestedCorrection: "Follow the recovery action." })
  })
}

/**
 * The code of the structural refusal every domain shares: a field missing, unknown, malformed or out of range.
 *
 * @since 0.1.0 @category constants
 */
export const invalidFieldValue = "invalid_field_value" as const

/** The recovery of {@link invalidFieldValue}: correct the named field. @since 0.1.0 @category constants */
export const fixArguments = "fix_arguments" as const

/** The recovery of an outage refusal. @since 0.1.0 @category constants */
export const retryLater = "retry_later" as const

const keysOf = <K extends string>(record: { readonly [P in K]: unknown }): ReadonlyArray<K> =>
  Object.keys(record).filter((key): key is K => Object.hasOwn(record, key))

/**
 * What a domain writes to define its refusals with {@link define}: its own codes only. The structural
 * `invalid_field_value` (400, `fix_arguments`) and the store outage (503, retryable, `retry_later`) are the
 * kernel's, added to every domain's table.
 *
 * @since 0.1.0 @category models
 */
export interface Definition<Code extends string, Action extends string, OutageCode extends string> {
  /** The body field carrying the block, e.g. `topics`. */
  readonly key: string
  /** A short name for OpenAPI identifiers, e.g. `Topics`. */
  readonly identifier: string
  /** One row per code of the domain's own (the shared two are added). */
  readonly rules: { readonly [K in Code]: RefusalRule & { readonly action: Action } }
  /**
   * The outage refusal's code (`topics_unavailable`) and the store it names (`the topics store`); `description`
   * and `suggestedCorrection` replace the texts made from the store's name.
   */
  readonly outage: {
    readonly code: OutageCode
    readonly store: string
    readonly description?: string | undefined
    readonly suggestedCorrection?: string | undefined
  }
  /** What the structural refusal's row says (default: a field is missing, unknown or out of range). */
  readonly invalidInputDescription?: string | undefined
  readonly blockDescription?: string | undefined
}

/**
 * The extra fields a refusal may carry beyond the code and its texts: where the fault is, and the domain's list
 * of texts when it has one.
 *
 * @since 0.1.0 @category models
 */
export type Extra<List extends string> =
  & {
    readonly field?: string | undefined
    readonly allowedValues?: ReadonlyArray<string> | undefined
    readonly allowedRange?: AllowedRange | undefined
  }
  & { readonly [K in List]?: ReadonlyArray<string> | undefined }

/**
 * A domain's code table with the shared rows added, the schemas of its codes and actions, and the fields of its
 * error class; {@link Defined.codecFor} then gives the codec and `refuse` for the class.
 *
 * @since 0.1.0 @category models
 */
export interface Defined<Code extends string, Action extends string> {
  readonly codes: Schema.Schema<Code>
  readonly actions: Schema.Schema<Action>
  readonly rules: { readonly [K in Code]: RefusalRule & { readonly action: Action } }
  /** The standard fields of the error class: `Schema.TaggedError<X>(id)(tag, defined.fields)`. */
  readonly fields: StandardFields<Schema.Schema<Code>>
  /**
   * The codec and `refuse` of the domain's error class. `list` names one more list of texts the class carries
   * (a mapping's `problems`) and its wire name (`problems`).
   */
  readonly codecFor: <E extends { readonly _tag: string } & Standard<Code> & { readonly [K in List]?: ReadonlyArray<string> | undefined }, List extends string = never>(
    errorClass: { readonly _tag: E["_tag"]; new(fields: Standard<Code>): E },
    list?: { readonly field: List; readonly wire: string }
  ) => {
    readonly codec: RefusalCodec<E, Code>
    readonly refuse: (code: Code, why: string, suggestedCorrection: string, extra?: Extra<List>) => E
  }
}

/**
 * A domain's refusals from its code table: the codes (its own, `invalid_field_value` and its outage code),
 * their rows, the error class's fields, then the codec and `refuse` for the class. The structural refusal, a
 * sample of each code and the outage refusal all come from the kernel.
 *
 * ```ts
 * const defined = Refusal.define({ key: "topics", identifier: "Topics", rules: { topic_not_found: ... }, outage: ... })
 * export class TopicsRefusal extends Schema.TaggedError<TopicsRefusal>("@service/topics/TopicsRefusal")("TopicsRefusal", defined.fields) {}
 * export const { codec, refuse } = defined.codecFor(TopicsRefusal)
 * ```
 *
 * @since 0.1.0 @category constructors
 */
export const define = <const Code extends string, const Action extends string, const OutageCode extends string>(
  definition: Definition<Code, Action, OutageCode>
): Defined<Code | typeof invalidFieldValue | OutageCode, Action | typeof fixArguments | typeof retryLater> => {
  type AllCode = Code | typeof invalidFieldValue | OutageCode
  type AllAction = Action | typeof fixArguments | typeof retryLater
  const own: ReadonlyArray<Code> = keysOf(definition.rules)
  const codes = Schema.Literal(invalidFieldValue, ...own, definition.outage.code)
  // Each action once: a domain's own code may share the recovery of a kernel one (`retry_later`).
  const ownActions = [...new Set(own.map((code) => definition.rules[code].action))].filter((action) => action !== fixArguments && action !== retryLater)
  const actions = Schema.Literal(fixArguments, ...ownActions, retryLater)
  const rules: { readonly [K in AllCode]: RefusalRule & { readonly action: AllAction } } = {
    ...EffectRecord.singleton(invalidFieldValue, {
      status: 400,
      retryable: false,
      action: fixArguments,
      description: definition.invalidInputDescription ?? "a field is missing, unknown or out of range"
    } as const),
    ...definition.rules,
    ...EffectRecord.singleton(definition.outage.code, {
      status: 503,
      retryable: true,
      action: retryLater,
      description: definition.outage.description ?? `${definition.outage.store} cannot be reached right now`
    } as const)
  }
  const store = definition.outage.store
  return {
    codes,
    actions,
    rules,
    fields: standardFields(codes),
    codecFor: (errorClass, list) => {
      const make = (fields: Standard<AllCode>) => new errorClass(fields)
      const codec = makeStandardCodec({
        key: definition.key,
        identifier: definition.identifier,
        tag: errorClass._tag,
        is: (u: unknown): u is InstanceType<typeof errorClass> => u instanceof errorClass,
        codes,
        actions,
        rules,
        make,
        invalidInputCode: invalidFieldValue,
        outage: {
          code: definition.outage.code,
          why: `${store.charAt(0).toUpperCase()}${store.slice(1)} cannot be reached right now.`,
          suggestedCorrection: definition.outage.suggestedCorrection ?? "Retry in a few seconds; nothing was changed."
        },
        list: list === undefined ? undefined : { wire: list.wire, read: (refusal) => refusal[list.field] },
        blockDescription: definition.blockDescription
      })
      return { codec, refuse: (code, why, suggestedCorrection, extra = {}) => new errorClass({ code, why, suggestedCorrection, ...extra }) }
    }
  }
}

/**
 * The distinct HTTP statuses of a list of codes.
 *
 * @since 0.1.0 @category conversions
 */
export const statusesOf = (codec: AnyRefusalCodec, codes: ReadonlyArray<string>): ReadonlyArray<RefusalStatus> => {
  const out = new Set<RefusalStatus>()
  for (const code of codes) {
    const rule = codec.rules[code]
    if (rule !== undefined) out.add(rule.status)
  }
  return [...out].sort((a, b) => a - b)
}

/**
 * Cuts user input quoted back in a message to a short excerpt, so a refusal never echoes a large or
 * hostile value.
 *
 * @since 0.1.0 @category formatting
 */
export const excerpt = (value: unknown, max = 60): string => {
  let text: string
  if (typeof value === "string") text = value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  // Control characters (NUL included) are shown escaped, never raw.
  // eslint-disable-next-line no-control-regex
  const visible = text.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
  return visible.length <= max ? visible : `${visible.slice(0, max)}… (${text.length} characters)`
}

// -----------------------------------------------------------------------------
// Structural validation, shared by every domain
// -----------------------------------------------------------------------------

const literalsOf = (ast: AST.AST): ReadonlyArray<string> | undefined => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null ? [] : [String(ast.literal)]
    case "Union": {
      const parts = ast.types.filter((member) => !AST.isUndefinedKeyword(member)).map(literalsOf)
      if (parts.length === 0 || parts.some((p) => p === undefined)) return undefined
      return parts.flatMap((p) => p ?? [])
    }
    case "Refinement":
      return literalsOf(ast.from)
    case "Transformation":
      return literalsOf(ast.to)
    case "Suspend":
      return literalsOf(ast.f())
    default:
      return undefined
  }
}

const step = (ast: AST.AST, key: PropertyKey): AST.AST | undefined => {
  switch (ast._tag) {
    case "TypeLiteral": {
      const found = ast.propertySignatures.find((p) => p.name === key)
      if (found !== undefined) return found.type
      return ast.indexSignatures[0]?.type
    }
    case "TupleType":
      return typeof key === "number" ? (ast.elements[key]?.type ?? ast.rest[0]?.type) : undefined
    case "Union": {
      for (const member of ast.types) {
        const next = step(member, key)
        if (next !== undefined) return next
      }
      return undefined
    }
    case "Refinement":
      return step(ast.from, key)
    case "Transformation":
      return step(ast.to, key)
    case "Suspend":
      return step(ast.f(), key)
    default:
      return undefined
  }
}

const at = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): AST.AST | undefined => {
  let current: AST.AST | undefined = ast
  for (const key of path) {
    if (current === undefined) return undefined
    current = step(current, key)
  }
  return current
}

/**
 * The closed set of values allowed at `path` of a schema, if that position is a literal or a union of literals.
 *
 * @since 0.1.0 @category validation
 */
export const allowedValuesAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> | undefined => {
  const found = at(ast, path)
  return found === undefined ? undefined : literalsOf(found)
}

/** The property names of the struct at `path`, for refusing an unknown property with the known ones. */
const propertyNamesAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> | undefined => {
  let current = at(ast, path)
  while (current !== undefined && (current._tag === "Refinement" || current._tag === "Transformation")) {
    current = current._tag === "Refinement" ? current.from : current.to
  }
  return current?._tag === "TypeLiteral" ? current.propertySignatures.map((p) => String(p.name)) : undefined
}

/**
 * The inclusive numeric range declared at `path` (from `Schema.between`, `int`, `positive`... annotations
 * carried as JSON Schema), so an out-of-range value is refused with the range it missed.
 */
const rangeAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): AllowedRange | undefined => {
  let current = at(ast, path)
  // An optional field is a union with undefined: read the one defined member.
  if (current?._tag === "Union") {
    const defined = current.types.filter((member) => !AST.isUndefinedKeyword(member))
    current = defined.length === 1 ? defined[0] : undefined
  }
  let minimum: number | undefined
  let maximum: number | undefined
  while (current !== undefined && current._tag === "Refinement") {
    const json = current.annotations[AST.JSONSchemaAnnotationId]
    if (typeof json === "object" && json !== null) {
      const record: Record<string, unknown> = { ...json }
      if (typeof record["minimum"] === "number") minimum = Math.max(minimum ?? -Infinity, record["minimum"])
      if (typeof record["maximum"] === "number") maximum = Math.min(maximum ?? Infinity, record["maximum"])
      if (typeof record["exclusiveMinimum"] === "number") {
        minimum = Math.max(minimum ?? -Infinity, record["exclusiveMinimum"] + 1)
      }
      if (typeof record["exclusiveMaximum"] === "number") {
        maximum = Math.min(maximum ?? Infinity, record["exclusiveMaximum"] - 1)
      }
    }
    current = current.from
  }
  if (minimum === undefined && maximum === undefined) return undefined
  return { ...(minimum === undefined ? {} : { minimum }), ...(maximum === undefined ? {} : { maximum }) }
}

const rangeText = (range: AllowedRange): string =>
  range.minimum !== undefined && range.maximum !== undefined
    ? `${range.minimum} to ${range.maximum}`
    : range.minimum !== undefined
    ? `at least ${range.minimum}`
    : `at most ${range.maximum ?? ""}`

/** @since 0.1.0 @category validation */
export interface ValidationIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  /** The formatter's issue kind; `Unexpected` marks a property the schema does not know. */
  readonly tag?: string | undefined
}

/**
 * Reads the issues of a parse error.
 *
 * @since 0.1.0 @category validation
 */
export const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<ValidationIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path,
    message: issue.message,
    tag: issue._tag
  }))

/**
 * Describes the first issue of a decode failure against `ast`: field, message, correction, and the closed
 * set or numeric range when the schema declares one.
 *
 * @since 0.1.0 @category validation
 */
export const invalidInputFromIssues = (ast: AST.AST, issues: ReadonlyArray<ValidationIssue>): InvalidInput => {
  const first = issues[0]
  if (first === undefined) {
    return {
      why: "The request does not match the operation's input schema.",
      suggestedCorrection: "Follow the operation's input schema (see capabilities or /openapi.json) and retry."
    }
  }
  const field = first.path.length === 0 ? undefined : first.path.map(String).join(".")
  const unexpected = first.tag === "Unexpected"
  const allowed = unexpected ? propertyNamesAt(ast, first.path.slice(0, -1)) : allowedValuesAt(ast, first.path)
  const range = unexpected || allowed !== undefined ? undefined : rangeAt(ast, first.path)
  // Issue messages quote the actual value; keep only a short excerpt of it.
  const message = excerpt(first.message, 200)
  const why = unexpected
    ? `Field "${field ?? ""}" is not part of this operation's input.`
    : field === undefined
    ? `The request is not valid: ${message}`
    : `Field "${field}" is not valid: ${message}`
  const suggestedCorrection = unexpected && allowed !== undefined
    ? `Remove it; the accepted fields are: ${allowed.join(", ")}.`
    : allowed !== undefined && allowed.length > 0
    ? `Use one of: ${allowed.join(", ")}.`
    : range !== undefined
    ? `Use a value of ${rangeText(range)}.`
    : "Fix the named field following the operation's input schema (see capabilities or /openapi.json) and retry."
  return {
    field,
    why,
    suggestedCorrection,
    allowedValues: allowed,
    allowedRange: range
  }
}

/**
 * Decodes unknown input with a schema, refusing unknown properties, and maps failures to the codec's
 * structural refusal.
 *
 * @since 0.1.0 @category validation
 */
export const decodeWith = <E extends { readonly _tag: string }, Code extends string>(codec: CodecSpec<E, Code>) =>
<A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })
  // An empty struct decodes any object (Effect skips the property check when there are no properties), so an
  // operation that takes no input refuses unknown fields here.
  const takesNothing = isEmptyStruct(schema.ast)
  return (input: unknown): Effect.Effect<A, E> => {
    // What no store can hold (a NUL, a lone surrogate) or no walk should recurse into is refused before decoding.
    const unstorable = Text.inspect(input)
    if (Option.isSome(unstorable)) return Effect.fail(codec.invalidInput(Text.describe(unstorable.value)))
    if (takesNothing && typeof input === "object" && input !== null && !Array.isArray(input)) {
      const first = Object.keys(input)[0]
      if (first !== undefined) {
        return Effect.fail(codec.invalidInput({
          field: excerpt(first),
          why: `Field "${excerpt(first)}" is not part of this operation's input.`,
          suggestedCorrection: "Remove it; this operation takes no input fields.",
          allowedValues: []
        }))
      }
    }
    return decode(input).pipe(
      Effect.mapError((error) => codec.invalidInput(invalidInputFromIssues(schema.ast, issuesOf(error))))
    )
  }
}

const isEmptyStruct = (ast: AST.AST): boolean => {
  let current = ast
  while (current._tag === "Refinement" || current._tag === "Transformation") {
    current = current._tag === "Refinement" ? current.from : current.to
  }
  return current._tag === "TypeLiteral" && current.propertySignatures.length === 0 && current.indexSignatures.length === 0
}
