import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA IF NOT EXISTS market`
  // Spanish stemming over unaccented words: "Construcción" and "construccion" index alike.
  yield* sql`CREATE TEXT SEARCH CONFIGURATION market.es (COPY = pg_catalog.spanish)`
  yield* sql`ALTER TEXT SEARCH CONFIGURATION market.es
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, spanish_stem`
  // unaccent() is only STABLE; an IMMUTABLE wrapper lets expression indexes use it.
  yield* sql.unsafe(`CREATE FUNCTION market.fold(t text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, t)) $$`)

  yield* sql`CREATE TABLE market.sources (
    slug text PRIMARY KEY,
    label text NOT NULL,
    publisher text NOT NULL,
    licence text NOT NULL,
    licensed_for_display boolean NOT NULL,
    evidence_category text NOT NULL
  )`
  yield* sql`CREATE TABLE market.snapshots (
    id text PRIMARY KEY,
    status text NOT NULL CHECK (status IN ('loading', 'active', 'retired')),
    created_at timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz,
    fresh_for_seconds integer
  )`
  // At most one active publication: publishing swaps it inside one transaction.
  yield* sql`CREATE UNIQUE INDEX snapshots_one_active ON market.snapshots ((status)) WHERE status = 'active'`

  yield* sql`CREATE TABLE market.source_loads (
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    file_name text NOT NULL,
    retrieved_on date NOT NULL,
    accepted integer NOT NULL,
    rejected integer NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (snapshot_id, source_slug, file_name)
  )`
  yield* sql`CREATE TABLE market.load_rejects (
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL,
    file_name text NOT NULL,
    line integer NOT NULL,
    reason text NOT NULL,
    PRIMARY KEY (snapshot_id, file_name, line)
  )`

  yield* sql`CREATE TABLE market.supplier_observations (
    id bigserial PRIMARY KEY,
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    source_record_id text NOT NULL,
    retrieved_on date NOT NULL,
    fingerprint text NOT NULL,
    name text NOT NULL,
    legal_name text,
    name_norm text NOT NULL,
    rfc text,
    scian_code text,
    scian_title text,
    state_code text NOT NULL,
    municipality_code text,
    municipality_name text,
    employment_band text,
    establishment_type text,
    incorporated_on text,
    has_phone boolean NOT NULL,
    has_email boolean NOT NULL,
    has_website boolean NOT NULL,
    -- Contact coordinates are kept as received for the contact unlock flow; no projection serves them.
    contact jsonb NOT NULL DEFAULT '{}'::jsonb,
    search_tsv tsvector NOT NULL,
    UNIQUE (snapshot_id, source_slug, source_record_id)
  )`
  yield* sql`CREATE INDEX supplier_obs_name_idx ON market.supplier_observations (snapshot_id, name_norm, id)`
  yield* sql`CREATE INDEX supplier_obs_state_idx ON market.supplier_observations (snapshot_id, state_code, name_norm, id)`
  yield* sql`CREATE INDEX supplier_obs_scian_idx ON market.supplier_observations (snapshot_id, scian_code text_pattern_ops)`
  yield* sql`CREATE INDEX supplier_obs_rfc_idx ON market.supplier_observations (snapshot_id, rfc) WHERE rfc IS NOT NULL`
  yield* sql`CREATE INDEX supplier_obs_fingerprint_idx ON market.supplier_observations (snapshot_id, fingerprint)`
  yield* sql`CREATE INDEX supplier_obs_tsv_idx ON market.supplier_observations USING gin (search_tsv)`
  yield* sql`CREATE INDEX supplier_obs_trgm_idx ON market.supplier_observations USING gin (name_norm gin_trgm_ops)`

  // Coverage is computed once at publish time and read by every response.
  yield* sql`CREATE TABLE market.coverage (
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    evidence_category text NOT NULL,
    licensed_for_display boolean NOT NULL,
    row_count bigint NOT NULL,
    visible_rows bigint NOT NULL,
    oldest_retrieval date,
    newest_retrieval date,
    PRIMARY KEY (snapshot_id, source_slug, evidence_category)
  )`
})
