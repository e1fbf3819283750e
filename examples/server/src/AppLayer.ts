/**
 * The domain layers every runtime shares: database, migrations, keys, accounts and market data.
 *
 * @since 0.1.0
 */
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import type { Crypto } from "@service/core/Crypto"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import type * as Database from "@service/storage/Database"
import * as Migrations from "@service/storage/Migrations"
import * as Layer from "effect/Layer"

/** Every package's migrations, in dependency order. @since 0.1.0 */
export const migrationSets = [CoreMigrations.migrations, MarketMigrations.migrations]

/**
 * Domain services over a migrated database. Give it a database layer and a Crypto layer.
 *
 * @since 0.1.0 @category layers
 */
export const make = <E1, E2>(
  database: Layer.Layer<Database.DatabaseServices, E1>,
  crypto: Layer.Layer<Crypto, E2>
) =>
  Layer.mergeAll(MarketLayer.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Migrations.layer(migrationSets)),
    Layer.provideMerge(crypto),
    Layer.provideMerge(database)
  )
