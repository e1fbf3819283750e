/**
 * How an operation's input is read from a command line, derived from its model-facing input schema and its
 * CLI binding, for any domain:
 *
 * - the field named by `cli.positional` is the positional argument;
 * - every other top-level field is a flag named `Operation.flagName(field)`: text, integer or number,
 *   boolean (present means true), a choice for a union of literals, and a repeatable flag taking
 *   comma-separated values for an array of scalars;
 * - `cli.nested` fields become one flag per inner field (`--compare-from-date` sets `compare_period.from_date`);
 * - fields no flag expresses (objects, arrays of objects) and anything else are set with `--input-json`,
 *   a JSON object merged under the flags.
 *
 * Flags only gather values: every flag is optional at parse time and the whole input is then checked
 * against the schema, so a missing or bad value is refused with the block the server would send. Help text
 * comes from the fields' description annotations.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Operation from "@service/core/Operation"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** @since 0.1.0 @category models */
export type Scalar = "text" | "integer" | "number" | "boolean"

/**
 * What a flag reads. `Choice` maps each shown value to the literal it stands for.
 *
 * @since 0.1.0 @category models
 */
export type Kind =
  | { readonly _tag: "Scalar"; readonly scalar: Scalar }
  | { readonly _tag: "Choice"; readonly choices: ReadonlyArray<readonly [string, AST.LiteralValue]> }
  | {
    readonly _tag: "List"
    readonly element: Scalar
    /** The allowed values of each element, when the element is a union of literals. */
    readonly choices: ReadonlyArray<string> | undefined
  }

/** @since 0.1.0 @category models */
export interface Flag {
  /** Without the leading dashes. */
  readonly name: string
  /** The input field it sets: `[field]`, or `[field, inner]` for a nested flag. */
  readonly path: readonly [string] | readonly [string, string]
  readonly kind: Kind
  readonly description: string | undefined
  /** The schema requires the field (shown in help; still checked by the schema, not the parser). */
  readonly required: boolean
}

/** @since 0.1.0 @category models */
export interface Positional {
  readonly name: string
  readonly field: string
  readonly kind: Kind
  readonly description: string | undefined
  readonly required: boolean
}

/**
 * The command-line shape of one operation's input.
 *
 * @since 0.1.0 @category models
 */
export interface Spec {
  readonly flags: ReadonlyArray<Flag>
  readonly positional: Positional | undefined
  /** Top-level fields no flag expresses: set them with `--input-json`. */
  readonly unflagged: ReadonlyArray<string>
  /** The input pages (see `pagedBy`): the command takes `--all`. */
  readonly paged: boolean
  /**
   * How: a `cursor` text field (the previous page's next cursor), else an `offset` number field (the rows already
   * read, while the output says `has_more`).
   */
  readonly pagedBy: "cursor" | "offset" | undefined
}

/**
 * What an operation command takes besides its input's flags: `--follow` when its operation declares it,
 * `--all` when its input pages.
 *
 * @since 0.1.0 @category models
 */
export interface Extras {
  readonly follow: boolean
  readonly paged: boolean
}

/**
 * The output formats of `--format`.
 *
 * @since 0.1.0 @category models
 */
export const formats = ["text", "json", "csv"] as const

/** @since 0.1.0 @category models */
export type OutputFormat = (typeof formats)[number]

/**
 * The command's own flags (not from its input), with whether each reads a value.
 *
 * @since 0.1.0 @category options
 */
export const commandFlags = (extras: Extras): ReadonlyArray<{ readonly name: string; readonly takesValue: boolean }> => [
  { name: "json", takesValue: false },
  { name: "input-json", takesValue: true },
  { name: "format", takesValue: true },
  { name: "help", takesValue: false },
  ...(extras.follow ? [{ name: "follow", takesValue: false }] : []),
  ...(extras.paged ? [{ name: "all", takesValue: false }] : [])
]

/**
 * Flag names an input field may not take: the command's own flags and @effect/cli's built-ins.
 *
 * @since 0.1.0 @category constants
 */
export const reserved: ReadonlyArray<string> = ["json", "input-json", "follow", "all", "format", "help", "h", "version", "wizard", "completions", "log-level"]

// -----------------------------------------------------------------------------
// Reading the schema
// -----------------------------------------------------------------------------

/** The type of an optional field without its `undefined` member. */
const defined = (ast: AST.AST): AST.AST => {
  if (ast._tag !== "Union") return ast
  const members = ast.types.filter((member) => !AST.isUndefinedKeyword(member))
  const [only] = members
  return members.length === 1 && only !== undefined ? only : AST.Union.make(members, ast.annotations)
}

