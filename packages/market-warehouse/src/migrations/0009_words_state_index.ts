import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Words + state from one index scan (docs/decisions/0087-words-and-state-index.md): the supplier words' GIN
 * now indexes the words plus one lexeme for the state (none for a row without one), `'state NN'`, which no parsed query can produce (a
 * parsed lexeme never holds a space). A read ANDs that lexeme into its tsquery, so words + state intersect
 * two posting lists inside the GIN instead of ANDing a bitmap of the whole state; a read by words alone
 * matches the same rows as before. It replaces the plain words' GIN, so a load maintains no more indexes.
 *
 * The expression is written again, identically, in `@service/market-contract/internal/supplierWords`; a read
 * uses this index only while the two agree (`SupplierWords.test` checks the plan).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX supplier_obs_words_state_idx ON market.supplier_observations
    USING gin ((search_tsv || array_to_tsvector(array_remove(ARRAY['state ' || state_code], NULL))))`
  yield* sql`DROP INDEX market.supplier_obs_tsv_idx`
})
