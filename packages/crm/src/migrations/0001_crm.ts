import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SCHEMA crm`
  yield* sql`CREATE TABLE crm.companies (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    domain text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX companies_domain_idx ON crm.companies (workspace_id, domain) WHERE domain IS NOT NULL`
  yield* sql`CREATE TABLE crm.contacts (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text,
    email text,
    phone text,
    role text,
    website text,
    company_id text REFERENCES crm.companies(id) ON DELETE SET NULL,
    erased_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  // One contact per email and per phone in a workspace (both stored normalized).
  yield* sql`CREATE UNIQUE INDEX contacts_email_idx ON crm.contacts (workspace_id, email) WHERE email IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX contacts_phone_idx ON crm.contacts (workspace_id, phone) WHERE phone IS NOT NULL`
  // What stays of an erased person: keyed fingerprints of their email and phone, so later arrivals are refused.
  yield* sql`CREATE TABLE crm.erasures (
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    fingerprint text NOT NULL,
    erased_at timestamptz NOT NULL,
    PRIMARY KEY (workspace_id, fingerprint)
  )`
  yield* sql`CREATE TABLE crm.pipelines (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE crm.stages (
    id text PRIMARY KEY,
    pipeline_id text NOT NULL REFERENCES crm.pipelines(id) ON DELETE CASCADE,
    name text NOT NULL,
    position integer NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('open', 'won', 'lost')),
    UNIQUE (pipeline_id, position)
  )`
  yield* sql`CREATE TABLE crm.opportunities (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    contact_id text REFERENCES crm.contacts(id) ON DELETE SET NULL,
    pipeline_id text NOT NULL REFERENCES crm.pipelines(id),
    stage_id text NOT NULL REFERENCES crm.stages(id),
    title text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE crm.collections (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    name text NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`CREATE TABLE crm.collection_items (
    collection_id text NOT NULL REFERENCES crm.collections(id) ON DELETE CASCADE,
    contact_id text NOT NULL REFERENCES crm.contacts(id) ON DELETE CASCADE,
    PRIMARY KEY (collection_id, contact_id)
  )`
})
