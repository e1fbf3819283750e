/**
 * The event ledger's part of a person's erasure (decision 0071). Entries stay (the ledger is the audit of what
 * happened, and a Destination's log names them), with the person's fields nulled: `name` of the contact's own
 * entries, and any string of any payload that holds one of their values. Deliveries are built from the ledger
 * entry when they are sent, so a queued or replayed delivery sends the redacted payload.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Effect from "effect/Effect"

const scrubPayloads = Erasure.scrubbing({
  store: "events.ledger",
  table: "events.ledger",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "payload", kind: "jsonb" }]
})

/** @since 0.1.0 @category erasers */
export const ledger = Erasure.make<SqlClient.SqlClient>({
  store: "events.ledger",
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const named = yield* sql`UPDATE events.ledger SET payload = jsonb_set(payload, '{name}', 'null'::jsonb)
        WHERE workspace_id = ${subject.workspaceId} AND subject = ${`contact/${subject.contactId}`}
          AND payload->>'name' IS NOT NULL
        RETURNING id`.pipe(Effect.orDie)
      return named.length + (yield* scrubPayloads.erase(subject, match))
    })
})

/** A Destination's description, written by a person. @since 0.1.0 @category erasers */
export const destinations = Erasure.scrubbing({
  store: "events.destinations",
  table: "events.destinations",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "description", kind: "text" }, { name: "last_error", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const erasers = [ledger, destinations] as const
