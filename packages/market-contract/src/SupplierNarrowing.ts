/**
 * Narrowing of supplier reads, shared by every operation that selects supplier observations (search,
 * count): the narrowing fields and their schemas, the resolution of each field into SQL conditions with
 * the normalizations a caller is told about, the filter digest a cursor carries, and the bounded
 * selectivity probe for a text query that narrows alone.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Fragment } from "@effect/sql/Statement"
import { excerpt } from "@service/core/Refusal"
import { parseRfc } from "@service/market-warehouse/Rfc"
import { foldText, foldWords } from "@service/market-warehouse/Text"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { type InterpretedRequest, type Normalization, QueryMode } from "./Envelope.js"
import { maxPageSize } from "./Limits.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import { filterDigest } from "./Paging.js"
import { compileTextQuery, resolveStateInput, type TextQueryHost } from "./internal/narrowing.js"
import { matchWords } from "./internal/supplierWords.js"
import { TrimmedText } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"

/** @since 0.1.0 @category schemas */
export const ScianCode = Schema.String.pipe(
  Schema.pattern(/^\d{2,6}$/, { message: () => "a SCIAN code is 2 to 6 digits (sector to class)" })
)

/**
 * The model-facing narrowing fields.
 *
 * @since 0.1.0 @category schemas
 */
export const fields = {
  query: Schema.optional(TrimmedText(200)).annotations({
    description: "Words to find in names and activity titles (Spanish; accents and case ignored)."
  }),
  state: Schema.optional(TrimmedText(64)).annotations({
    description: "State name, code or common alias (CDMX, Edomex, NL, Jalisco, 14...)."
  }),
  scian_codes: Schema.optional(Schema.Array(ScianCode).pipe(Schema.minItems(1), Schema.maxItems(20))).annotations({
    description: "SCIAN 2023 codes (2 to 6 digits); a shorter code matches every class under it."
  }),
  municipality: Schema.optional(TrimmedText(80)).annotations({
    description:
      "Municipality name (accents, case and small misspellings tolerated, resolved to the canonical spelling); with state, within that state."
  }),
  rfc: Schema.optional(TrimmedText(13)).annotations({
    description: "RFC (12 characters for a company, 13 for a person): strong identity."
  }),
  query_mode: Schema.optional(QueryMode).annotations({
    description: "How query words combine: auto (default: all terms), exact_phrase, all_terms, any_terms."
  })
}

/**
 * The canonical-only field (HTTP): restricting to named sources.
 *
 * @since 0.1.0 @category schemas
 */
export const canonicalFields = {
  source_slugs: Schema.optional(Schema.Array(TrimmedText(64)).pipe(Schema.minItems(1), Schema.maxItems(10))).annotations({
    description: "Restrict to these published sources (canonical HTTP route only; see docs/market-data.md)."
  })
}

const NarrowingInput = Schema.Struct({ ...fields, ...canonicalFields })

/** @since 0.1.0 @category models */
export type NarrowingInput = typeof NarrowingInput.Type

/**
 * A resolved narrowing.
 *
 * @since 0.1.0 @category models
 */
export interface Narrowed {
  /** SQL conditions on `market.supplier_observations o` (snapshot and display licence included). */
  readonly conditions: ReadonlyArray<Fragment>
  /** The full-text query, when there are words. */
  readonly tsquery: Fragment | undefined
  /** The INEGI code the state resolved to, when a state was given. */
  readonly stateCode: string | undefined
  /** True when words are the only narrowing dimension (the probe applies). */
  readonly textOnly: boolean
  readonly query: string | undefined
  readonly normalizations: ReadonlyArray<Normalization>
  /** Stable digest of the resolved filters, for cursors. */
  readonly filterDigest: string
  /** The request as interpreted, for the envelope (no source identity). */
  readonly request: Readonly<Record<string, unknown>>
  readonly queryInterpretation: InterpretedRequest["query_interpretation"] | undefined
}

const MunicipalityCandidate = Schema.Struct({
  code: Schema.String,
  state_code: Schema.String,
  name: Schema.String,
  name_folded: Schema.String,
  score: Schema.Number
})
const decodeCandidates = Schema.decodeUnknown(Schema.Array(MunicipalityCandidate))

/** A fuzzy spelling is accepted when its trigram similarity to a canonical name reaches this. */
const municipalityMatchThreshold = 0.45

/**
 * Resolves a free-text municipality to the catalog's canonical spelling: an exact folded name first, else the
 * closest spelling above the threshold. A name shared by municipalities of several states (Guadalupe) selects
 * all of them unless a state narrows it. Nothing close enough gives `unknown_filter_value` with suggestions.
 */
const resolveMunicipality = (
  sql: SqlClient.SqlClient,
  raw: string,
  stateCode: string | undefined
): Effect.Effect<
  { readonly name: string; readonly codes: ReadonlyArray<string>; readonly normalization: Normalization | undefined },
  MarketDataRefusal