/** The property signatures of a struct-like schema (type side, where the descriptions are). */
const propertiesOf = (ast: AST.AST): ReadonlyArray<AST.PropertySignature> | undefined => {
  switch (ast._tag) {
    case "TypeLiteral":
      return ast.propertySignatures
    case "Refinement":
      return propertiesOf(ast.from)
    case "Transformation":
      return propertiesOf(ast.to._tag === "TypeLiteral" ? ast.to : ast.from)
    case "Suspend":
      return propertiesOf(ast.f())
    default:
      return undefined
  }
}

/**
 * Whether the input must carry `field`: read on the encoded side, what a caller sends. The type side of a field
 * with a default (`Schema.optionalWith(..., { default })`) is required, though a caller may leave it out.
 */
const requiredOnWire = (ast: AST.AST, field: string): boolean => {
  const property = (propertiesOf(AST.encodedAST(ast)) ?? []).find((p) => String(p.name) === field)
  return property !== undefined && !property.isOptional
}

const literalsOf = (ast: AST.AST): ReadonlyArray<AST.LiteralValue> | undefined => {
  if (ast._tag === "Literal") return ast.literal === null ? undefined : [ast.literal]
  if (ast._tag !== "Union") return undefined
  const out: Array<AST.LiteralValue> = []
  for (const member of ast.types) {
    if (member._tag !== "Literal" || member.literal === null) return undefined
    out.push(member.literal)
  }
  return out
}

/** An integer when a refinement on the type side declares JSON Schema type `integer` (`Schema.Int`). */
const isInteger = (ast: AST.AST): boolean => {
  let current: AST.AST = ast
  while (current._tag === "Refinement") {
    const json = current.annotations[AST.JSONSchemaAnnotationId]
    if (Predicate.isRecord(json) && json["type"] === "integer") return true
    current = current.from
  }
  return false
}

/** A scalar read from the encoded side (what travels), made an integer by the type side. */
const scalarOf = (type: AST.AST): Scalar | undefined => {
  const encoded = AST.encodedAST(type)
  switch (encoded._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "text"
    case "NumberKeyword":
      return isInteger(type) ? "integer" : "number"
    case "BooleanKeyword":
      return "boolean"
    default:
      return undefined
  }
}

const withoutRefinements = (ast: AST.AST): AST.AST => (ast._tag === "Refinement" ? withoutRefinements(ast.from) : ast)

/** A nullable field's type without its `null` member: a flag sets a value; `null` goes in `--input-json`. */
const nonNull = (ast: AST.AST): AST.AST => {
  if (ast._tag !== "Union") return ast
  const members = ast.types.filter((member) => !(member._tag === "Literal" && member.literal === null))
  const [only] = members
  return members.length === ast.types.length ? ast : members.length === 1 && only !== undefined ? only : AST.Union.make(members, ast.annotations)
}

const kindOf = (fieldType: AST.AST): Kind | undefined => {
  const type = nonNull(defined(fieldType))
  const literals = literalsOf(AST.encodedAST(type))
  if (literals !== undefined && literals.length > 0) {
    return { _tag: "Choice", choices: literals.map((literal) => [String(literal), literal] as const) }
  }
  const scalar = scalarOf(type)
  if (scalar !== undefined) return { _tag: "Scalar", scalar }
  const tuple = withoutRefinements(type)
  // An array, or a non-empty array (its first element's type is the rest's: `Schema.NonEmptyArray`).
  if (tuple._tag === "TupleType" && tuple.rest.length === 1 && tuple.elements.every((e) => !e.isOptional && e.type === tuple.rest[0]?.type)) {
    const element = tuple.rest[0]?.type
    if (element === undefined) return undefined
    const elementLiterals = literalsOf(AST.encodedAST(element))
    if (elementLiterals !== undefined && elementLiterals.every(Predicate.isString)) {
      return { _tag: "List", element: "text", choices: elementLiterals }
    }
    const elementScalar = scalarOf(element)
    return elementScalar === undefined ? undefined : { _tag: "List", element: elementScalar, choices: undefined }
  }
  return undefined
}

const descriptionOf = (property: AST.PropertySignature): string | undefined =>
  Option.getOrUndefined(
    AST.getDescriptionAnnotation(property).pipe(
      Option.orElse(() => AST.getDescriptionAnnotation(property.type)),
      Option.orElse(() => AST.getDescriptionAnnotation(defined(property.type)))
    )
  )

