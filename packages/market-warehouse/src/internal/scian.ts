/**
 * SCIAN México 2023 catalog, read from the Django fixture
 * `data/mx/catalogs/scian_2023_inegi_cat_scian_fixture.json` and decoded with
 * Schema. Codes are strings of 2 (sector), 3 (subsector), 4 (rama),
 * 5 (subrama) or 6 (clase) digits; the parent of a code is the fixture's
 * `tn_parent`. Sectors 31/32/33 and 48/49 are separate 2-digit codes there (the
 * "31-33" / "48-49" spellings are not codes of the catalog).
 */
import { readFile } from "node:fs/promises"
import { Data, Effect, Option, ParseResult, Schema } from "effect"
import * as DataFiles from "../DataFiles.js"
import { foldWords } from "../Text.js"

/** The SCIAN catalog shipped in the package (`data/mx/catalogs/scian_2023_inegi_cat_scian_fixture.json`). */
export const defaultScianPath: string = DataFiles.path(DataFiles.catalogs.scian)

export const ScianLevel = Schema.Literal("sector", "subsector", "rama", "subrama", "clase")
export type ScianLevel = typeof ScianLevel.Type

/** One fixture object; only the fields used here are decoded. */
export const ScianFixtureRecord = Schema.Struct({
  model: Schema.Literal("cat_scian.scian"),
  pk: Schema.Int.pipe(Schema.positive()),
  fields: Schema.Struct({
    nivel: ScianLevel,
    titulo: Schema.String,
    descripcion: Schema.String,
    tn_parent: Schema.NullOr(Schema.Int)
  })
})
export type ScianFixtureRecord = typeof ScianFixtureRecord.Type

const ScianFile = Schema.parseJson(Schema.Array(ScianFixtureRecord))

export class ScianCatalogError extends Data.TaggedError("ScianCatalogError")<{
  readonly path: string
  readonly message: string
}> {}

export interface ScianEntry {
  readonly code: string
  /** Official title, trimmed (the fixture has trailing spaces on most class titles). */
  readonly title: string
  readonly level: ScianLevel
  readonly parent: string | null
  readonly description: string
}

export interface ScianCatalog {
  readonly byCode: ReadonlyMap<string, ScianEntry>
  /** {@link foldWords} of a clase title → clase code (clase titles are unique in SCIAN 2023). */
  readonly classByTitle: ReadonlyMap<string, string>
}

export const makeScianCatalog = (records: ReadonlyArray<ScianFixtureRecord>): ScianCatalog => {
  const byCode = new Map<string, ScianEntry>()
  const classByTitle = new Map<string, string>()
  for (const r of records) {
    const entry: ScianEntry = {
      code: String(r.pk),
      title: r.fields.titulo.trim(),
      level: r.fields.nivel,
      parent: r.fields.tn_parent === null ? null : String(r.fields.tn_parent),
      description: r.fields.descripcion.trim()
    }
    byCode.set(entry.code, entry)
    if (entry.level === "clase") classByTitle.set(foldWords(entry.title), entry.code)
  }
  return { byCode, classByTitle }
}

/** Read and decode the SCIAN 2023 fixture. */
export const loadScian = (path: string = defaultScianPath): Effect.Effect<ScianCatalog, ScianCatalogError> =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (cause) => new ScianCatalogError({ path, message: `cannot read file: ${String(cause)}` })
  }).pipe(
    Effect.flatMap((text) =>
      Schema.decodeUnknown(ScianFile)(text).pipe(
        Effect.mapError((error) =>
          new ScianCatalogError({ path, message: ParseResult.TreeFormatter.formatErrorSync(error) })
        )
      )
    ),
    Effect.map(makeScianCatalog)
  )

const entryOf = (catalog: ScianCatalog, code: string): Option.Option<ScianEntry> =>
  Option.fromNullable(catalog.byCode.get(code.trim()))

/** Whether `code` is a SCIAN 2023 code (any level). */
export const isKnownCode = (catalog: ScianCatalog, code: string): boolean => catalog.byCode.has(code.trim())

/** Official title of a code. */
export const titleOf = (catalog: ScianCatalog, code: string): Option.Option<string> =>
  Option.map(entryOf(catalog, code), (e) => e.title)

/** Level (sector … clase) of a code. */
export const levelOf = (catalog: ScianCatalog, code: string): Option.Option<ScianLevel> =>
  Option.map(entryOf(catalog, code), (e) => e.level)

/**
 * Ancestors of a code, nearest first, up to the sector: for 212311 →
 * 21231 (subrama), 2123 (rama), 212 (subsector), 21 (sector). Empty for a
 * sector or an unknown code.
 */
export const parentChain = (catalog: ScianCatalog, code: string): ReadonlyArray<ScianEntry> => {
  const chain: Array<ScianEntry> = []
  let current = catalog.byCode.get(code.trim())
  while (current !== undefined && current.parent !== null && chain.length < 6) {
    const parent = catalog.byCode.get(current.parent)
    if (parent === undefined) break
    chain.push(parent)
    current = parent
  }
  return chain
}

/** The 6-digit clase whose title equals `title` after folding (accents, case, punctuation, spacing ignored). */
export const classCodeForTitle = (catalog: ScianCatalog, title: string): Option.Option<string> =>
  Option.fromNullable(catalog.classByTitle.get(foldWords(title)))
