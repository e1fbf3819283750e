/**
 * Streaming parser for INEGI DENUE establishment files in their three
 * published layouts, detected from the header row:
 *
 * - `bulk`: the bulk download, short headers (`id`, `nom_estab`, `cve_ent`, …),
 *   e.g. `data/mx/suppliers/denue_inegi_21_mineria_sample.csv`;
 * - `web`: the DENUE web-query download, long Spanish headers
 *   ("Nombre de la Unidad Económica", …, "Área geoestadística básica " with a
 *   trailing space), e.g. `denue_descarga_aguascalientes_sample.csv`;
 * - `api`: a CSV export of the DENUE API (pandas: unnamed index column first,
 *   `Ubicacion` = "MUNICIPIO, Municipio, ENTIDAD", SCIAN title but no code,
 *   no state/municipality keys), e.g. `denue_api_cdmx_restaurantes_sample.csv`.
 *
 * Headers are matched after folding (accents, case, punctuation, surrounding
 * spaces ignored). The file is read with `fs.createReadStream` through
 * csv-parse's streaming parser; every data row yields exactly one result,
 * `Row` or `Reject` (with a reason), so accepted + rejected = data rows.
 */
import { Data, Effect, Either, Option, ParseResult, Schema, Stream } from "effect"
import * as csv from "./csv.js"
import type { NumberedRecord } from "./csv.js"
import { resolveMunicipality } from "../Municipalities.js"
import type { MunicipalityCatalog } from "../Municipalities.js"
import { classCodeForTitle, titleOf } from "./scian.js"
import type { ScianCatalog } from "./scian.js"
import { resolveState } from "../States.js"
import { foldText, foldWords } from "../Text.js"

// ---------------------------------------------------------------------------
// Observation schema

export const DenueLayout = Schema.Literal("bulk", "web", "api")
export type DenueLayout = typeof DenueLayout.Type

const NonEmpty = Schema.NonEmptyTrimmedString

/**
 * Contact coordinates exactly as published (trimmed; null when empty). They
 * are stored but must never be served: only the `has*` flags are public.
 */
export const DenueContact = Schema.Struct({
  phone: Schema.NullOr(NonEmpty),
  email: Schema.NullOr(NonEmpty),
  website: Schema.NullOr(NonEmpty)
})
export type DenueContact = typeof DenueContact.Type

export const DenueObservation = Schema.Struct({
  /** Which header layout the row came from. */
  sourceLayout: DenueLayout,
  /** DENUE establishment id. */
  sourceRecordId: NonEmpty,
  /** nom_estab. */
  name: NonEmpty,
  /** raz_social, or null when empty. */
  legalName: Schema.NullOr(NonEmpty),
  /**
   * 6-digit SCIAN class as published (bulk/web layouts; DENUE 2018 codes, so
   * it may be absent from SCIAN 2023, e.g. 211110), or for the API layout the
   * SCIAN 2023 class whose title equals Clase_actividad after folding.
   */
  scianCode: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d{6}$/u))),
  scianTitle: Schema.NullOr(NonEmpty),
  /** 2-digit INEGI state key. */
  stateCode: Schema.String.pipe(Schema.pattern(/^\d{2}$/u)),
  /** 5-digit INEGI municipality key (cve_ent + cve_mun), when derivable. */
  municipalityCode: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d{5}$/u))),
  /** per_ocu text, e.g. "0 a 5 personas". */
  employmentBand: Schema.NullOr(NonEmpty),
  hasPhone: Schema.Boolean,
  hasEmail: Schema.Boolean,
  hasWebsite: Schema.Boolean,
  /** tipoUniEco ("Fijo", "Semifijo", …). */
  establishmentType: Schema.NullOr(NonEmpty),
  /** 5 digits; 4-digit values (leading zero lost upstream) are left-padded. */
  postalCode: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d{5}$/u))),
  /** Month of incorporation to DENUE, "YYYY-MM" (from e.g. "MARZO 2011"). */
  incorporatedOn: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d{4}-(0[1-9]|1[0-2])$/u))),
  contact: DenueContact
})
export type DenueObservation = typeof DenueObservation.Type

