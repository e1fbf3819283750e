/**
 * CRE (Comisión Reguladora de Energía) electricity generation and import permit tables as a
 * {@link SourceParser}: the "permisos administrados" table and the "permisos terminados" table of CRE
 * document 1814 (as of 30 June 2016), each a CSV converted from one workbook sheet, e.g.
 * `data/mx/permits/cre_permisos_generacion_administrados_2016-06-30_sample.csv`.
 *
 * Layout: a sheet-title row, then the header row (two header cells contain a line break, so the header is one
 * CSV record spanning two physical lines), then one record per permit. The header is found by content (the
 * first record naming PERMISIONARIO and NUMERO DE PERMISO, within the first {@link MAX_PREAMBLE_RECORDS}
 * records); the table is told apart by its columns (FECHA DE TERMINACIÓN → terminated, ESTADO ACTUAL →
 * administered). Headers are compared after {@link foldWords}.
 *
 * Decisions, as loaded:
 * - `investmentMdd` is millions of US dollars, the value as printed, never rescaled: the INVERSION header says
 *   "MILES DE DOLARES" but the totals block of the same sheet labels the column "MILLONES DE DÓLARES" and the
 *   values fit millions (18 for an 18 MW cogeneration plant). Publisher figures, not audited spend.
 * - Identity: `permitNumber` is NUMERO DE PERMISO (whitespace and a trailing period removed: one row prints
 *   "E/1448/PP/2015."). Old U.P.C. permits are bare numbers ("499"), only unique with their modality, so their
 *   key is `UPC/499`. `sourceRecordId` is `<table>:<key>`, e.g. `administrados:E/35/AUT/96` and
 *   `terminados:UPC/3626`: the two tables are separate published rows, and the same permit number in both
 *   gives two records sharing `permitNumber`, never one record overwritten by whichever file loads last.
 *   Where both exist, the terminated row (`isTerminated`) is the later state; that supersession is for
 *   readers to apply by `permitNumber`, not something one file's parser can see. A permit number printed
 *   twice in one table (the administered sample repeats E/1769/GEN/2016 on two identical rows) keeps its
 *   first row; later ones are rejected as duplicates, so no row is dropped silently by an idempotent insert.
 * - `isActiveRisk` is true only for administered permits whose ESTADO ACTUAL is "En construcción" or
 *   "Por iniciar obras": granted and in force but not operating yet. "En operación" and "Inactivo" (operated
 *   before, idle now) are false, and so is every terminated permit.
 * - `isExpansion` is true when CENTRAL mentions "Ampliación" (folded: accents and case ignored); CRE has no
 *   expansion column.
 * - Dates are Excel serial day numbers (1900 system: 1899-12-30 + n days; 34535 = 1994-07-20).
 *   `operationStartText` is the ISO date of a serial, or the text as printed ("Antes de 92").
 * - `stateCode` resolves UBICACION DE LA PLANTA with {@link resolveState}; null when it does not resolve and
 *   always null for the terminated table, which has no location column.
 * - `holderRfc` is null: CRE publishes no RFC. Two rows continue the holder's name in CENTRAL ("como
 *   Fiduciaria en el Fideicomiso …"); that text is appended to the holder and the plant name is null.
 *   Footnote asterisks at the end of CENTRAL ("Complejo Zacapu**") are dropped from the plant name.
 * - A row is rejected (with its reason) when it has no holder, no permit number or no status, when a date or
 *   amount cell holds something that is neither empty nor a number, or when its cells do not fit the header.
 */
import { Effect, Either, HashMap, Option, ParseResult, Schema, Stream } from "effect"
import { SourceDefinition } from "../Corpus.js"
import { parseDecimal } from "../Amounts.js"
import { csvRecords, SourceFileError } from "./csv.js"
import type { NumberedRecord } from "./csv.js"
import type { SourceParser } from "./parser.js"
import { PermitRecord } from "./records.js"
import { parseSpelledDates } from "./dates.js"
import type { LoadItem } from "./records.js"
import { resolveState } from "../States.js"
import { foldText, foldWords } from "../Text.js"