/**
 * The command-line shape of an operation's model-facing input. Fails with a reason when the binding names a
 * field the schema does not have or a field's flag would take a reserved or already used name.
 *
 * @since 0.1.0 @category constructors
 */
export const spec = (
  op: { readonly name: string; readonly modelInput: Schema.Schema.AnyNoContext; readonly cli: Operation.CliBinding }
): Either.Either<Spec, string> => {
  const properties = propertiesOf(op.modelInput.ast) ?? []
  const flags: Array<Flag> = []
  const unflagged: Array<string> = []
  let positional: Positional | undefined
  for (const property of properties) {
    const field = String(property.name)
    const description = descriptionOf(property)
    const required = requiredOnWire(op.modelInput.ast, field)
    if (field === op.cli.positional) {
      const kind = kindOf(property.type)
      if (kind === undefined || kind._tag === "List") {
        return Either.left(`${op.name}: the positional field ${field} is not a scalar`)
      }
      positional = { name: Operation.flagName(field), field, kind, description, required }
      continue
    }
    const nested = op.cli.nested?.[field]
    if (nested !== undefined) {
      const inner = propertiesOf(defined(property.type)) ?? []
      for (const [innerField, name] of Object.entries(nested)) {
        const innerProperty = inner.find((p) => p.name === innerField)
        const kind = innerProperty === undefined ? undefined : kindOf(innerProperty.type)
        if (innerProperty === undefined || kind === undefined) {
          return Either.left(`${op.name}: the nested flag --${name} names no scalar field ${field}.${innerField}`)
        }
        flags.push({
          name,
          path: [field, innerField],
          kind,
          description: descriptionOf(innerProperty) ?? description,
          required: required && requiredOnWire(defined(property.type), innerField)
        })
      }
      continue
    }
    const kind = kindOf(property.type)
    if (kind === undefined) {
      unflagged.push(field)
      continue
    }
    flags.push({ name: Operation.flagName(field), path: [field], kind, description, required })
  }
  if (op.cli.positional !== undefined && positional === undefined) {
    return Either.left(`${op.name}: the positional field ${op.cli.positional} is not in the input schema`)
  }
  const seen = new Set<string>()
  for (const flag of flags) {
    if (reserved.includes(flag.name) || seen.has(flag.name)) {
      return Either.left(`${op.name}: the flag --${flag.name} of ${flag.path.join(".")} is reserved or used twice`)
    }
    seen.add(flag.name)
  }
  const cursor = properties.find((p) => String(p.name) === "cursor")
  const cursorKind = cursor === undefined ? undefined : kindOf(cursor.type)
  const offset = properties.find((p) => String(p.name) === "offset")
  const offsetKind = offset === undefined ? undefined : kindOf(offset.type)
  const pagedBy = cursorKind?._tag === "Scalar" && cursorKind.scalar === "text"
    ? "cursor"
    : offsetKind?._tag === "Scalar" && (offsetKind.scalar === "integer" || offsetKind.scalar === "number")
    ? "offset"
    : undefined
  return Either.right({ flags, positional, unflagged, paged: pagedBy !== undefined, pagedBy })
}

/**
 * A positional argument of an operator command: a scalar or a choice, or a list (the last one only: `<files...>`).
 *
 * @since 0.1.0 @category models
 */
export interface OperatorPositional extends Positional {
  readonly list: boolean
}

/**
 * The command-line shape of an operator command's input: `positional` fields (in order; the last may be a list)
 * become arguments, every other scalar, choice or list field a flag as for an operation.
 *
 * @since 0.1.0 @category constructors
 */
export const operatorSpec = (
  name: string,
  schema: Schema.Schema.AnyNoContext,
  positional: ReadonlyArray<string>
): Either.Either<{ readonly flags: ReadonlyArray<Flag>; readonly positionals: ReadonlyArray<OperatorPositional> }, string> => {
  const properties = propertiesOf(schema.ast) ?? []
  const positionals: Array<OperatorPositional> = []
  for (const [index, field] of positional.entries()) {
    const property = properties.find((p) => String(p.name) === field)
    const kind = property === undefined ? undefined : kindOf(property.type)
    if (property === undefined || kind === undefined) return Either.left(`${name}: the positional field ${field} is not a scalar or list field`)
    if (kind._tag === "List" && index !== positional.length - 1) return Either.left(`${name}: only the last positional field may be a list`)
    positionals.push({
      name: Operation.flagName(field),
      field,
      kind,
      description: descriptionOf(property),
      required: requiredOnWire(schema.ast, field),
      list: kind._tag === "List"
    })
  }
  const flags: Array<Flag> = []
  for (const property of properties) {
    const field = String(property.name)
    if (positional.includes(field)) continue
    const kind = kindOf(property.type)
    if (kind === undefined) return Either.left(`${name}: the field ${field} has no flag form`)
    const flag: Flag = { name: Operation.flagName(field), path: [field], kind, description: descriptionOf(property), required: requiredOnWire(schema.ast, field) }
    if (reserved.includes(flag.name)) return Either.left(`${name}: the flag --${flag.name} is reserved`)
    flags.push(flag)
  }
  return Either.right({ flags, positionals })
}

