/**
 * compare_segments: exact counts of published observations for every (segment, geography) cell, in one
 * grouped statement. A segment is a text query, a geography a state; the counted record kind is chosen with
 * `observed_kind`. Counts are observations, never unique companies, market size or demand.
 *
 * @since 0.1.0
 */
import { excerpt } from "@service/core/Refusal"
import type { RequestContext } from "@service/core/RequestContext"
import { stateByCode } from "@service/market-warehouse/States"
import type { Fragment } from "@effect/sql/Statement"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Envelope, type EvidenceCategory, type Normalization, type SemanticWarning } from "./Envelope.js"
import { withStatementTimeout } from "./internal/statementTimeout.js"
import { matchWords } from "./internal/supplierWords.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Narrowing from "./SupplierNarrowing.js"
import { TrimmedText, strict } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"
import { kit } from "./MarketKit.js"

/** @since 0.1.0 @category constants */
export const maxSegments = 5
/** @since 0.1.0 @category constants */
export const maxGeographies = 10
/** @since 0.1.0 @category constants */
export const maxCells = 50

/**
 * The record kinds a comparison can count: those published with searchable text and a state. Risk marks name
 * no state and permits carry no searchable text, so they are refused with `invalid_observed_kind`.
 *
 * @since 0.1.0 @category constants
 */
export const observedKinds = ["supplier_observation", "opportunity", "award"] as const
/** @since 0.1.0 @category models */
export type ObservedKind = (typeof observedKinds)[number]

const tables: Readonly<Record<ObservedKind, { readonly table: string; readonly category: EvidenceCategory }>> = {
  supplier_observation: { table: "market.supplier_observations", category: "supplier_or_organization_evidence" },
  opportunity: { table: "market.opportunities", category: "government_contracting" },
  award: { table: "market.awards", category: "government_contracting" }
}

const isObservedKind = (value: string): value is ObservedKind => observedKinds.some((kind) => kind === value)

const Id = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{1,40}$/, { message: () => "an id is 1 to 40 letters, digits, '_', '.' or '-'" })
)

const Segment = Schema.Struct({
  id: Id.annotations({ description: "Your name for the segment, echoed in its cells." }),
  query: TrimmedText(200).annotations({ description: "Words that define the segment (Spanish; accents and case ignored)." })
}).annotations(strict)

const Geography = Schema.Struct({
  id: Id.annotations({ description: "Your name for the geography, echoed in its cells." }),
  state: TrimmedText(64).annotations({ description: "State name, code or common alias." })
}).annotations(strict)

/** @since 0.1.0 @category models */
export const CompareSegmentsInput = Schema.Struct({
  segments: Schema.Array(Segment).pipe(Schema.minItems(1), Schema.maxItems(maxSegments)).annotations({
    description: `1 to ${maxSegments} segments, each {id, query}.`
  }),
  geographies: Schema.Array(Geography).pipe(Schema.minItems(1), Schema.maxItems(maxGeographies)).annotations({
    description: `1 to ${maxGeographies} geographies, each {id, state}.`
  }),
  observed_kind: Schema.String.pipe(Schema.maxLength(64)).annotations({
    description: `What to count: ${observedKinds.join(", ")}.`
  }),
  contact_breakdown: Schema.optional(Schema.Boolean).annotations({
    description: "Also count, like for like, the supplier observations with a published contact channel."
  })
}).annotations({ ...strict, identifier: "CompareSegmentsInput" })
/** @since 0.1.0 @category models */
export type CompareSegmentsInput = typeof CompareSegmentsInput.Type

/** @since 0.1.0 @category models */
export const SegmentCell = Schema.Struct({
  segment_id: Schema.String,
  geography_id: Schema.String,
  state: Schema.Struct({ code: Schema.String, name: Schema.String }),
  count: Schema.Number.annotations({ description: "Exact number of published observations in the cell." }),
  with_contact_channel: Schema.optional(Schema.Number).annotations({
    description: "Of those, observations with at least one published contact channel (contact_breakdown)."
  })
})