export const creSource = new SourceDefinition({
  slug: "cre_permisos",
  label: "Permisos de generación e importación de energía eléctrica (CRE)",
  publisher: "Comisión Reguladora de Energía (CRE)",
  licence: "Public CRE publication (document 1814); no licence statement",
  licensedForDisplay: true,
  evidenceCategory: "authorization_or_permit"
})

/** The two published tables. */
export type CreTable = "administrados" | "terminados"

type Field =
  | "holder"
  | "plant"
  | "modality"
  | "grantedOn"
  | "permitNumber"
  | "capacity"
  | "energy"
  | "investment"
  | "operationStart"
  | "fuel"
  | "technology"
  | "currentStatus"
  | "location"
  | "status"
  | "endedOn"

/** How each field's header reads after {@link foldWords}; a prefix tolerates unit wording ("(MW)", "(MILES DE …)"). */
const HEADERS: ReadonlyArray<readonly [Field, "exact" | "prefix", string]> = [
  ["holder", "exact", "permisionario"],
  ["plant", "exact", "central"],
  ["modality", "exact", "modalidad"],
  ["grantedOn", "exact", "fecha de otorgamiento"],
  ["permitNumber", "exact", "numero de permiso"],
  ["capacity", "prefix", "cap autorizada"],
  ["energy", "prefix", "energia autorizada"],
  ["investment", "prefix", "inversion"],
  ["operationStart", "prefix", "fecha de entrada en operacion"],
  ["fuel", "exact", "energetico primario"],
  ["technology", "prefix", "tipo de planta"],
  ["currentStatus", "exact", "estado actual"],
  ["location", "prefix", "ubicacion"],
  ["status", "exact", "estado"],
  ["endedOn", "prefix", "fecha de terminacion"]
]

const REQUIRED: { readonly [T in CreTable]: ReadonlyArray<Field> } = {
  administrados: [
    "holder",
    "plant",
    "modality",
    "grantedOn",
    "permitNumber",
    "capacity",
    "energy",
    "investment",
    "operationStart",
    "fuel",
    "technology",
    "currentStatus",
    "location"
  ],
  terminados: ["holder", "plant", "modality", "grantedOn", "permitNumber", "status", "endedOn"]
}

/** Records before the header that may be skipped (the sheet title, possibly blank-cell rows). */
export const MAX_PREAMBLE_RECORDS = 5

export interface CreLayout {
  readonly table: CreTable
  /** 0-based index of the header among the file's CSV records (1 for CRE's title + header layout). */
  readonly headerIndex: number
  /** Line on which the header record starts. */
  readonly headerLine: number
  readonly width: number
  readonly columns: ReadonlyMap<Field, number>
}

const columnsOf = (header: ReadonlyArray<string>): ReadonlyMap<Field, number> => {
  const columns = new Map<Field, number>()
  header.forEach((cell, index) => {
    const folded = foldWords(cell)
    for (const [field, match, text] of HEADERS) {
      const hit = match === "exact" ? folded === text : folded.startsWith(text)
      if (hit && !columns.has(field)) columns.set(field, index)
    }
  })
  return columns
}

/**
 * The table a header row belongs to, or None when the record is not a CRE permit header (e.g. the title row).
 */
export const detectCreTable = (header: ReadonlyArray<string>): Option.Option<CreTable> => {
  const columns = columnsOf(header)
  if (!columns.has("holder") || !columns.has("permitNumber")) return Option.none()
  if (columns.has("endedOn")) return Option.some("terminados")
  if (columns.has("currentStatus")) return Option.some("administrados")
  return Option.none()
}

