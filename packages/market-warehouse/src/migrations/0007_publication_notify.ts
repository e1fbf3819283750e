import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Every node holds the active publication until it changes (decision 0079): a snapshot's status, publication time
 * or freshness bound changing notifies `market_publications` when it commits, and every node listening forgets it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION market.notify_publications() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('market_publications', TG_OP);
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER snapshots_notify_update AFTER UPDATE ON market.snapshots FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.published_at IS DISTINCT FROM NEW.published_at
      OR OLD.fresh_for_seconds IS DISTINCT FROM NEW.fresh_for_seconds)
    EXECUTE FUNCTION market.notify_publications()`
  yield* sql`CREATE TRIGGER snapshots_notify_delete AFTER DELETE ON market.snapshots
    FOR EACH STATEMENT EXECUTE FUNCTION market.notify_publications()`
})
