/**
 * The demo corpus as a prepared test database: `TestDatabase.prepared(target, DemoSnapshot.over([...]))` gives a
 * test a database with these migrations applied and the demo corpus published under the fixed test keys
 * (`Crypto.layerTest`), loaded once per test run and engine instead of once per test file.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import type * as Migrations from "@service/storage/Migrations"
import type * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Corpus from "./Corpus.js"
import * as DemoCorpus from "./DemoCorpus.js"
import * as MarketMigrations from "./MarketMigrations.js"

/**
 * Loads and publishes the demo corpus under the test keys, over any migrated database.
 *
 * @since 0.1.0 @category snapshots
 */
export const prepare: Layer.Layer<never, never, SqlClient.SqlClient> = Layer.effectDiscard(Effect.orDie(DemoCorpus.loadAndPublish)).pipe(
  Layer.provide(Corpus.layer),
  Layer.provide(Crypto.layerTest)
)

/**
 * The demo corpus published over `migrations` (which must include the core and market sets).
 *
 * @since 0.1.0 @category snapshots
 */
export const over = (migrations: ReadonlyArray<Migrations.PackageMigrations>): TestDatabase.Snapshot<never> => ({
  key: "demo-corpus",
  migrations,
  prepare
})

/**
 * The demo corpus over the core and market migrations.
 *
 * @since 0.1.0 @category snapshots
 */
export const market: TestDatabase.Snapshot<never> = over([CoreMigrations.migrations, MarketMigrations.migrations])