// -----------------------------------------------------------------------------
// Parsing
// -----------------------------------------------------------------------------

/**
 * What the command line gave, before it becomes an input object.
 *
 * @since 0.1.0 @category models
 */
export interface Values {
  /** One entry per flag of the spec, in order. */
  readonly flags: ReadonlyArray<Option.Option<unknown>>
  readonly positional: Option.Option<unknown>
  readonly inputJson: Option.Option<string>
  readonly json: boolean
  /** `--follow`, on commands whose operation declares it. */
  readonly follow: boolean
  /** `--all`, on commands whose input pages. */
  readonly all: boolean
  /** `--format`; `--json` is `json`. */
  readonly format: Option.Option<OutputFormat>
}

/**
 * Array flags repeat or take comma-separated values: `--x a --x b,c` is `["a", "b", "c"]`.
 *
 * @since 0.1.0 @category parsing
 */
export const splitList = (values: ReadonlyArray<string>): Array<string> =>
  values.flatMap((value) => value.split(",")).map((value) => value.trim()).filter((value) => value.length > 0)

/** A list element as the schema expects it; a value that does not parse stays text for the schema to refuse. */
const element = (scalar: Scalar) => (raw: string): unknown => {
  switch (scalar) {
    case "text":
      return raw
    case "integer":
    case "number": {
      const n = Number(raw)
      return raw.trim() !== "" && Number.isFinite(n) ? n : raw
    }
    case "boolean":
      return raw === "true" ? true : raw === "false" ? false : raw
  }
}

/**
 * Reads a number, saying in English what is wrong with a value that is not one (@effect/cli's own message is
 * "'abc' is not a integer").
 *
 * @since 0.1.0 @category options
 */
export const numberOption = (name: string, scalar: "integer" | "number"): Options.Options<number> =>
  Options.text(name).pipe(
    Options.mapEffect((raw) => {
      const n = Number(raw)
      const ok = raw.trim() !== "" && (scalar === "integer" ? Number.isInteger(n) : Number.isFinite(n))
      return ok ? Effect.succeed(n) : Effect.fail(ValidationError.invalidValue(HelpDoc.p(
        scalar === "integer" ? `'${raw}' is not an integer (--${name} takes a whole number).` : `'${raw}' is not a number (--${name} takes a number).`
      )))
    })
  )

const described = <A>(description: string | undefined) => (options: Options.Options<A>): Options.Options<A> =>
  description === undefined ? options : Options.withDescription(options, description)

const scalarOption = (flag: Flag, scalar: Scalar): Options.Options<Option.Option<unknown>> => {
  switch (scalar) {
    case "text":
      return Options.text(flag.name).pipe(described(flag.description), Options.optional)
    case "integer":
    case "number":
      return numberOption(flag.name, scalar).pipe(described(flag.description), Options.optional)
    case "boolean":
      // Present means true; absent leaves the field out (the schema's default applies).
      return Options.boolean(flag.name).pipe(
        described(flag.description),
        Options.map((on): Option.Option<unknown> => (on ? Option.some(true) : Option.none()))
      )
  }
}

/**
 * The option of one flag: every flag is optional to the parser (the schema decides).
 *
 * @since 0.1.0 @category options
 */
export const flagOption = (flag: Flag): Options.Options<Option.Option<unknown>> => {
  const kind = flag.kind
  switch (kind._tag) {
    case "Scalar":
      return scalarOption(flag, kind.scalar)
    case "Choice":
      return Options.choiceWithValue(flag.name, kind.choices.map(([shown, value]): [string, unknown] => [shown, value])).pipe(
        described(flag.description),
        Options.optional
      )
    case "List":
      return Options.text(flag.name).pipe(
        described(flag.description),
        Options.repeated,
        Options.map((raw): Option.Option<unknown> => {
          const items = splitList(raw).map(element(kind.element))
          return items.length === 0 ? Option.none() : Option.some(items)
        })
      )
  }
}

