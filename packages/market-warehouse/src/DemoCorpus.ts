/**
 * The demo corpus shipped in this package (`data/mx/`, see {@link DataFiles}): a curated selection of the real
 * public samples that covers every record kind and keeps cross-source links (RFC GTA140724H10 is an OCDS
 * awardee and a SAT 69-B listing; DENUE establishments and CompraNet suppliers whose names also appear on SAT and
 * SFP lists). Loaded by `npm start` on an empty database and by tests. The 2022 SAT "listado completo" is left
 * out: it is an older snapshot of the same lists (it still loads with `service corpus load sat69b`).
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Catalogs from "./Catalogs.js"
import { Corpus, type Publication, type SnapshotNotLoading } from "./Corpus.js"
import * as DataFiles from "./DataFiles.js"
import { LoadFailed, loadFile, type LoadReport } from "./Loader.js"
import * as Parsers from "./Parsers.js"

/** The package's `data/mx/` folder, with a trailing separator. @since 0.1.0 @category constants */
export const dataDirectory: string = DataFiles.directory

/**
 * Each demo file with its parser kind and, where the file does not state it, the date the sample was taken
 * from its publisher (`data/mx/README.md` of this package).
 *
 * @since 0.1.0 @category constants
 */
export const files: ReadonlyArray<{ readonly kind: string; readonly path: string; readonly retrievedOn?: string }> = [
  { kind: "denue", path: "suppliers/denue_inegi_21_mineria_sample.csv", retrievedOn: "2018-11-27" },
  { kind: "denue", path: "suppliers/denue_descarga_aguascalientes_sample.csv", retrievedOn: "2018-11-27" },
  { kind: "denue", path: "suppliers/denue_api_cdmx_restaurantes_sample.csv", retrievedOn: "2019-05-25" },
  { kind: "compranet", path: "procurement/compranet_contratos_2010_2012_sample.csv", retrievedOn: "2015-05-14" },
  { kind: "compranet", path: "procurement/compranet_contratos_2013_sample.csv", retrievedOn: "2015-05-14" },
  { kind: "compranet", path: "procurement/compranet_contratos_2014_sample.csv", retrievedOn: "2015-05-14" },
  { kind: "compranet", path: "procurement/compranet_contratos_2015_sample.csv", retrievedOn: "2015-05-14" },
  { kind: "ocds", path: "procurement/ocds_apf_contrataciones_abiertas_records_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_inai_releases_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_cdmx_sefin_records_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_cdmx_sefin_releases_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_gacm_naicm_records_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_gacm_naicm_releases_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_jalisco_record_packages_sample.json", retrievedOn: "2018-11-24" },
  { kind: "ocds", path: "procurement/ocds_jalisco_release_packages_sample.json", retrievedOn: "2018-11-24" },
  { kind: "sat69b", path: "risks/sat_69b_definitivos_2026-01-31_sample.csv" },
  { kind: "sat69b", path: "risks/sat_69b_presuntos_2026-01-31_sample.csv" },
  { kind: "sat69b", path: "risks/sat_69b_desvirtuados_2026-01-31_sample.csv" },
  { kind: "sat69b", path: "risks/sat_69b_bis_global_definitivo_2025-06-13_sample.csv" },
  { kind: "sfp", path: "risks/sfp_proveedores_contratistas_sancionados_2021-01-14_sample.csv" },
  { kind: "cre", path: "permits/cre_permisos_generacion_administrados_2016-06-30_sample.csv" },
  { kind: "cre", path: "permits/cre_permisos_generacion_terminados_2016-06-30_sample.csv" }
]

/**
 * Loads the demo files `keep` selects into a new snapshot (with the reference catalogs) and publishes it: a smaller
 * publication, or one that adds records to an earlier one (saved-search alerts are tested this way).
 *
 * @since 0.1.0 @category loaders
 */
export const loadAndPublishWhere = (keep: (file: (typeof files)[number]) => boolean): Effect.Effect<
  { readonly publication: Publication; readonly reports: ReadonlyArray<LoadReport> },
  LoadFailed | SnapshotNotLoading,
  SqlClient.SqlClient | Corpus | Crypto
> => Effect.gen(function*() {
  const corpus = yield* Corpus
  yield* Catalogs.ensureLoaded
  const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
  const reports = yield* Effect.forEach(files.filter(keep), (file) =>
    Effect.gen(function*() {
      const parser = Parsers.byKind(file.kind)
      if (parser === undefined) return yield* new LoadFailed({ file: file.path, reason: `no parser for ${file.kind}` })
      const path = `${dataDirectory}${file.path}`
      const stated = file.retrievedOn !== undefined || parser.publishedAsOf === undefined
        ? Option.none<string>()
        : yield* parser.publishedAsOf(path).pipe(Effect.orElseSucceed(() => Option.none<string>()))
      const retrievedOn = file.retrievedOn ?? Option.getOrUndefined(stated)
      if (retrievedOn === undefined) return yield* new LoadFailed({ file: file.path, reason: "no retrieval date" })
      return yield* loadFile(parser, path, { snapshotId, retrievedOn })
    }))
  const publication = yield* corpus.publish(snapshotId)
  return { publication, reports }
})

/**
 * Loads every demo file into a new snapshot (with the reference catalogs) and publishes it.
 *
 * @since 0.1.0 @category loaders
 */
export const loadAndPublish: Effect.Effect<
  { readonly publication: Publication; readonly reports: ReadonlyArray<LoadReport> },
  LoadFailed | SnapshotNotLoading,
  SqlClient.SqlClient | Corpus | Crypto
> = loadAndPublishWhere(() => true)

/**
 * Loads and publishes the demo corpus only when nothing is published yet.
 *
 * @since 0.1.0 @category loaders
 */
export const ensureLoaded: Effect.Effect<
  Option.Option<{ readonly publication: Publication; readonly reports: ReadonlyArray<LoadReport> }>,
  LoadFailed | SnapshotNotLoading,
  SqlClient.SqlClient | Corpus | Crypto
> = Effect.gen(function*() {
  const corpus = yield* Corpus
  const active = yield* corpus.active
  if (Option.isSome(active)) return Option.none()
  return Option.some(yield* loadAndPublish)
})
