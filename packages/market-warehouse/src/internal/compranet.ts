/**
 * CompraNet federal contract exports (SFP open data, 2010–2015 files) as a {@link SourceParser}, e.g.
 * `data/mx/procurement/compranet_contratos_2010_2012_sample.csv` and the yearly 2013, 2014 and 2015 files.
 *
 * Layout: the four files share one 39-column layout (GOBIERNO … ANUNCIO); the 2015 export prints an empty
 * first header cell where the others say GOBIERNO (the column still holds "APF"). The layout is detected from
 * the header row (names compared after {@link foldWords}): `standard` when every required column is named,
 * `gobierno_unnamed` when the first header cell is empty and the other required columns are named. Optional
 * columns (e.g. an RFC column, which these exports do not have) are used when present. The encoding is sniffed
 * from the first bytes: UTF-8 when they decode as UTF-8 (all four files do), else Windows-1252.
 *
 * Decisions, as loaded:
 * - One data row = one supplier contract. It yields an `Opportunity` for its procedure (`sourceRecordId` =
 *   NUMERO_PROCEDIMIENTO; the same procedure repeats on the rows of its other contracts and is emitted each
 *   time — the loader upserts, the last row wins) and an `Award` (`sourceRecordId` = CODIGO_CONTRATO, the
 *   CompraNet contract id; when it is empty, the composite `<procedure or expediente>/<supplier>/<start>/<amount>`).
 *   A row without NUMERO_PROCEDIMIENTO (a contract registered outside a procedure) yields the award only, with
 *   no opportunity: a procedure id is never invented.
 * - A row repeating an earlier row of the file byte for byte (same CODIGO_CONTRATO) is rejected as a duplicate
 *   (the 2014 sample prints two contracts twice); a different row reusing a contract code keeps its data under
 *   `<code>/<supplier name key>`.
 * - Amount scope is always `supplier_contract` (IMPORTE_CONTRATO is the amount of this supplier's contract),
 *   exact decimal text. MONEDA goes through {@link parseCurrency}; a mapped spelling is kept in
 *   `currencyReported`. A MONEDA that is not a currency (one upstream row says "TEST") rejects the row; an empty
 *   MONEDA keeps the amount with a null currency. Zero amounts are kept as published ("0").
 * - Procedure type from TIPO_PROCEDIMIENTO (or, when empty, PLANTILLA_EXPEDIENTE, which names the procedure
 *   too): see {@link procedureTypeFromText}; the raw text is kept. Contracting type from TIPO_CONTRATACION:
 *   Adquisiciones and Arrendamientos → goods (a lease of goods or property is a supply contract, as in the EU
 *   directives; OCDS has no leasing category), Servicios and Servicios Relacionados con la OP (studies,
 *   supervision) → services, Obra Pública → works.
 * - Dates are the calendar date as written (`2012-10-30 19:24`, `2013-11-27 00:00:00 GMT` → `2013-11-27`).
 *   Award date = EXP_F_FALLO (the ruling that awards) else FECHA_CELEBRACION (signature) else FECHA_INICIO.
 *   Opportunity: publishedOn and tenderStartOn = PROC_F_PUBLICACION, tenderEndOn = FECHA_APERTURA_PROPOSICIONES.
 * - Actionability: every row records a signed contract, so the procedure is `awarded` and not open whatever
 *   the load date; `statusText` is ESTATUS_CONTRATO (Activo / Expirado / Terminado, the contract's status, the
 *   only status CompraNet publishes) and the reason states it in words with the contract dates.
 * - Buyer = DEPENDENCIA with SIGLAS as acronym; supplier = PROVEEDOR_CONTRATISTA (no RFC in these years, so
 *   `supplierRfc` is null unless an RFC column is present and valid); supplier size = ESTRATIFICACION_MPC as
 *   published (Micro, Pequeña, Mediana, No MIPYME: the size the supplier declared in CompraNet's supplier
 *   registry), else ESTRATIFICACION_MUC (the same scale as the buying unit recorded it on the contract; the MPC
 *   column is often empty). No COG partida and no state are published: `cogPartidas`
 *   is empty and `stateCode` null. CompraNet yields no supplier observations (names only, no identity).
 * - A row is rejected (with its reason) when its field count differs from the header's, it has no supplier
 *   name, IMPORTE_CONTRATO is neither empty nor a number, or MONEDA is not a currency.
 */
