/**
 * What `service` prints: a summary of each wire output (a generic outline, or the operation's own summary
 * where its declaration gives one, `cli.summary`), the wire output as JSON (`--json`), failures for stderr as
 * text or as the wire error body, and the command line that repeats a call. Pure functions from values to text,
 * so they are tested without I/O.
 *
 * @since 0.1.0
 */
import type * as Operation from "@service/core/Operation"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type { Failure } from "./Failure.js"

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

/** @since 0.1.0 @category models */
export type SummaryContext = Operation.SummaryContext

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

/**
 * The summary of `output`: the operation's own when it has one and recognises the output, else the outline.
 *
 * @since 0.1.0 @category formatting
 */
export const summary = (own: Operation.Summary | undefined, output: unknown, context: SummaryContext): string =>
  Option.getOrElse(own === undefined ? Option.none() : own(output, context), () => outline(output))

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