export type DenueResult =
  | { readonly _tag: "Row"; readonly line: number; readonly row: DenueObservation }
  | { readonly _tag: "Reject"; readonly line: number; readonly reason: string }

/** The file cannot be read or is not well-formed CSV (the stream fails). */
export class DenueSourceError extends Data.TaggedError("DenueSourceError")<{
  readonly path: string
  readonly message: string
}> {}

/** The header row matches none of the known DENUE layouts (the stream fails). */
export class DenueLayoutError extends Data.TaggedError("DenueLayoutError")<{
  readonly path: string
  readonly message: string
  readonly headers: ReadonlyArray<string>
}> {}

export interface DenueReferences {
  readonly scian: ScianCatalog
  readonly municipalities: MunicipalityCatalog
}

// ---------------------------------------------------------------------------
// Layouts

type Field =
  | "id"
  | "name"
  | "legalName"
  | "scianCode"
  | "scianTitle"
  | "employmentBand"
  | "postalCode"
  | "stateCode"
  | "stateName"
  | "municipalityKey"
  | "municipalityName"
  | "phone"
  | "email"
  | "website"
  | "establishmentType"
  | "incorporatedOn"
  | "location"

/** Source column of each field, per layout (a missing field is not published in that layout). */
const LAYOUT_COLUMNS: { readonly [L in DenueLayout]: Partial<Readonly<Record<Field, string>>> } = {
  bulk: {
    id: "id",
    name: "nom_estab",
    legalName: "raz_social",
    scianCode: "codigo_act",
    scianTitle: "nombre_act",
    employmentBand: "per_ocu",
    postalCode: "cod_postal",
    stateCode: "cve_ent",
    stateName: "entidad",
    municipalityKey: "cve_mun",
    municipalityName: "municipio",
    phone: "telefono",
    email: "correoelec",
    website: "www",
    establishmentType: "tipoUniEco",
    incorporatedOn: "fecha_alta"
  },
  web: {
    id: "ID",
    name: "Nombre de la Unidad Económica",
    legalName: "Razón social",
    scianCode: "Código de la clase de actividad SCIAN",
    scianTitle: "Nombre de clase de la actividad",
    employmentBand: "Descripcion estrato personal ocupado",
    postalCode: "Código Postal",
    stateCode: "Clave entidad",
    stateName: "Entidad federativa",
    municipalityKey: "Clave municipio",
    municipalityName: "Municipio",
    phone: "Número de teléfono",
    email: "Correo electrónico",
    website: "Sitio en Internet",
    establishmentType: "Tipo de establecimiento",
    incorporatedOn: "Fecha de incorporación al DENUE"
  },
  api: {
    id: "Id",
    name: "Nombre",
    legalName: "Razon_social",
    scianTitle: "Clase_actividad",
    employmentBand: "Estrato",
    postalCode: "CP",
    phone: "Telefono",
    email: "Correo_e",
    website: "Sitio_internet",
    establishmentType: "Tipo",
    location: "Ubicacion"
  }
}

const LAYOUTS: ReadonlyArray<DenueLayout> = ["bulk", "web", "api"]

const headerKey = (h: string): string => foldWords(h)

export interface LayoutIndex {
  readonly layout: DenueLayout
  readonly width: number
  /** Field → column position. */
  readonly columns: Partial<Readonly<Record<Field, number>>>
}

/**
 * Detect the layout from a header row: the first layout all of whose columns
 * are present (compared after folding, so "Área geoestadística básica " and
 * accent or case variants match). Left: a description of what is missing.
 */
