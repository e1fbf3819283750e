/**
 * Structural validation for market data: the kernel's schema-driven validation (core `Refusal`) with the
 * market-data codec, so a decode failure becomes `invalid_field_value` naming the field and, when the
 * field has a closed set of values or a numeric range, listing it.
 *
 * @since 0.1.0
 */
import * as Refusal from "@service/core/Refusal"
import type * as Effect from "effect/Effect"
import type * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"
import { codec, type MarketDataRefusal } from "./MarketError.js"

/** @since 0.1.0 @category validation */
export type ValidationIssue = Refusal.ValidationIssue

/**
 * Builds the refusal for the first issue of a decode failure.
 *
 * @since 0.1.0 @category validation
 */
export const refusalFromIssues = (ast: AST.AST, issues: ReadonlyArray<ValidationIssue>): MarketDataRefusal =>
  codec.invalidInput(Refusal.invalidInputFromIssues(ast, issues))

/**
 * Decodes unknown input, refusing unknown properties, and maps failures to `invalid_field_value`.
 *
 * @since 0.1.0 @category validation
 */
export const decodeInput: <A, I>(
  schema: Schema.Schema<A, I, never>
) => (input: unknown) => Effect.Effect<A, MarketDataRefusal> = Refusal.decodeWith(codec)

/** @since 0.1.0 @category validation */
export const allowedValuesAt = Refusal.allowedValuesAt