const layoutOf = (path: string, record: NumberedRecord, index: number): Effect.Effect<CreLayout, SourceFileError> =>
  Option.match(detectCreTable(record.fields), {
    onNone: () =>
      Effect.fail(
        new SourceFileError({
          path,
          message: `line ${record.line}: header names PERMISIONARIO and NUMERO DE PERMISO but neither ESTADO ACTUAL ` +
            "(administered permits) nor FECHA DE TERMINACIÓN (terminated permits)"
        })
      ),
    onSome: (table) => {
      const columns = columnsOf(record.fields)
      const missing = REQUIRED[table].filter((field) => !columns.has(field))
      return missing.length > 0
        ? Effect.fail(
          new SourceFileError({ path, message: `line ${record.line}: CRE ${table} header lacks ${missing.join(", ")}` })
        )
        : Effect.succeed({ table, headerIndex: index, headerLine: record.line, width: record.fields.length, columns })
    }
  })

/** Whether a record names the two columns every CRE permit header has. */
const looksLikeHeader = (record: NumberedRecord): boolean => {
  const columns = columnsOf(record.fields)
  return columns.has("holder") && columns.has("permitNumber")
}

/** Reads the first records of `path` up to the header and returns the table layout. */
export const readCreLayout = (path: string): Effect.Effect<CreLayout, SourceFileError> =>
  csvRecords(path).pipe(
    Stream.take(MAX_PREAMBLE_RECORDS + 1),
    Stream.zipWithIndex,
    Stream.find(([record]) => looksLikeHeader(record)),
    Stream.runHead,
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.fail(
          new SourceFileError({
            path,
            message: `no CRE permit header (PERMISIONARIO, NUMERO DE PERMISO) in the first ${
              MAX_PREAMBLE_RECORDS + 1
            } records`
          })
        ),
      onSome: ([record, index]) => layoutOf(path, record, index)
    }))
  )

/** Data rows: the CSV records after the header (title and header excluded, the header counted once). */
export const countCreDataRows = (path: string): Effect.Effect<number, SourceFileError> =>
  Effect.flatMap(readCreLayout(path), (layout) =>
    csvRecords(path).pipe(Stream.runCount, Effect.map((n) => Math.max(0, n - layout.headerIndex - 1))))

// ---------------------------------------------------------------------------
// Cells

const EXCEL_EPOCH_MS = Date.UTC(1899, 11, 30)
const DAY_MS = 86_400_000
/** Serial 61 is 1900-03-01; below it Excel's fictitious 1900-02-29 shifts dates by one day. */
const MIN_SERIAL = 61
/** 9999-12-31. */
const MAX_SERIAL = 2_958_465

/** ISO date of an Excel (1900 system) serial day number; a time fraction is ignored. 34535 → 1994-07-20. */
export const excelSerialToIsoDate = (text: string): Option.Option<string> => {
  const trimmed = text.trim()
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return Option.none()
  const serial = Math.floor(Number(trimmed))
  if (serial < MIN_SERIAL || serial > MAX_SERIAL) return Option.none()
  return Option.some(new Date(EXCEL_EPOCH_MS + serial * DAY_MS).toISOString().slice(0, 10))
}

/** A dd/mm/yyyy date as ISO, when it is a calendar date (other CRE editions print text dates). */
const dayMonthYear = (text: string): Option.Option<string> => {
  const match = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(text.trim())
  if (match === null) return Option.none()
  const [, d = "", m = "", y = ""] = match
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)))
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d)
    ? Option.some(date.toISOString().slice(0, 10))
    : Option.none()
}

/**
 * An exact decimal from a CRE number cell: binary-float text ("6.4080000000000004" → "6.408") and the
 * workbook's exponent form ("1.77E-2" → "0.0177").
 */
export const parseCreDecimal = (text: string): Option.Option<string> => Option.fromNullable(parseDecimal(text))

type Cells = (field: Field) => string

const optionalDecimal = (cells: Cells, field: Field, label: string): Either.Either<string | null, string> => {
  const text = cells(field)
  if (text === "") return Either.right(null)
  return Option.match(parseCreDecimal(text), {
    onNone: () => Either.left(`${label} is not a number: "${text}"`),
    onSome: (value) => Either.right(value)
  })
}