export const detectDenueLayout = (headers: ReadonlyArray<string>): Either.Either<LayoutIndex, string> => {
  const positions = new Map<string, number>()
  headers.forEach((h, i) => {
    const key = headerKey(h)
    if (!positions.has(key)) positions.set(key, i)
  })
  const attempts = LAYOUTS.map((layout) => {
    const columns: Partial<Record<Field, number>> = {}
    const missing: Array<string> = []
    for (const [field, column] of Object.entries(LAYOUT_COLUMNS[layout])) {
      const position = positions.get(headerKey(column))
      if (position === undefined) missing.push(column)
      else if (isField(field)) columns[field] = position
    }
    return { layout, columns, missing }
  })
  const found = attempts.find((a) => a.missing.length === 0)
  if (found !== undefined) return Either.right({ layout: found.layout, width: headers.length, columns: found.columns })
  const closest = [...attempts].sort((a, b) => a.missing.length - b.missing.length)[0]
  return Either.left(
    closest === undefined
      ? "no layouts"
      : `header row matches no DENUE layout; closest is "${closest.layout}", missing ${
        closest.missing.map((m) => JSON.stringify(m)).join(", ")
      }`
  )
}

const FIELDS: ReadonlySet<string> = new Set(Object.keys(LAYOUT_COLUMNS.bulk).concat(Object.keys(LAYOUT_COLUMNS.api)))
const isField = (s: string): s is Field => FIELDS.has(s)

// ---------------------------------------------------------------------------
// Value parsing

const MONTHS: ReadonlyMap<string, string> = new Map([
  ["enero", "01"],
  ["febrero", "02"],
  ["marzo", "03"],
  ["abril", "04"],
  ["mayo", "05"],
  ["junio", "06"],
  ["julio", "07"],
  ["agosto", "08"],
  ["septiembre", "09"],
  ["setiembre", "09"],
  ["octubre", "10"],
  ["noviembre", "11"],
  ["diciembre", "12"]
])

/** DENUE month-year ("MARZO 2011", "diciembre 2014") → "2011-03"; null when not of that form. */
export const parseDenueMonth = (s: string): string | null => {
  const folded = foldText(s)
  const spelled = /^([a-z]+)\.?\s*(?:de(?:l)?\s+)?(\d{4})$/u.exec(folded)
  if (spelled !== null) {
    const month = MONTHS.get(spelled[1] ?? "")
    const year = spelled[2]
    return month === undefined || year === undefined ? null : `${year}-${month}`
  }
  const iso = /^(\d{4})-(0[1-9]|1[0-2])$/u.exec(folded)
  return iso === null ? null : folded
}

/** Values DENUE (and its re-publishers) use to mean "none" in contact columns. */
const PLACEHOLDERS: ReadonlySet<string> = new Set([
  "",
  "-",
  "0",
  "na",
  "n a",
  "no tiene",
  "no aplica",
  "ninguno",
  "ninguna",
  "sin dato",
  "sin datos",
  "sin telefono",
  "sin correo",
  "sin pagina",
  "none",
  "null",
  "nan"
])

/** Non-empty after trim and not a placeholder such as "NO TIENE". */
export const isPresent = (s: string): boolean => !PLACEHOLDERS.has(foldWords(s))

const orNull = (s: string): string | null => (s === "" ? null : s)

/** "20196" → "20196"; "3510" (leading zero lost) → "03510"; anything else → null. */
export const normalizePostalCode = (s: string): string | null =>
  /^\d{5}$/u.test(s) ? s : /^\d{4}$/u.test(s) ? `0${s}` : null

/**
 * Split the API layout's `Ubicacion` ("BENITO JUÁREZ, Benito Juárez, CIUDAD
 * DE MÉXICO") into municipality and state text. The state is the last part;
 * the rest is the municipality written twice (upper case, then mixed case),
 * possibly containing commas itself (one INEGI name does), so the rest is
 * halved when its comma-separated parts split into two equal halves.
 */
export const splitUbicacion = (s: string): { readonly municipality: string; readonly state: string } => {
  const parts = s.split(",").map((p) => p.trim())
  const state = parts.pop() ?? ""
  if (parts.length % 2 === 0 && parts.length > 0) {
    const half = parts.length / 2
    const first = parts.slice(0, half).join(", ")
    const second = parts.slice(half).join(", ")
    if (foldWords(first) === foldWords(second)) return { municipality: second, state }
  }
  return { municipality: parts.join(", "), state }
}

