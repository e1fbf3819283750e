/**
 * The Secretaría de la Función Pública "Directorio de Proveedores y Contratistas Sancionados" as a
 * {@link SourceParser}: one `RiskMark` (kind `sancion`) per row; the directory has no RFC, so it gives no
 * supplier observations (suppliers are matched to it by name elsewhere).
 *
 * The file is not standard CSV: Windows-1252, fields separated by a comma followed by a TAB (",\t"; the header
 * uses ", \t"), values never quoted and free to contain commas and quotes. It is read with csv-parse on those two
 * delimiters and quoting off. HECHOS DE LA IRREGULARIDAD (which carries HTML such as "<br>") and OBJETO SOCIAL are
 * not stored, so no HTML is handled.
 *
 * Malformed rows: one published record (OSCAR PERALTA RANGEL, expediente 0001/2015) lacks one separator — its
 * HECHOS and OBJETO SOCIAL are joined by a bare TAB ("NULL\tREPARACION Y …"). A row with exactly one field too
 * few is REPAIRED when exactly one of its fields contains exactly one bare TAB: the split point is then
 * unambiguous. Any other field count is rejected with the count in the reason.
 *
 * Record ids are `<NUMERO DE EXPEDIENTE>|<DEPENDENCIA>|<PROVEEDOR O CONTRATISTA>` (the last two folded): case
 * numbers are per agency ("0001/2015" is used by several), so the agency is part of the case identity. A row
 * repeating an earlier row's id is rejected as a duplicate.
 */
import { Effect, Either, Option, Stream } from "effect"
import { SourceDefinition } from "../Corpus.js"
import { parseDecimal } from "../Amounts.js"
import { csvRecords, SourceFileError } from "./csv.js"
import type { CsvOptions, NumberedRecord } from "./csv.js"
import type { SourceParser } from "./parser.js"
import type { LoadItem, RiskMarkRecord } from "./records.js"
import { parseDayFirstDates } from "./dates.js"
import { foldWords } from "../Text.js"

export const sfpSource = new SourceDefinition({
  slug: "sfp_sanciones",
  label: "Directorio de Proveedores y Contratistas Sancionados",
  publisher: "Secretaría de la Función Pública (SFP)",
  licence: "Términos de Libre Uso MX (datos.gob.mx)",
  licensedForDisplay: true,
  evidenceCategory: "administrative_risk"
})

const CSV_OPTIONS: CsvOptions = { encoding: "windows-1252", delimiter: [",\t", ", \t"], quote: false }

type Column =
  | "supplier"
  | "agency"
  | "caseId"
  | "resolutionSense"
  | "notifiedOn"
  | "resolvedOn"
  | "period"
  | "amount"
  | "updatedOn"

/** Columns the parser reads, by folded header text. */
const HEADERS: Readonly<Record<Column, string>> = {
  supplier: "proveedor o contratista",
  agency: "dependencia",
  caseId: "numero de expediente",
  resolutionSense: "sentido de resolucion",
  notifiedOn: "fecha de notificacion",
  resolvedOn: "fecha de resolucion",
  period: "plazo",
  amount: "monto",
  updatedOn: "fecha de actualizacion"
}

const COLUMNS: ReadonlyArray<Column> = [
  "supplier",
  "agency",
  "caseId",
  "resolutionSense",
  "notifiedOn",
  "resolvedOn",
  "period",
  "amount",
  "updatedOn"
]

export interface SfpLayout {
  /** Number of header cells (12). */
  readonly width: number
  readonly columns: Readonly<Record<Column, number>>
}

