import * as Schema from "effect/Schema"
import { MarkKind, type RiskSummary } from "../RiskSummary.js"

/**
 * Joins a row to its RFC's summary in the same snapshot (`rs`); at most one summary per RFC, so the join never
 * multiplies rows. `alias` and `rfcColumn` are code, never input.
 */
export const riskSummaryJoin = (alias: string, rfcColumn: string): string =>
  `LEFT JOIN market.risk_summaries rs ON rs.snapshot_id = ${alias}.snapshot_id AND rs.rfc = ${alias}.${rfcColumn}`

/** The summary columns a read selects alongside {@link riskSummaryJoin}. */
export const RISK_SUMMARY_COLUMNS = `rs.mark_count AS risk_mark_count, rs.kinds AS risk_kinds,
  rs.any_active AS risk_any_active, rs.has_exoneration AS risk_has_exoneration`

/** The summary columns as read: all null when no summary matched (no RFC, or an RFC without marks). */
export const riskSummaryDbFields = {
  risk_mark_count: Schema.NullOr(Schema.Number),
  risk_kinds: Schema.NullOr(Schema.Array(MarkKind)),
  risk_any_active: Schema.NullOr(Schema.Boolean),
  risk_has_exoneration: Schema.NullOr(Schema.Boolean)
}

const RiskSummaryDbRow = Schema.Struct(riskSummaryDbFields)

/** A row's `risk`: null without an RFC; an RFC no mark carries gets the zero summary. */
export const riskSummaryOf = (rfc: string | null, row: typeof RiskSummaryDbRow.Type): RiskSummary | null =>
  rfc === null
    ? null
    : {
      mark_count: row.risk_mark_count ?? 0,
      kinds: row.risk_kinds ?? [],
      any_active: row.risk_any_active ?? false,
      has_exoneration: row.risk_has_exoneration ?? false
    }
