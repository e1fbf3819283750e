import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Indexes chosen from `EXPLAIN (ANALYZE, BUFFERS)` on the scale-1 generated corpus (1M supplier
 * observations, 2M awards; docs/decisions/0047-read-indexes.md):
 *
 * - an RFC's awards in the order pages read them (newest first, undated last, then id), so a history or an
 *   RFC search reads one page instead of sorting every award of the RFC (10-30 ms to 0.2 ms for an RFC with
 *   5,229 awards);
 * - an RFC's (currency, amount_scope) totals from the index alone;
 * - currency, scope and date with the amount, so year aggregates scan the index instead of the 2.3 GB heap;
 * - state and SCIAN prefix together, so a count or search by both reads only the matching observations
 *   (19,040 heap rows filtered to 2,001 before: 112 ms to 1 ms).
 *
 * The indexes they supersede are dropped so a load writes no more indexes than before plus one.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX awards_rfc_order_idx ON market.awards
    (snapshot_id, supplier_rfc, (coalesce(award_date, '0001-01-01'::date)) DESC, id) WHERE supplier_rfc IS NOT NULL`
  yield* sql`CREATE INDEX awards_rfc_pairs_idx ON market.awards
    (snapshot_id, supplier_rfc, currency, amount_scope) INCLUDE (amount, source_slug) WHERE supplier_rfc IS NOT NULL`
  yield* sql`CREATE INDEX awards_scope_date_idx ON market.awards
    (snapshot_id, currency, amount_scope, award_date) INCLUDE (amount, source_slug)`
  yield* sql`DROP INDEX market.awards_rfc_idx`
  yield* sql`DROP INDEX market.awards_scope_idx`
  yield* sql`CREATE INDEX supplier_obs_state_scian_idx ON market.supplier_observations
    (snapshot_id, state_code, scian_code text_pattern_ops) INCLUDE (source_slug)`
})
