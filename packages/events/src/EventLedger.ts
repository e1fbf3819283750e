/**
 * The event ledger: every step of every Arrival and every CRM change, appended in order under a catalog event
 * name. A payload is encoded through its catalog schema before it is written, so a field the schema does not
 * name (an email, a phone) never reaches the ledger, whatever the caller passed.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { events } from "./Catalog.js"

/** @since 0.1.0 @category models */
export const Entry = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  subject: Schema.NullOr(Schema.String),
  payload: Schema.Unknown,
  occurred_at: Schema.String
})
/** @since 0.1.0 @category models */
export type Entry = typeof Entry.Type

/** @since 0.1.0 @category tags */
export class EventLedger extends Context.Tag("@service/events/EventLedger")<EventLedger, {
  /**
   * Appends one event. The name must be a catalog event and the payload must decode with its schema: anything
   * else is a programming error (a defect), not a refusal.
   */
  readonly record: (input: {
    readonly workspaceId: string
    readonly name: string
    readonly subject?: string | undefined
    readonly payload: unknown
  }) => Effect.Effect<Entry>
  /** Entries of a workspace after `after` (an entry id), oldest first, optionally for one subject or some names. */
  readonly read: (input: {
    readonly workspaceId: string
    readonly after?: string | undefined
    readonly limit: number
    readonly subject?: string | undefined
    /** Entries of any of these subjects (one page of records' trails in one read). */
    readonly subjects?: ReadonlyArray<string> | undefined
    readonly names?: ReadonlyArray<string> | undefined
  }) => Effect.Effect<ReadonlyArray<Entry>>
}>() {}

const Row = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  subject: Schema.NullOr(Schema.String),
  payload: Schema.parseJson(),
  occurred_at: Schema.String
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

// What `record` and `read` return: the payload as JSON text and the instant in ISO 8601 UTC.
const returned = `id::text AS id, name, subject, payload::text AS payload,
  to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS occurred_at`

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const record = (input: { readonly workspaceId: string; readonly name: string; readonly subject?: string | undefined; readonly payload: unknown }) =>
    Effect.gen(function*() {
      const event = events.find((e) => e.name === input.name)
      if (event === undefined) return yield* Effect.dieMessage(`EventLedger: ${input.name} is not a catalog event`)
      // Decode then encode: excess fields are dropped, so only what the schema names is written.
      const payload = yield* Schema.decodeUnknown(event.payload)(input.payload).pipe(
        Effect.flatMap(Schema.encode(event.payload)),
        Effect.orDie
      )
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const rows = yield* sql`INSERT INTO events.ledger (workspace_id, name, subject, payload, occurred_at)
        VALUES (${input.workspaceId}, ${input.name}, ${input.subject ?? null}, ${JSON.stringify(payload)}::jsonb, ${at})
        RETURNING ${sql.literal(returned)}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.orDie
      )
      const entry = rows[0]
      if (entry === undefined) return yield* Effect.dieMessage("EventLedger: INSERT returned no row")
      // Recorded is scheduled: one delivery per matching Destination, in the entry's own transaction (decision
      // 0060). Test workspaces deliver nothing.
      yield* sql`INSERT INTO events.deliveries (id, destination_id, workspace_id, ledger_id, created_at)
        SELECT 'dlv_' || substr(md5(d.id || ':' || ${entry.id}), 1, 24), d.id, d.workspace_id, ${entry.id}::bigint, ${at}::timestamptz
        FROM events.destinations d JOIN core.workspaces w ON w.id = d.workspace_id
        WHERE d.workspace_id = ${input.workspaceId} AND d.state IN ('active', 'paused') AND ${input.name} = ANY(d.events)
          AND (d.subject IS NULL OR d.subject = ${input.subject ?? null})
          AND (d.expires_at IS NULL OR d.expires_at > ${at}::timestamptz)
          AND w.test_of IS NULL`.pipe(Effect.orDie)
      return entry
    }).pipe(
      // The entry and its deliveries commit together (a savepoint inside the caller's transaction).
      sql.withTransaction,
      Effect.orDie,
      Effect.withSpan("EventLedger.record", { captureStackTrace: false, attributes: { name: input.name } })
    )

  const read = (input: {
    readonly workspaceId: string
    readonly after?: string | undefined
    readonly limit: number
    readonly subject?: string | undefined
    readonly subjects?: ReadonlyArray<string> | undefined
    readonly names?: ReadonlyArray<string> | undefined
  }) =>
    sql`SELECT ${sql.literal(returned)}
        FROM events.ledger
        WHERE ${
      sql.and([
        sql`workspace_id = ${input.workspaceId}`,
        ...(input.after === undefined ? [] : [sql`id > ${input.after}::bigint`]),
        ...(input.subject === undefined ? [] : [sql`subject = ${input.subject}`]),
        ...(input.subjects === undefined ? [] : [input.subjects.length === 0 ? sql`false` : sql`subject IN ${sql.in(input.subjects)}`]),
        ...(input.names === undefined || input.names.length === 0 ? [] : [sql`name IN ${sql.in(input.names)}`])
      ])
    }
        ORDER BY ledger.id LIMIT ${Math.max(1, Math.min(input.limit, 1000))}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)

  return EventLedger.of({ record, read })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<EventLedger, never, SqlClient.SqlClient> = Layer.effect(EventLedger, make)