/**
 * The `--json` flag every operation command has.
 *
 * @since 0.1.0 @category options
 */
export const jsonOption = Options.boolean("json").pipe(
  Options.withDescription("Print the wire output as JSON (failures as the wire error body, on stderr) instead of a summary.")
)

/**
 * The `--input-json` flag every operation command has.
 *
 * @since 0.1.0 @category options
 */
export const inputJsonOption = Options.text("input-json").pipe(
  Options.withDescription(
    "Input fields as one JSON object, for fields no flag expresses; the flags and the positional argument win over it."
  ),
  Options.optional
)

/**
 * The `--follow` flag of commands whose operation declares `cli.follow`.
 *
 * @since 0.1.0 @category options
 */
export const followOption = Options.boolean("follow").pipe(
  Options.withDescription("Keep reading: print each new item as it appears, oldest first, until interrupted (Ctrl-C).")
)

/**
 * The `--all` flag of commands whose input pages.
 *
 * @since 0.1.0 @category options
 */
export const allOption = Options.boolean("all").pipe(
  Options.withDescription("Read every page (following the next cursor, or the offset while has_more) and print rows as they come (progress on stderr).")
)

/**
 * The `--format` flag every operation command has.
 *
 * @since 0.1.0 @category options
 */
export const formatOption = Options.choice("format", formats).pipe(
  Options.withDescription("text (a summary; the default), json (the wire output, as --json) or csv (the rows of the table)."),
  Options.optional
)

/**
 * The options of an operation command; `extras` adds `--follow` and `--all`.
 *
 * @since 0.1.0 @category options
 */
export const options = (spec: Spec, extras: Extras = { follow: false, paged: false }): Options.Options<Omit<Values, "positional">> =>
  Options.all({
    flags: Options.all(spec.flags.map(flagOption)),
    inputJson: inputJsonOption,
    json: jsonOption,
    format: formatOption,
    follow: extras.follow ? followOption : Options.none.pipe(Options.map(() => false)),
    all: extras.paged ? allOption : Options.none.pipe(Options.map(() => false))
  })

/**
 * The positional argument of an operation command (none gives `Option.none()`).
 *
 * @since 0.1.0 @category options
 */
export const args = (spec: Spec): Args.Args<Option.Option<unknown>> => {
  const positional = spec.positional
  if (positional === undefined) return Args.none.pipe(Args.map((): Option.Option<unknown> => Option.none()))
  // Optional to the parser even when the schema requires it: it may come in --input-json, and a missing
  // value is refused by the schema like any other field.
  return Args.optional(argOf(positional))
}

/**
 * One positional argument as the parser reads it: a choice, an integer, a number or text, with its help. A list
 * reads one element; the caller repeats it.
 *
 * @since 0.1.0 @category options
 */
export const argOf = (positional: Positional): Args.Args<unknown> => {
  const config = { name: positional.name }
  const kind = positional.kind
  const base: Args.Args<unknown> = kind._tag === "Choice"
    ? Args.choice(kind.choices.map(([shown, value]): [string, unknown] => [shown, value]), config)
    : kind._tag === "Scalar" && (kind.scalar === "integer" || kind.scalar === "number")
    ? numberArg(positional.name, kind.scalar)
    : Args.text(config)
  return positional.description === undefined ? base : Args.withDescription(base, positional.description)
}

const numberArg = (name: string, scalar: "integer" | "number"): Args.Args<number> =>
  Args.text({ name }).pipe(
    Args.mapEffect((raw) => {
      const n = Number(raw)
      const ok = raw.trim() !== "" && (scalar === "integer" ? Number.isInteger(n) : Number.isFinite(n))
      return ok ? Effect.succeed(n) : Effect.fail(HelpDoc.p(
        `'${raw}' is not ${scalar === "integer" ? "an integer" : "a number"} (<${name}> takes ${scalar === "integer" ? "a whole number" : "a number"}).`
      ))
    })
  )

const setPath = (target: Record<string, unknown>, path: Flag["path"], value: unknown): void => {
  const [outer, inner] = path
  if (inner === undefined) {
    target[outer] = value
    return
  }
  const current = target[outer]
  target[outer] = { ...(Predicate.isRecord(current) ? current : {}), [inner]: value }
}

