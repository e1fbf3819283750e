/**
 * What `service` prints: compact human summaries of envelopes (the default), the full envelope as JSON
 * (`--json`), and failures for stderr. Pure functions from values to text, so they are tested without I/O.
 *
 * @since 0.1.0
 */
import type { Publication, SnapshotSummary } from "@service/market-contract/Corpus"
import type { LoadReport } from "@service/market-contract/Loader"
import type * as Operations from "@service/market-contract/Operations"
import type { SemanticWarning } from "@service/market-contract/Envelope"
import type { SupplierRow } from "@service/market-contract/Suppliers"
import type * as Schema from "effect/Schema"
import type { Failure } from "./Failure.js"

/** @since 0.1.0 @category models */
export type SearchSuppliersEnvelope = Schema.Schema.Type<typeof Operations.searchSuppliers.output>
/** @since 0.1.0 @category models */
export type SupplierEnvelope = Schema.Schema.Type<typeof Operations.getSupplier.output>
/** @since 0.1.0 @category models */
export type CapabilitiesEnvelope = Schema.Schema.Type<typeof Operations.marketCapabilities.output>
/** The search input the CLI sends (model-facing: no source selection). @since 0.1.0 @category models */
export type SearchSuppliersInput = Schema.Schema.Type<typeof Operations.searchSuppliers.modelInput>

/**
 * Pretty-printed JSON, as `--json` prints it.
 *
 * @since 0.1.0 @category formatting
 */
export const json = (value: unknown): string => JSON.stringify(value, null, 2)

/**
 * Quotes a word for a POSIX shell only when it needs quoting, so printed commands can be pasted back.
 *
 * @since 0.1.0 @category formatting
 */
export const shellQuote = (word: string): string =>
  /^[A-Za-z0-9_./:=,@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

/**
 * The command line that repeats a search with the same filters, optionally resuming at `cursor`.
 *
 * @since 0.1.0 @category formatting
 */
export const searchCommandLine = (input: SearchSuppliersInput, cursor?: string): string => {
  const flags: Array<string> = []
  const add = (flag: string, value: string | number | undefined) => {
    if (value !== undefined) flags.push(`--${flag}`, shellQuote(String(value)))
  }
  add("query", input.query)
  add("state", input.state)
  add("scian-codes", input.scian_codes === undefined ? undefined : input.scian_codes.join(","))
  add("rfc", input.rfc)
  add("limit", input.limit)
  add("query-mode", input.query_mode)
  add("cursor", cursor)
  return ["service market suppliers search", ...flags].join(" ")
}

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
 * The compact summary of a supplier search: rows, warnings, and how to read the next page.
 *
 * @since 0.1.0 @category formatting
 */
export const searchSummary = (envelope: SearchSuppliersEnvelope, input: SearchSuppliersInput): string => {
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
    lines.push(`shown ${shown}, more: yes — next: ${searchCommandLine(input, page.nextCursor)}`)
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

/**
 * A failure as printed on stderr. Refusals list the `market_data` fields by their wire names so they can be
 * grepped: `semantic_code`, `why`, `suggested_correction`, `recovery.action`.
 *
 * @since 0.1.0 @category formatting
 */
export const failure = (value: Failure): string => {
  switch (value._tag) {
    case "Refused": {
      const block = value.block
      const origin = value.status === undefined
        ? "refused before sending (input schema)"
        : `refused (HTTP ${value.status}${value.requestId === undefined ? "" : `, request_id ${value.requestId}`})`
      return [
        `error: market-data ${origin}`,
        `semantic_code: ${block.semantic_code}`,
        `why: ${block.why}`,
        `suggested_correction: ${block.suggested_correction}`,
        `recovery.action: ${block.recovery.action}`,
        `retryable: ${block.retryable}`,
        ...(block.field === undefined ? [] : [`field: ${block.field}`]),
        ...(block.allowed_values === undefined ? [] : [`allowed_values: ${block.allowed_values.join(", ")}`])
      ].join("\n")
    }
    case "Denied": {
      const where = [
        ...(value.status === undefined ? [] : [`HTTP ${value.status}`]),
        ...(value.requestId === undefined ? [] : [`request_id ${value.requestId}`])
      ]
      return [
        `error: ${value.code}${where.length === 0 ? "" : ` (${where.join(", ")})`}: ${value.message}`,
        "hint: check --api-key / SERVICE_API_KEY and --workspace / SERVICE_WORKSPACE (both go before `market`)."
      ].join("\n")
    }
    case "Unreachable":
      return [
        `error: could not reach ${value.baseUrl}: ${value.reason}`,
        "hint: is the server running? Set --base-url (before `market`) or SERVICE_BASE_URL."
      ].join("\n")
    case "Unexpected":
      return `error: ${value.message}`
    case "Invalid":
      return `error: ${value.message}`
  }
}

/**
 * What a `corpus load` did, per file: rows accepted and rejected (with the first reasons), records written per
 * kind, currency spellings mapped.
 *
 * @since 0.1.0 @category formatting
 */
export const loadSummary = (
  snapshotId: string,
  reports: ReadonlyArray<LoadReport>,
  published: Publication | undefined
): string => {
  const lines: Array<string> = [`snapshot ${snapshotId}`]
  for (const r of reports) {
    const records = Object.entries(r.records).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(", ")
    lines.push(
      `${r.file} (${r.kind} -> ${r.sourceSlug}, retrieved ${r.retrievedOn}): ${r.accepted} accepted, ${r.rejected} rejected, ${r.inserted} new records`
    )
    if (records.length > 0) lines.push(`  records: ${records}`)
    for (const m of r.currencyMappings) lines.push(`  currency ${m.reported} loaded as ${m.code} (${m.count} records)`)
    for (const reject of r.rejects.slice(0, 5)) lines.push(`  rejected line ${reject.line}: ${reject.reason}`)
    if (r.rejects.length > 5) lines.push(`  ... ${r.rejects.length - 5} more rejects (service corpus status)`)
  }
  lines.push(published === undefined ? "not published yet: service corpus publish" : `published at ${published.publishedAt.toISOString()}`)
  return lines.join("\n")
}

/**
 * Snapshots with their rows per source and kind, loads and first rejects.
 *
 * @since 0.1.0 @category formatting
 */
export const statusSummary = (
  snapshots: ReadonlyArray<SnapshotSummary>,
  details: ReadonlyArray<{
    readonly snapshot: SnapshotSummary
    readonly counts: ReadonlyArray<{ readonly recordKind: string; readonly sourceSlug: string; readonly rows: number }>
    readonly rejects: ReadonlyArray<{ readonly fileName: string; readonly line: number; readonly reason: string }>
  }>
): string => {
  if (snapshots.length === 0) return "no snapshots yet: service corpus load <kind> <files...>"
  const lines: Array<string> = []
  for (const d of details) {
    const s = d.snapshot
    lines.push(`${s.id}  ${s.status}${s.publishedAt === null ? "" : `  published ${s.publishedAt.toISOString()}`}`)
    for (const c of d.counts) lines.push(`  ${c.recordKind.padEnd(21)} ${c.sourceSlug.padEnd(16)} ${c.rows}`)
    for (const l of s.loads) lines.push(`  load ${l.fileName}: ${l.accepted} accepted, ${l.rejected} rejected`)
    for (const r of d.rejects) lines.push(`  reject ${r.fileName}:${r.line} ${r.reason}`)
  }
  const retired = snapshots.filter((s) => s.status === "retired").length
  if (retired > 0) lines.push(`${retired} retired snapshot(s)`)
  return lines.join("\n")
}