import { Effect, Either, HashMap, Option, ParseResult, Schema, Stream } from "effect"
import { open } from "node:fs/promises"
import { SourceDefinition } from "../Corpus.js"
import { parseCurrency, parseDecimal } from "../Amounts.js"
import { csvRecords, SourceFileError } from "./csv.js"
import { isoDateOf } from "./dates.js"
import type { CsvOptions, NumberedRecord } from "./csv.js"
import type { SourceParser } from "./parser.js"
import { AwardRecord, OpportunityRecord } from "./records.js"
import type { LoadItem } from "./records.js"
import { GENERIC_RFCS, parseRfc } from "../Rfc.js"
import { foldWords, normalizeName } from "../Text.js"

export const compranetSource = new SourceDefinition({
  slug: "compranet",
  label: "CompraNet — contratos de la Administración Pública Federal",
  publisher: "Secretaría de la Función Pública (CompraNet)",
  licence: "Términos de Libre Uso MX (datos.gob.mx)",
  licensedForDisplay: true,
  evidenceCategory: "government_contracting"
})

// ---------------------------------------------------------------------------
// Shared vocabulary (also used by the OCDS parser)

export type ProcedureType = "licitacion_publica" | "invitacion_tres" | "adjudicacion_directa" | "other"
export type ContractingType = "goods" | "services" | "works"

/**
 * The normalized procedure type named by a Spanish text (CompraNet TIPO_PROCEDIMIENTO, OCDS
 * procurementMethodDetails / procurementMethodRationale), or null for empty text. Checked in this order, so a
 * text citing an exception to a public tender ("adjudicación directa por excepción a la licitación") is read as
 * what was used: "adjudicación directa" → adjudicacion_directa; "invitación" or "(cuando menos) tres / 3
 * personas|proveedores" → invitacion_tres; "licitación" → licitacion_publica; any other text → other.
 */
export const procedureTypeFromText = (text: string | null | undefined): ProcedureType | null => {
  if (text === null || text === undefined) return null
  const folded = foldWords(text)
  if (folded === "") return null
  if (/\badjudicacion(es)? directas?\b/u.test(folded) || /\basignacion directa\b/u.test(folded)) {
    return "adjudicacion_directa"
  }
  if (/\binvitacion\b/u.test(folded) || /\b(tres|3) (personas|proveedores|licitantes)\b/u.test(folded)) {
    return "invitacion_tres"
  }
  if (/\blicitacion\b/u.test(folded)) return "licitacion_publica"
  return "other"
}

/**
 * Contracting type of a CompraNet TIPO_CONTRATACION or an OCDS mainProcurementCategory (English codes or
 * Spanish words), or null when it names none of the three.
 */
export const contractingTypeFromText = (text: string | null | undefined): ContractingType | null => {
  if (text === null || text === undefined) return null
  const folded = foldWords(text)
  if (folded === "") return null
  if (folded === "works" || /\bobras?\b/u.test(folded) && !/\bservicios? relacionados?\b/u.test(folded)) {
    return "works"
  }
  if (folded === "goods" || /\b(adquisicion(es)?|arrendamientos?|bienes)\b/u.test(folded)) return "goods"
  if (folded === "services" || folded === "consultingservices" || /\bservicios?\b/u.test(folded)) {
    return "services"
  }
  return null
}


// ---------------------------------------------------------------------------
// Layout

export type CompranetLayout = "standard" | "gobierno_unnamed"

