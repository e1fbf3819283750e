import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Catalogs from "../src/Catalogs.js"
import * as MarketMigrations from "../src/MarketMigrations.js"

for (const target of TestDatabase.targets()) {
  layer(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]), { timeout: "120 seconds" })(
    `catalogs on ${target.name}`,
    (it) => {
      it.effect("loads SCIAN, states with aliases, municipalities and COG once", () =>
        Effect.gen(function*() {
          const first = yield* Catalogs.ensureLoaded
          assert.strictEqual(first.scian, 2118)
          assert.strictEqual(first.states, 32)
          assert.strictEqual(first.municipalities, 2478)
          assert.isAbove(first.stateAliases, 100)
          assert.strictEqual(first.cog, 12049)
          const second = yield* Catalogs.ensureLoaded
          assert.deepStrictEqual(second, first)
          const sql = yield* SqlClient.SqlClient
          const aliases = yield* sql<{ code: string }>`SELECT code FROM market.state_aliases WHERE alias_key IN ('cdmx', 'edomex', 'distritofederal') ORDER BY alias_key`
          assert.deepStrictEqual(aliases.map((a) => a.code), ["09", "09", "15"])
          const fuzzy = yield* sql<{ code: string }>`SELECT code FROM market.municipalities
            WHERE state_code = '15' ORDER BY similarity(name_folded, 'ecatepec') DESC LIMIT 1`
          assert.strictEqual(fuzzy[0]?.code, "15033")
          const partida = yield* sql<{ level: string; parent_code: string }>`SELECT level, parent_code FROM market.cog WHERE code = '21101'`
          assert.deepStrictEqual(partida[0], { level: "partida_especifica", parent_code: "2110" })
        }))
    }
  )
}
