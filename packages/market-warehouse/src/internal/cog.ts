/**
 * The CUCoP (Clasificador Único de las Contrataciones Públicas) with its COG (Clasificador por Objeto del
 * Gasto) hierarchy, as shipped in the federal "Contrataciones Abiertas" (EDCA) capture tool:
 * `data/mx/catalogs/cucop_cog_catalogo_edca.csv`, columns `id, classificationid, description, unit`.
 *
 * Levels by the shape of `classificationid`:
 * - capítulo: 4 digits ending "000" (2000); concepto: 4 digits ending "00" (2100);
 * - partida genérica: other 4-digit codes ending "0" (2110); partida específica: 5 digits (21101);
 * - CUCoP item: 8 digits (21100001), with a unit of measure.
 * Parents are structural: capítulo = first digit + "000", concepto = first 2 + "00", partida genérica =
 * first 3 + "0" (for an item, its first 4 digits).
 *
 * The item → partida específica mapping is NOT "the first 5 digits" in general: most items are
 * `<partida genérica><4-digit consecutive>` (21100001 sits under 21101; 25301003 is consecutive 1003 of
 * 2530), and only some chapters (6000, part of 3000) write `<partida específica><3 digits>` (62401009).
 * {@link partidaOfCucop} therefore resolves, in order: (1) the first 5 digits when they are a partida
 * específica of the catalog; (2) the only partida específica of the item's partida genérica; (3) the partida
 * específica the item is listed under in the file (the last one of the same genérica before it: the file is
 * grouped by partida, with a few rows out of place, e.g. items of 2380 after partida 59101); (4) none — the
 * genérica has no partida específica in this catalog (e.g. 6140), or several and the item comes before all
 * of them. On the EDCA file rules (1) and (3) never disagree where both apply.
 *
 * Descriptions are kept as published, without accents. At least one is off in the source: 21301 carries
 * the description of 21201 ("Materiales y utiles de impresion y reproduccion").
 */
import { Data, Effect, Option, Stream } from "effect"
import * as DataFiles from "../DataFiles.js"
import { csvRecords } from "./csv.js"

/** The COG/CUCoP catalog shipped in the package (`data/mx/catalogs/cucop_cog_catalogo_edca.csv`). */
export const defaultCogPath: string = DataFiles.path(DataFiles.catalogs.cog)

export type CogLevel = "capitulo" | "concepto" | "partida_generica" | "partida_especifica" | "cucop"

/** The file cannot be read or its header is not the EDCA catalog's. */
export class CogCatalogError extends Data.TaggedError("CogCatalogError")<{
  readonly path: string
  readonly message: string
}> {}

/** One catalog row as read, in file order. */
export type CogRow =
  | {
    readonly _tag: "Entry"
    readonly line: number
    /** The tool's row id (`id` column). */
    readonly rowId: string
    readonly code: string
    readonly level: CogLevel
    readonly description: string
    /** Unit of measure (items only; null when empty). */
    readonly unit: string | null
  }
  | { readonly _tag: "Anomaly"; readonly line: number; readonly reason: string }

export interface CogEntry {
  readonly code: string
  readonly level: Exclude<CogLevel, "cucop">
  readonly description: string
  /** Structural parent code (null for a capítulo). */
  readonly parent: string | null
  readonly line: number
}

/** How an item's partida específica was found (see the module comment). */
export type PartidaRule = "code_prefix" | "only_partida_of_generica" | "listed_under"

export interface CucopItem {
  readonly code: string
  readonly description: string
  readonly unit: string | null
  /** The first 4 digits. */
  readonly partidaGenerica: string
  readonly partidaEspecifica: string | null
  readonly partidaRule: PartidaRule | null
  readonly line: number
}

export interface CogCatalog {
  readonly capitulos: ReadonlyMap<string, CogEntry>
  readonly conceptos: ReadonlyMap<string, CogEntry>
  readonly partidasGenericas: ReadonlyMap<string, CogEntry>
  readonly partidasEspecificas: ReadonlyMap<string, CogEntry>
  readonly items: ReadonlyMap<string, CucopItem>
  /** Rows that could not be placed (malformed or repeated codes), with their line; empty for the EDCA file. */
  readonly anomalies: ReadonlyArray<{ readonly line: number; readonly reason: string }>
}

const HEADER = ["id", "classificationid", "description", "unit"] as const

/** The level a code's shape gives, or None when it is not a COG/CUCoP code. */
export const levelOfCode = (code: string): Option.Option<CogLevel> => {
  if (/^\d000$/.test(code)) return Option.some("capitulo")
  if (/^\d\d00$/.test(code)) return Option.some("concepto")
  if (/^\d{3}0$/.test(code)) return Option.some("partida_generica")
  if (/^\d{5}$/.test(code)) return Option.some("partida_especifica")
  if (/^\d{8}$/.test(code)) return Option.some("cucop")
  return Option.none()
}