// ---------------------------------------------------------------------------
// Row mapping

type RowOutcome = Either.Either<DenueObservation, string>

const decodeObservation = Schema.decodeUnknownEither(DenueObservation)

const resolveStateFromKeyAndName = (
  keyText: string,
  nameText: string,
  keyColumn: string,
  nameColumn: string
): Either.Either<string, string> => {
  const byKey = /^\d{1,2}$/u.test(keyText) ? resolveState(keyText) : undefined
  const byName = nameText === "" ? undefined : resolveState(nameText)
  const keyCode = byKey?._tag === "Resolved" ? byKey.code : undefined
  const nameCode = byName?._tag === "Resolved" ? byName.code : undefined
  if (keyCode !== undefined && nameCode !== undefined && keyCode !== nameCode) {
    return Either.left(
      `state key ${keyColumn}=${JSON.stringify(keyText)} (${keyCode}) disagrees with ${nameColumn}=${
        JSON.stringify(nameText)
      } (${nameCode})`
    )
  }
  const code = keyCode ?? nameCode
  if (code !== undefined) return Either.right(code)
  const suggestions = byName?._tag === "Unknown" && byName.suggestions.length > 0
    ? `; did you mean ${byName.suggestions.join(", ")}?`
    : ""
  return Either.left(
    `state cannot be resolved from ${keyColumn}=${JSON.stringify(keyText)}, ${nameColumn}=${
      JSON.stringify(nameText)
    }${suggestions}`
  )
}

