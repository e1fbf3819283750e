/**
 * Narrowing pieces shared by the resource modules that are not supplier-specific: a text query compiled to
 * a tsquery (config `market.es`) under a query mode, exactly as the supplier narrowing compiles it, and a
 * state given as a name, code or alias resolved to its INEGI code.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { resolveState } from "@service/market-warehouse/States"
import { foldText } from "@service/market-warehouse/Text"
import * as Effect from "effect/Effect"
import type { Normalization, QueryMode } from "../Envelope.js"
import type * as Context from "effect/Context"
import type { MarketData } from "../MarketData.js"
import { type MarketDataRefusal, refuse } from "../MarketError.js"

/** A text query compiled under a mode. */
export interface TextQuery {
  readonly query: string
  readonly tsquery: Fragment
  /** What the caller sent (null when no mode was sent). */
  readonly requestedMode: QueryMode | null
  /** What was applied: `auto` reads as `all_terms`. */
  readonly appliedMode: QueryMode
  /** The words as folded for display in `query_interpretation` (never the compiled query). */
  readonly normalizedTerms: ReadonlyArray<string>
}

/** What compiling a text query needs of the market-data service. */
export type TextQueryHost = Pick<Context.Tag.Service<MarketData>, "sql" | "hasSearchableWords">

/** `query` as a tsquery (config `market.es`) under an applied mode. */
export const tsqueryOf = (sql: SqlClient.SqlClient, query: string, appliedMode: QueryMode): Fragment =>
  appliedMode === "exact_phrase"
    ? sql`phraseto_tsquery('market.es', ${query})`
    : appliedMode === "any_terms"
    ? sql`replace(plainto_tsquery('market.es', ${query})::text, '&', '|')::tsquery`
    : sql`plainto_tsquery('market.es', ${query})`

/**
 * Compiles `query` to a tsquery under `mode` (auto = all terms), refusing a query with no searchable words
 * (only stop words or punctuation) with `invalid_field_value` on `query`.
 */
export const compileTextQuery = (
  market: TextQueryHost,
  query: string,
  mode: QueryMode | undefined
): Effect.Effect<TextQuery, MarketDataRefusal> =>
  Effect.gen(function*() {
    const requestedMode: QueryMode | null = mode ?? null
    const appliedMode: QueryMode = requestedMode === null || requestedMode === "auto" ? "all_terms" : requestedMode
    const tsquery = tsqueryOf(market.sql, query, appliedMode)
    if (!(yield* market.hasSearchableWords(query, appliedMode))) {
      return yield* refuse(
        "invalid_field_value",
        "The query holds no searchable words (only very common words or punctuation).",
        "Use distinctive words such as a name or an activity (\"dragado\", \"mantenimiento\").",
        { field: "query" }
      )
    }
    return {
      query,
      tsquery,
      requestedMode,
      appliedMode,
      normalizedTerms: foldText(query).split(" ").filter((t) => t.length > 0)
    }
  })

/** A state resolved to its INEGI code, with the normalization to report when the spelling changed. */
export interface ResolvedState {
  readonly code: string
  readonly normalization: Normalization | undefined
  /** The input, when it was recognized as an alias (for `query_interpretation`). */
  readonly alias: string | undefined
}

/**
 * Resolves a state name, INEGI code or common alias, refusing anything else with `unknown_state` (with the
 * closest state names as suggestions).
 */
export const resolveStateInput = (input: string): Effect.Effect<ResolvedState, MarketDataRefusal> => {
  const resolved = resolveState(input)
  if (resolved._tag === "Unknown") {
    return Effect.fail(
      refuse(
        "unknown_state",
        `"${input}" is not a Mexican state name, code or known alias.`,
        resolved.suggestions.length > 0
          ? `Did you mean ${resolved.suggestions.map((s) => `"${s}"`).join(" or ")}? Send that as state.`
          : "Send a state name (Jalisco), alias (CDMX, Edomex, NL) or official state code (01-32).",
        { field: "state" }
      )
    )
  }
  return Effect.succeed({
    code: resolved.code,
    // Every state the caller did not write as its code is resolved to one, the exact name included (the spec's own
    // example: "Zacatecas" is read as 32); the code alone needs nothing said.
    normalization: input === resolved.code ? undefined : {
      field: "state",
      from: input,
      to: `${resolved.code} ${resolved.name}`,
      reason: resolved.matchedBy === "alias"
        ? "recognized state alias, resolved to its official code"
        : resolved.matchedBy === "code"
        ? "official state code"
        : resolved.name === input
        ? "state name resolved to its official code"
        : "state name matched ignoring accents and case, resolved to its official code"
    },
    alias: resolved.matchedBy === "alias" ? input : undefined
  })
}