const CODE = /^\d{4}$|^\d{5}$|^\d{8}$/

/** Capítulo of a 4-, 5- or 8-digit code: first digit + "000" (21101 → 2000). */
export const capituloOf = (code: string): Option.Option<string> =>
  CODE.test(code) ? Option.some(`${code.slice(0, 1)}000`) : Option.none()

/** Concepto of a 4-, 5- or 8-digit code: first two digits + "00" (21101 → 2100). */
export const conceptoOf = (code: string): Option.Option<string> =>
  CODE.test(code) ? Option.some(`${code.slice(0, 2)}00`) : Option.none()

/**
 * Partida genérica of a 5-digit partida específica (first 3 digits + "0") or of an 8-digit CUCoP item
 * (its first 4 digits, which always end in "0").
 */
export const partidaGenericaOf = (code: string): Option.Option<string> => {
  if (/^\d{5}$/.test(code)) return Option.some(`${code.slice(0, 3)}0`)
  if (/^\d{3}0\d{4}$/.test(code)) return Option.some(code.slice(0, 4))
  return Option.none()
}

const parentOf = (code: string, level: Exclude<CogLevel, "cucop">): string | null => {
  switch (level) {
    case "capitulo":
      return null
    case "concepto":
      return Option.getOrNull(capituloOf(code))
    case "partida_generica":
      return Option.getOrNull(conceptoOf(code))
    case "partida_especifica":
      return Option.getOrNull(partidaGenericaOf(code))
  }
}

/**
 * Every row of the catalog file after its header, in file order, classified by level. A row whose code has
 * no COG/CUCoP shape is an `Anomaly` (the stream goes on); a wrong header fails the stream.
 */
export const streamCog = (path: string): Stream.Stream<CogRow, CogCatalogError> =>
  csvRecords(path).pipe(
    Stream.mapError((error) => new CogCatalogError({ path, message: error.message })),
    Stream.zipWithIndex,
    Stream.mapEffect(([record, index]): Effect.Effect<Option.Option<CogRow>, CogCatalogError> => {
      if (index === 0) {
        const header = record.fields.map((cell) => cell.trim().toLowerCase())
        return HEADER.every((name, i) => header[i] === name)
          ? Effect.succeed(Option.none())
          : Effect.fail(
            new CogCatalogError({ path, message: `header is not ${HEADER.join(",")}: ${record.fields.join(",")}` })
          )
      }
      const [rowId = "", rawCode = "", description = "", unit = ""] = record.fields
      const code = rawCode.trim()
      return Effect.succeed(Option.some(Option.match(levelOfCode(code), {
        onNone: (): CogRow => ({ _tag: "Anomaly", line: record.line, reason: `not a COG/CUCoP code: "${rawCode}"` }),
        onSome: (level): CogRow => ({
          _tag: "Entry",
          line: record.line,
          rowId: rowId.trim(),
          code,
          level,
          description: description.trim(),
          unit: unit.trim() === "" ? null : unit.trim()
        })
      })))
    }),
    Stream.filterMap((row) => row)
  )

interface Builder {
  readonly entries: Record<Exclude<CogLevel, "cucop">, Map<string, CogEntry>>
  readonly items: Map<string, Omit<CucopItem, "partidaEspecifica" | "partidaRule"> & { readonly listedUnder: string | null }>
  /** Partida genérica → the last partida específica of it read so far (the one items are listed under). */
  readonly lastPartida: Map<string, string>
  readonly anomalies: Array<{ readonly line: number; readonly reason: string }>
}

const addRow = (builder: Builder, row: CogRow): Builder => {
  if (row._tag === "Anomaly") {
    builder.anomalies.push({ line: row.line, reason: row.reason })
    return builder
  }
  const known = row.level === "cucop" ? builder.items.get(row.code) : builder.entries[row.level].get(row.code)
  if (known !== undefined) {
    builder.anomalies.push({ line: row.line, reason: `code ${row.code} repeated (first on line ${known.line})` })
    return builder
  }
  if (row.level === "cucop") {
    const partidaGenerica = row.code.slice(0, 4)
    builder.items.set(row.code, {
      code: row.code,
      description: row.description,
      unit: row.unit,
      partidaGenerica,
      listedUnder: builder.lastPartida.get(partidaGenerica) ?? null,
      line: row.line
    })
    return builder
  }
  builder.entries[row.level].set(row.code, {
    code: row.code,
    level: row.level,
    description: row.description,
    parent: parentOf(row.code, row.level),
    line: row.line
  })
  if (row.level === "partida_especifica") builder.lastPartida.set(`${row.code.slice(0, 3)}0`, row.code)
  return builder
}

