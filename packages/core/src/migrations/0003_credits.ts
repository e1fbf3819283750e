import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Every movement of a workspace's insight credits, append-only: monthly grants, debits per metered call,
  // refunds of calls that failed after their debit, and refusals for want of credits (zero credits).
  yield* sql`CREATE TABLE core.credit_ledger (
    id bigserial PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES core.workspaces(id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('grant', 'debit', 'refund', 'refused')),
    credits bigint NOT NULL,
    operation text,
    request_id text,
    period text,
    refund_of bigint REFERENCES core.credit_ledger(id),
    note text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  // One monthly grant per workspace and period, one refund per debit: retries cannot repeat either.
  yield* sql`CREATE UNIQUE INDEX credit_ledger_one_grant ON core.credit_ledger (workspace_id, period) WHERE kind = 'grant'`
  yield* sql`CREATE UNIQUE INDEX credit_ledger_one_refund ON core.credit_ledger (refund_of) WHERE kind = 'refund'`
  yield* sql`CREATE INDEX credit_ledger_recent ON core.credit_ledger (workspace_id, created_at DESC)`
  // The balance the ledger sums to, kept beside it so a debit is one conditional update (never below zero).
  yield* sql`CREATE TABLE core.credit_balances (
    workspace_id text PRIMARY KEY REFERENCES core.workspaces(id) ON DELETE CASCADE,
    balance bigint NOT NULL CHECK (balance >= 0)
  )`
})