type Field =
  | "gobierno"
  | "siglas"
  | "dependencia"
  | "claveUc"
  | "numeroExpediente"
  | "tituloExpediente"
  | "plantillaExpediente"
  | "numeroProcedimiento"
  | "fallo"
  | "publicacion"
  | "apertura"
  | "tipoContratacion"
  | "tipoProcedimiento"
  | "codigoContrato"
  | "tituloContrato"
  | "fechaInicio"
  | "fechaFin"
  | "importe"
  | "moneda"
  | "estatusContrato"
  | "fechaCelebracion"
  | "proveedor"
  | "estratificacion"
  | "estratificacionUc"
  | "rfc"

/** Header names per field (any one matches, compared folded); `required` fields must all be present. */
interface Column {
  readonly field: Field
  readonly names: ReadonlyArray<string>
  readonly required: boolean
}

const COLUMNS: ReadonlyArray<Column> = [
  { field: "gobierno", names: ["GOBIERNO"], required: true },
  { field: "siglas", names: ["SIGLAS"], required: true },
  { field: "dependencia", names: ["DEPENDENCIA"], required: true },
  { field: "claveUc", names: ["CLAVEUC", "CLAVE_UC"], required: false },
  { field: "numeroExpediente", names: ["NUMERO_EXPEDIENTE", "CODIGO_EXPEDIENTE"], required: false },
  { field: "tituloExpediente", names: ["TITULO_EXPEDIENTE"], required: true },
  { field: "plantillaExpediente", names: ["PLANTILLA_EXPEDIENTE"], required: false },
  { field: "numeroProcedimiento", names: ["NUMERO_PROCEDIMIENTO"], required: true },
  { field: "fallo", names: ["EXP_F_FALLO", "FECHA_FALLO"], required: false },
  { field: "publicacion", names: ["PROC_F_PUBLICACION", "FECHA_PUBLICACION"], required: false },
  { field: "apertura", names: ["FECHA_APERTURA_PROPOSICIONES"], required: false },
  { field: "tipoContratacion", names: ["TIPO_CONTRATACION"], required: true },
  { field: "tipoProcedimiento", names: ["TIPO_PROCEDIMIENTO"], required: true },
  { field: "codigoContrato", names: ["CODIGO_CONTRATO"], required: true },
  { field: "tituloContrato", names: ["TITULO_CONTRATO"], required: true },
  { field: "fechaInicio", names: ["FECHA_INICIO"], required: false },
  { field: "fechaFin", names: ["FECHA_FIN"], required: false },
  { field: "importe", names: ["IMPORTE_CONTRATO"], required: true },
  { field: "moneda", names: ["MONEDA"], required: true },
  { field: "estatusContrato", names: ["ESTATUS_CONTRATO"], required: true },
  { field: "fechaCelebracion", names: ["FECHA_CELEBRACION"], required: false },
  { field: "proveedor", names: ["PROVEEDOR_CONTRATISTA"], required: true },
  {
    field: "estratificacion",
    names: ["ESTRATIFICACION_MPC", "ESTRATIFICACION_PROVEEDOR", "ESTRATIFICACION"],
    required: false
  },
  { field: "estratificacionUc", names: ["ESTRATIFICACION_MUC"], required: false },
  { field: "rfc", names: ["RFC", "RFC_PROVEEDOR", "PROVEEDOR_RFC"], required: false }
]

export interface CompranetHeader {
  readonly layout: CompranetLayout
  readonly width: number
  /** Field → column position. */
  readonly columns: Partial<Readonly<Record<Field, number>>>
}

/**
 * The layout of a CompraNet header row, or a description of the missing columns. `gobierno_unnamed`: the first
 * header cell is empty and GOBIERNO is named nowhere, so the first column is taken as GOBIERNO (2015 export).
 */