> =>
  Effect.gen(function*() {
    const folded = foldWords(raw)
    const inState = stateCode === undefined ? sql`TRUE` : sql`m.state_code = ${stateCode}`
    const candidates = yield* sql`
      SELECT m.code, m.state_code, m.name, m.name_folded, similarity(m.name_folded, ${folded})::float8 AS score
      FROM market.municipalities m
      WHERE ${inState}
      ORDER BY (m.name_folded = ${folded}) DESC, similarity(m.name_folded, ${folded}) DESC, m.code
      LIMIT 40`.pipe(Effect.flatMap(decodeCandidates), Effect.orDie)
    const best = candidates[0]
    if (best === undefined || (best.name_folded !== folded && best.score < municipalityMatchThreshold)) {
      const suggestions = [...new Set(candidates.slice(0, 3).map((c) => c.name))]
      return yield* refuse(
        "unknown_filter_value",
        `"${excerpt(raw)}" is not a municipality${stateCode === undefined ? "" : " of that state"} in the national municipality catalog.`,
        suggestions.length > 0
          ? `Did you mean ${suggestions.map((n) => `"${n}"`).join(", ")}? Send that as municipality, or drop it.`
          : "Send a municipality name as the national catalog spells it, or drop municipality.",
        { field: "municipality" }
      )
    }
    const chosen = candidates.filter((c) => c.name_folded === best.name_folded)
    const codes = chosen.map((c) => c.code).sort()
    const exact = best.name_folded === folded
    const where = stateCode === undefined && chosen.length > 1 ? ` (${chosen.length} municipalities of that name)` : ""
    return {
      name: best.name,
      codes,
      // Always said, as for a state: even the catalog's exact spelling was resolved to municipality codes.
      normalization: {
        field: "municipality",
        from: raw,
        to: `${best.name}${where}`,
        reason: `${
          best.name === raw
            ? "municipality name"
            : exact
            ? "municipality name matched ignoring accents and case"
            : "closest municipality spelling in the national catalog"
        }, resolved to catalog code${codes.length === 1 ? "" : "s"} ${codes.join(", ")}`
      }
    }
  })

/**
 * Resolves the narrowing fields against the snapshot: refuses a request with no narrowing dimension
 * (`query_too_broad`), an unknown state, a malformed RFC, unknown sources and queries without searchable
 * words, and says what it normalized.
 *
 * @since 0.1.0 @category narrowing
 */
