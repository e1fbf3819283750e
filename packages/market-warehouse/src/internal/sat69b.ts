/**
 * SAT Art. 69-B lists (EFOS, "empresas que facturan operaciones simuladas") as a {@link SourceParser}.
 *
 * One parser for every SAT list file: the per-status files (Definitivos, Presuntos, Desvirtuados, Sentencias
 * Favorables), the "Listado completo" and the Art. 69-B Bis "Listado Global Definitivo". All are Windows-1252
 * CSV with a publisher preamble (lines 1–2: "Información actualizada al …", list title) above the header.
 *
 * Detection (see {@link detectSat69bVariant}):
 * - the header is the first record naming both "RFC" and "Nombre del Contribuyente" (the preamble is whatever
 *   comes before it, so a missing or longer preamble still parses);
 * - the legal basis is `art_69b_bis` when the preamble says "69-B Bis" or when the header has no presunción
 *   columns (every 69-B procedure starts with a presunción; the Bis list only publishes definitive rulings),
 *   else `art_69b`;
 * - stage columns are found by their wording (presunción / desvirtuaron / definitivos / sentencia favorable,
 *   SAT page or DOF), so the 24-column presuntos header (4 empty trailing columns) needs no special case;
 * - which 69-B list a file is (the `list` part of the record id) comes from the file name: the 2026 Definitivos
 *   and Desvirtuados files have byte-identical preambles and headers, so content alone cannot tell them apart.
 *
 * Each data row is a published listing, not a conviction: it yields one `RiskMark` (kind `efos`) and one
 * `SupplierObservation` (RFC + name; SAT publishes no activity, state or contact), then `Accepted`. Rows are
 * rejected (with the reason) only when there is nothing to mark: the identity was suppressed by the publisher
 * (RFC "XXXXXXXXXXXX", name "Información suprimida en cumplimiento a …" — court-ordered redactions), the name is
 * empty, the status is not one of the list's statuses, or the row repeats an earlier one.
 */
import { Effect, Either, Option, Stream } from "effect"
import { basename } from "node:path"
import { SourceDefinition } from "../Corpus.js"
import { csvRecords, SourceFileError } from "./csv.js"
import { parseDayFirstDates, parseSpelledDates } from "./dates.js"
import type { CsvOptions, NumberedRecord } from "./csv.js"
import type { SourceParser } from "./parser.js"
import type { LoadItem, RiskMarkRecord, SupplierObservationRecord } from "./records.js"
import { normalizeRfc, parseRfc } from "../Rfc.js"
import { foldText, foldWords } from "../Text.js"

/** One source for every SAT list: the loader files the rows by record kind (risk marks and supplier observations). */
export const sat69bSource = new SourceDefinition({
  slug: "sat_69b",
  label: "Listados del artículo 69-B y 69-B Bis del CFF (EFOS)",
  publisher: "Servicio de Administración Tributaria (SAT)",
  licence: "Public listing under Art. 69-B CFF; Términos de Libre Uso MX",
  licensedForDisplay: true,
  evidenceCategory: "administrative_risk"
})

const CSV_OPTIONS: CsvOptions = { encoding: "windows-1252" }

/** The preamble is two lines in every known file; the header is searched a little further to be tolerant. */
const HEADER_SEARCH_RECORDS = 10

/** The latest of some ISO dates: a re-published stage is in force from its latest publication. */
const latest = (dates: ReadonlyArray<string>): string | undefined =>
  dates.reduce<string | undefined>((best, d) => (best === undefined || d > best ? d : best), undefined)

// ---------------------------------------------------------------------------
// Layout

export type Sat69bStage = "presunto" | "desvirtuado" | "definitivo" | "sentencia_favorable"
export type Sat69bLegalBasis = "art_69b" | "art_69b_bis"

/** Which published list a file is; part of every record id so the lists of one source never collide. */
export type Sat69bList =
  | "definitivos"
  | "presuntos"
  | "desvirtuados"
  | "sentencias_favorables"
  | "listado_completo"
  | "69b"
  | "69b_bis_global_definitivo"

interface StageColumn {
  readonly stage: Sat69bStage
  readonly channel: "sat" | "dof"
  readonly role: "oficio" | "published"
  readonly index: number
}

export interface Sat69bVariant {
  readonly list: Sat69bList
  readonly legalBasis: Sat69bLegalBasis
  /** "Información actualizada al …" of the preamble, ISO date. */
  readonly publishedAsOf: Option.Option<string>
  /** 1-based line of the header row. */
  readonly headerLine: number
  /** Number of header cells (presuntos: 24, four of them empty). */
  readonly width: number
  /** CSV records before the first data row (preamble and header). */
  readonly dataStart: number
  readonly columns: {
    readonly rowNumber: number | undefined
    readonly rfc: number
    readonly name: number
    readonly status: number
    readonly stages: ReadonlyArray<StageColumn>
  }
}

