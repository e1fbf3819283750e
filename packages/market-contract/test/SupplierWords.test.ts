import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as RequestContext from "@service/core/RequestContext"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { matchWords } from "../src/internal/supplierWords.js"
import * as MarketLayer from "../src/MarketLayer.js"
import * as Suppliers from "../src/Suppliers.js"

for (const target of TestDatabase.targets()) {
  const Services = Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.prepared(target, DemoSnapshot.market))
  )

  layer(Services, { timeout: "180 seconds" })(`supplier words with the state folded in on ${target.name}`, (it) => {
    it.effect("words + state is answered by supplier_obs_words_state_idx, so the read and the index agree", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Sequential scans off: the plan then shows whether an index can answer the condition at all. If the
        // read's expression drifted from the migration's, no index could, and the plan would be a sequential scan.
        const plan = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL enable_seqscan = off`
          return yield* sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT o.id FROM market.supplier_observations o
            WHERE ${matchWords(sql, sql`plainto_tsquery('market.es', 'comercializadora')`, "21")}`
        }))
        assert.include(plan.map((row) => row["QUERY PLAN"]).join("\n"), "supplier_obs_words_state_idx")
      }))

    it.effect("a search by words + state returns exactly the words' matches in that state", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // A frequent word of the demo corpus that has matches in the busiest state and in others.
        const example = yield* sql<{ word: string; state_code: string }>`
          WITH busiest AS (
            SELECT state_code FROM market.supplier_observations WHERE state_code IS NOT NULL
            GROUP BY state_code ORDER BY count(*) DESC, state_code LIMIT 1),
          words AS (
            SELECT word FROM ts_stat('SELECT search_tsv FROM market.supplier_observations')
            WHERE length(word) >= 4 ORDER BY ndoc DESC, word LIMIT 20)
          SELECT w.word, b.state_code FROM words w CROSS JOIN busiest b
          WHERE EXISTS (SELECT 1 FROM market.supplier_observations o
                        WHERE o.search_tsv @@ plainto_tsquery('market.es', w.word) AND o.state_code = b.state_code)
            AND EXISTS (SELECT 1 FROM market.supplier_observations o
                        WHERE o.search_tsv @@ plainto_tsquery('market.es', w.word) AND o.state_code <> b.state_code)
          LIMIT 1`
        const word = example[0]?.word
        const state = example[0]?.state_code
        assert.isDefined(word)
        assert.isDefined(state)
        if (word === undefined || state === undefined) return
        const expected = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM market.supplier_observations o
          WHERE o.search_tsv @@ plainto_tsquery('market.es', ${word}) AND o.state_code = ${state}`
        let seen = 0
        let cursor: string | undefined
        do {
          const page = yield* Suppliers.searchSuppliers({
            query: word,
            state,
            limit: 50,
            ...(cursor === undefined ? {} : { cursor })
          })
          for (const row of page.results) assert.strictEqual(row.state?.code, state)
          seen += page.results.length
          cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
        } while (cursor !== undefined)
        assert.strictEqual(seen, expected[0]?.n)
      }))

    it.effect("the state's lexeme cannot be reached by words: a query for 'state 21' matches no row for its state", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ words: boolean; phrase: boolean; state: boolean; other_state: boolean }>`
          SELECT ${matchWords(sql, sql`plainto_tsquery('market.es', 'state 21')`)} AS words,
                 ${matchWords(sql, sql`phraseto_tsquery('market.es', 'aceros del norte')`, "21")} AS phrase,
                 ${matchWords(sql, sql`plainto_tsquery('market.es', 'aceros')`, "21")} AS state,
                 ${matchWords(sql, sql`plainto_tsquery('market.es', 'aceros')`, "19")} AS other_state
          FROM (VALUES (to_tsvector('market.es', 'Aceros del Norte'), '21')) AS o(search_tsv, state_code)`
        assert.deepStrictEqual(rows[0], { words: false, phrase: true, state: true, other_state: false })
      }))
  })
}