export const detectCompranetLayout = (headers: ReadonlyArray<string>): Either.Either<CompranetHeader, string> => {
  const positions = new Map<string, number>()
  headers.forEach((header, i) => {
    const key = foldWords(header)
    if (key !== "" && !positions.has(key)) positions.set(key, i)
  })
  const columns: Partial<Record<Field, number>> = {}
  const missing: Array<string> = []
  for (const column of COLUMNS) {
    const position = column.names.map((name) => positions.get(foldWords(name))).find((p) => p !== undefined)
    if (position !== undefined) columns[column.field] = position
    else if (column.required) missing.push(column.names[0] ?? column.field)
  }
  const unnamedFirst = missing.length === 1 && missing[0] === "GOBIERNO" && (headers[0] ?? "").trim() === ""
  if (unnamedFirst) {
    return Either.right({ layout: "gobierno_unnamed", width: headers.length, columns: { ...columns, gobierno: 0 } })
  }
  if (missing.length > 0) {
    return Either.left(`header row is not a CompraNet contracts layout: missing ${missing.join(", ")}`)
  }
  return Either.right({ layout: "standard", width: headers.length, columns })
}

// ---------------------------------------------------------------------------
// File access

const SNIFF_BYTES = 64 * 1024

/** UTF-8 when the first bytes decode as UTF-8 (an incomplete last character is allowed), else Windows-1252. */
export const sniffEncoding = (path: string): Effect.Effect<"utf-8" | "windows-1252", SourceFileError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => open(path, "r"),
      catch: (e) => new SourceFileError({ path, message: e instanceof Error ? e.message : String(e) })
    }),
    (handle) =>
      Effect.tryPromise({
        try: () => handle.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0),
        catch: (e) => new SourceFileError({ path, message: e instanceof Error ? e.message : String(e) })
      }).pipe(
        Effect.map(({ buffer, bytesRead }) => {
          try {
            new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, bytesRead), { stream: true })
            return "utf-8" as const
          } catch {
            return "windows-1252" as const
          }
        })
      ),
    (handle) => Effect.promise(() => handle.close())
  )

const records = (path: string): Stream.Stream<NumberedRecord, SourceFileError> =>
  Stream.unwrap(
    Effect.map(sniffEncoding(path), (encoding): Stream.Stream<NumberedRecord, SourceFileError> => {
      const options: CsvOptions = { encoding }
      return csvRecords(path, options)
    })
  )

/** The layout of a CompraNet file (reads the header row only). */
export const detectCompranetFileLayout = (path: string): Effect.Effect<CompranetHeader, SourceFileError> =>
  records(path).pipe(
    Stream.runHead,
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new SourceFileError({ path, message: "empty file: no header row" })),
      onSome: (record) =>
        Either.match(detectCompranetLayout(record.fields), {
          onLeft: (message) => Effect.fail(new SourceFileError({ path, message })),
          onRight: Effect.succeed
        })
    }))
  )

// ---------------------------------------------------------------------------
// Row mapping

export interface CompranetRow {
  readonly opportunity: OpportunityRecord | null
  readonly award: AwardRecord
}

const decodeOpportunity = Schema.decodeUnknownEither(OpportunityRecord)
const decodeAward = Schema.decodeUnknownEither(AwardRecord)
const orNull = (s: string): string | null => (s === "" ? null : s)

const actionabilityReason = (
  status: string,
  ruledOn: string | null,
  signedOn: string | null,
  startOn: string | null,
  endOn: string | null
): string => {
  const statusPart = status === ""
    ? "contract status not published"
    : `contract status ${status.toUpperCase()} recorded at load`
  const dates = [
    ruledOn === null ? null : `ruling ${ruledOn}`,
    signedOn === null ? null : `signed ${signedOn}`,
    startOn === null && endOn === null ? null : `period ${startOn ?? "?"} to ${endOn ?? "?"}`
  ].filter((part) => part !== null)
  // The reason is served to callers: it names no source system or publisher.
  return `awarded: a contract is published under this procedure (${statusPart}${
    dates.length > 0 ? `; ${dates.join(", ")}` : ""
  }); historical record, not open`
}

