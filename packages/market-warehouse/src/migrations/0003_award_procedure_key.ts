import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Awards reach their procedure through (snapshot, source, procedure id) instead of a stored opportunity id:
 * storing the id meant rewriting every award (and all its indexes) at each publish, and a copied snapshot would
 * have carried ids of the previous one.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX market.awards_opportunity_idx`
  yield* sql`ALTER TABLE market.awards DROP COLUMN opportunity_id`
  yield* sql`CREATE INDEX awards_procedure_idx ON market.awards (snapshot_id, source_slug, opportunity_source_record_id)
    WHERE opportunity_source_record_id IS NOT NULL`
})
