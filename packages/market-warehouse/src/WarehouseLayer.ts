/**
 * The warehouse services over SQL: `Corpus` (snapshots, loads, publication) for operators and loaders, and the
 * read port `WarehouseReader` for readers.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as Layer from "effect/Layer"
import * as Corpus from "./Corpus.js"
import * as WarehouseReader from "./WarehouseReader.js"

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Corpus.Corpus | WarehouseReader.WarehouseReader, never, SqlClient.SqlClient> = Layer
  .mergeAll(Corpus.layer, WarehouseReader.layer)
