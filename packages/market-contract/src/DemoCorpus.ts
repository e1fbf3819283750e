/**
 * The demo corpus committed in the repository (data/mx), loaded on an empty database by `npm start` and by
 * tests. Retrieval dates are those of the copies the files were taken from (data/mx/README.md).
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { fileURLToPath } from "node:url"
import { Corpus, type Publication, type SnapshotNotLoading } from "./Corpus.js"
import { denueParser } from "./internal/denueParser.js"
import { type LoadFailed, loadFile, type LoadReport } from "./Loader.js"

/** @since 0.1.0 @category constants */
export const dataDirectory: string = fileURLToPath(new URL("../../../data/mx/", import.meta.url))

/** @since 0.1.0 @category constants */
export const supplierFiles: ReadonlyArray<{ readonly path: string; readonly retrievedOn: string }> = [
  { path: `${dataDirectory}suppliers/denue_inegi_21_mineria_sample.csv`, retrievedOn: "2018-11-27" },
  { path: `${dataDirectory}suppliers/denue_descarga_aguascalientes_sample.csv`, retrievedOn: "2018-11-27" },
  { path: `${dataDirectory}suppliers/denue_api_cdmx_restaurantes_sample.csv`, retrievedOn: "2019-05-25" }
]

/**
 * Loads every demo file into a new snapshot and publishes it.
 *
 * @since 0.1.0 @category loaders
 */
export const loadAndPublish: Effect.Effect<
  { readonly publication: Publication; readonly reports: ReadonlyArray<LoadReport> },
  LoadFailed | SnapshotNotLoading,
  SqlClient.SqlClient | Corpus | Crypto
> = Effect.gen(function*() {
  const corpus = yield* Corpus
  const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
  const reports = yield* Effect.forEach(supplierFiles, (file) =>
    loadFile(denueParser, file.path, { snapshotId, retrievedOn: file.retrievedOn }))
  const publication = yield* corpus.publish(snapshotId)
  return { publication, reports }
})

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
