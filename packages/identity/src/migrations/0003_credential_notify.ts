import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Sessions and OAuth grants feed the credential cache too (decision 0079): a session ended, a grant revoked or an
 * access token destroyed notifies `service_credentials` (core's function) when it commits. A session's last-seen
 * stamp changes nothing a Principal holds, so it notifies nobody.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TRIGGER sessions_notify_update AFTER UPDATE ON identity.sessions FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
      OR OLD.person_id IS DISTINCT FROM NEW.person_id OR OLD.secret_sha256 IS DISTINCT FROM NEW.secret_sha256)
    EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER sessions_notify_delete AFTER DELETE ON identity.sessions
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER oauth_grants_notify AFTER UPDATE OR DELETE ON identity.oauth_grants
    FOR EACH STATEMENT EXECUTE FUNCTION core.notify_credentials()`
  // A revoked grant's tombstone, and a destroyed access token or grant.
  yield* sql`CREATE TRIGGER oauth_models_notify_insert AFTER INSERT ON identity.oauth_models FOR EACH ROW
    WHEN (NEW.model = 'RevokedGrant') EXECUTE FUNCTION core.notify_credentials()`
  yield* sql`CREATE TRIGGER oauth_models_notify_delete AFTER DELETE ON identity.oauth_models FOR EACH ROW
    WHEN (OLD.model IN ('AccessToken', 'Grant')) EXECUTE FUNCTION core.notify_credentials()`
})
