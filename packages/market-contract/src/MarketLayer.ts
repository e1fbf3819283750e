/**
 * The market-data services wired together over SQL: what a runtime provides, beside a projection.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Crypto } from "@service/core/Crypto"
import * as Layer from "effect/Layer"
import * as Corpus from "./Corpus.js"
import * as MarketData from "./MarketData.js"

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<MarketData.MarketData | Corpus.Corpus, never, SqlClient.SqlClient | Crypto> = MarketData
  .layer.pipe(Layer.provideMerge(Corpus.layer))
