import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * A supplier read served from an index, chosen by `EXPLAIN (ANALYZE, BUFFERS)` on the scale-1 generated corpus
 * (1M supplier observations; docs/decisions/0084-state-search-indexes.md):
 *
 * - state + SCIAN prefix in name order: the state index walked in page order now carries the SCIAN code and the
 *   source, so the page's first phase (ids and sort keys, `searchSuppliers`) filters index entries instead of
 *   reading each row of the state until a page matches (1,143 heap blocks to 0 for prefix 541 in state 21);
 * - (a GIN over the state and the words, through `btree_gin`, was measured and is not created: on PGlite the
 *   extension hung a later failing transaction's commit; see the decision.)
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX market.supplier_obs_state_idx`
  yield* sql`CREATE INDEX supplier_obs_state_idx ON market.supplier_observations
    (snapshot_id, state_code, name_norm, id) INCLUDE (scian_code, source_slug)`
})
