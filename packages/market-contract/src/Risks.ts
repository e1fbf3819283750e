/**
 * Risk marks: published administrative listings (EFOS under Art. 69-B of the CFF, supplier sanctions and
 * disqualifications). The inputs, the abstracted risk-mark row, and the two operations over them:
 * `search_risks` (one keyset page by RFC or by approximate name) and `screen_risks` (one entry per
 * requested RFC, zero-mark RFCs included).
 *
 * A mark is a listing, not a conviction: every non-empty answer says so, and each row says whether its
 * status is still in force (`is_active`), so an exoneration is never read as a mark against a party.
 *
 * @since 0.1.0
 */
import { excerpt } from "@service/core/Refusal"
import type { RequestContext } from "@service/core/RequestContext"
import { parseRfc } from "@service/market-warehouse/Rfc"
import { isActiveStatus } from "@service/market-warehouse/RiskStatus"
import { normalizeName } from "@service/market-warehouse/Text"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  type CoverageDeclaration,
  Envelope,
  EvidenceCategory,
  evidenceCategoryLabels,
  type Normalization,
  type ProvenanceEntry,
  SemanticWarning
} from "./Envelope.js"
import { sealRecordRef } from "./internal/refs.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { type EnvelopeOf, MarketData } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Paging from "./Paging.js"
import { MarkKind, markKinds } from "./RiskSummary.js"
import { Limit } from "./Suppliers.js"
import { TrimmedText, strict } from "./internal/fields.js"
import { licensedRows } from "./internal/visibility.js"
import { kit } from "./MarketKit.js"

/** The mark kinds (defined with the risk summary every RFC-bearing row carries). @since 0.1.0 @category models */
export { MarkKind, markKinds }

/** Most RFCs one screen_risks call may carry (larger batches are refused, never truncated). @since 0.1.0 @category constants */
export const maxScreenBatch = 50

/**
 * The structural bound of the `rfcs` array: far above {@link maxScreenBatch}, so a batch of 51 to 1000 is
 * refused with the semantic `batch_too_large` rather than a schema range error.
 */
const rfcsStructuralBound = 1000

const kindLabels: { readonly [K in MarkKind]: string } = {
  efos: "Barred-supplier listing (EFOS: invoices for simulated operations)",
  sancion: "Sanction or disqualification of a supplier or contractor"
}

// -----------------------------------------------------------------------------
// Inputs
// -----------------------------------------------------------------------------

const Rfc = TrimmedText(20).annotations({
  description: "RFC (12 characters for a company, 13 for a person): strong identity; case and separators ignored."
})

const searchFields = {
  rfc: Schema.optional(Rfc),
  entity_name: Schema.optional(TrimmedText(200)).annotations({
    description:
      "Name of the listed party (company or person). Matched approximately (accents, case, punctuation and legal-form suffixes ignored): results are candidates."
  }),
  mark_kinds: Schema.optional(Schema.Array(TrimmedText(32)).pipe(Schema.minItems(1), Schema.maxItems(10))).annotations({
    description:
      `Keep only these mark kinds: ${markKinds.join(", ")} (efos = barred-supplier listing, sancion = sanction or disqualification). Default: every kind.`
  }),
  limit: Schema.optional(Limit(maxPageSize)).annotations({
    description: `Page size, 1 to ${maxPageSize} (default ${defaultPageSize}).`
  }),
  cursor: Schema.optional(TrimmedText(2048)).annotations({
    description: "page.nextCursor of the previous response, to read the next page with the same filters."
  })
}

/** search_risks input (the same on every surface: it has no canonical-only field). @since 0.1.0 @category models */
export const SearchRisksInput = Schema.Struct(searchFields).annotations({ ...strict, identifier: "SearchRisksInput" })
/** @since 0.1.0 @category models */
export type SearchRisksInput = typeof SearchRisksInput.Type

