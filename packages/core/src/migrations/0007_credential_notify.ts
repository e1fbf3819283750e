import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Every node holds successful authentications for a few seconds (decision 0079): a change to what a Principal is
 * read from (a key revoked or rescoped, a membership or role changed, a person renamed or erased, a workspace
 * renamed) notifies `service_credentials` when it commits, and every node listening clears its cache. A key's
 * last-use stamp changes nothing a Principal holds, so it notifies nobody.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION core.notify_credentials() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('service_credentials', TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER credentials_notify_update AFTER UPDATE ON core.credentials FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.scopes IS DISTINCT FROM NEW.scopes
      OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.person_id IS DISTINCT FROM NEW.person_id
      OR OLD.workspace_id IS DISTINCT FROM NEW.workspace_id OR OLD.secret_sha256 IS DISTINCT FROM NEW.secret_sha256
      OR OLD.kind IS DISTINCT FROM NEW.kind)
    EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER credentials_notify_delete AFTER DELETE ON core.credentials
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER members_notify AFTER INSERT OR UPDATE OR DELETE ON core.members
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER persons_notify AFTER UPDATE OR DELETE ON core.persons
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER workspaces_notify AFTER UPDATE OR DELETE ON core.workspaces
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
})
