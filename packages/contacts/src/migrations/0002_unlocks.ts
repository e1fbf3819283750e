import * as SqlClient from "@effect/sql/SqlClient"
import { columns as queueColumns, indexSql } from "@service/core/WorkQueue"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // An unlock claims its accounts here as `pending` in the transaction that debits them, so two unlocks of the
  // same account cannot both pay for it; research settles the claim (`found`, `not_found`) or removes it (failed).
  yield* sql`ALTER TABLE contacts.unlocked
    ADD COLUMN outcome text NOT NULL DEFAULT 'found' CHECK (outcome IN ('pending', 'found', 'not_found')),
    ADD COLUMN email text,
    ADD COLUMN phone text`
  // One row per idempotency key: the first request's answer is every retry's answer. The queue's columns make its
  // research work any process can take over once the request that holds it dies.
  yield* sql.unsafe(`CREATE TABLE contacts.unlocks (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    idempotency_key text NOT NULL,
    principal text NOT NULL,
    collection_id text NOT NULL,
    record_ids jsonb NOT NULL,
    max_credits integer NOT NULL,
    work jsonb NOT NULL,
    result jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    ${queueColumns},
    UNIQUE (workspace_id, idempotency_key)
  )`)
  yield* sql.unsafe(indexSql("contacts.unlocks", "unlocks_due_idx"))
})