/** screen_risks input. @since 0.1.0 @category models */
export const ScreenRisksInput = Schema.Struct({
  rfcs: Schema.Array(Rfc).pipe(Schema.minItems(1), Schema.maxItems(rfcsStructuralBound)).annotations({
    description: `RFCs to screen, 1 to ${maxScreenBatch}; one entry per RFC in this order, zero-mark RFCs included.`
  })
}).annotations({ ...strict, identifier: "ScreenRisksInput" })
/** @since 0.1.0 @category models */
export type ScreenRisksInput = typeof ScreenRisksInput.Type

// -----------------------------------------------------------------------------
// Results
// -----------------------------------------------------------------------------

/**
 * A risk mark in the abstracted projection: what was listed, about whom, under which legal basis and at
 * which stage. `status` is the warehouse's status word, `status_text` the publisher's wording.
 *
 * @since 0.1.0 @category models
 */
export const RiskMarkRow = Schema.Struct({
  evidence_category: EvidenceCategory,
  evidence_category_label: Schema.String,
  record_ref: Schema.String,
  record_fingerprint: Schema.String,
  kind: MarkKind,
  kind_label: Schema.String,
  legal_basis: Schema.String.annotations({ description: "art_69b, art_69b_bis or sfp_directory." }),
  subject_rfc: Schema.NullOr(Schema.String),
  subject_name: Schema.String,
  status: Schema.String.annotations({
    description:
      "presunto, definitivo, desvirtuado, sentencia_favorable, definitivo_69b_bis, sancion_multa, sancion_inhabilitacion, sancion_multa_inhabilitacion or sancion_otra."
  }),
  status_text: Schema.String,
  is_active: Schema.Boolean.annotations({
    description: "False for an exoneration (desvirtuado, sentencia favorable); true for a listing in force as published."
  }),
  listed_on: Schema.NullOr(Schema.String).annotations({ description: "Date of the stage that gives the status (YYYY-MM-DD)." }),
  stage_dates: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "Published date of each stage (presunto, desvirtuado, definitivo, sentencia_favorable, resolution, notification)."
  }),
  sanctioning_body: Schema.NullOr(Schema.String),
  sanction_type: Schema.NullOr(Schema.String),
  period: Schema.NullOr(Schema.String).annotations({ description: "Disqualification period as published." }),
  fine: Schema.NullOr(Schema.Struct({
    amount: Schema.String.annotations({ description: "Exact decimal, as published." }),
    currency: Schema.String
  }))
}).annotations({ identifier: "RiskMarkRow" })
/** @since 0.1.0 @category models */
export type RiskMarkRow = typeof RiskMarkRow.Type

/**
 * One screen_risks entry: the RFC as normalized, its marks (rows as in search_risks) and a summary.
 *
 * @since 0.1.0 @category models
 */
export const ScreenEntry = Schema.Struct({
  rfc: Schema.String,
  mark_count: Schema.Number,
  kinds: Schema.Array(MarkKind),
  any_active: Schema.Boolean,
  has_exoneration: Schema.Boolean,
  marks: Schema.Array(RiskMarkRow),
  warnings: Schema.optional(Schema.Array(SemanticWarning))
}).annotations({ identifier: "ScreenEntry" })
/** @since 0.1.0 @category models */
export type ScreenEntry = typeof ScreenEntry.Type

/** @since 0.1.0 @category models */
export const SearchRisksEnvelope = Envelope(Schema.Array(RiskMarkRow)).annotations({ identifier: "SearchRisksEnvelope" })

/** @since 0.1.0 @category models */
export const ScreenRisksEnvelope = Envelope(Schema.Array(ScreenEntry)).annotations({ identifier: "ScreenRisksEnvelope" })

const listingWarning: SemanticWarning = {
  code: "listing_not_conviction",
  message:
    "A risk mark is a published listing, not a conviction. A party may carry several marks, including published exonerations: read status and is_active of each mark."
}