/**
 * One CompraNet data row as records, or the reason it cannot be loaded. `awardKey` overrides the award's
 * `sourceRecordId` (used for a reused contract code).
 */
export const mapCompranetRow = (
  header: CompranetHeader,
  fields: ReadonlyArray<string>,
  awardKey?: string
): Either.Either<CompranetRow, string> => {
  if (fields.length !== header.width) {
    return Either.left(`expected ${header.width} fields, found ${fields.length}`)
  }
  const get = (field: Field): string => {
    const position = header.columns[field]
    return position === undefined ? "" : (fields[position] ?? "").trim()
  }
  const supplierName = get("proveedor")
  if (supplierName === "") return Either.left("missing supplier name (PROVEEDOR_CONTRATISTA)")

  const importe = get("importe")
  const amount = importe === "" ? null : (parseDecimal(importe) ?? null)
  if (importe !== "" && amount === null) {
    return Either.left(`IMPORTE_CONTRATO ${JSON.stringify(importe)} is not a number`)
  }
  const moneda = get("moneda")
  const currency = moneda === "" ? null : (parseCurrency(moneda) ?? null)
  if (moneda !== "" && currency === null) return Either.left(`MONEDA ${JSON.stringify(moneda)} is not a currency`)

  const procedureText = get("tipoProcedimiento") !== "" ? get("tipoProcedimiento") : get("plantillaExpediente")
  const procedureType = procedureTypeFromText(procedureText)
  const contractingType = contractingTypeFromText(get("tipoContratacion"))
  const procedureId = get("numeroProcedimiento")
  const buyerName = orNull(get("dependencia"))
  const buyerAcronym = orNull(get("siglas"))
  const fallo = isoDateOf(get("fallo"))
  const signedOn = isoDateOf(get("fechaCelebracion"))
  const startOn = isoDateOf(get("fechaInicio"))
  const endOn = isoDateOf(get("fechaFin"))
  const status = get("estatusContrato")
  const publishedOn = isoDateOf(get("publicacion"))

  const rfcText = get("rfc")
  const rfc = parseRfc(rfcText)
  const supplierRfc = rfc === undefined || GENERIC_RFCS.has(rfc) ? null : rfc

  const contractCode = get("codigoContrato")
  const sourceRecordId = awardKey ?? (contractCode !== ""
    ? contractCode
    : [
      procedureId !== "" ? procedureId : `EXP-${get("numeroExpediente")}`,
      normalizeName(supplierName),
      startOn ?? "",
      importe
    ].join("/"))

  const opportunity = procedureId === ""
    ? Either.right(null)
    : Either.mapLeft(
      decodeOpportunity({
        sourceRecordId: procedureId,
        title: orNull(get("tituloExpediente")) ?? orNull(get("tituloContrato")) ?? procedureId,
        description: null,
        buyerName,
        buyerAcronym,
        procedureType,
        procedureTypeText: orNull(procedureText),
        contractingType,
        statusText: orNull(status),
        isOpen: false,
        actionability: "awarded",
        actionabilityReason: actionabilityReason(status, fallo, signedOn, startOn, endOn),
        publishedOn,
        tenderStartOn: publishedOn,
        tenderEndOn: isoDateOf(get("apertura")),
        stateCode: null,
        cogPartidas: [],
        amount: null,
        currency: null
      }),
      (error) => `invalid opportunity: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
    )
  const award = Either.mapLeft(
    decodeAward({
      sourceRecordId,
      opportunitySourceRecordId: orNull(procedureId),
      title: orNull(get("tituloContrato")) ?? orNull(get("tituloExpediente")),
      supplierRfc,
      supplierName,
      supplierSize: orNull(get("estratificacion")) ?? orNull(get("estratificacionUc")),
      buyerName,
      buyerAcronym,
      procedureType,
      contractingType,
      awardDate: fallo ?? signedOn ?? startOn,
      amount,
      currency: currency?.code ?? null,
      currencyReported: currency?.reported ?? null,
      amountScope: "supplier_contract",
      cogPartidas: [],
      stateCode: null
    }),
    (error) => `invalid award: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  )
  return Either.flatMap(opportunity, (opp) => Either.map(award, (a): CompranetRow => ({ opportunity: opp, award: a })))
}

