/**
 * Which operations page, and how, read from their declarations (no list of operations):
 *
 * - the operation declares `paginates: true`;
 * - its output carries the sealed next cursor at `next_cursor` (CRM, door, events, topics) or `page.nextCursor`
 *   (the market envelope), `null` on the last page;
 * - its rows are the output's `results` array (the market envelope, whose other arrays describe the answer), else
 *   the output's only top-level array;
 * - the cursor goes back in the input field `cursor`, or `before` where the operation names it so (topic events);
 * - or, for lists read by offset (topics, tags): `offset` in and `has_more` out, the next offset skipping the rows
 *   read so far.
 *
 * An operation whose `results` is an object rather than an array (`get_supplier_history`: totals plus a page of
 * awards) has `.pages` but no `.all`: the rule finds no single rows array in it.
 *
 * The same rule is written at the type level ({@link Pages}, {@link RowOf}, {@link PageInput}), so `.pages` and
 * `.all` exist on exactly the methods that page, and `.all` yields typed rows.
 *
 * @since 0.1.0
 */
import type * as Operation from "@service/core/Operation"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as AST from "effect/SchemaAST"

/**
 * How to page one operation.
 *
 * @since 0.1.0 @category models
 */
export interface Shape {
  /** What to add to the first input to read the page after `page` (read with `input`), or `None` on the last page. */
  readonly next: (page: unknown, input: Readonly<Record<string, unknown>>) => Option.Option<Readonly<Record<string, unknown>>>
  /** The rows of a decoded page; `None` when the rule finds no single rows array (`.pages` only). */
  readonly rows: Option.Option<(page: unknown) => ReadonlyArray<unknown>>
}

const propertiesOf = (ast: AST.AST): ReadonlyArray<AST.PropertySignature> => {
  const type = AST.typeAST(ast)
  switch (type._tag) {
    case "TypeLiteral":
      return type.propertySignatures
    case "Union":
      // `NullOr(Struct)`: the struct's properties.
      return type.types.flatMap(propertiesOf)
    case "Suspend":
      return propertiesOf(type.f())
    case "Refinement":
      return propertiesOf(type.from)
    default:
      return []
  }
}

const isArray = (ast: AST.AST): boolean => {
  const type = AST.typeAST(ast)
  return type._tag === "TupleType" ? type.rest.length > 0 : type._tag === "Refinement" ? isArray(type.from) : false
}

const named = (properties: ReadonlyArray<AST.PropertySignature>, name: string): AST.PropertySignature | undefined =>
  properties.find((property) => property.name === name)

const field = (value: unknown, name: string): unknown => (Predicate.isRecord(value) ? value[name] : undefined)

const text = (value: unknown): string | undefined => (Predicate.isString(value) && value.length > 0 ? value : undefined)

const rowsOf = (output: ReadonlyArray<AST.PropertySignature>): Option.Option<(page: unknown) => ReadonlyArray<unknown>> => {
  const results = named(output, "results")
  const arrays = output.filter((property) => isArray(property.type))
  const rowsField = results !== undefined ? (isArray(results.type) ? results : undefined) : arrays.length === 1 ? arrays[0] : undefined
  if (rowsField === undefined || !Predicate.isString(rowsField.name)) return Option.none()
  const name = rowsField.name
  return Option.some((page) => {
    const rows = field(page, name)
    return Array.isArray(rows) ? rows : []
  })
}

/**
 * The paging shape of an operation, or `None` when it does not page (or pages in a way the rule does not read:
 * `Client.test.ts` checks every declared `paginates` operation resolves).
 *
 * @since 0.1.0 @category constructors
 */
export const shapeOf = (op: Operation.AnyOperation<unknown>): Option.Option<Shape> => {
  if (!op.paginates) return Option.none()
  const output = propertiesOf(op.output.ast)
  const input = propertiesOf(op.input.ast)
  const rows = rowsOf(output)
  const cursorField = ["cursor", "before"].find((name) => named(input, name) !== undefined)
  const page = named(output, "page")
  const nextCursor = named(output, "next_cursor") !== undefined
    ? (value: unknown) => text(field(value, "next_cursor"))
    : page !== undefined && named(propertiesOf(page.type), "nextCursor") !== undefined
    ? (value: unknown) => text(field(field(value, "page"), "nextCursor"))
    : undefined
  if (cursorField !== undefined && nextCursor !== undefined) {
    return Option.some({
      rows,
      next: (value) => Option.map(Option.fromNullable(nextCursor(value)), (cursor) => ({ [cursorField]: cursor }))
    })
  }
  // Offset paging (topics, tags): `offset` in, `has_more` out; the next offset skips the rows read so far.
  const count = Option.getOrUndefined(rows)
  if (named(input, "offset") !== undefined && named(output, "has_more") !== undefined && count !== undefined) {
    return Option.some({
      rows,
      next: (value, sent) => {
        if (field(value, "has_more") !== true) return Option.none()
        const read = count(value).length
        const offset = Number(field(sent, "offset") ?? 0)
        // A page with no rows that says there are more would loop for ever: stop instead.
        return read === 0 ? Option.none() : Option.some({ offset: offset + read })
      }
    })
  }
  return Option.none()
}

type NextCursorField<O> = O extends { readonly next_cursor: string | null } ? true
  : O extends { readonly page: { readonly nextCursor: string | null } | null } ? true
  : false

type ArrayElements<O> = { [K in keyof O]-?: O[K] extends ReadonlyArray<infer Row> ? Row : never }[keyof O]

/**
 * The row type of a page: its `results` elements when `results` is an array, else (no `results`) the elements of
 * its arrays; `never` when `results` is not an array (such an operation has `.pages` only).
 *
 * @since 0.1.0 @category models
 */
export type RowOf<O> = O extends { readonly results: infer Results } ? Results extends ReadonlyArray<infer Row> ? Row : never
  : ArrayElements<O>

/**
 * The input field that takes the cursor (or the offset).
 *
 * @since 0.1.0 @category models
 */
export type CursorField<I> = "cursor" extends keyof I ? "cursor" : "before" extends keyof I ? "before" : "offset" extends keyof I ? "offset" : never

/**
 * What `.all` and `.pages` take: the input without its cursor (the helper sends it).
 *
 * @since 0.1.0 @category models
 */
export type PageInput<I> = Omit<I, CursorField<I>>

/**
 * Whether the operation pages (the type-level side of {@link shapeOf}).
 *
 * @since 0.1.0 @category models
 */
export type Pages<I, O> = [CursorField<I>] extends [never] ? false
  : CursorField<I> extends "offset" ? O extends { readonly has_more: boolean } ? true : false
  : NextCursorField<O>

/**
 * Whether `.all` can yield rows (a single rows array, see {@link RowOf}).
 *
 * @since 0.1.0 @category models
 */
export type HasRows<O> = [RowOf<O>] extends [never] ? false : true