/**
 * The input object of a command line: `--input-json` first, then the flags and the positional argument over
 * it. Fails with a reason when `--input-json` is not a JSON object.
 *
 * @since 0.1.0 @category parsing
 */
export const assemble = (spec: Spec, values: Values): Either.Either<Record<string, unknown>, string> => {
  let base: Record<string, unknown> = {}
  if (Option.isSome(values.inputJson)) {
    const text = values.inputJson.value
    const parsed = Either.try((): unknown => JSON.parse(text))
    if (Either.isLeft(parsed) || !Predicate.isRecord(parsed.right) || Array.isArray(parsed.right)) {
      return Either.left("--input-json must be one JSON object, e.g. --input-json '{\"field\": \"value\"}'.")
    }
    base = { ...parsed.right }
  }
  spec.flags.forEach((flag, i) => {
    const value = values.flags[i]
    if (value !== undefined && Option.isSome(value)) setPath(base, flag.path, value.value)
  })
  if (spec.positional !== undefined && Option.isSome(values.positional)) base[spec.positional.field] = values.positional.value
  return Either.right(base)
}

// -----------------------------------------------------------------------------
// Back to a command line
// -----------------------------------------------------------------------------

/** The words of one flag for `value`, or none when no flag can express it. */
const flagWords = (flag: Flag, value: unknown): Option.Option<ReadonlyArray<string>> => {
  const kind = flag.kind
  const name = `--${flag.name}`
  switch (kind._tag) {
    case "Scalar":
      if (kind.scalar === "boolean") return value === true ? Option.some([name]) : Option.none()
      if (kind.scalar === "text") return Predicate.isString(value) ? Option.some([name, value]) : Option.none()
      return Predicate.isNumber(value) ? Option.some([name, String(value)]) : Option.none()
    case "Choice": {
      const found = kind.choices.find(([, literal]) => literal === value)
      return found === undefined ? Option.none() : Option.some([name, found[0]])
    }
    case "List": {
      if (!Array.isArray(value) || value.length === 0) return Option.none()
      const items: Array<string> = []
      for (const item of value) {
        const text = Predicate.isString(item) ? item : Predicate.isNumber(item) || Predicate.isBoolean(item) ? String(item) : undefined
        // An element the comma split would change cannot be written as a flag.
        if (text === undefined || text.includes(",") || text.trim() !== text || text === "") return Option.none()
        items.push(text)
      }
      return Option.some([name, items.join(",")])
    }
  }
}

/**
 * The command-line words that give `input`: the positional argument, the flags, and `--input-json` with
 * whatever no flag can express. The inverse of {@link assemble}.
 *
 * @since 0.1.0 @category formatting
 */
export const toArgs = (spec: Spec, input: Readonly<Record<string, unknown>>): ReadonlyArray<string> => {
  const positional: Array<string> = []
  const forced: Array<string> = []
  const flags: Array<string> = []
  const rest: Record<string, unknown> = {}
  for (const [field, value] of Object.entries(input)) {
    // An absent optional field written as undefined says nothing (JSON drops it too).
    if (value === undefined) continue
    if (spec.positional !== undefined && field === spec.positional.field) {
      const words = flagWords({ ...spec.positional, path: [field] }, value)
      const word = Option.getOrUndefined(words)?.[1]
      // A positional that starts with a dash would read as a flag: it goes after `--`.
      if (word === undefined) rest[field] = value
      else if (word.startsWith("-")) forced.push("--", word)
      else positional.push(word)
      continue
    }
    const direct = spec.flags.find((flag) => flag.path.length === 1 && flag.path[0] === field)
    const nested = spec.flags.filter((flag) => flag.path.length === 2 && flag.path[0] === field)
    if (direct !== undefined) {
      const words = flagWords(direct, value)
      if (Option.isSome(words)) flags.push(...words.value)
      else rest[field] = value
    } else if (nested.length > 0 && Predicate.isRecord(value)) {
      const innerRest: Record<string, unknown> = {}
      for (const [inner, innerValue] of Object.entries(value)) {
        const flag = nested.find((candidate) => candidate.path[1] === inner)
        const words = flag === undefined ? Option.none() : flagWords(flag, innerValue)
        if (Option.isSome(words)) flags.push(...words.value)
        else innerRest[inner] = innerValue
      }
      if (Object.keys(innerRest).length > 0) rest[field] = innerRest
    } else {
      rest[field] = value
    }
  }
  return [
    ...positional,
    ...flags,
    ...(Object.keys(rest).length === 0 ? [] : ["--input-json", JSON.stringify(rest)]),
    ...forced
  ]
}