/** @since 0.1.0 @category models */
export const SegmentComparison = Schema.Struct({
  observed_kind: Schema.Literal(...observedKinds),
  cells: Schema.Array(SegmentCell).annotations({ description: "One cell per (segment, geography), segments first." })
}).annotations({ identifier: "SegmentComparison" })

/** @since 0.1.0 @category models */
export const CompareSegmentsEnvelope = Envelope(SegmentComparison).annotations({ identifier: "CompareSegmentsEnvelope" })

const countsAreObservations: SemanticWarning = {
  code: "observation_not_company",
  message: "Counts are published observations, not unique companies, market size (TAM) or demand."
}

const duplicateId = (ids: ReadonlyArray<string>) => ids.find((id, i) => ids.indexOf(id) !== i)

/**
 * @since 0.1.0 @category queries
 */
export const compareSegments = (
  input: CompareSegmentsInput
): Effect.Effect<EnvelopeOf<typeof SegmentComparison.Type>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    if (!isObservedKind(input.observed_kind)) {
      return yield* refuse(
        "invalid_observed_kind",
        `"${excerpt(input.observed_kind)}" is not a record kind a comparison can count.`,
        `Send observed_kind as one of: ${observedKinds.join(", ")}.`,
        { field: "observed_kind", allowedValues: observedKinds }
      )
    }
    const kind = input.observed_kind
    const contactBreakdown = input.contact_breakdown === true
    if (contactBreakdown && kind !== "supplier_observation") {
      return yield* refuse(
        "invalid_field_value",
        "Only supplier observations publish contact channels, so contact_breakdown applies to supplier_observation only.",
        "Drop contact_breakdown, or set observed_kind to supplier_observation.",
        { field: "contact_breakdown" }
      )
    }
    for (const [field, ids] of [["segments", input.segments.map((s) => s.id)], ["geographies", input.geographies.map((g) => g.id)]] as const) {
      const duplicate = duplicateId(ids)
      if (duplicate !== undefined) {
        return yield* refuse(
          "invalid_field_value",
          `The id "${duplicate}" appears twice in ${field}; each cell must be named once.`,
          `Give every entry of ${field} its own id.`,
          { field }
        )
      }
    }
    // Implied by the two bounds today; kept so the rule survives a change of either.
    if (input.segments.length * input.geographies.length > maxCells) {
      return yield* refuse(
        "invalid_field_value",
        `${input.segments.length} segments by ${input.geographies.length} geographies make more than ${maxCells} cells.`,
        `Compare at most ${maxCells} cells: fewer segments or geographies.`,
        { field: "segments", allowedRange: { minimum: 1, maximum: maxCells } }
      )
    }

    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const normalizations: Array<Normalization> = []
    // The supplier narrowing resolves states and compiles words exactly as search and count do.
    const segments = yield* Effect.forEach(input.segments, (segment) =>
      Effect.map(Narrowing.narrow(market, publication.snapshotId, { query: segment.query }), (narrowed) => ({
        id: segment.id,
        query: narrowed.query ?? segment.query,
        tsquery: narrowed.tsquery
      })))
    const geographies = yield* Effect.forEach(input.geographies, (geography) =>
      Effect.gen(function*() {
        const narrowed = yield* Narrowing.narrow(market, publication.snapshotId, { state: geography.state })
        normalizations.push(...narrowed.normalizations.map((n) => ({ ...n, field: `geographies.${geography.id}.state` })))
        const code = narrowed.stateCode ?? geography.state
        return { id: geography.id, code, name: stateByCode(code)?.name ?? code }
      }))

    const { table, category } = tables[kind]
    const states = [...new Set(geographies.map((g) => g.code))]
    const hasContact = sql`(o.has_phone OR o.has_email OR o.has_website)`
    // Supplier words are indexed with their state folded in (decision 0087); the other kinds' words alone.
    const matchesIn = (tsquery: Fragment) =>
      kind === "supplier_observation" ? matchWords(sql, tsquery) : sql`o.search_tsv @@ ${tsquery}`
    const columns = segments.flatMap((segment, i) => {
      const match = segment.tsquery === undefined ? sql`FALSE` : matchesIn(segment.tsquery)
      return [
        sql`count(*) FILTER (WHERE ${match})::int AS ${sql(`n${i}`)}`,
        ...(contactBreakdown ? [sql`count(*) FILTER (WHERE ${match} AND ${hasContact})::int AS ${sql(`c${i}`)}`] : [])
      ]
    })
    const anySegment = sql.or(segments.map((s) => (s.tsquery === undefined ? sql`FALSE` : matchesIn(s.tsquery))))
    const rows = yield* withStatementTimeout(market)((timed) =>
      timed<Readonly<Record<string, unknown>>>`
        SELECT o.state_code, ${sql.csv(columns)}
        FROM ${sql.literal(table)} o
        WHERE o.snapshot_id = ${publication.snapshotId}
          AND ${licensedRows(sql, "o")}
          AND o.state_code IN ${sql.in(states)}
          AND ${anySegment}
        GROUP BY o.state_code`
    )
    const byState = new Map<string, Readonly<Record<string, unknown>>>()
    for (const row of rows) {
      const state = row["state_code"]
      if (typeof state === "string") byState.set(state, row)
    }
    const countOf = (state: string, column: string) => {
      const value = byState.get(state)?.[column]
      return typeof value === "number" ? value : 0
    }
    const cells = segments.flatMap((segment, i) =>
      geographies.map((geography) => ({
        segment_id: segment.id,
        geography_id: geography.id,
        state: { code: geography.code, name: geography.name },
        count: countOf(geography.code, `n${i}`),
        ...(contactBreakdown ? { with_contact_channel: countOf(geography.code, `c${i}`) } : {})
      }))
    )
    const total = cells.reduce((sum, cell) => sum + cell.count, 0)
    return yield* market.envelope({
      operation: "compare_segments",
      publication,
      startedAt,
      request: {
        observed_kind: kind,
        segments: segments.map((s) => ({ id: s.id, query: s.query })),
        geographies: geographies.map((g) => ({ id: g.id, state: g.code })),
        contact_breakdown: contactBreakdown
      },
      normalizations,
      results: { observed_kind: kind, cells },
      page: null,
      categories: [category],
      warnings: [countsAreObservations],
      empty: total === 0,
      rowsExamined: total
    })
  }).pipe(Effect.withSpan("SupplierSegments.compareSegments", { captureStackTrace: false }))