const mapRecord = (index: LayoutIndex, record: ReadonlyArray<string>, refs: DenueReferences): RowOutcome => {
  if (record.length !== index.width) {
    return Either.left(`expected ${index.width} fields, found ${record.length}`)
  }
  const columns = LAYOUT_COLUMNS[index.layout]
  const get = (field: Field): string => {
    const position = index.columns[field]
    return position === undefined ? "" : (record[position] ?? "").trim()
  }
  const column = (field: Field): string => columns[field] ?? field

  const name = get("name")
  if (name === "") return Either.left(`missing establishment name (${column("name")})`)
  const id = get("id")
  if (id === "") return Either.left(`missing DENUE id (${column("id")})`)

  // State and municipality
  let stateCode: string
  let municipalityCode: string | null = null
  if (index.layout === "api") {
    const location = get("location")
    const { municipality, state } = splitUbicacion(location)
    const resolved = resolveState(state)
    if (resolved._tag === "Unknown") {
      const hint = resolved.suggestions.length > 0 ? `; did you mean ${resolved.suggestions.join(", ")}?` : ""
      return Either.left(
        `state cannot be resolved from ${column("location")}=${JSON.stringify(location)}${hint}`
      )
    }
    stateCode = resolved.code
    const m = resolveMunicipality(refs.municipalities, stateCode, municipality)
    municipalityCode = m._tag === "Resolved" ? m.code : null
  } else {
    const state = resolveStateFromKeyAndName(get("stateCode"), get("stateName"), column("stateCode"), column("stateName"))
    if (Either.isLeft(state)) return Either.left(state.left)
    stateCode = state.right
    const key = get("municipalityKey")
    const fromKey = /^\d{1,3}$/u.test(key) ? `${stateCode}${key.padStart(3, "0")}` : null
    if (fromKey !== null && refs.municipalities.byCode.has(fromKey)) {
      municipalityCode = fromKey
    } else {
      const byName = resolveMunicipality(refs.municipalities, stateCode, get("municipalityName"))
      // A well-formed key absent from the 2020 catalog is kept when the name does not resolve.
      municipalityCode = byName._tag === "Resolved" ? byName.code : fromKey
    }
  }

  // SCIAN
  const rawCode = get("scianCode")
  const rawTitle = get("scianTitle")
  const scianCode = /^\d{6}$/u.test(rawCode)
    ? rawCode
    : rawTitle === ""
    ? null
    : Option.getOrNull(classCodeForTitle(refs.scian, rawTitle))
  const scianTitle = rawTitle !== ""
    ? rawTitle
    : scianCode === null
    ? null
    : Option.getOrNull(titleOf(refs.scian, scianCode))

  const phone = get("phone")
  const email = get("email")
  const website = get("website")

  const candidate: DenueObservation = {
    sourceLayout: index.layout,
    sourceRecordId: id,
    name,
    legalName: orNull(get("legalName")),
    scianCode,
    scianTitle,
    stateCode,
    municipalityCode,
    employmentBand: orNull(get("employmentBand")),
    hasPhone: isPresent(phone),
    hasEmail: isPresent(email),
    hasWebsite: isPresent(website),
    establishmentType: orNull(get("establishmentType")),
    postalCode: normalizePostalCode(get("postalCode")),
    incorporatedOn: parseDenueMonth(get("incorporatedOn")),
    contact: { phone: orNull(phone), email: orNull(email), website: orNull(website) }
  }
  return Either.mapLeft(
    decodeObservation(candidate),
    (error) => `invalid observation: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  )
}

// ---------------------------------------------------------------------------
// Streaming

/** What csv-parse emits with `info: true`. */
const pair = <A, B>(a: A, b: B): readonly [A, B] => [a, b]

const csvRecords = (path: string): Stream.Stream<NumberedRecord, DenueSourceError> =>
  csv.csvRecords(path).pipe(Stream.mapError((error) => new DenueSourceError({ path, message: error.message })))

/**
 * Stream the DENUE file at `path`: one `Row` or `Reject` per data row, in file
 * order, with the line the row starts on. Rows are rejected when they have no
 * name or id, when their state cannot be resolved (or the state key and name
 * disagree), when their field count differs from the header's, or when the
 * mapped observation fails {@link DenueObservation}. The stream fails with
 * `DenueSourceError` (unreadable file, malformed CSV) or `DenueLayoutError`
 * (unrecognised header row).
 */
export const streamDenue = (
  path: string,
  refs: DenueReferences
): Stream.Stream<DenueResult, DenueSourceError | DenueLayoutError> =>
  csvRecords(path).pipe(
    Stream.mapAccumEffect(
      Option.none<LayoutIndex>(),
      (layout, rec): Effect.Effect<readonly [Option.Option<LayoutIndex>, Option.Option<DenueResult>], DenueLayoutError> =>
        Option.match(layout, {
          onNone: () =>
            Either.match(detectDenueLayout(rec.fields), {
              onLeft: (message) => Effect.fail(new DenueLayoutError({ path, message, headers: rec.fields })),
              onRight: (index) => Effect.succeed(pair(Option.some(index), Option.none<DenueResult>()))
            }),
          onSome: (index) => {
            const result: DenueResult = Either.match(mapRecord(index, rec.fields, refs), {
              onLeft: (reason) => ({ _tag: "Reject", line: rec.line, reason }),
              onRight: (row) => ({ _tag: "Row", line: rec.line, row })
            })
            return Effect.succeed(pair(layout, Option.some(result)))
          }
        })
    ),
    Stream.filterMap((result) => result)
  )

/** Detect the layout of a DENUE file from its header row (reads only until the first record). */
export const detectDenueFileLayout = (path: string): Effect.Effect<DenueLayout, DenueSourceError | DenueLayoutError> =>
  csvRecords(path).pipe(
    Stream.runHead,
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new DenueLayoutError({ path, message: "empty file: no header row", headers: [] })),
      onSome: (rec) =>
        Either.match(detectDenueLayout(rec.fields), {
          onLeft: (message) => Effect.fail(new DenueLayoutError({ path, message, headers: rec.fields })),
          onRight: (index) => Effect.succeed(index.layout)
        })
    }))
  )

/**
 * Number of CSV data records (all records after the header row, empty lines
 * not counted), read with the same streaming parser settings as
 * {@link streamDenue}, so that accepted + rejected can be checked against it.
 */
export const countDataRows = (path: string): Effect.Effect<number, DenueSourceError> =>
  csvRecords(path).pipe(Stream.runCount, Effect.map((n) => Math.max(0, n - 1)))
