/**
 * The market-data bundle: the market services over SQL, the warehouse migrations and the market-data
 * operation group.
 *
 * @since 0.1.0
 */
import * as Bundle from "@service/core/Bundle"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as CorpusCommands from "@service/market-warehouse/CorpusCommands"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as Layer from "effect/Layer"
import * as MarketLayer from "./MarketLayer.js"
import * as MarketRuntime from "./MarketRuntime.js"
import * as Operations from "./Operations.js"

/** @since 0.1.0 @category bundles */
export const bundle = Bundle.make({
  name: "market",
  layer: Layer.merge(MarketLayer.layer, DemoLoad.Progress.layer),
  migrations: [MarketMigrations.migrations],
  groups: [Operations.group],
  operators: [CorpusCommands.operators],
  readiness: [MarketRuntime.publication],
  demo: [MarketRuntime.demoCorpus],
  fixture: MarketRuntime.fixture
})