const nameWarning: SemanticWarning = {
  code: "approximate_name_match",
  message:
    "entity_name is matched approximately: the results are candidates that may be other parties with similar names. Confirm identity by RFC where the mark publishes one."
}

const zeroMarksWarning: SemanticWarning = {
  code: "zero_results_with_coverage",
  message:
    "No published risk mark carries this RFC, and the corpus does hold published risk marks: this is an answer, not a missing source. Sanctions published without an RFC are found by entity_name in search_risks."
}

/** Said once per envelope rather than once per row: a provenance entry is a place of reading, not a verification. */
const provenanceStatement = "A publication of record, not a verification."

// -----------------------------------------------------------------------------
// Rows
// -----------------------------------------------------------------------------

const RiskDbRow = Schema.Struct({
  id: Schema.String,
  snapshot_id: Schema.String,
  fingerprint: Schema.String,
  kind: MarkKind,
  legal_basis: Schema.String,
  subject_rfc: Schema.NullOr(Schema.String),
  subject_name: Schema.String,
  status: Schema.String,
  status_text: Schema.String,
  listed_on: Schema.NullOr(Schema.String),
  // Read as text so both drivers hand over the same JSON.
  stage_dates: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.String })),
  sanctioning_body: Schema.NullOr(Schema.String),
  sanction_type: Schema.NullOr(Schema.String),
  period: Schema.NullOr(Schema.String),
  fine_amount: Schema.NullOr(Schema.String),
  fine_currency: Schema.NullOr(Schema.String),
  /** The first ordering key of a search page (listing date or name similarity), for its cursor position. */
  sort_key: Schema.optional(Schema.NullOr(Schema.Union(Schema.Number, Schema.String)))
})
type RiskDbRow = typeof RiskDbRow.Type
const decodeRiskRows = Schema.decodeUnknown(Schema.Array(RiskDbRow))

/** The columns every risk-mark read selects: never the source, its record id or the retrieval date. */
const RISK_COLUMNS = `r.id::text AS id, r.snapshot_id, r.fingerprint, r.kind, r.legal_basis, r.subject_rfc, r.subject_name,
  r.status, r.status_text, r.listed_on::text AS listed_on, r.stage_dates::text AS stage_dates, r.sanctioning_body,
  r.sanction_type, r.period, r.fine_amount::text AS fine_amount, r.fine_currency`

/**
 * Whether a mark's status is a listing in force (not an exoneration): the warehouse's definition, which its
 * per-RFC risk summaries use too. @since 0.1.0 @category rows
 */
export { isActiveStatus }

/** The abstracted row and its provenance entry, with one fresh record_ref for both. */
const project = (row: RiskDbRow) =>
  Effect.gen(function*() {
    const recordRef = yield* sealRecordRef({ kind: "risk_mark", id: row.id, fingerprint: row.fingerprint })
    const mark: RiskMarkRow = {
      evidence_category: "administrative_risk",
      evidence_category_label: evidenceCategoryLabels.administrative_risk,
      record_ref: recordRef,
      record_fingerprint: row.fingerprint,
      kind: row.kind,
      kind_label: kindLabels[row.kind],
      legal_basis: row.legal_basis,
      subject_rfc: row.subject_rfc,
      subject_name: row.subject_name,
      status: row.status,
      status_text: row.status_text,
      is_active: isActiveStatus(row.status),
      listed_on: row.listed_on,
      stage_dates: row.stage_dates,
      sanctioning_body: row.sanctioning_body,
      sanction_type: row.sanction_type,
      period: row.period,
      fine: row.fine_amount === null || row.fine_currency === null
        ? null
        : { amount: row.fine_amount, currency: row.fine_currency }
    }
    const provenance: ProvenanceEntry = {
      record_ref: recordRef,
      evidence_category: "administrative_risk",
      corpusSnapshot: row.snapshot_id,
      statement: provenanceStatement
    }
    return { mark, provenance }
  })

