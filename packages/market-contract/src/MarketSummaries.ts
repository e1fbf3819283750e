/**
 * The market operations' own text summaries, which the CLI prints instead of its generic outline: supplier search
 * (rows, normalizations, warnings, and the command that reads the next page), one supplier observation, and the
 * capabilities document. Pure functions of the wire output, attached to the declarations' CLI binding.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import * as Schema from "effect/Schema"
import { CapabilitiesResult } from "./Capabilities.js"
import { Envelope, type SemanticWarning } from "./Envelope.js"
import { SupplierRow } from "./Suppliers.js"

/** @since 0.1.0 @category schemas */
export const SearchSuppliersEnvelope = Envelope(Schema.Array(SupplierRow)).annotations({ identifier: "SearchSuppliersEnvelope" })
/** @since 0.1.0 @category schemas */
export const GetSupplierEnvelope = Envelope(SupplierRow).annotations({ identifier: "GetSupplierEnvelope" })
/** @since 0.1.0 @category schemas */
export const CapabilitiesEnvelope = Envelope(CapabilitiesResult).annotations({ identifier: "CapabilitiesEnvelope" })

/** @since 0.1.0 @category models */
export type SearchSuppliersEnvelope = typeof SearchSuppliersEnvelope.Type
/** @since 0.1.0 @category models */
export type SupplierEnvelope = typeof GetSupplierEnvelope.Type
/** @since 0.1.0 @category models */
export type CapabilitiesEnvelope = typeof CapabilitiesEnvelope.Type

const contactText = (presence: SupplierRow["contact_presence"]): string => {
  const channels = [
    presence.has_phone ? "phone" : undefined,
    presence.has_email ? "email" : undefined,
    presence.has_website ? "website" : undefined
  ].filter((c) => c !== undefined)
  return channels.length === 0 ? "contact: none published" : `contact: ${channels.join(", ")}`
}

const placeText = (row: SupplierRow): string => {
  const state = row.state?.name ?? "state not published"
  return row.municipality === null ? state : `${row.municipality.name}, ${state}`
}

const scianText = (row: SupplierRow): string =>
  row.scian === null
    ? "SCIAN: not published"
    : `SCIAN ${row.scian.code}${row.scian.title === null ? "" : ` ${row.scian.title}`}`

const warningLines = (warnings: ReadonlyArray<SemanticWarning>): ReadonlyArray<string> =>
  warnings.map((w) => `! ${w.code}: ${w.message}`)

/**
 * One search row: a headline with name, place, SCIAN and contact presence, then the record_ref on its own
 * line, untruncated, because `suppliers get` needs it verbatim.
 *
 * @since 0.1.0 @category formatting
 */
export const supplierRowLines = (row: SupplierRow, position: number): ReadonlyArray<string> => [
  `${position}. ${row.name} · ${placeText(row)} · ${scianText(row)} · ${contactText(row.contact_presence)}`,
  `   ref: ${row.record_ref}`
]

/**
 * The compact summary of a supplier search: rows, warnings, and the command that reads the next page.
 *
 * @since 0.1.0 @category formatting
 */
export const searchSummary = (envelope: SearchSuppliersEnvelope, context: Operation.SummaryContext): string => {
  const rows = envelope.results
  const lines: Array<string> = []
  lines.push(
    rows.length === 0
      ? "No supplier observations matched."
      : `${rows.length} supplier observation${rows.length === 1 ? "" : "s"} (each a published observation, not a company):`
  )
  rows.forEach((row, i) => lines.push(...supplierRowLines(row, i + 1)))
  for (const n of envelope.interpretedRequest.normalizations) {
    lines.push(`~ ${n.field}: "${n.from}" read as "${n.to}" (${n.reason})`)
  }
  lines.push(...warningLines(envelope.semanticWarnings))
  const page = envelope.page
  const shown = page?.returned ?? rows.length
  if (page !== null && page.hasMore && page.nextCursor !== null) {
    lines.push(`shown ${shown}, more: yes — next: ${context.commandLine({ ...context.input, cursor: page.nextCursor })}`)
  } else {
    lines.push(`shown ${shown}, more: no`)
  }
  return lines.join("\n")
}

