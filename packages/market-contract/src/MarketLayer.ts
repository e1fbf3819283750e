/**
 * The market-data services wired together over SQL: what a runtime provides, beside a projection. The contract
 * reads the warehouse through its read port (`WarehouseReader`) on the database's `ReadClient` (a PostgreSQL
 * read replica when `DATABASE_READ_URL` is set, else the primary), so the active publication, its coverage and
 * every row of an answer come from the same server. `Corpus` is provided beside it on the primary for the
 * runtimes' operator paths (demo load, readiness, `service corpus`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as WarehouseReader from "@service/market-warehouse/WarehouseReader"
import { ReadClient } from "@service/storage/Database"
import * as Layer from "effect/Layer"
import * as MarketData from "./MarketData.js"

const readSql: Layer.Layer<SqlClient.SqlClient, never, ReadClient> = Layer.effect(SqlClient.SqlClient, ReadClient)

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<
  MarketData.MarketData | Corpus.Corpus | WarehouseReader.WarehouseReader,
  never,
  SqlClient.SqlClient | ReadClient | Crypto
> = Layer.merge(
  MarketData.layer.pipe(Layer.provideMerge(WarehouseReader.layer), Layer.provide(readSql)),
  Corpus.layer
)