// -----------------------------------------------------------------------------
// Validation
// -----------------------------------------------------------------------------

const rfcShape =
  "An RFC has 12 characters for a company (3 letters, YYMMDD, 3-character homoclave) or 13 for a person (4 letters)."

/** The mark kinds asked for, lower-cased and de-duplicated; `invalid_mark_kind` names the unknown ones. */
const resolveMarkKinds = (
  raw: ReadonlyArray<string> | undefined
): Effect.Effect<ReadonlyArray<MarkKind> | undefined, MarketDataRefusal> => {
  if (raw === undefined) return Effect.succeed(undefined)
  const folded = raw.map((k) => k.trim().toLowerCase())
  const unknown = folded.filter((k) => !markKinds.some((known) => known === k))
  if (unknown.length > 0) {
    return Effect.fail(
      refuse(
        "invalid_mark_kind",
        `Unknown mark kind(s): ${excerpt(unknown.join(", "))}.`,
        `Use ${markKinds.join(" or ")} (efos = barred-supplier listing, sancion = sanction or disqualification), or omit mark_kinds for every kind.`,
        { field: "mark_kinds", allowedValues: markKinds }
      )
    )
  }
  return Effect.succeed(markKinds.filter((k) => folded.includes(k)))
}

interface SearchFilter {
  readonly rfc: string | undefined
  /** The folded name key compared with `subject_name_norm`. */
  readonly name: string | undefined
  readonly kinds: ReadonlyArray<MarkKind> | undefined
  readonly normalizations: ReadonlyArray<Normalization>
}

/**
 * Reads the search fields: at least one of rfc and entity_name (`query_too_broad`), a well-formed RFC, a
 * name with letters or digits, and known mark kinds.
 */
const interpretSearch = (input: SearchRisksInput): Effect.Effect<SearchFilter, MarketDataRefusal> =>
  Effect.gen(function*() {
    if (input.rfc === undefined && input.entity_name === undefined) {
      return yield* refuse(
        "query_too_broad",
        "A risk-mark search needs an RFC or a name; the whole list of marks is not offered.",
        "Add rfc (strong identity) or entity_name (approximate), optionally with mark_kinds."
      )
    }
    const normalizations: Array<Normalization> = []
    let rfc: string | undefined
    if (input.rfc !== undefined) {
      rfc = parseRfc(input.rfc)
      if (rfc === undefined) {
        return yield* refuse("invalid_field_value", `"${excerpt(input.rfc, 20)}" is not a well-formed RFC.`, rfcShape, {
          field: "rfc"
        })
      }
      if (rfc !== input.rfc) {
        normalizations.push({ field: "rfc", from: input.rfc, to: rfc, reason: "RFC upper-cased, separators removed" })
      }
    }
    let name: string | undefined
    if (input.entity_name !== undefined) {
      // The same key the loader stores in subject_name_norm, so "S.A. de C.V." and accents do not count.
      name = normalizeName(input.entity_name)
      if (name === "") {
        return yield* refuse(
          "invalid_field_value",
          "entity_name holds no letters or digits to match.",
          "Send the name of the listed company or person, e.g. \"Grupo Saurica del Sureste\".",
          { field: "entity_name" }
        )
      }
      if (name !== input.entity_name) {
        normalizations.push({
          field: "entity_name",
          from: input.entity_name,
          to: name,
          reason: "name folded (accents, case, punctuation) and legal-form suffix dropped for approximate matching"
        })
      }
    }
    const kinds = yield* resolveMarkKinds(input.mark_kinds)
    return { rfc, name, kinds, normalizations }
  })

/**
 * Reads the screen batch: at most {@link maxScreenBatch} RFCs (`batch_too_large`, never truncated), each a
 * well-formed RFC (`invalid_field_value` naming the first malformed ones).
 */