const stageOf = (header: string): Sat69bStage | undefined =>
  header.includes("presun")
    ? "presunto"
    : header.includes("desvirtu")
    ? "desvirtuado"
    : header.includes("sentencia")
    ? "sentencia_favorable"
    : header.includes("definitiv")
    ? "definitivo"
    : undefined

/** A stage column from its folded header ("publicacion dof presuntos", "numero y fecha de oficio … sat"). */
const stageColumn = (header: string, index: number): StageColumn | undefined => {
  const stage = stageOf(header)
  if (stage === undefined) return undefined
  if (header.startsWith("numero y fecha de oficio")) {
    const channel = header.endsWith(" sat") ? "sat" : header.endsWith(" dof") ? "dof" : undefined
    return channel === undefined ? undefined : { stage, channel, role: "oficio", index }
  }
  if (header.startsWith("publicacion pagina sat")) return { stage, channel: "sat", role: "published", index }
  if (header.startsWith("publicacion dof")) return { stage, channel: "dof", role: "published", index }
  return undefined
}

/** The 69-B list a file holds, from its name (SAT names each download after its list). */
const listFromFileName = (path: string): Sat69bList => {
  const name = foldWords(basename(path))
  if (name.includes("completo")) return "listado_completo"
  if (name.includes("presunt")) return "presuntos"
  if (name.includes("desvirtu")) return "desvirtuados"
  if (name.includes("sentencia")) return "sentencias_favorables"
  if (name.includes("definitiv")) return "definitivos"
  return "69b"
}

const AS_OF = /actualizada al\s+(.*)$/u

const asOfFromPreamble = (preamble: ReadonlyArray<NumberedRecord>): Option.Option<string> =>
  Option.fromNullable(
    preamble
      .flatMap((record) => record.fields)
      .map((cell) => AS_OF.exec(foldText(cell))?.[1])
      .flatMap((rest) => (rest === undefined ? [] : parseSpelledDates(rest).slice(0, 1)))[0]
  )

/** Variant of a file from its first records (pure; exported for tests). */
export const variantOf = (path: string, records: ReadonlyArray<NumberedRecord>): Either.Either<Sat69bVariant, string> => {
  const headerIndex = records.findIndex((record) => {
    const cells = record.fields.map(foldWords)
    return cells.includes("rfc") && cells.includes("nombre del contribuyente")
  })
  const header = records[headerIndex]
  if (headerIndex < 0 || header === undefined) {
    return Either.left(`no SAT 69-B header ("RFC", "Nombre del Contribuyente") in the first ${records.length} records`)
  }
  const cells = header.fields.map(foldWords)
  const rfc = cells.indexOf("rfc")
  const name = cells.indexOf("nombre del contribuyente")
  const status = cells.indexOf("situacion del contribuyente")
  const rowNumber = cells.indexOf("no")
  const stages = cells.flatMap((cell, index) => {
    const column = stageColumn(cell, index)
    return column === undefined ? [] : [column]
  })
  if (status < 0) return Either.left(`header on line ${header.line} has no "Situación del contribuyente" column`)
  if (!stages.some((c) => c.role === "published")) {
    return Either.left(`header on line ${header.line} has no "Publicación" date columns`)
  }
  const preamble = records.slice(0, headerIndex)
  const preambleSaysBis = preamble.some((record) => record.fields.some((cell) => foldWords(cell).includes("69 b bis")))
  const legalBasis: Sat69bLegalBasis = preambleSaysBis || !stages.some((c) => c.stage === "presunto")
    ? "art_69b_bis"
    : "art_69b"
  return Either.right({
    list: legalBasis === "art_69b_bis" ? "69b_bis_global_definitivo" : listFromFileName(path),
    legalBasis,
    publishedAsOf: asOfFromPreamble(preamble),
    headerLine: header.line,
    width: header.fields.length,
    dataStart: headerIndex + 1,
    columns: { rowNumber: rowNumber < 0 ? undefined : rowNumber, rfc, name, status, stages }
  })
}

/** Reads the preamble and header of a SAT list file and tells which list, legal basis and columns it has. */
export const detectSat69bVariant = (path: string): Effect.Effect<Sat69bVariant, SourceFileError> =>
  csvRecords(path, CSV_OPTIONS).pipe(
    Stream.take(HEADER_SEARCH_RECORDS),
    Stream.runCollect,
    Effect.flatMap((chunk) =>
      Either.match(variantOf(path, Array.from(chunk)), {
        onLeft: (message) => Effect.fail(new SourceFileError({ path, message })),
        onRight: Effect.succeed
      })
    )
  )