/** @since 0.1.0 @category operations */
export const compareSegmentsOperation = kit.make({
  name: "compare_segments",
  title: "Compare segments across geographies",
  description:
    "Exact counts of published observations for every (segment, state) cell, in one read. Counts are observations, not companies, market size or demand.",
  http: { method: "POST", path: "/suppliers/compare-segments", input: { kind: "body" } },
  cli: { words: ["suppliers", "compare-segments"] },
  input: CompareSegmentsInput,
  output: CompareSegmentsEnvelope,
  refuses: [
    "invalid_observed_kind",
    "unknown_state",
    "invalid_field_value",
    "market_data_timeout",
    "serving_projection_unavailable",
    "serving_projection_stale"
  ],
  capability: {
    question: "How do the counts of published observations compare across activities and states?",
    requires: `segments (1 to ${maxSegments} {id, query}), geographies (1 to ${maxGeographies} {id, state}), observed_kind (${observedKinds.join(", ")}); at most ${maxCells} cells.`,
    example: {
      segments: [{ id: "mining", query: "minera" }, { id: "quarry", query: "cantera" }],
      geographies: [{ id: "zac", state: "Zacatecas" }, { id: "son", state: "Sonora" }],
      observed_kind: "supplier_observation",
      contact_breakdown: true
    }
  },
  run: compareSegments
})
