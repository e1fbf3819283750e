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
import * as Tabular from "./Tabular.js"

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

/**
 * One array item on one line: its scalar fields as `key: value`, nested values by their naming field or as
 * compact JSON (`--follow` prints items this way).
 *
 * @since 0.1.0 @category formatting
 */
export const itemLine = (item: unknown): string => {
  const scalar = scalarText(item)
  if (scalar !== undefined) return scalar
  if (!Predicate.isRecord(item)) return Tabular.cellText(item)
  return Object.entries(item).map(([key, value]) => `${key}: ${scalarText(value) ?? Tabular.cellText(value)}`).join(" · ")
}

/** How many rows of a nested list a summary shows. */
const shownItems = 20

/** A long text fact is cut here (a topic's body); --json has all of it. */
const factWidth = 200

const factText = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > factWidth ? `${flat.slice(0, factWidth - 1)}… (--json shows all)` : flat
}

const isCursorField = (key: string): boolean => key === "next_cursor" || key === "nextCursor"

/** Facts as `path: value` lines: nested objects by dotted path, lists of objects as indented tables. */
const factLines = (value: Readonly<Record<string, unknown>>, prefix: string, indent: string, depth: number): Array<string> => {
  const lines: Array<string> = []
  for (const [key, field] of Object.entries(value)) {
    if (isCursorField(key)) continue
    const name = `${prefix}${key}`
    const text = scalarText(field)
    if (text !== undefined) {
      lines.push(`${indent}${name}: ${factText(text)}`)
    } else if (Array.isArray(field)) {
      if (field.length === 0) lines.push(`${indent}${name}: (none)`)
      else if (field.every(isScalar)) lines.push(`${indent}${name}: ${factText(field.map((v) => scalarText(v) ?? "").join(", "))}`)
      else if (field.every(Predicate.isRecord)) {
        const rows = field.filter(Predicate.isRecord)
        lines.push(`${indent}${name} (${rows.length}):`)
        const table = Tabular.table(Tabular.columnsOf(rows), rows.slice(0, shownItems))
        lines.push(...table.split("\n").map((line) => `${indent}  ${line}`))
        if (rows.length > shownItems) lines.push(`${indent}  … ${rows.length - shownItems} more (--json shows all)`)
      } else lines.push(`${indent}${name}: ${factText(JSON.stringify(field))}`)
    } else if (Predicate.isRecord(field)) {
      if (Object.keys(field).length === 0) lines.push(`${indent}${name}: (none)`)
      else if (depth < 3) lines.push(...factLines(field, `${name}.`, indent, depth + 1))
      else lines.push(`${indent}${name}: ${factText(JSON.stringify(field))}`)
    }
  }
  return lines
}

/** `value` without the fields at `paths` (dotted). */
const omit = (value: Readonly<Record<string, unknown>>, paths: ReadonlyArray<string>): Readonly<Record<string, unknown>> => {
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    if (paths.includes(key)) continue
    const inner = paths.filter((path) => path.startsWith(`${key}.`)).map((path) => path.slice(key.length + 1))
    out[key] = inner.length > 0 && Predicate.isRecord(field) ? omit(field, inner) : field
  }
  return out
}

/**
 * What the generic summary needs besides the output: the operation's table hints and, for the next page's
 * command line, the summary context and whether the command pages.
 *
 * @since 0.1.0 @category models
 */
export interface Shape {
  readonly table?: Operation.CliTable | undefined
  readonly paged?: boolean | undefined
  readonly pagedBy?: "cursor" | "offset" | undefined
}

/**
 * The generic summary of any wire output: its rows as a table (`Tabular`), then its other fields as key facts
 * (nested objects by dotted path, nested lists of objects as small tables), then the command for the next page.
 * A single record is its key facts.
 *
 * @since 0.1.0 @category formatting
 */
export const describe = (output: unknown, shape: Shape = {}, context?: SummaryContext | undefined): string => {
  if (!Predicate.isRecord(output)) return Tabular.cellText(output)
  const rows = Tabular.rowsOf(output, shape.table)
  const lines: Array<string> = []
  if (rows !== undefined) {
    if (rows.rows.length === 0) lines.push(`No ${rows.field.replaceAll("_", " ")}.`)
    else {
      const noun = rows.field.replaceAll("_", " ")
      lines.push(`${rows.rows.length} ${rows.rows.length === 1 ? singular(noun) : noun}:`)
      lines.push(Tabular.table(Tabular.columnsOf(rows.rows, shape.table), rows.rows))
    }
  }
  // Facts of the fields before the rows come first (a company before its contacts), the rest after the table.
  const omitted = omit(output, shape.table?.omit ?? [])
  const keys = Object.keys(omitted)
  const split = rows === undefined ? keys.length : keys.indexOf(rows.field)
  const pick = (from: number, to: number) => Object.fromEntries(keys.slice(from, to).map((key) => [key, omitted[key]]))
  const before = factLines(pick(0, split), "", "", 0)
  const after = factLines(pick(split + 1, keys.length), "", "", 0)
  lines.unshift(...before, ...(before.length > 0 && lines.length > 0 ? [""] : []))
  if (after.length > 0 && lines.length > 0) lines.push("")
  lines.push(...after)
  const next = Tabular.nextCursorOf(output)
  if (next !== undefined) {
    if (shape.paged === true && context !== undefined) {
      lines.push(`next page: ${context.commandLine({ ...context.input, cursor: next })}`)
      lines.push(`every page: ${context.commandLine(Object.fromEntries(Object.entries(context.input).filter(([key]) => key !== "cursor")))} --all`)
    } else lines.push(`next_cursor: ${next}`)
  } else if (shape.pagedBy === "offset" && context !== undefined) {
    const after = Tabular.nextPageInput("offset", context.input, output, rows?.rows.length ?? 0)
    if (after !== undefined) {
      lines.push(`next page: ${context.commandLine(after)}`)
      lines.push(`every page: ${context.commandLine(Object.fromEntries(Object.entries(context.input).filter(([key]) => key !== "offset")))} --all`)
    }
  }
  return lines.join("\n")
}

/**
 * The summary of `output`: the operation's own when it has one and recognises the output, else {@link describe}.
 *
 * @since 0.1.0 @category formatting
 */
export const summary = (own: Operation.Summary | undefined, output: unknown, context: SummaryContext, shape: Shape = {}): string =>
  Option.getOrElse(own === undefined ? Option.none() : own(output, context), () => describe(output, shape, context))

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

/** What a refusal of access says beyond its message, by wire name: why (`reason: missing_scope`) and what was missing. */
const deniedDetails = (body: unknown): Array<string> =>
  Predicate.isRecord(body)
    ? blockLines(Object.fromEntries(Object.entries(body).filter(([key]) => key === "reason" || key === "required_scopes")))
    : []

/** A list field's name for one row: "1 delivery", not "1 deliveries". */
const singular = (noun: string): string =>
  noun.endsWith("ies") ? `${noun.slice(0, -3)}y` : /(ches|shes|sses|xes)$/.test(noun) ? noun.slice(0, -2) : noun.endsWith("s") ? noun.slice(0, -1) : noun

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
        ...deniedDetails(value.body),
        ...(value.credential === undefined ? [] : [`sent: ${value.credential.source}.`]),
        ...(value.credential?.loginUnused === true
          ? ["hint: `service login` keeps a token for this server; leave out --api-key and SERVICE_API_KEY to use it."]
          : ["hint: check --api-key / SERVICE_API_KEY, `service login --base-url <server>` and --workspace / SERVICE_WORKSPACE (before the command words)."])
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
