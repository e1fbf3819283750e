/**
 * What `service` prints: a summary of each wire output (a generic outline, or the operation's own
 * summary where one reads better: supplier search and get, capabilities), the wire output as JSON
 * (`--json`), failures for stderr as text or as the wire error body, the command line that repeats a call,
 * and the corpus reports. Pure functions from values to text, so they are tested without I/O.
 *
 * @since 0.1.0
 */
import type * as Operations from "@service/market-contract/Operations"
import type { SemanticWarning } from "@service/market-contract/Envelope"
import type { SupplierRow } from "@service/market-contract/Suppliers"
import type { Publication, SnapshotSummary } from "@service/market-warehouse/Corpus"
import type { LoadReport } from "@service/market-warehouse/Loader"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { Failure } from "./Failure.js"

/** @since 0.1.0 @category models */
export type SearchSuppliersEnvelope = Schema.Schema.Type<typeof Operations.searchSuppliers.output>
/** @since 0.1.0 @category models */
export type SupplierEnvelope = Schema.Schema.Type<typeof Operations.getSupplier.output>
/** @since 0.1.0 @category models */
export type CapabilitiesEnvelope = Schema.Schema.Type<typeof Operations.marketCapabilities.output>

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

// -----------------------------------------------------------------------------
// Summaries
// -----------------------------------------------------------------------------

/**
 * What a summary may use besides the output.
 *
 * @since 0.1.0 @category models
 */
export interface SummaryContext {
  /** The input sent (wire form). */
  readonly input: Readonly<Record<string, unknown>>
  /** The command line that sends `input` with this same command. */
  readonly commandLine: (input: Readonly<Record<string, unknown>>) => string
}

/**
 * An operation's own summary of its wire output; `None` falls back to the generic outline (for an output
 * it does not recognise).
 *
 * @since 0.1.0 @category models
 */
export type Summary = (output: unknown, context: SummaryContext) => Option.Option<string>

/** @since 0.1.0 @category models */
export type Summaries = Readonly<Record<string, Summary>>

const scalarText = (value: unknown): string | undefined => {
  if (value === null) return "—"
  if (Predicate.isString(value)) return value
  if (Predicate.isNumber(value) || Predicate.isBoolean(value) || Predicate.isBigInt(value)) return String(value)
  return undefined
}

const isScalar = (value: unknown): boolean => scalarText(value) !== undefined

const shownItems = 20

/**
 * One array item on one line: its scalar fields as `key: value`, nested values elided.
 *
 * @since 0.1.0 @category formatting
 */
export const itemLine = (item: unknown): string => {
  const scalar = scalarText(item)
  if (scalar !== undefined) return scalar
  if (Array.isArray(item)) return `[${item.length} items]`
  if (!Predicate.isRecord(item)) return String(item)
  return Object.entries(item)
    .map(([key, value]) => {
      const text = scalarText(value)
      if (text !== undefined) return `${key}: ${text}`
      if (Array.isArray(value) && value.every(isScalar)) return `${key}: ${value.map((v) => scalarText(v) ?? "").join(", ")}`
      return `${key}: {…}`
    })
    .join(" · ")
}

const outlineLines = (value: unknown, indent: string): Array<string> => {
  if (!Predicate.isRecord(value)) return [`${indent}${itemLine(value)}`]
  const lines: Array<string> = []
  for (const [key, field] of Object.entries(value)) {
    const text = scalarText(field)
    if (text !== undefined) {
      lines.push(`${indent}${key}: ${text}`)
    } else if (Array.isArray(field)) {
      if (field.every(isScalar)) {
        lines.push(`${indent}${key}: ${field.length === 0 ? "(none)" : field.map((v) => scalarText(v) ?? "").join(", ")}`)
        continue
      }
      lines.push(`${indent}${key}: (${field.length})`)
      field.slice(0, shownItems).forEach((item, i) => lines.push(`${indent}  ${i + 1}. ${itemLine(item)}`))
      if (field.length > shownItems) lines.push(`${indent}  … ${field.length - shownItems} more (--json shows all)`)
    } else if (Predicate.isRecord(field)) {
      lines.push(`${indent}${key}:`, ...outlineLines(field, `${indent}  `))
    }
  }
  return lines
}

/**
 * The generic summary of any wire output: scalar fields as `key: value`, objects indented, arrays of
 * objects one line per item (the first 20).
 *
 * @since 0.1.0 @category formatting
 */
