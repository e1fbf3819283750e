/**
 * Rows and columns read from any operation's wire output, for the text summary, `--format csv` and `--all`:
 *
 * - the rows are the field the declaration names (`cli.table.rows`), else the first top-level field holding
 *   an array of objects (`contacts`, `arrivals`, an envelope's `results`); an output with an `id` is one record;
 * - the columns are the declaration's (`cli.table.columns`, dotted paths), else chosen from the rows
 *   themselves: identifiers, names and titles, statuses and kinds, counts and amounts, the first date, in the
 *   rows' own field order; long text (bodies, sealed refs) and nested lists are left to `--json`;
 * - the next page's cursor is `next_cursor`, `nextCursor` or `page.nextCursor`, whichever the output has.
 *
 * Pure functions from values to text, so they are tested without I/O.
 *
 * @since 0.1.0
 */
import type * as Operation from "@service/core/Operation"
import * as Predicate from "effect/Predicate"

/** @since 0.1.0 @category models */
export type Row = Readonly<Record<string, unknown>>

/** @since 0.1.0 @category models */
export interface Column {
  /** The header: the dotted path (`company.name`). */
  readonly name: string
  readonly path: ReadonlyArray<string>
}

/** @since 0.1.0 @category models */
export interface Rows {
  /** The output field holding the rows. */
  readonly field: string
  readonly rows: ReadonlyArray<Row>
}

const isRowList = (value: unknown): value is ReadonlyArray<Row> =>
  Array.isArray(value) && value.every(Predicate.isRecord) && value.length > 0

/**
 * The rows of an output: the declared field, else the first top-level array of objects. An empty array counts
 * when it is the declared field or the only array of the output.
 *
 * @since 0.1.0 @category reading
 */
export const rowsOf = (output: unknown, hint?: Operation.CliTable | undefined): Rows | undefined => {
  if (!Predicate.isRecord(output)) return undefined
  if (hint?.rows !== undefined) {
    const declared = output[hint.rows]
    return Array.isArray(declared) ? { field: hint.rows, rows: declared.filter(Predicate.isRecord) } : undefined
  }
  // A record with an id is one record, whatever lists it holds (a Pipeline's stages): key facts, not rows.
  if (Predicate.isString(output["id"])) return undefined
  const entries = Object.entries(output)
  for (const [field, value] of entries) if (isRowList(value)) return { field, rows: value }
  const arrays = entries.filter(([, value]) => Array.isArray(value))
  const [only] = arrays
  return arrays.length === 1 && only !== undefined && Array.isArray(only[1]) && only[1].length === 0 ? { field: only[0], rows: [] } : undefined
}

/**
 * The next page's cursor of an output, `undefined` on the last page or when it has none.
 *
 * @since 0.1.0 @category reading
 */
export const nextCursorOf = (output: unknown): string | undefined => {
  if (!Predicate.isRecord(output)) return undefined
  const page = output["page"]
  const candidates = [output["next_cursor"], output["nextCursor"], Predicate.isRecord(page) ? page["nextCursor"] : undefined]
  return candidates.find(Predicate.isString)
}

/**
 * The input of the page after `output`, or `undefined` on the last page: the next cursor for a cursor-paged input,
 * the offset past the rows read while the output says `has_more` for an offset-paged one.
 *
 * @since 0.1.0 @category reading
 */
export const nextPageInput = (
  pagedBy: "cursor" | "offset",
  input: Readonly<Record<string, unknown>>,
  output: unknown,
  rowCount: number
): Readonly<Record<string, unknown>> | undefined => {
  if (pagedBy === "cursor") {
    const next = nextCursorOf(output)
    return next === undefined ? undefined : { ...input, cursor: next }
  }
  if (!Predicate.isRecord(output) || output["has_more"] !== true || rowCount === 0) return undefined
  const from = input["offset"]
  return { ...input, offset: (typeof from === "number" ? from : 0) + rowCount }
}

/**
 * The value at a dotted path.
 *
 * @since 0.1.0 @category reading
 */
export const at = (row: unknown, path: ReadonlyArray<string>): unknown => {
  let current = row
  for (const key of path) {
    if (!Predicate.isRecord(current)) return undefined
    current = current[key]
  }
  return current
}

const isScalar = (value: unknown): value is string | number | boolean | bigint | null =>
  value === null || Predicate.isString(value) || Predicate.isNumber(value) || Predicate.isBoolean(value) || Predicate.isBigInt(value)

/** The field of a nested object that names it in one cell (`company.name`). */
const namingFields = ["name", "title", "label", "slug", "id"]

/**
 * A value in one cell: a scalar as text (`-` for null or absent), a list of scalars joined, an object by the
 * field that names it, anything else as compact JSON.
 *
 * @since 0.1.0 @category formatting
 */
export const cellText = (value: unknown): string => {
  if (value === null || value === undefined) return "-"
  if (isScalar(value)) return String(value)
  if (Array.isArray(value)) return value.every(isScalar) ? value.map((item) => (item === null ? "-" : String(item))).join(", ") : `${value.length} items`
  if (Predicate.isRecord(value)) {
    const naming = namingFields.find((field) => isScalar(value[field]) && value[field] !== null)
    if (naming !== undefined) return String(value[naming])
  }
  return JSON.stringify(value)
}

