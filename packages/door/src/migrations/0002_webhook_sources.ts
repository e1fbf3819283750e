import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // How a Source authenticates, the tool's own signing secret (sealed: the door computes HMACs with it), the
  // keyed fingerprint of its secret-address token (never the token), the confirmed mapping, and the example
  // notice with its proposal and the fields nobody has decided on yet.
  yield* sql`ALTER TABLE door.sources
    ADD COLUMN verification text NOT NULL DEFAULT 'standard-webhooks'
      CHECK (verification IN ('standard-webhooks', 'hmac', 'static-token', 'secret-address')),
    ADD COLUMN signing_secret_sealed text,
    ADD COLUMN token_fingerprint text,
    ADD COLUMN mapping jsonb,
    ADD COLUMN mapping_version integer NOT NULL DEFAULT 0,
    ADD COLUMN example jsonb,
    ADD COLUMN example_at timestamptz,
    ADD COLUMN proposal jsonb,
    ADD COLUMN undecided_fields jsonb NOT NULL DEFAULT '[]'::jsonb`
  // Webhook Arrivals: the element of a batch notice an Arrival stands for, the person fields last read from it
  // (cleared with the raw notice after 30 days) and the mapping version that read them. Their duplicate key (the
  // notice id, or a keyed fingerprint of the content) goes in `event_key`, unique per Source where not rejected.
  yield* sql`ALTER TABLE door.arrivals
    ADD COLUMN batch_index integer,
    ADD COLUMN reading jsonb,
    ADD COLUMN mapping_version integer`
  yield* sql`CREATE INDEX arrivals_reprocess_idx ON door.arrivals (source_id, status) WHERE status IN ('unmapped', 'no_person')`
})
