/**
 * The door's part of a person's erasure (decision 0071): raw notices of Arrivals and Source examples.
 *
 * An Arrival is the person's when it was applied to their contact, or when its raw notice or what was read from it
 * holds one of their values (a `pending_decision` one names them only there). Its raw notice, headers and reading
 * are removed and `erased_at` set; the row stays with its id, status and trail, so the audit of what arrived
 * remains. One still waiting in the queue ends `rejected`, as later Arrivals of the person do. A Source example
 * that holds a value is removed; the Source's next notice becomes its example.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Erasure from "@service/core/Erasure"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Mappings from "./Mappings.js"

const ArrivalRow = Schema.Struct({
  id: Schema.String,
  contact_id: Schema.NullOr(Schema.String),
  body: Schema.NullOr(Schema.String),
  reading: Schema.NullOr(Schema.String),
  headers: Schema.NullOr(Schema.String),
  status_detail: Schema.NullOr(Schema.String),
  queue_last_error: Schema.NullOr(Schema.String),
  waiting: Schema.Boolean,
  erased: Schema.Boolean
})
type ArrivalRow = typeof ArrivalRow.Type
const decodeArrivals = Schema.decodeUnknown(Schema.Array(ArrivalRow))
const decodeReading = Schema.decodeUnknownOption(Schema.parseJson(Mappings.Reading))

const PAGE = 200

/** The workspace's Arrivals that may be the person's, in pages by id: linked, or possibly holding a value. */
const candidates = (subject: Erasure.Subject, match: Erasure.Matcher, after: string | null) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT id, contact_id, body, reading::text AS reading, headers::text AS headers, status_detail, queue_last_error,
        (status = 'received' AND queue_state IN ('pending', 'running')) AS waiting, erased_at IS NOT NULL AS erased
      FROM door.arrivals
      WHERE workspace_id = ${subject.workspaceId}
        AND ((contact_id = ${subject.contactId} AND erased_at IS NULL) OR body ~* ${match.candidate} OR reading::text ~* ${match.candidate}
          OR headers::text ~* ${match.candidate} OR status_detail ~* ${match.candidate} OR queue_last_error ~* ${match.candidate})
        ${after === null ? sql`` : sql`AND id > ${after}`}
      ORDER BY id LIMIT ${PAGE}`.pipe(Effect.flatMap(decodeArrivals), Effect.orDie))

const isTheirs = (subject: Erasure.Subject, match: Erasure.Matcher, row: ArrivalRow): boolean =>
  (row.contact_id === subject.contactId && !row.erased) ||
  // The headers too: a refused request keeps them (a bounded record, no body), and a form's may name the person.
  [row.body, row.reading, row.headers, row.status_detail, row.queue_last_error].some((text) => text !== null && match.test(text))

/** Every page of the person's Arrivals. */
const eachPage = <A>(
  subject: Erasure.Subject,
  match: Erasure.Matcher,
  f: (rows: ReadonlyArray<ArrivalRow>) => Effect.Effect<A, never, SqlClient.SqlClient>
) =>
  Effect.gen(function*() {
    const out: Array<A> = []
    let after: string | null = null
    for (;;) {
      const rows: ReadonlyArray<ArrivalRow> = yield* candidates(subject, match, after)
      out.push(yield* f(rows.filter((row) => isTheirs(subject, match, row))))
      const last = rows[rows.length - 1]
      if (rows.length < PAGE || last === undefined) return out
      after = last.id
    }
  })

/** What a CloudEvent's `data` says about the person, when the raw notice is one. */
const cloudEventValues = (body: string): Partial<Erasure.Values> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return {}
  }
  const data = Predicate.isRecord(parsed) && Predicate.isRecord(parsed["data"]) ? parsed["data"] : {}
  const field = (key: string) => (Predicate.isString(data[key]) ? [data[key]] : [])
  return { names: field("name"), emails: field("email"), phones: field("phone") }
}

/** What was read from a webhook notice about the person. */
const readingValues = (reading: string): Partial<Erasure.Values> =>
  Option.match(decodeReading(reading), {
    onNone: () => ({}),
    onSome: (r) => {
      const joined = [r.first_name, r.last_name].filter(Predicate.isNotNull).join(" ")
      return {
        names: [r.name, joined === "" ? null : joined].filter(Predicate.isNotNull),
        emails: [r.email].filter(Predicate.isNotNull),
        phones: [r.phone].filter(Predicate.isNotNull)
      }
    }
  })

/**
 * Raw notices of Arrivals: collects the person's values as their notices carried them, then removes the notices.
 *
 * @since 0.1.0 @category erasers
 */
export const arrivals = Erasure.make<SqlClient.SqlClient>({
  store: "door.arrivals",
  collect: (subject, match) =>
    Effect.map(
      eachPage(subject, match, (rows) =>
        Effect.succeed(rows.flatMap((row) => [
          row.body === null ? {} : cloudEventValues(row.body),
          row.reading === null ? {} : readingValues(row.reading)
        ]))),
      (pages) => pages.flat().reduce<Erasure.Values>(Erasure.addValues, { names: [], emails: [], phones: [] })
    ),
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const counts = yield* eachPage(subject, match, (rows) =>
        Effect.forEach(rows, (row) =>
          sql`UPDATE door.arrivals SET body = NULL, headers = '{}'::jsonb, reading = NULL, erased_at = ${at},
              status_detail = ${row.waiting ? "the person asked for erasure" : row.status_detail === null ? null : match.scrub(row.status_detail)},
              queue_last_error = ${row.queue_last_error === null ? null : match.scrub(row.queue_last_error)},
              status = CASE WHEN ${row.waiting} THEN 'rejected' ELSE status END,
              queue_state = CASE WHEN ${row.waiting} THEN 'done' ELSE queue_state END,
              queue_lease_until = CASE WHEN ${row.waiting} THEN NULL ELSE queue_lease_until END
            WHERE id = ${row.id}`.pipe(Effect.orDie)).pipe(Effect.as(rows.length)))
      return counts.reduce((a, b) => a + b, 0)
    })
})

/**
 * Source examples that hold one of the person's values.
 *
 * @since 0.1.0 @category erasers
 */
export const sourceExamples = Erasure.make<SqlClient.SqlClient>({
  store: "door.sources",
  erase: (subject, match) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT id, example::text AS example FROM door.sources
        WHERE workspace_id = ${subject.workspaceId} AND example IS NOT NULL AND example::text ~* ${match.candidate}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String, example: Schema.String })))),
        Effect.orDie
      )
      const theirs = rows.filter((row) => match.test(row.example)).map((row) => row.id)
      if (theirs.length === 0) return 0
      yield* sql`UPDATE door.sources SET example = NULL, example_at = NULL WHERE id IN ${sql.in(theirs)}`.pipe(Effect.orDie)
      return theirs.length
    })
})

/** A Source's name, written by a person (issue 32 row 6). @since 0.1.0 @category erasers */
export const sourceNames = Erasure.scrubbing({
  store: "door.sources (names)",
  table: "door.sources",
  key: "id",
  workspace: "workspace_id",
  columns: [{ name: "name", kind: "text" }]
})

/** @since 0.1.0 @category erasers */
export const erasers = [arrivals, sourceExamples, sourceNames] as const