/** Column positions from the header row (pure; exported for tests). */
export const sfpLayoutOf = (header: ReadonlyArray<string>): Either.Either<SfpLayout, string> => {
  const cells = header.map(foldWords)
  const columns: Partial<Record<Column, number>> = {}
  const missing: Array<string> = []
  for (const column of COLUMNS) {
    const index = cells.indexOf(HEADERS[column])
    if (index < 0) missing.push(HEADERS[column].toUpperCase())
    else columns[column] = index
  }
  const {
    agency,
    amount,
    caseId,
    notifiedOn,
    period,
    resolutionSense,
    resolvedOn,
    supplier,
    updatedOn
  } = columns
  if (
    agency === undefined || amount === undefined || caseId === undefined || notifiedOn === undefined ||
    period === undefined || resolutionSense === undefined || resolvedOn === undefined || supplier === undefined ||
    updatedOn === undefined
  ) {
    return Either.left(`header is not the SFP sanctioned-suppliers layout; missing ${missing.join(", ")}`)
  }
  return Either.right({
    width: header.length,
    columns: { agency, amount, caseId, notifiedOn, period, resolutionSense, resolvedOn, supplier, updatedOn }
  })
}

const readLayout = (path: string): Effect.Effect<SfpLayout, SourceFileError> =>
  csvRecords(path, CSV_OPTIONS).pipe(
    Stream.take(1),
    Stream.runCollect,
    Effect.flatMap((chunk) => {
      const header = Array.from(chunk)[0]
      return header === undefined
        ? Effect.fail(new SourceFileError({ path, message: "empty file: no header row" }))
        : Either.match(sfpLayoutOf(header.fields), {
          onLeft: (message) => Effect.fail(new SourceFileError({ path, message })),
          onRight: Effect.succeed
        })
    })
  )

/**
 * The fields of a row, repairing a single missing separator: when the row has one field too few and exactly one
 * field holds exactly one bare TAB, that TAB is where the ",\t" was lost. Left: why the row cannot be split.
 */
export const repairSfpFields = (
  fields: ReadonlyArray<string>,
  width: number
): Either.Either<{ readonly fields: ReadonlyArray<string>; readonly repaired: boolean }, string> => {
  if (fields.length === width) return Either.right({ fields, repaired: false })
  if (fields.length === width - 1) {
    const withTab = fields.flatMap((field, index) => (field.includes("\t") ? [index] : []))
    const index = withTab[0]
    const field = index === undefined ? undefined : fields[index]
    if (withTab.length === 1 && index !== undefined && field !== undefined && field.split("\t").length === 2) {
      return Either.right({
        fields: [...fields.slice(0, index), ...field.split("\t"), ...fields.slice(index + 1)],
        repaired: true
      })
    }
    return Either.left(
      `${fields.length} fields instead of ${width} and the missing ",\\t" separator cannot be located unambiguously`
    )
  }
  return Either.left(`${fields.length} fields instead of ${width}`)
}

const collapse = (s: string): string => s.replace(/\s+/gu, " ").trim()

/**
 * Status from SENTIDO DE RESOLUCION ("SANCIONATORIA CON MULTA E INHABILITACIÓN" → sancion_multa_inhabilitacion);
 * a resolution naming neither a fine nor a disqualification ("SANCIONATORIA", empty) is sancion_otra.
 */
export const sfpStatusOf = (text: string): RiskMarkRecord["status"] => {
  const folded = foldWords(text)
  const fine = /\bmultas?\b/u.test(folded)
  const disqualification = folded.includes("inhabilit")
  return fine && disqualification
    ? "sancion_multa_inhabilitacion"
    : fine
    ? "sancion_multa"
    : disqualification
    ? "sancion_inhabilitacion"
    : "sancion_otra"
}

const firstDate = (cell: string): string | undefined => parseDayFirstDates(cell)[0]

