/**
 * The top-level fields of an operation's input, read from its schema: what OpenAPI lists as query or
 * path parameters, and which query parameters or body properties a request may carry.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/**
 * The property signatures of a struct-like schema, read on its encoded side (what travels); `undefined`
 * when the schema is not struct-like.
 *
 * @since 0.1.0 @category reflection
 */
export const propertiesOf = (ast: AST.AST): ReadonlyArray<AST.PropertySignature> | undefined => {
  switch (ast._tag) {
    case "TypeLiteral":
      // An index signature admits any name: no closed list of fields.
      return ast.indexSignatures.length > 0 ? undefined : ast.propertySignatures
    case "Refinement":
    case "Transformation":
      return propertiesOf(ast.from)
    case "Suspend":
      return propertiesOf(ast.f())
    default:
      return undefined
  }
}

/**
 * The closed list of top-level field names, when the schema declares one.
 *
 * @since 0.1.0 @category reflection
 */
export const fieldNames = (schema: Schema.Schema.AnyNoContext): ReadonlyArray<string> | undefined =>
  propertiesOf(schema.ast)?.map((p) => String(p.name))

/**
 * The description of a top-level field.
 *
 * @since 0.1.0 @category reflection
 */
export const descriptionOf = (schema: Schema.Schema.AnyNoContext, field: string): string | undefined => {
  const property = propertiesOf(schema.ast)?.find((p) => p.name === field)
  if (property === undefined) return undefined
  return Option.getOrUndefined(Option.orElse(AST.getDescriptionAnnotation(property), () => AST.getDescriptionAnnotation(property.type)))
}

/**
 * The fields other than `omit`, as a struct without the input's identifier, so OpenAPI lists each one as a
 * parameter rather than one reference; `undefined` when none is left.
 *
 * @since 0.1.0 @category views
 */
export const parametersView = (
  schema: Schema.Schema.AnyNoContext,
  omit: ReadonlyArray<string>
): Schema.Schema.AnyNoContext | undefined => {
  const properties = propertiesOf(schema.ast)?.filter((p) => !omit.includes(String(p.name)))
  if (properties === undefined || properties.length === 0) return undefined
  return Schema.make(new AST.TypeLiteral(properties, []))
}