const scoreOf = (key: string, values: ReadonlyArray<unknown>): number => {
  const present = values.filter((value) => value !== null && value !== undefined)
  if (present.length === 0) return 10
  if (present.every(Predicate.isBoolean)) return 30
  if (present.every(Array.isArray)) return present.every((value) => Array.isArray(value) && value.every(isScalar)) ? 35 : 0
  if (present.every(Predicate.isString)) {
    const texts = present.filter(Predicate.isString)
    const average = texts.reduce((sum, text) => sum + text.length, 0) / texts.length
    if (average > 60) return 0
  }
  const name = key.toLowerCase()
  if (name === "id") return 100
  if (/(^|_)(name|title|label|slug|email|word|rfc)$/.test(name)) return 90
  if (/(^|_)(status|outcome|role|kind|type|state|trust|result|code|category|scope)$/.test(name)) return 80
  if (present.every(Predicate.isNumber)) return 70
  if (/(_at|_on|date|_until)$/.test(name)) return 50
  if (name.endsWith("_id")) return 45
  return 40
}

const maxColumns = 7

/**
 * The columns a table of `rows` shows: the declared ones, else the most useful scalar fields (at most 7) in
 * the rows' field order. `all` keeps every scalar field (for CSV), the chosen ones first.
 *
 * @since 0.1.0 @category reading
 */
export const columnsOf = (rows: ReadonlyArray<Row>, hint?: Operation.CliTable | undefined, all = false): ReadonlyArray<Column> => {
  const declared = (hint?.columns ?? []).map((name): Column => ({ name, path: name.split(".") }))
  if (declared.length > 0 && !all) return declared
  const sample = rows.slice(0, 50)
  const keys: Array<string> = []
  for (const row of sample) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key)
  const candidates: Array<{ readonly column: Column; readonly score: number; readonly order: number }> = []
  let firstDate = true
  keys.forEach((key, order) => {
    const values = sample.map((row) => row[key])
    const present = values.filter((value) => value !== null && value !== undefined)
    if (present.length > 0 && present.every(Predicate.isRecord)) {
      // A nested object shows as its naming field (company.name), when every one has it.
      const naming = namingFields.find((field) => present.every((value) => Predicate.isRecord(value) && isScalar(value[field])))
      if (naming !== undefined) candidates.push({ column: { name: `${key}.${naming}`, path: [key, naming] }, score: 55, order })
      return
    }
    let score = scoreOf(key, values)
    if (/(_at|_on|date|_until)$/.test(key.toLowerCase()) && score === 50) {
      score = firstDate ? 50 : 20
      firstDate = false
    }
    if (score > 0 || all) candidates.push({ column: { name: key, path: [key] }, score: score > 0 ? score : 1, order })
  })
  // With several rows, a column holding one value in every row says nothing a row needs (each row's category).
  const varied = sample.length < 2 || all ? candidates : candidates.filter((c) => new Set(sample.map((row) => cellText(at(row, c.column.path)))).size > 1)
  const chosen = [...(varied.length >= 2 ? varied : candidates)].sort((a, b) => b.score - a.score || a.order - b.order).slice(0, maxColumns)
  const shown = (declared.length > 0 ? declared : chosen.sort((a, b) => a.order - b.order).map((c) => c.column))
  if (!all) return shown
  const rest = candidates.map((c) => c.column).filter((column) => !shown.some((s) => s.name === column.name))
  return [...shown, ...rest]
}

const widthCap = 40

/**
 * Column widths for `rows` (at most 40 characters, at least the header).
 *
 * @since 0.1.0 @category formatting
 */
export const widthsOf = (columns: ReadonlyArray<Column>, rows: ReadonlyArray<Row>): ReadonlyArray<number> =>
  columns.map((column) => Math.min(widthCap, Math.max(column.name.length, ...rows.map((row) => cellText(at(row, column.path)).length))))

const cut = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ")
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat.padEnd(width)
}

/**
 * One line of a table: the cells cut or padded to `widths`.
 *
 * @since 0.1.0 @category formatting
 */
export const line = (cells: ReadonlyArray<string>, widths: ReadonlyArray<number>): string =>
  cells.map((cell, i) => cut(cell, widths[i] ?? cell.length)).join("  ").trimEnd()

/**
 * The header line of a table.
 *
 * @since 0.1.0 @category formatting
 */
export const headerLine = (columns: ReadonlyArray<Column>, widths: ReadonlyArray<number>): string => line(columns.map((c) => c.name), widths)

/**
 * One row of a table.
 *
 * @since 0.1.0 @category formatting
 */
export const rowLine = (columns: ReadonlyArray<Column>, widths: ReadonlyArray<number>, row: Row): string =>
  line(columns.map((column) => cellText(at(row, column.path))), widths)

/**
 * Rows as aligned columns under a header line.
 *
 * @since 0.1.0 @category formatting
 */
export const table = (columns: ReadonlyArray<Column>, rows: ReadonlyArray<Row>): string => {
  const widths = widthsOf(columns, rows)
  return [headerLine(columns, widths), ...rows.map((row) => rowLine(columns, widths, row))].join("\n")
}

/**
 * A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled.
 *
 * @since 0.1.0 @category csv
 */
export const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text)

/**
 * A CSV record; an absent or null value is an empty field, a list of scalars is joined with `; `.
 *
 * @since 0.1.0 @category csv
 */
export const csvLine = (cells: ReadonlyArray<unknown>): string =>
  cells.map((value) =>
    csvField(
      value === null || value === undefined
        ? ""
        : Array.isArray(value) && value.every(isScalar)
        ? value.map((item) => (item === null ? "" : String(item))).join("; ")
        : cellText(value)
    )
  ).join(",")

/**
 * The CSV header line of `columns`.
 *
 * @since 0.1.0 @category csv
 */
export const csvHeader = (columns: ReadonlyArray<Column>): string => csvLine(columns.map((column) => column.name))

/**
 * One row as a CSV record.
 *
 * @since 0.1.0 @category csv
 */
export const csvRow = (columns: ReadonlyArray<Column>, row: Row): string => csvLine(columns.map((column) => at(row, column.path)))
