/**
 * An audit helper for the abstracted projection: the values that must never appear in any response of an
 * abstracted surface. Tests scan every response body for them; an operator can do the same against logs.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const Row = Schema.Struct({
  source_slug: Schema.String,
  source_record_id: Schema.String,
  publisher: Schema.String,
  contact: Schema.Struct({
    phone: Schema.NullOr(Schema.String),
    email: Schema.NullOr(Schema.String),
    website: Schema.NullOr(Schema.String)
  })
})

const OtherRow = Schema.Struct({ source_slug: Schema.String, source_record_id: Schema.String, publisher: Schema.String })

/**
 * Strings no abstracted response may contain: source slugs, source record ids (long enough to be distinctive), publisher
 * identities and every contact coordinate held in the corpus.
 */
/** @since 0.1.0 @category audit */
export const forbiddenValues: Effect.Effect<ReadonlyArray<string>, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT o.source_slug, o.source_record_id, s.publisher, o.contact
    FROM market.supplier_observations o JOIN market.sources s ON s.slug = o.source_slug`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(Row)))
  )
  // Every other record kind: its sources, their publishers and its source record ids.
  const others = yield* sql`
    SELECT k.source_slug, k.source_record_id, s.publisher FROM (
      SELECT source_slug, source_record_id FROM market.opportunities
      UNION ALL SELECT source_slug, source_record_id FROM market.awards
      UNION ALL SELECT source_slug, source_record_id FROM market.risk_marks
      UNION ALL SELECT source_slug, source_record_id FROM market.permits
    ) k JOIN market.sources s ON s.slug = k.source_slug`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Array(OtherRow)))
  )
  const values = new Set<string>()
  for (const row of others) {
    values.add(row.source_slug)
    values.add(row.publisher)
    if (row.source_record_id.length >= 5) values.add(`"${row.source_record_id}"`)
  }
  for (const row of rows) {
    values.add(row.source_slug)
    values.add(row.publisher)
    if (row.source_record_id.length >= 5) values.add(`"${row.source_record_id}"`)
    for (const contact of [row.contact.phone, row.contact.email, row.contact.website]) {
      if (contact !== null && contact.trim().length >= 6 && !/^no tiene$/i.test(contact.trim())) values.add(contact.trim())
    }
  }
  return [...values]
}).pipe(Effect.orDie)