const optionalDate = (cells: Cells, field: Field, label: string): Either.Either<string | null, string> => {
  const text = cells(field)
  if (text === "") return Either.right(null)
  return Option.match(Option.orElse(excelSerialToIsoDate(text), () => dayMonthYear(text)), {
    onNone: () => Either.left(`${label} is not a date (Excel serial or dd/mm/yyyy): "${text}"`),
    onSome: (value) => Either.right(value)
  })
}

const nonEmpty = (text: string): string | null => (text === "" ? null : text)

const ACTIVE_RISK_STATUSES: ReadonlySet<string> = new Set(["en construccion", "por iniciar obras"])

/** Granted and in force but not operating yet (administered table only). */
export const isActiveRiskStatus = (statusText: string): boolean => ACTIVE_RISK_STATUSES.has(foldText(statusText))

/** CENTRAL names an expansion ("Central Temascal y Ampliación Temascal"). */
export const mentionsExpansion = (plant: string): boolean => foldText(plant).includes("ampliacion")

/** Permit number as a key: whitespace and a trailing period removed. */
export const cleanPermitNumber = (text: string): string => text.replace(/\s+/g, "").replace(/\.+$/, "")

/**
 * Identity of a permit within its table: the permit number, or `<modality letters>/<number>` for the bare
 * numbers of old U.P.C. permits ("499" with "U.P.C." → "UPC/499"). Left when a bare number has no modality.
 */
export const permitKey = (permitNumber: string, modality: string): Either.Either<string, string> => {
  if (!/^\d+$/.test(permitNumber)) return Either.right(permitNumber)
  const letters = modality.replace(/[^\p{L}]/gu, "").toUpperCase()
  return letters === ""
    ? Either.left(`bare permit number "${permitNumber}" without MODALIDAD cannot be told apart`)
    : Either.right(`${letters}/${permitNumber}`)
}

const validatePermit = Schema.validateEither(PermitRecord)

const formatHolder = (holder: string, plant: string): { readonly holderName: string; readonly plantName: string | null } => {
  // The holder's name runs on into CENTRAL on a few rows ("como Fiduciaria en el Fideicomiso …").
  if (foldText(plant).startsWith("como ")) return { holderName: `${holder} ${plant}`, plantName: null }
  return { holderName: holder, plantName: nonEmpty(plant.replace(/\*+$/, "").trim()) }
}

