import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/**
 * Opportunities (with awards as their child collection), awards, risk marks and permits, plus the reference
 * catalogs. Every row carries its provenance: the source (publisher, licence and display licence live on
 * market.sources), the source record id and the retrieval date.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // RFC-bearing observations from lists (SAT 69-B) publish no state.
  yield* sql`ALTER TABLE market.supplier_observations ALTER COLUMN state_code DROP NOT NULL`

  yield* sql`CREATE TABLE market.opportunities (
    id bigserial PRIMARY KEY,
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    source_record_id text NOT NULL,
    retrieved_on date NOT NULL,
    fingerprint text NOT NULL,
    title text NOT NULL,
    description text,
    buyer_name text,
    buyer_acronym text,
    procedure_type text,
    procedure_type_text text,
    contracting_type text,
    status_text text,
    is_open boolean NOT NULL,
    actionability text NOT NULL,
    actionability_reason text NOT NULL,
    published_on date,
    tender_start_on date,
    tender_end_on date,
    state_code text,
    cog_partidas text[] NOT NULL DEFAULT '{}',
    amount numeric,
    currency text,
    award_count integer NOT NULL DEFAULT 0,
    search_tsv tsvector NOT NULL,
    UNIQUE (snapshot_id, source_slug, source_record_id)
  )`
  yield* sql`CREATE INDEX opportunities_tsv_idx ON market.opportunities USING gin (search_tsv)`
  yield* sql`CREATE INDEX opportunities_published_idx ON market.opportunities (snapshot_id, published_on DESC, id)`
  yield* sql`CREATE INDEX opportunities_cog_idx ON market.opportunities USING gin (cog_partidas)`
  yield* sql`CREATE INDEX opportunities_fingerprint_idx ON market.opportunities (snapshot_id, fingerprint)`

  yield* sql`CREATE TABLE market.awards (
    id bigserial PRIMARY KEY,
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    source_record_id text NOT NULL,
    retrieved_on date NOT NULL,
    fingerprint text NOT NULL,
    opportunity_source_record_id text,
    opportunity_id bigint,
    title text,
    supplier_rfc text,
    supplier_name text NOT NULL,
    supplier_name_norm text NOT NULL,
    supplier_size text,
    buyer_name text,
    buyer_acronym text,
    procedure_type text,
    contracting_type text,
    award_date date,
    amount numeric,
    currency text,
    currency_reported text,
    amount_scope text NOT NULL CHECK (amount_scope IN ('supplier_contract', 'award_group_published_total')),
    cog_partidas text[] NOT NULL DEFAULT '{}',
    state_code text,
    search_tsv tsvector NOT NULL,
    UNIQUE (snapshot_id, source_slug, source_record_id)
  )`
  yield* sql`CREATE INDEX awards_rfc_idx ON market.awards (snapshot_id, supplier_rfc, award_date, id) WHERE supplier_rfc IS NOT NULL`
  yield* sql`CREATE INDEX awards_date_idx ON market.awards (snapshot_id, award_date DESC, id)`
  yield* sql`CREATE INDEX awards_scope_idx ON market.awards (snapshot_id, currency, amount_scope)`
  yield* sql`CREATE INDEX awards_opportunity_idx ON market.awards (snapshot_id, opportunity_id)`
  yield* sql`CREATE INDEX awards_cog_idx ON market.awards USING gin (cog_partidas)`
  yield* sql`CREATE INDEX awards_tsv_idx ON market.awards USING gin (search_tsv)`
  yield* sql`CREATE INDEX awards_name_trgm_idx ON market.awards USING gin (supplier_name_norm gin_trgm_ops)`
  yield* sql`CREATE INDEX awards_fingerprint_idx ON market.awards (snapshot_id, fingerprint)`

  yield* sql`CREATE TABLE market.risk_marks (
    id bigserial PRIMARY KEY,
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    source_record_id text NOT NULL,
    retrieved_on date NOT NULL,
    fingerprint text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('efos', 'sancion')),
    legal_basis text NOT NULL,
    subject_rfc text,
    subject_name text NOT NULL,
    subject_name_norm text NOT NULL,
    status text NOT NULL,
    status_text text NOT NULL,
    listed_on date,
    stage_dates jsonb NOT NULL DEFAULT '{}'::jsonb,
    sanctioning_body text,
    case_id text,
    sanction_type text,
    period text,
    fine_amount numeric,
    fine_currency text,
    UNIQUE (snapshot_id, source_slug, source_record_id)
  )`
  yield* sql`CREATE INDEX risk_marks_rfc_idx ON market.risk_marks (snapshot_id, subject_rfc, id) WHERE subject_rfc IS NOT NULL`
  yield* sql`CREATE INDEX risk_marks_kind_idx ON market.risk_marks (snapshot_id, kind, subject_name_norm, id)`
  yield* sql`CREATE INDEX risk_marks_name_trgm_idx ON market.risk_marks USING gin (subject_name_norm gin_trgm_ops)`
  yield* sql`CREATE INDEX risk_marks_fingerprint_idx ON market.risk_marks (snapshot_id, fingerprint)`

  yield* sql`CREATE TABLE market.permits (
    id bigserial PRIMARY KEY,
    snapshot_id text NOT NULL REFERENCES market.snapshots(id) ON DELETE CASCADE,
    source_slug text NOT NULL REFERENCES market.sources(slug),
    source_record_id text NOT NULL,
    retrieved_on date NOT NULL,
    fingerprint text NOT NULL,
    permit_number text NOT NULL,
    holder_name text NOT NULL,
    holder_name_norm text NOT NULL,
    holder_rfc text,
    plant_name text,
    permit_type text,
    status_text text NOT NULL,
    is_active_risk boolean NOT NULL,
    is_terminated boolean NOT NULL,
    is_expansion boolean NOT NULL,
    investment_mdd numeric,
    capacity_mw numeric,
    estimated_generation numeric,
    fuel text,
    technology text,
    state_code text,
    granted_on date,
    operation_start_text text,
    ended_on date,
    UNIQUE (snapshot_id, source_slug, source_record_id)
  )`
  yield* sql`CREATE INDEX permits_rfc_idx ON market.permits (snapshot_id, holder_rfc, id) WHERE holder_rfc IS NOT NULL`
  yield* sql`CREATE INDEX permits_name_idx ON market.permits (snapshot_id, holder_name_norm, id)`
  yield* sql`CREATE INDEX permits_name_trgm_idx ON market.permits USING gin (holder_name_norm gin_trgm_ops)`
  yield* sql`CREATE INDEX permits_fingerprint_idx ON market.permits (snapshot_id, fingerprint)`

  // Coverage rows are per (source, record kind): one source can feed two kinds (SAT lists give risk marks and
  // supplier observations), so the category comes from the table, not the source.
  yield* sql`ALTER TABLE market.coverage ADD COLUMN record_kind text NOT NULL DEFAULT 'supplier_observation'`
  yield* sql`ALTER TABLE market.coverage DROP CONSTRAINT coverage_pkey`
  yield* sql`ALTER TABLE market.coverage ADD PRIMARY KEY (snapshot_id, source_slug, record_kind)`

  yield* sql`ALTER TABLE market.source_loads ADD COLUMN report jsonb NOT NULL DEFAULT '{}'::jsonb`
  yield* sql`ALTER TABLE market.snapshots ADD COLUMN base_snapshot_id text`

  // Reference catalogs (loaded from data/mx/catalogs by Catalogs.ensureLoaded).
  yield* sql`CREATE TABLE market.scian (
    code text PRIMARY KEY,
    level text NOT NULL,
    title text NOT NULL,
    parent_code text
  )`
  yield* sql`CREATE TABLE market.municipalities (
    code text PRIMARY KEY,
    state_code text NOT NULL,
    name text NOT NULL,
    name_folded text NOT NULL
  )`
  yield* sql`CREATE INDEX municipalities_name_trgm_idx ON market.municipalities USING gin (name_folded gin_trgm_ops)`
  yield* sql`CREATE TABLE market.states (
    code text PRIMARY KEY,
    name text NOT NULL
  )`
  yield* sql`CREATE TABLE market.state_aliases (
    alias_key text PRIMARY KEY,
    code text NOT NULL REFERENCES market.states(code)
  )`
  yield* sql`CREATE TABLE market.cog (
    code text PRIMARY KEY,
    level text NOT NULL,
    description text NOT NULL,
    parent_code text,
    unit text
  )`
})