const rowItems = (
  layout: SfpLayout,
  record: NumberedRecord,
  seen: Map<string, number>
): ReadonlyArray<LoadItem> => {
  const { line } = record
  const reject = (reason: string): ReadonlyArray<LoadItem> => [{ _tag: "Reject", line, reason }]
  if (record.fields.every((f) => f.trim() === "")) return reject("empty row")
  return Either.match(repairSfpFields(record.fields, layout.width), {
    onLeft: reject,
    onRight: ({ fields }): ReadonlyArray<LoadItem> => {
      const cell = (column: Column): string => collapse(fields[layout.columns[column]] ?? "")
      const subjectName = cell("supplier")
      if (subjectName === "") return reject("empty PROVEEDOR O CONTRATISTA")
      const caseId = cell("caseId")
      const agency = cell("agency")
      const id = `${caseId}|${foldWords(agency)}|${foldWords(subjectName)}`
      const earlier = seen.get(id)
      if (earlier !== undefined) return reject(`duplicate of line ${earlier} (same expediente, dependencia and supplier)`)
      seen.set(id, line)

      const sense = cell("resolutionSense")
      const resolution = firstDate(cell("resolvedOn"))
      const notification = firstDate(cell("notifiedOn"))
      const stageDates: Record<string, string> = {}
      if (resolution !== undefined) stageDates["resolution"] = resolution
      if (notification !== undefined) stageDates["notification"] = notification
      // MONTO is a fine in pesos ("133502.74", once "70,200.00"); unreadable or empty means no fine recorded.
      const fineAmount = parseDecimal(cell("amount")) ?? null
      const mark: RiskMarkRecord = {
        sourceRecordId: id,
        kind: "sancion",
        legalBasis: "sfp_directory",
        subjectRfc: null,
        subjectName,
        status: sfpStatusOf(sense),
        statusText: sense,
        listedOn: resolution ?? null,
        stageDates,
        sanctioningBody: agency === "" ? null : agency,
        caseId: caseId === "" ? null : caseId,
        sanctionType: sense === "" ? null : sense,
        period: cell("period") === "" ? null : cell("period"),
        fineAmount,
        fineCurrency: fineAmount === null ? null : "MXN"
      }
      return [{ _tag: "RiskMark", line, record: mark }, { _tag: "Accepted", line }]
    }
  })
}

/** Every data row of the SFP directory as load items, in file order. */
export const streamSfp = (path: string): Stream.Stream<LoadItem, SourceFileError> =>
  Stream.unwrap(
    Effect.map(readLayout(path), (layout) =>
      // A fresh duplicate index per run, so the stream can be run again.
      Stream.suspend(() => {
        const seen = new Map<string, number>()
        return csvRecords(path, CSV_OPTIONS).pipe(
          Stream.drop(1),
          Stream.mapConcat((record) => rowItems(layout, record, seen))
        )
      })
    )
  )

/** Records after the header. */
export const countSfpRows = (path: string): Effect.Effect<number, SourceFileError> =>
  Effect.flatMap(readLayout(path), () => csvRecords(path, CSV_OPTIONS).pipe(Stream.drop(1), Stream.runCount))

/**
 * FECHA DE ACTUALIZACION of the first data row ("14/01/2021 08:01" → "2021-01-14"): the directory's own
 * snapshot date, for use as the retrieval date.
 */
export const sfpPublishedAsOf = (path: string): Effect.Effect<Option.Option<string>, SourceFileError> =>
  Effect.flatMap(readLayout(path), (layout) =>
    csvRecords(path, CSV_OPTIONS).pipe(
      Stream.drop(1),
      Stream.take(1),
      Stream.runCollect,
      Effect.map((chunk) =>
        Option.fromNullable(
          Array.from(chunk).flatMap((record) => parseDayFirstDates(record.fields[layout.columns.updatedOn] ?? ""))[0]
        )
      )
    ))

export const sfpParser: SourceParser = {
  kind: "sfp",
  description: "SFP Directorio de Proveedores y Contratistas Sancionados (fines and disqualifications)",
  sourceOf: () => Effect.succeed(sfpSource),
  stream: (path) => streamSfp(path),
  countDataRows: countSfpRows,
  publishedAsOf: sfpPublishedAsOf
}