// ---------------------------------------------------------------------------
// Streaming

interface Seen {
  readonly line: number
  readonly signature: string
}

type State = {
  readonly header: Option.Option<CompranetHeader>
  readonly seen: HashMap.HashMap<string, Seen>
}

const initialState: State = { header: Option.none(), seen: HashMap.empty() }

const itemsOf = (line: number, row: CompranetRow): ReadonlyArray<LoadItem> => [
  ...(row.opportunity === null ? [] : [{ _tag: "Opportunity" as const, line, record: row.opportunity }]),
  { _tag: "Award", line, record: row.award },
  { _tag: "Accepted", line }
]

/**
 * Every data row of a CompraNet file as items, in file order: its records then `Accepted`, or one `Reject`.
 * The stream fails with {@link SourceFileError} when the file cannot be read or its header is not CompraNet's.
 */
export const streamCompranet = (path: string): Stream.Stream<LoadItem, SourceFileError> =>
  records(path).pipe(
    Stream.mapAccumEffect(
      initialState,
      (state, record): Effect.Effect<readonly [State, ReadonlyArray<LoadItem>], SourceFileError> =>
        Option.match(state.header, {
          onNone: () =>
            Either.match(detectCompranetLayout(record.fields), {
              onLeft: (message) => Effect.fail(new SourceFileError({ path, message })),
              onRight: (header) => Effect.succeed([{ ...state, header: Option.some(header) }, []] as const)
            }),
          onSome: (header) => {
            const reject = (reason: string) =>
              Effect.succeed([state, [{ _tag: "Reject" as const, line: record.line, reason }]] as const)
            const position = header.columns.codigoContrato
            const code = position === undefined ? "" : (record.fields[position] ?? "").trim()
            const signature = record.fields.join("\u0000")
            const earlier = code === "" ? Option.none<Seen>() : HashMap.get(state.seen, code)
            if (Option.isSome(earlier) && earlier.value.signature === signature) {
              return reject(`duplicate row: CODIGO_CONTRATO ${code} repeats line ${earlier.value.line} exactly`)
            }
            const supplierPosition = header.columns.proveedor
            const supplier = supplierPosition === undefined ? "" : (record.fields[supplierPosition] ?? "")
            // A reused contract code with different data keeps its own award under a composite key.
            const awardKey = Option.isSome(earlier) ? `${code}/${normalizeName(supplier)}` : undefined
            return Either.match(mapCompranetRow(header, record.fields, awardKey), {
              onLeft: reject,
              onRight: (row) =>
                Effect.succeed(
                  [
                    {
                      ...state,
                      seen: code === "" || Option.isSome(earlier)
                        ? state.seen
                        : HashMap.set(state.seen, code, { line: record.line, signature })
                    },
                    itemsOf(record.line, row)
                  ] as const
                )
            })
          }
        })
    ),
    Stream.mapConcat((items) => items)
  )

/** CSV data records after the header row (empty lines not counted), read as {@link streamCompranet} reads. */
export const countCompranetDataRows = (path: string): Effect.Effect<number, SourceFileError> =>
  records(path).pipe(Stream.runCount, Effect.map((n) => Math.max(0, n - 1)))

export const compranetParser: SourceParser = {
  kind: "compranet",
  description:
    "CompraNet federal contracts (2010–2012 and yearly 2013–2015 exports): procedures and supplier contracts",
  sourceOf: () => Effect.succeed(compranetSource),
  stream: (path) => streamCompranet(path),
  countDataRows: countCompranetDataRows
}