/** One data record → a permit, or the reason it cannot be loaded (duplicates are caught by {@link streamCre}). */
export const mapCreRow = (
  layout: CreLayout,
  record: NumberedRecord
): Either.Either<PermitRecord, string> => {
  const { fields } = record
  if (fields.every((cell) => cell.trim() === "")) return Either.left("empty row")
  if (fields.length < layout.width) {
    return Either.left(`row has ${fields.length} cells, the header has ${layout.width}`)
  }
  if (fields.slice(layout.width).some((cell) => cell.trim() !== "")) {
    return Either.left(`row has ${fields.length} cells with values beyond the header's ${layout.width}`)
  }
  const cells: Cells = (field) => {
    const index = layout.columns.get(field)
    return index === undefined ? "" : (fields[index] ?? "").trim()
  }
  const terminated = layout.table === "terminados"
  const holder = cells("holder")
  if (holder === "") return Either.left("PERMISIONARIO is empty")
  const permitNumber = cleanPermitNumber(cells("permitNumber"))
  if (permitNumber === "") return Either.left("NUMERO DE PERMISO is empty")
  const statusText = cells(terminated ? "status" : "currentStatus")
  if (statusText === "") return Either.left(`${terminated ? "ESTADO" : "ESTADO ACTUAL"} is empty`)
  const plant = cells("plant")
  const modality = cells("modality")
  const location = cells("location")
  const operationStart = cells("operationStart")
  return Either.gen(function*() {
    const key = yield* permitKey(permitNumber, modality)
    const grantedOn = yield* optionalDate(cells, "grantedOn", "FECHA DE OTORGAMIENTO")
    const endedOn = terminated ? yield* optionalDate(cells, "endedOn", "FECHA DE TERMINACIÓN") : null
    const capacityMw = yield* optionalDecimal(cells, "capacity", "CAP. AUTORIZADA (MW)")
    const estimatedGeneration = yield* optionalDecimal(cells, "energy", "ENERGIA AUTORIZADA (GWh/AÑO)")
    const investmentMdd = yield* optionalDecimal(cells, "investment", "INVERSION")
    const state = location === "" ? null : resolveState(location)
    const { holderName, plantName } = formatHolder(holder, plant)
    const permit: PermitRecord = {
      sourceRecordId: `${layout.table}:${key}`,
      permitNumber,
      holderName,
      holderRfc: null,
      plantName,
      permitType: nonEmpty(modality),
      statusText,
      isActiveRisk: !terminated && isActiveRiskStatus(statusText),
      isTerminated: terminated,
      isExpansion: mentionsExpansion(plant),
      investmentMdd,
      capacityMw,
      estimatedGeneration,
      fuel: nonEmpty(cells("fuel")),
      technology: nonEmpty(cells("technology")),
      stateCode: state !== null && state._tag === "Resolved" ? state.code : null,
      grantedOn,
      // A serial becomes its ISO date; anything else ("Antes de 92") is kept as printed.
      operationStartText: operationStart === ""
        ? null
        : Option.getOrElse(excelSerialToIsoDate(operationStart), () => operationStart),
      endedOn
    }
    return yield* Either.mapLeft(
      validatePermit(permit),
      (error) => `permit does not fit the record contract: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
    )
  })
}

/**
 * Every data row of a CRE table as load items, in file order: `Permit` then `Accepted`, or one `Reject`.
 */
export const streamCre = (path: string): Stream.Stream<LoadItem, SourceFileError> =>
  Stream.unwrap(
    Effect.map(readCreLayout(path), (layout) =>
      csvRecords(path).pipe(
        Stream.drop(layout.headerIndex + 1),
        // The state is the first line of each permit key, to reject later rows repeating a permit number.
        Stream.mapAccum(HashMap.empty<string, number>(), (seen, record): readonly [
          HashMap.HashMap<string, number>,
          ReadonlyArray<LoadItem>
        ] =>
          Either.match(mapCreRow(layout, record), {
            onLeft: (reason) => [seen, [{ _tag: "Reject", line: record.line, reason }]],
            onRight: (permit) =>
              Option.match(HashMap.get(seen, permit.sourceRecordId), {
                onSome: (first) => [seen, [{
                  _tag: "Reject",
                  line: record.line,
                  reason: `duplicate NUMERO DE PERMISO ${permit.permitNumber}: already loaded from line ${first}`
                }]],
                onNone: () => [HashMap.set(seen, permit.sourceRecordId, record.line), [
                  { _tag: "Permit", line: record.line, record: permit },
                  { _tag: "Accepted", line: record.line }
                ]]
              })
          })),
        Stream.mapConcat((items) => items)
      )
    )
  )

/** The date in the sheet title ("... ADMINISTRADOS AL 30 DE JUNIO DE 2016"). */
const creAsOf = (path: string): Effect.Effect<Option.Option<string>, SourceFileError> =>
  csvRecords(path).pipe(
    Stream.runHead,
    Effect.map(Option.flatMap((record) => Option.fromNullable(parseSpelledDates(record.fields[0] ?? "")[0])))
  )

export const creParser: SourceParser = {
  kind: "cre",
  description: "CRE electricity generation/import permit tables (administered and terminated permits)",
  sourceOf: () => Effect.succeed(creSource),
  stream: (path) => streamCre(path),
  countDataRows: countCreDataRows,
  publishedAsOf: creAsOf
}
