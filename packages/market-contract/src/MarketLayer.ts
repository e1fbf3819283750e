/**
 * The market-data services wired together over SQL: what a runtime provides, beside a projection. The contract
 * reads the warehouse through its read port (`WarehouseReader`); `Corpus` is provided beside it for the
 * runtimes' operator paths (demo load, readiness, `service corpus`).
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import type { Corpus } from "@service/market-warehouse/Corpus"
import * as WarehouseLayer from "@service/market-warehouse/WarehouseLayer"
import type { WarehouseReader } from "@service/market-warehouse/WarehouseReader"
import * as Layer from "effect/Layer"
import * as MarketData from "./MarketData.js"

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<
  MarketData.MarketData | Corpus | WarehouseReader,
  never,
  SqlClient.SqlClient | Crypto
> = MarketData.layer.pipe(Layer.provideMerge(WarehouseLayer.layer))