const interpretScreen = (
  input: ScreenRisksInput
): Effect.Effect<{ readonly rfcs: ReadonlyArray<string>; readonly normalizations: ReadonlyArray<Normalization> }, MarketDataRefusal> =>
  Effect.gen(function*() {
    if (input.rfcs.length > maxScreenBatch) {
      return yield* refuse(
        "batch_too_large",
        `screen_risks takes at most ${maxScreenBatch} RFCs; this batch has ${input.rfcs.length}. Nothing was screened.`,
        `Split the RFCs into batches of ${maxScreenBatch} or fewer and screen each batch.`,
        { field: "rfcs", allowedRange: { minimum: 1, maximum: maxScreenBatch } }
      )
    }
    const parsed = input.rfcs.map((raw, index) => ({ raw, index, rfc: parseRfc(raw) }))
    const malformed = parsed.filter((p) => p.rfc === undefined)
    if (malformed.length > 0) {
      const named = malformed.slice(0, 3).map((p) => `rfcs[${p.index}] "${excerpt(p.raw, 20)}"`).join(", ")
      return yield* refuse(
        "invalid_field_value",
        `${malformed.length} item(s) of rfcs are not well-formed RFCs: ${named}${malformed.length > 3 ? ", ..." : ""}.`,
        `${rfcShape} Fix or drop those items.`,
        { field: "rfcs" }
      )
    }
    const valid = parsed.flatMap(({ index, raw, rfc }) => (rfc === undefined ? [] : [{ index, raw, rfc }]))
    return {
      rfcs: valid.map((p) => p.rfc),
      normalizations: valid.flatMap(({ index, raw, rfc }) =>
        rfc === raw ? [] : [{ field: `rfcs[${index}]`, from: raw, to: rfc, reason: "RFC upper-cased, separators removed" }]
      )
    }
  })

// -----------------------------------------------------------------------------
// Queries
// -----------------------------------------------------------------------------

/** Minimum trigram similarity of a name candidate (pg_trgm's default threshold, stated so it cannot drift). */
const nameSimilarityMin = 0.3

/**
 * search_risks: one keyset page of marks by RFC (newest listing first) or by approximate name (most similar
 * first), optionally of some kinds only. Both given: both narrow, in RFC order.
 *
 * @since 0.1.0 @category queries
 */
