/**
 * Turns schema decode failures into `invalid_field_value` refusals that name the field and, when the field
 * has a closed set of values, list them.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { type MarketDataRefusal, refuse } from "./MarketError.js"

const literalsOf = (ast: AST.AST): ReadonlyArray<string> | undefined => {
  switch (ast._tag) {
    case "Literal":
      return ast.literal === null ? [] : [String(ast.literal)]
    case "Union": {
      const parts = ast.types
        .filter((member) => !AST.isUndefinedKeyword(member))
        .map(literalsOf)
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

/**
 * The closed set of values allowed at `path` of a schema, if that position is a literal or a union of literals.
 *
 * @since 0.1.0 @category validation
 */
export const allowedValuesAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> | undefined => {
  let current: AST.AST | undefined = ast
  for (const key of path) {
    if (current === undefined) return undefined
    current = step(current, key)
  }
  return current === undefined ? undefined : literalsOf(current)
}

/** @since 0.1.0 @category validation */
export interface ValidationIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  /** The formatter's issue kind; `Unexpected` marks a property the schema does not know. */
  readonly tag?: string | undefined
}

/** The property names of the struct at `path`, for refusing an unknown property with the known ones. */
const propertyNamesAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> | undefined => {
  let current: AST.AST | undefined = ast
  for (const key of path) {
    if (current === undefined) return undefined
    current = step(current, key)
  }
  while (current !== undefined && (current._tag === "Refinement" || current._tag === "Transformation")) {
    current = current._tag === "Refinement" ? current.from : current.to
  }
  return current?._tag === "TypeLiteral" ? current.propertySignatures.map((p) => String(p.name)) : undefined
}

/**
 * Builds the refusal for the first issue of a decode failure.
 *
 * @since 0.1.0 @category validation
 */
export const refusalFromIssues = (ast: AST.AST, issues: ReadonlyArray<ValidationIssue>): MarketDataRefusal => {
  const first = issues[0]
  const field = first === undefined || first.path.length === 0 ? undefined : first.path.map(String).join(".")
  const allowed = first === undefined
    ? undefined
    : first.tag === "Unexpected"
    ? propertyNamesAt(ast, first.path.slice(0, -1))
    : allowedValuesAt(ast, first.path)
  const why = first === undefined
    ? "The request does not match the operation's input schema."
    : first.tag === "Unexpected"
    ? `Field "${field ?? ""}" is not part of this operation's input.`
    : field === undefined
    ? `The request is not valid: ${first.message}`
    : `Field "${field}" is not valid: ${first.message}`
  const correction = first?.tag === "Unexpected" && allowed !== undefined
    ? `Remove it; the accepted fields are: ${allowed.join(", ")}.`
    : allowed !== undefined && allowed.length > 0
    ? `Use one of: ${allowed.join(", ")}.`
    : "Fix the named field following the operation's input schema (see GET capabilities or /openapi.json) and retry."
  return refuse("invalid_field_value", why, correction, {
    ...(field === undefined ? {} : { field }),
    ...(allowed === undefined ? {} : { allowedValues: allowed })
  })
}

/**
 * Decodes unknown input, refusing unknown properties, and maps failures to `invalid_field_value`.
 *
 * @since 0.1.0 @category validation
 */
export const decodeInput = <A, I>(schema: Schema.Schema<A, I, never>) => {
  const decode = Schema.decodeUnknown(schema, { onExcessProperty: "error", errors: "all" })
  return (input: unknown): Effect.Effect<A, MarketDataRefusal> =>
    decode(input).pipe(
      Effect.mapError((error) =>
        refusalFromIssues(
          schema.ast,
          issuesOf(error)
        )
      )
    )
}

/**
 * Reads the first issue out of a parse error, for transports that receive a ParseError from elsewhere.
 *
 * @since 0.1.0 @category validation
 */
export const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<ValidationIssue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path,
    message: issue.message,
    tag: issue._tag
  }))

/** @since 0.1.0 @category validation */
export const firstIssuePath = (issues: ReadonlyArray<ValidationIssue>): Option.Option<string> =>
  Option.fromNullable(issues[0]).pipe(Option.map((i) => i.path.map(String).join(".")))