export const outline = (output: unknown): string => outlineLines(output, "").join("\n")

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
export const searchSummary = (envelope: SearchSuppliersEnvelope, context: SummaryContext): string => {
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

/**
 * A summary that reads the wire output with `schema` first: an output it does not decode gets the outline.
 *
 * @since 0.1.0 @category constructors
 */
export const summaryOf = <A, I>(
  schema: Schema.Schema<A, I>,
  render: (value: A, context: SummaryContext) => string
): Summary => {
  const decode = Schema.decodeUnknownOption(schema)
  return (output, context) => Option.map(decode(output), (value) => render(value, context))
}

/**
 * The operations whose summary is their own, by operation name.
 *
 * @since 0.1.0 @category formatting
 */
export const marketSummaries = (operations: {
  readonly searchSuppliers: typeof Operations.searchSuppliers
  readonly getSupplier: typeof Operations.getSupplier
  readonly marketCapabilities: typeof Operations.marketCapabilities
}): Summaries => ({
  [operations.searchSuppliers.name]: summaryOf(operations.searchSuppliers.output, searchSummary),
  [operations.getSupplier.name]: summaryOf(operations.getSupplier.output, supplierSummary),
  [operations.marketCapabilities.name]: summaryOf(operations.marketCapabilities.output, capabilitiesSummary)
})

/**
 * The summary of `output`: the operation's own when it has one and recognises the output, else the outline.
 *
 * @since 0.1.0 @category formatting
 */
export const summary = (summaries: Summaries, operation: string, output: unknown, context: SummaryContext): string => {
  const own = summaries[operation]
  return Option.getOrElse(own === undefined ? Option.none() : own(output, context), () => outline(output))
}

// -----------------------------------------------------------------------------
// Failures
// -----------------------------------------------------------------------------

/** A block as `path: value` lines, by its wire names, so they can be grepped (`semantic_code: ...`). */
const blockLines = (value: Readonly<Record<string, unknown>>, prefix = ""): Array<string> =>
  Object.entries(value).flatMap(([key, field]) => {
    const name = `${prefix}${key}`
    const text = scalarText(field)
    if (text !== undefined) return [`${name}: ${text}`]
    if (Array.isArray(field)) return [`${name}: ${field.map((item) => scalarText(item) ?? JSON.stringify(item)).join(", ")}`]
    if (Predicate.isRecord(field)) return blockLines(field, `${name}.`)
    return []
  })

/**
 * A failure as printed on stderr. A refusal lists its block by wire names (`semantic_code`, `why`,
 * `suggested_correction`, `recovery.action`...).
 *
 * @since 0.1.0 @category formatting
 */
export const failure = (value: Failure): string => {
  switch (value._tag) {
    case "Refused": {
      const origin = value.status === undefined
        ? "refused before sending (input schema)"
        : `refused (HTTP ${value.status}${value.requestId === undefined ? "" : `, request_id ${value.requestId}`})`
      return [`error: ${value.key.replaceAll("_", "-")} ${origin}`, ...blockLines(value.block)].join("\n")
    }
    case "Denied": {
      const where = [
        ...(value.status === undefined ? [] : [`HTTP ${value.status}`]),
        ...(value.requestId === undefined ? [] : [`request_id ${value.requestId}`])
      ]
      return [
        `error: ${value.code}${where.length === 0 ? "" : ` (${where.join(", ")})`}: ${value.message}`,
        "hint: check --api-key / SERVICE_API_KEY and --workspace / SERVICE_WORKSPACE (both go before the command words)."
      ].join("\n")
    }
    case "Unreachable":
      return [
        `error: could not reach ${value.baseUrl}: ${value.reason}`,
        "hint: is the server running? Set --base-url (before the command words) or SERVICE_BASE_URL."
      ].join("\n")
    case "Unexpected":
      return `error: ${value.message}`
    case "Invalid":
      return `error: ${value.message}`
  }
}

/**
 * A failure as `--json` prints it on stderr: the wire error body when the server sent one (a refusal carries
 * its block under the codec's key), otherwise a body of the same shape with a local `code`.
 *
 * @since 0.1.0 @category formatting
 */
export const failureJson = (value: Failure): string => {
  switch (value._tag) {
    case "Refused":
      return json(value.body)
    case "Denied":
      return json(Predicate.isRecord(value.body) ? value.body : { code: value.code, message: value.message })
    case "Unreachable":
      return json({ code: "UNREACHABLE", message: `could not reach ${value.baseUrl}: ${value.reason}` })
    case "Unexpected":
      return json(Predicate.isRecord(value.body) ? value.body : { code: "UNEXPECTED", message: value.message })
    case "Invalid":
      return json({ code: "USAGE", message: value.message })
  }
}

// -----------------------------------------------------------------------------
// Corpus reports
// -----------------------------------------------------------------------------

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