/**
 * The date the publisher says the list was updated to ("Información actualizada al 31 de enero de 2026" →
 * "2026-01-31"): the retrieval date a loader should record for the file.
 */
export const publishedAsOf = (path: string): Effect.Effect<Option.Option<string>, SourceFileError> =>
  Effect.map(detectSat69bVariant(path), (variant) => variant.publishedAsOf)

// ---------------------------------------------------------------------------
// Rows

const collapse = (s: string): string => s.replace(/\s+/gu, " ").trim()

/**
 * The taxpayer name without the publisher's notes: SAT appends court-compliance notes or former names after
 * "//" ("GRUPO SAURICA DEL SURESTE, S.A. DE C.V. // En cumplimiento a la Sentencia …").
 */
export const cleanTaxpayerName = (raw: string): string => collapse(raw.split("//")[0] ?? "")

/** Court-ordered redactions: SAT replaces the RFC with X's and the name with "Información suprimida …". */
const isSuppressed = (rawRfc: string, rawName: string): boolean =>
  /^X+$/u.test(normalizeRfc(rawRfc)) || /^\W*informacion suprimida/u.test(foldText(rawName))

const statusOf = (legalBasis: Sat69bLegalBasis, text: string): RiskMarkRecord["status"] | undefined => {
  const folded = foldWords(text)
  if (legalBasis === "art_69b_bis") return folded.startsWith("definitiv") ? "definitivo_69b_bis" : undefined
  if (folded.startsWith("presunt")) return "presunto"
  if (folded.startsWith("desvirtu")) return "desvirtuado"
  if (folded.startsWith("definitiv")) return "definitivo"
  if (folded.startsWith("sentencia favorable")) return "sentencia_favorable"
  return undefined
}

const STAGES: ReadonlyArray<Sat69bStage> = ["presunto", "desvirtuado", "definitivo", "sentencia_favorable"]

/** The stage whose publication gives each status. */
const STAGE_OF_STATUS: Readonly<Record<RiskMarkRecord["status"], Sat69bStage | undefined>> = {
  presunto: "presunto",
  desvirtuado: "desvirtuado",
  definitivo: "definitivo",
  sentencia_favorable: "sentencia_favorable",
  definitivo_69b_bis: "definitivo",
  sancion_multa: undefined,
  sancion_inhabilitacion: undefined,
  sancion_multa_inhabilitacion: undefined,
  sancion_otra: undefined
}

/**
 * Stage dates of a row. Per stage: `<stage>_sat` (publication on the SAT page), `<stage>_dof` (publication in
 * the Diario Oficial), `<stage>_oficio` (date written in the oficio text, SAT column first), and `<stage>` itself
 * = the DOF date, else the SAT-page date. A cell listing two publications keeps the latest.
 */
const stageDatesOf = (fields: ReadonlyArray<string>, columns: ReadonlyArray<StageColumn>): Record<string, string> => {
  const dates: Record<string, string> = {}
  for (const column of columns) {
    const cell = fields[column.index] ?? ""
    if (cell.trim() === "") continue
    if (column.role === "published") {
      const date = latest(parseDayFirstDates(cell))
      if (date !== undefined) dates[`${column.stage}_${column.channel}`] = date
    } else {
      const key = `${column.stage}_oficio`
      const date = latest(parseSpelledDates(cell))
      // The SAT oficio column wins; the DOF one fills in when the SAT one has no readable date.
      if (date !== undefined && (dates[key] === undefined || column.channel === "sat")) dates[key] = date
    }
  }
  for (const stage of STAGES) {
    const published = dates[`${stage}_dof`] ?? dates[`${stage}_sat`]
    if (published !== undefined) dates[stage] = published
  }
  return dates
}

const OFICIO_NUMBER = /\d{3}(?:-\d+){2,}/u

/** The first oficio number of the row (its earliest stage): tells apart two listing cycles of one RFC. */
const firstOficioNumber = (fields: ReadonlyArray<string>, columns: ReadonlyArray<StageColumn>): string | undefined =>
  columns
    .filter((c) => c.role === "oficio")
    .map((c) => OFICIO_NUMBER.exec(fields[c.index] ?? "")?.[0])
    .find((n) => n !== undefined)

const reject = (line: number, reason: string): ReadonlyArray<LoadItem> => [{ _tag: "Reject", line, reason }]