export const narrow = (
  market: TextQueryHost,
  snapshotId: string,
  input: NarrowingInput
): Effect.Effect<Narrowed, MarketDataRefusal> =>
  Effect.gen(function*() {
    const { sql } = market
    const normalizations: Array<Normalization> = []
    const query = input.query?.trim()
    const hasNarrowing = query !== undefined || input.state !== undefined || input.scian_codes !== undefined ||
      input.source_slugs !== undefined || input.rfc !== undefined || input.municipality !== undefined
    if (!hasNarrowing) {
      return yield* refuse(
        "query_too_broad",
        "A supplier read needs at least one narrowing dimension; the whole market is not offered.",
        "Add at least one of: query, state, municipality, scian_codes, rfc."
      )
    }

    // State: any name, code or alias resolves to the INEGI code (as in every resource module).
    const state = input.state === undefined ? undefined : yield* resolveStateInput(input.state)
    const stateCode = state?.code
    const recognizedAliases: ReadonlyArray<string> = state?.alias === undefined ? [] : [state.alias]
    if (state?.normalization !== undefined) normalizations.push(state.normalization)

    const municipality = input.municipality === undefined
      ? undefined
      : yield* resolveMunicipality(sql, input.municipality, stateCode)
    if (municipality !== undefined && municipality.normalization !== undefined) normalizations.push(municipality.normalization)

    let rfc: string | undefined
    if (input.rfc !== undefined) {
      const normalized = parseRfc(input.rfc)
      if (normalized === undefined) {
        return yield* refuse(
          "invalid_field_value",
          `"${input.rfc}" is not a well-formed RFC.`,
          "An RFC has 12 characters for a company (3 letters, YYMMDD, 3-character homoclave) or 13 for a person (4 letters).",
          { field: "rfc" }
        )
      }
      if (normalized !== input.rfc) {
        normalizations.push({ field: "rfc", from: input.rfc, to: normalized, reason: "RFC upper-cased, separators removed" })
      }
      rfc = normalized
    }

    if (input.source_slugs !== undefined) {
      const known = yield* sql<{ slug: string }>`SELECT slug FROM market.sources WHERE licensed_for_display`.pipe(
        Effect.orDie
      )
      const unknown = input.source_slugs.filter((s) => !known.some((k) => k.slug === s))
      if (unknown.length > 0) {
        return yield* refuse(
          "unknown_filter_value",
          `source_slugs names ${unknown.length} source(s) that are not published for display.`,
          "Use the source slugs listed in the operator documentation (docs/market-data.md), or drop source_slugs.",
          { field: "source_slugs" }
        )
      }
    }

    const requestedMode: QueryMode | null = input.query_mode ?? null
    const appliedMode: QueryMode = requestedMode === null || requestedMode === "auto" ? "all_terms" : requestedMode
    // Compiled as every text query is (internal/narrowing), refusing words that hold nothing searchable.
    const tsquery = query === undefined ? undefined : (yield* compileTextQuery(market, query, input.query_mode)).tsquery

    const scianCodes = input.scian_codes === undefined ? undefined : [...new Set(input.scian_codes)].sort()
    const sourceSlugs = input.source_slugs === undefined ? undefined : [...input.source_slugs].sort()
    const filters = {
      query: query ?? null,
      mode: query === undefined ? null : appliedMode,
      state: stateCode ?? null,
      municipality: municipality?.codes ?? null,
      scian_codes: scianCodes ?? null,
      rfc: rfc ?? null,
      source_slugs: sourceSlugs ?? null
    }
    const conditions = [
      sql`o.snapshot_id = ${snapshotId}`,
      licensedRows(sql, "o"),
      // With words, the state is matched inside the words' index (decision 0087): a separate state condition would
      // have the planner AND a bitmap of the whole state to it.
      ...(stateCode === undefined || tsquery !== undefined ? [] : [sql`o.state_code = ${stateCode}`]),
      ...(municipality === undefined ? [] : [sql`o.municipality_code IN ${sql.in(municipality.codes)}`]),
      ...(rfc === undefined ? [] : [sql`o.rfc = ${rfc}`]),
      ...(scianCodes === undefined ? [] : [sql.or(scianCodes.map((code) => sql`o.scian_code LIKE ${`${code}%`}`))]),
      ...(sourceSlugs === undefined ? [] : [sql`o.source_slug IN ${sql.in(sourceSlugs)}`]),
      ...(tsquery === undefined ? [] : [matchWords(sql, tsquery, stateCode)])
    ]
    const filterNames = [
      ...(stateCode === undefined ? [] : ["state"]),
      ...(municipality === undefined ? [] : ["municipality"]),
      ...(scianCodes === undefined ? [] : ["scian_codes"]),
      ...(rfc === undefined ? [] : ["rfc"]),
      ...(sourceSlugs === undefined ? [] : ["source_slugs"])
    ]
    return {
      conditions,
      tsquery,
      stateCode,
      textOnly: query !== undefined && filterNames.length === 0,
      query,
      normalizations,
      filterDigest: filterDigest(filters),
      request: {
        ...(query === undefined ? {} : { query }),
        ...(stateCode === undefined ? {} : { state: stateCode }),
        ...(municipality === undefined ? {} : { municipality: { name: municipality.name, codes: municipality.codes } }),
        ...(scianCodes === undefined ? {} : { scian_codes: scianCodes }),
        ...(rfc === undefined ? {} : { rfc }),
        // Source identifiers never leave the layer, not even echoed back.
        ...(sourceSlugs === undefined ? {} : { source_filter: { sources: sourceSlugs.length } })
      },
      queryInterpretation: query === undefined ? undefined : {
        requested_mode: requestedMode,
        applied_mode: appliedMode,
        normalized_terms: foldText(query).split(" ").filter((t) => t.length > 0),
        recognized_state_aliases: recognizedAliases,
        filters: filterNames,
        warning: requestedMode === null ? "auto mode: every word must match (Spanish stemming, accents ignored)" : null
      }
    }
  })

/**
 * The bounded selectivity probe: a text query that narrows alone may match at most one page; it reads at
 * most one row more than the page maximum. Returns the rows it examined.
 *
 * @since 0.1.0 @category narrowing
 */
export const probeSelectivity = (
  sql: SqlClient.SqlClient,
  narrowed: Narrowed
): Effect.Effect<number, MarketDataRefusal> =>
  Effect.gen(function*() {
    if (!narrowed.textOnly) return 0
    const probe = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (
        SELECT 1 FROM market.supplier_observations o WHERE ${sql.and(narrowed.conditions)} LIMIT ${maxPageSize + 1}) t`.pipe(
      Effect.orDie
    )
    const matched = probe[0]?.n ?? 0
    if (matched > maxPageSize) {
      return yield* refuse(
        "query_not_selective",
        `The words "${excerpt(narrowed.query ?? "")}" alone match more observations than one page can hold.`,
        "Keep the words and add a structured filter (state, scian_codes or rfc), or use more specific words."
      )
    }
    return matched
  })
