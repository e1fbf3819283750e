import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

// What the CRM's own operations need: where a contact came from (a Source, or a person by hand), newest-first
// keyset pages, archived Pipelines and stages, and when a collection or a member of it last changed.
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE crm.contacts ADD COLUMN source_id text`
  yield* sql`ALTER TABLE crm.contacts ADD COLUMN created_by text`
  yield* sql`CREATE INDEX contacts_page_idx ON crm.contacts (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX contacts_company_idx ON crm.contacts (company_id)`
  yield* sql`CREATE INDEX companies_name_idx ON crm.companies (workspace_id, lower(name), id)`
  yield* sql`ALTER TABLE crm.pipelines ADD COLUMN archived_at timestamptz`
  yield* sql`ALTER TABLE crm.pipelines ADD COLUMN updated_at timestamptz`
  yield* sql`UPDATE crm.pipelines SET updated_at = created_at`
  yield* sql`ALTER TABLE crm.stages ADD COLUMN archived_at timestamptz`
  yield* sql`CREATE INDEX opportunities_page_idx ON crm.opportunities (workspace_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX opportunities_contact_idx ON crm.opportunities (contact_id)`
  yield* sql`CREATE INDEX opportunities_stage_idx ON crm.opportunities (stage_id)`
  yield* sql`ALTER TABLE crm.collections ADD COLUMN updated_at timestamptz`
  yield* sql`UPDATE crm.collections SET updated_at = created_at`
  yield* sql`ALTER TABLE crm.collection_items ADD COLUMN added_at timestamptz`
  yield* sql`CREATE INDEX collection_items_contact_idx ON crm.collection_items (contact_id)`
})