/** Items of one data row; `seen` maps record ids already emitted in this file to their line. */
const rowItems = (
  variant: Sat69bVariant,
  record: NumberedRecord,
  seen: Map<string, number>
): ReadonlyArray<LoadItem> => {
  const { fields, line } = record
  const { columns } = variant
  if (fields.every((f) => f.trim() === "")) return reject(line, "empty row")
  const used = Math.max(columns.rfc, columns.name, columns.status, ...columns.stages.map((c) => c.index)) + 1
  if (fields.length < used) return reject(line, `row has ${fields.length} fields; the header on line ${variant.headerLine} has ${variant.width}`)
  if (fields.slice(variant.width).some((f) => f.trim() !== "")) {
    return reject(line, `row has values beyond the ${variant.width} header columns`)
  }
  const rawRfc = fields[columns.rfc] ?? ""
  const rawName = fields[columns.name] ?? ""
  if (isSuppressed(rawRfc, rawName)) {
    return reject(
      line,
      `identity suppressed by the publisher (RFC "${rawRfc.trim()}", name "${collapse(rawName).slice(0, 120)}"): no subject to mark`
    )
  }
  const name = cleanTaxpayerName(rawName)
  if (name === "") return reject(line, "empty taxpayer name (Nombre del Contribuyente)")
  const statusText = collapse(fields[columns.status] ?? "")
  const status = statusOf(variant.legalBasis, statusText)
  if (status === undefined) {
    return reject(line, `unknown status "${statusText}" for a ${variant.legalBasis === "art_69b_bis" ? "69-B Bis" : "69-B"} list`)
  }
  const rfc = parseRfc(rawRfc) ?? null
  const stageDates = stageDatesOf(fields, columns.stages)
  const stage = STAGE_OF_STATUS[status]
  const listedOn = stage === undefined ? null : (stageDates[`${stage}_dof`] ?? stageDates[`${stage}_sat`] ?? null)

  // `<list>:<RFC>`; a later row for the same RFC (a second listing cycle, e.g. after a court ruling) adds the
  // oficio number of its first stage, which stays the same when the file is re-published.
  const rowNumber = `no:${columns.rowNumber === undefined ? line : collapse(fields[columns.rowNumber] ?? "")}`
  const base = `${variant.list}:${rfc ?? (normalizeRfc(rawRfc) || rowNumber)}`
  const cycle = firstOficioNumber(fields, columns.stages) ?? rowNumber
  const id = seen.has(base) ? `${base}:${cycle}` : base
  const earlier = seen.get(id)
  if (earlier !== undefined) return reject(line, `repeats line ${earlier} (same list, RFC and oficio)`)
  seen.set(id, line)

  const mark: RiskMarkRecord = {
    sourceRecordId: id,
    kind: "efos",
    legalBasis: variant.legalBasis,
    subjectRfc: rfc,
    subjectName: name,
    status,
    statusText,
    listedOn,
    stageDates,
    sanctioningBody: null,
    caseId: null,
    sanctionType: null,
    period: null,
    fineAmount: null,
    fineCurrency: null
  }
  const observation: SupplierObservationRecord = {
    sourceRecordId: id,
    name,
    legalName: name,
    rfc,
    scianCode: null,
    scianTitle: null,
    stateCode: null,
    municipalityCode: null,
    employmentBand: null,
    establishmentType: null,
    incorporatedOn: null,
    hasPhone: false,
    hasEmail: false,
    hasWebsite: false,
    contact: { phone: null, email: null, website: null }
  }
  return [
    { _tag: "RiskMark", line, record: mark },
    { _tag: "SupplierObservation", line, record: observation },
    { _tag: "Accepted", line }
  ]
}

/** Every data row of a SAT list file as load items, in file order. */
export const streamSat69b = (path: string): Stream.Stream<LoadItem, SourceFileError> =>
  Stream.unwrap(
    Effect.map(detectSat69bVariant(path), (variant) =>
      // A fresh duplicate index per run, so the stream can be run again.
      Stream.suspend(() => {
        const seen = new Map<string, number>()
        return csvRecords(path, CSV_OPTIONS).pipe(
          Stream.drop(variant.dataStart),
          Stream.mapConcat((record) => rowItems(variant, record, seen))
        )
      })
    )
  )

/** CSV records after the header (a record may span lines: names with embedded line breaks). */
export const countSat69bRows = (path: string): Effect.Effect<number, SourceFileError> =>
  Effect.flatMap(detectSat69bVariant(path), (variant) =>
    csvRecords(path, CSV_OPTIONS).pipe(Stream.drop(variant.dataStart), Stream.runCount))

export const sat69bParser: SourceParser = {
  kind: "sat69b",
  description: "SAT Art. 69-B lists (presuntos, desvirtuados, definitivos, sentencias favorables, listado completo) and the 69-B Bis global definitive list",
  sourceOf: () => Effect.succeed(sat69bSource),
  stream: (path) => streamSat69b(path),
  countDataRows: countSat69bRows,
  publishedAsOf
}