export const searchRiskMarks = (
  input: SearchRisksInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<RiskMarkRow>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const filter = yield* interpretSearch(input)
    const market = yield* MarketData
    const { sql } = market
    const publication = yield* market.servingPublication
    const limit = input.limit ?? defaultPageSize
    const request: Paging.PageRequest = {
      operation: "search_risks",
      snapshotId: publication.snapshotId,
      filterDigest: Paging.filterDigest({ rfc: filter.rfc ?? null, name: filter.name ?? null, kinds: filter.kinds ?? null })
    }
    const position = yield* market.provideCrypto(Paging.resume(input.cursor, request))

    const conditions = [
      sql`r.snapshot_id = ${publication.snapshotId}`,
      licensedRows(sql, "r"),
      ...(filter.rfc === undefined ? [] : [sql`r.subject_rfc = ${filter.rfc}`]),
      // `%` lets the trigram index find candidates; the explicit bound keeps the answer independent of the
      // session's pg_trgm.similarity_threshold.
      ...(filter.name === undefined
        ? []
        : [sql`r.subject_name_norm % ${filter.name}`, sql`similarity(r.subject_name_norm, ${filter.name}) >= ${nameSimilarityMin}`]),
      ...(filter.kinds === undefined ? [] : [sql`r.kind IN ${sql.in(filter.kinds)}`])
    ]
    // Keys are never null: an undated mark sorts as the oldest.
    const byName = filter.rfc === undefined ? filter.name : undefined
    const keys: ReadonlyArray<Paging.Key> = byName === undefined
      ? [
        { expression: sql`coalesce(r.listed_on, DATE '0001-01-01')`, direction: "desc", type: "date" },
        { expression: sql`r.id`, direction: "asc", type: "bigint" }
      ]
      : [
        { expression: sql`similarity(r.subject_name_norm, ${byName})::float8`, direction: "desc", type: "float8" },
        { expression: sql`r.id`, direction: "asc", type: "bigint" }
      ]
    const first = keys[0]
    const sortKey = first === undefined ? sql`NULL` : first.type === "date" ? sql`${first.expression}::text` : first.expression
    const fetched = yield* sql`
      SELECT ${sql.literal(RISK_COLUMNS)}, ${sortKey} AS sort_key
      FROM market.risk_marks r
      WHERE ${sql.and([...conditions, ...Paging.after(sql, keys, position)])}
      ORDER BY ${Paging.orderBy(sql, keys)}
      LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeRiskRows), Effect.orDie)
    const { page, rows } = yield* market.provideCrypto(
      Paging.finish(fetched, { limit, request, positionOf: (row) => [row.sort_key ?? null, row.id] })
    )
    const projected = yield* market.provideCrypto(Effect.forEach(rows, project))

    return yield* market.envelope({
      operation: "search_risks",
      publication,
      startedAt,
      request: {
        ...(filter.rfc === undefined ? {} : { rfc: filter.rfc }),
        ...(filter.name === undefined ? {} : { entity_name: filter.name, entity_name_match: "approximate" }),
        ...(filter.kinds === undefined ? {} : { mark_kinds: filter.kinds }),
        limit,
        ...(input.cursor === undefined ? {} : { resumed_from_cursor: true })
      },
      normalizations: filter.normalizations,
      results: projected.map((p) => p.mark),
      provenance: projected.map((p) => p.provenance),
      page,
      categories: ["administrative_risk"],
      warnings: [
        ...(projected.length > 0 ? [listingWarning] : []),
        // Said even on an empty page: no candidate by name does not prove the party was never listed.
        ...(filter.name === undefined ? [] : [nameWarning])
      ],
      empty: projected.length === 0,
      rowsExamined: fetched.length,
      truncated: page.hasMore
    })
  }).pipe(Effect.withSpan("Risks.searchRisks", { captureStackTrace: false }))

/**
 * Rule 10: the corpus declares an effective risks source when the administrative_risk coverage is licensed
 * for display and has visible rows (the same coverage, and the same test, the envelope's
 * `zero_results_with_coverage` uses).
 */
const hasEffectiveRiskCoverage = (coverage: ReadonlyArray<CoverageDeclaration>): boolean =>
  coverage.some((c) => c.evidenceCategory === "administrative_risk" && c.licensedForDisplay && c.visibleRows > 0)

/**
 * screen_risks: one entry per requested RFC, in request order (a repeated RFC keeps each of its positions),
 * with every mark carrying it, newest listing first. A zero-mark entry says `zero_results_with_coverage` only
 * when the corpus has an effective risks source; the envelope says it only when the whole batch is empty.
 *
 * @since 0.1.0 @category queries
 */
export const screenRiskMarks = (
  input: ScreenRisksInput
): Effect.Effect<EnvelopeOf<ReadonlyArray<ScreenEntry>>, MarketDataRefusal, MarketData | RequestContext> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const { normalizations, rfcs } = yield* interpretScreen(input)
    const market = yield* MarketData
    const { sql } = market
    // The active publication and its coverage in one read, so the entries and the envelope judge one corpus.
    const { coverage, publication } = yield* market.coverage
    const effective = hasEffectiveRiskCoverage(coverage)
    const distinct = [...new Set(rfcs)]
    const fetched = yield* sql`
      SELECT ${sql.literal(RISK_COLUMNS)}
      FROM market.risk_marks r
      WHERE r.snapshot_id = ${publication.snapshotId}
        AND ${licensedRows(sql, "r")}
        AND r.subject_rfc IN ${sql.in(distinct)}
      ORDER BY r.subject_rfc, r.listed_on DESC NULLS LAST, r.id`.pipe(Effect.flatMap(decodeRiskRows), Effect.orDie)
    // Each row is sealed once: a repeated RFC shows the same record_ref at each of its positions.
    const projected = yield* market.provideCrypto(Effect.forEach(fetched, project))
    const marksOf = new Map<string, Array<RiskMarkRow>>()
    for (const { mark } of projected) {
      const rfc = mark.subject_rfc ?? ""
      marksOf.set(rfc, [...(marksOf.get(rfc) ?? []), mark])
    }
    const entries = rfcs.map((rfc): ScreenEntry => {
      const marks = marksOf.get(rfc) ?? []
      return {
        rfc,
        mark_count: marks.length,
        kinds: markKinds.filter((kind) => marks.some((m) => m.kind === kind)),
        any_active: marks.some((m) => m.is_active),
        has_exoneration: marks.some((m) => !m.is_active),
        marks,
        ...(marks.length === 0 && effective ? { warnings: [zeroMarksWarning] } : {})
      }
    })
    return yield* market.envelope({
      operation: "screen_risks",
      publication,
      startedAt,
      request: { rfcs },
      normalizations,
      results: entries,
      provenance: projected.map((p) => p.provenance),
      page: null,
      categories: ["administrative_risk"],
      warnings: projected.length > 0 ? [listingWarning] : [],
      empty: projected.length === 0,
      rowsExamined: fetched.length
    })
  }).pipe(Effect.withSpan("Risks.screenRisks", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// Declarations
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category operations */
export const searchRisks = kit.make({
  name: "search_risks",
  title: "Search risk marks",
  description:
    "Find published administrative risk marks (efos: barred-supplier listing; sancion: sanction or disqualification) by RFC or by approximate name. A mark is a listing, not a conviction; a party may carry several, including exonerations.",
  http: { method: "POST", path: "/risks/search", input: { kind: "body" } },
  cli: { words: ["risks", "search"] },
  input: SearchRisksInput,
  output: SearchRisksEnvelope,
  refuses: ["query_too_broad", "invalid_field_value", "invalid_mark_kind", "invalid_cursor", "cursor_stale", "serving_projection_unavailable", "serving_projection_stale"],
  paginates: true,
  capability: {
    question: "Which published administrative risk marks (EFOS listings, sanctions) name this RFC or a party with this name?",
    requires:
      "At least one of rfc (strong identity) and entity_name (approximate: candidates). mark_kinds optionally keeps efos or sancion.",
    example: { entity_name: "Humberto Reyes Baez", mark_kinds: ["sancion"], limit: 5 }
  },
  run: searchRiskMarks
})

/** @since 0.1.0 @category operations */
export const screenRisks = kit.make({
  name: "screen_risks",
  title: "Screen RFCs for risk marks",
  description:
    `Screen 1 to ${maxScreenBatch} RFCs at once: one entry per RFC in request order, including RFCs with no mark, each with its marks and whether any is in force or an exoneration. Marks published without an RFC are found by name with search_risks.`,
  http: { method: "POST", path: "/risks/screen", input: { kind: "body" } },
  cli: { words: ["risks", "screen"] },
  input: ScreenRisksInput,
  output: ScreenRisksEnvelope,
  refuses: ["batch_too_large", "invalid_field_value", "serving_projection_unavailable", "serving_projection_stale"],
  capability: {
    question: "Do any of these RFCs carry a published administrative risk mark, and is it in force or an exoneration?",
    requires: `rfcs: 1 to ${maxScreenBatch} RFCs (more is refused with batch_too_large, never truncated).`,
    example: { rfcs: ["GTA140724H10", "AAA091014835", "AAA010101AAA"] }
  },
  run: screenRiskMarks
})
