/**
 * The contact unlock's part of a person's erasure (decision 0071): the coordinates research found for the contact
 * (`contacts.unlocked`), and the stored answers and work of unlocks that selected them (`contacts.unlocks`), so a
 * retry with an earlier idempotency key answers without their name or coordinates. What was paid stays as it was:
 * the accounts' outcomes and credits.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category erasers */
export const unlocked = Erasure.make<SqlClient.SqlClient>({
  store: "contacts.unlocked",
  erase: (subject) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`UPDATE contacts.unlocked SET email = NULL, phone = NULL
        WHERE workspace_id = ${subject.workspaceId} AND contact_id = ${subject.contactId} AND (email IS NOT NULL OR phone IS NOT NULL)
        RETURNING contact_id`.pipe(Effect.orDie, Effect.map((rows) => rows.length)))
})

/** An object naming the account (`record_id`, or `account.record_id`) with its person's fields removed. */
const forget = (contactId: string) => (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(forget(contactId))
  if (!Predicate.isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = forget(contactId)(item)
  if (value["record_id"] === contactId) {
    if ("name" in out) out["name"] = null
    if ("coordinates" in out) out["coordinates"] = null
  }
  return out
}

const Row = Schema.Struct({ id: Schema.String, work: Schema.String, result: Schema.NullOr(Schema.String) })

/** @since 0.1.0 @category erasers */
export const unlocks = Erasure.make<SqlClient.SqlClient>({
  store: "contacts.unlocks",
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT id, work::text AS work, result::text AS result FROM contacts.unlocks
        WHERE workspace_id = ${subject.workspaceId}
          AND (record_ids @> ${JSON.stringify([subject.contactId])}::jsonb OR work::text ~* ${match.candidate}
            OR result::text ~* ${match.candidate})`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row))), Effect.orDie)
      let redacted = 0
      for (const row of rows) {
        const rewrite = (text: string) => JSON.stringify(match.scrubJson(forget(subject.contactId)(JSON.parse(text))).value)
        const work = rewrite(row.work)
        const result = row.result === null ? null : rewrite(row.result)
        if (work === JSON.stringify(JSON.parse(row.work)) && (row.result === null || result === JSON.stringify(JSON.parse(row.result)))) continue
        yield* sql`UPDATE contacts.unlocks SET work = ${work}::jsonb, result = ${result}::jsonb WHERE id = ${row.id}`.pipe(Effect.orDie)
        redacted++
      }
      return redacted
    })
})

/** @since 0.1.0 @category erasers */
export const erasers = [unlocked, unlocks] as const