const orDash = (value: string | null): string => value ?? "—"

/**
 * The compact summary of one supplier observation.
 *
 * @since 0.1.0 @category formatting
 */
export const supplierSummary = (envelope: SupplierEnvelope): string => {
  const row = envelope.results
  const presence = row.contact_presence
  return [
    row.legal_name === null || row.legal_name === row.name ? row.name : `${row.name} (${row.legal_name})`,
    `  ${row.evidence_category_label}`,
    `  rfc: ${orDash(row.rfc)}`,
    `  place: ${placeText(row)} (state ${row.state?.code ?? "-"}${row.municipality === null ? "" : `, municipality ${row.municipality.code}`})`,
    `  ${scianText(row)}`,
    `  employment: ${orDash(row.employment_band)} · type: ${orDash(row.establishment_type)} · incorporated: ${
      orDash(row.incorporated_on)
    }`,
    `  ${contactText(presence)} (${presence.channel_count} channel${presence.channel_count === 1 ? "" : "s"})`,
    `  fingerprint: ${row.record_fingerprint}`,
    `  ref: ${row.record_ref}`,
    ...warningLines(envelope.semanticWarnings)
  ].join("\n")
}

const observedLine = (
  facet: string,
  list: { readonly values: ReadonlyArray<{ readonly value: string; readonly label: string | null; readonly visibleRows: number }> } | undefined
): ReadonlyArray<string> => {
  if (list === undefined) return []
  const shownValues = 8
  // Largest first: the values a caller is most likely to filter on.
  const byRows = [...list.values].sort((a, b) => b.visibleRows - a.visibleRows)
  const items = byRows.slice(0, shownValues).map((v) =>
    `${v.label === null ? v.value : `${v.label} (${v.value})`} ${v.visibleRows}`
  )
  const rest = list.values.length > shownValues ? `, … ${list.values.length - shownValues} more` : ""
  return [`  ${facet}: ${list.values.length} value${list.values.length === 1 ? "" : "s"} — ${items.join(", ")}${rest}`]
}

/**
 * The compact summary of the capabilities document.
 *
 * @since 0.1.0 @category formatting
 */
export const capabilitiesSummary = (envelope: CapabilitiesEnvelope): string => {
  const caps = envelope.results
  const lines: Array<string> = [
    `market-data capabilities (corpus ${envelope.corpusBasis.snapshotId}, published ${envelope.corpusBasis.publishedAt})`,
    "operations:"
  ]
  for (const op of caps.operations) {
    const traits = [op.metered ? "metered" : "free", ...(op.paginates ? ["paginates"] : [])].join(", ")
    lines.push(`  ${op.operation}  ${op.method} ${op.path}  (${traits})`)
    lines.push(`    ${op.question}`)
    lines.push(`    e.g. ${op.example.cli}`)
  }
  const observed = caps.observedValues
  const facets = [
    ...observedLine("states", observed.states),
    ...observedLine("scian_codes", observed.scian_codes),
    ...observedLine("evidence_categories", observed.evidence_categories)
  ]
  if (facets.length > 0) lines.push("observed values:", ...facets)
  lines.push(`query modes: ${caps.queryModes.join(", ")}`)
  lines.push(`page size: default ${caps.limits.defaultPageSize}, max ${caps.limits.maxPageSize}`)
  lines.push(`openapi: ${caps.openapiUrl}`)
  lines.push(...warningLines(envelope.semanticWarnings))
  return lines.join("\n")
}

/** @since 0.1.0 @category summaries */
export const searchSuppliers = Operation.summaryOf(SearchSuppliersEnvelope, searchSummary)
/** @since 0.1.0 @category summaries */
export const getSupplier = Operation.summaryOf(GetSupplierEnvelope, supplierSummary)
/** @since 0.1.0 @category summaries */
export const capabilities = Operation.summaryOf(CapabilitiesEnvelope, capabilitiesSummary)
