import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Award counts and exact totals per snapshot, source, currency, amount scope, month and procedure type,
 * computed at publish time, so aggregates by year, month or procedure type over whole months read a few
 * thousand rows instead of every award of the period (docs/decisions/0047-read-indexes.md).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE market.award_month_totals (
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL,
    currency text,
    amount_scope text NOT NULL,
    award_month date,
    procedure_type text,
    award_count integer NOT NULL,
    total_amount numeric NOT NULL
  )`
  yield* sql`CREATE INDEX award_month_totals_idx ON market.award_month_totals (snapshot_id, currency, amount_scope, award_month)`
})