const finish = (builder: Builder): CogCatalog => {
  const partidas = builder.entries.partida_especifica
  const byGenerica = new Map<string, Array<string>>()
  for (const code of partidas.keys()) {
    const generica = `${code.slice(0, 3)}0`
    byGenerica.set(generica, [...(byGenerica.get(generica) ?? []), code])
  }
  const items = new Map<string, CucopItem>()
  for (const { listedUnder, ...item } of builder.items.values()) {
    const siblings = byGenerica.get(item.partidaGenerica) ?? []
    const prefix = item.code.slice(0, 5)
    const [only] = siblings
    const [partidaEspecifica, partidaRule]: readonly [string | null, PartidaRule | null] = partidas.has(prefix)
      ? [prefix, "code_prefix"]
      : siblings.length === 1 && only !== undefined
      ? [only, "only_partida_of_generica"]
      : listedUnder !== null
      ? [listedUnder, "listed_under"]
      : [null, null]
    items.set(item.code, { ...item, partidaEspecifica, partidaRule })
  }
  return {
    capitulos: builder.entries.capitulo,
    conceptos: builder.entries.concepto,
    partidasGenericas: builder.entries.partida_generica,
    partidasEspecificas: partidas,
    items,
    anomalies: builder.anomalies
  }
}

/** Streams the whole catalog file into memory (about 12,000 rows), for validation and lookups. */
export const loadCogCatalog = (path: string = defaultCogPath): Effect.Effect<CogCatalog, CogCatalogError> =>
  Effect.suspend(() =>
    // A fresh builder per run: the fold mutates it.
    streamCog(path).pipe(
      Stream.runFold<Builder, CogRow>({
        entries: {
          capitulo: new Map(),
          concepto: new Map(),
          partida_generica: new Map(),
          partida_especifica: new Map()
        },
        items: new Map(),
        lastPartida: new Map(),
        anomalies: []
      }, addRow),
      Effect.map(finish)
    )
  )

/** Whether `code` is a partida específica (5 digits) of the catalog. */
export const isKnownPartida = (catalog: CogCatalog, code: string): boolean =>
  catalog.partidasEspecificas.has(code.trim())

/** The partida específica of an 8-digit CUCoP item of the catalog (see the module comment for the rules). */
export const partidaOfCucop = (catalog: CogCatalog, code8: string): Option.Option<string> =>
  Option.flatMapNullable(Option.fromNullable(catalog.items.get(code8.trim())), (item) => item.partidaEspecifica)

/** The description of any code of the catalog (capítulo to CUCoP item), as published. */
export const descriptionOf = (catalog: CogCatalog, code: string): Option.Option<string> => {
  const key = code.trim()
  const entry = catalog.capitulos.get(key) ?? catalog.conceptos.get(key) ?? catalog.partidasGenericas.get(key) ??
    catalog.partidasEspecificas.get(key) ?? catalog.items.get(key)
  return Option.map(Option.fromNullable(entry), (e) => e.description)
}

/** One catalog code as a flat table row (the shape of `market.cog`). */
export type CogTableRow = {
  readonly code: string
  readonly level: CogLevel
  readonly description: string
  /** The next level up; for an item its partida específica when resolved, else its partida genérica. */
  readonly parent_code: string | null
  readonly unit: string | null
}

/** Every code of the catalog as flat rows, parents before children (file order within each level). */
export const cogTableRows = (catalog: CogCatalog): ReadonlyArray<CogTableRow> => {
  const entryRow = (e: CogEntry): CogTableRow => ({
    code: e.code,
    level: e.level,
    description: e.description,
    parent_code: e.parent,
    unit: null
  })
  return [
    ...[...catalog.capitulos.values()].map(entryRow),
    ...[...catalog.conceptos.values()].map(entryRow),
    ...[...catalog.partidasGenericas.values()].map(entryRow),
    ...[...catalog.partidasEspecificas.values()].map(entryRow),
    ...[...catalog.items.values()].map((item): CogTableRow => ({
      code: item.code,
      level: "cucop",
      description: item.description,
      parent_code: item.partidaEspecifica ?? item.partidaGenerica,
      unit: item.unit
    }))
  ]
}

/** The whole catalog as flat rows, for loading the reference table. */
export const loadCog = (path: string = defaultCogPath): Effect.Effect<ReadonlyArray<CogTableRow>, CogCatalogError> =>
  Effect.map(loadCogCatalog(path), cogTableRows)
