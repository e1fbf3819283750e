/**
 * Reading Arrivals: a workspace's Arrivals newest first, filtered by Source and status, in keyset pages, each
 * with its trail (the ledger's steps for it). Writing them is `Intake`'s.
 *
 * An Arrival whose processing ran out of attempts reads `failed`, whatever step it stopped at.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { EventLedger } from "@service/events/EventLedger"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ArrivalStatus } from "./Intake.js"
import { statusColumn, statusDetailColumn } from "./internal/arrivalStatus.js"

/** One step of an Arrival's trail, as the ledger recorded it. @since 0.1.0 @category models */
export const TrailStep = Schema.Struct({
  event: Schema.String.annotations({ description: "The ledger event: arrival.received, arrival.settled, contact.created, ..." }),
  at: Schema.String.annotations({ description: "When it was recorded (ISO 8601 UTC)." }),
  status: Schema.NullOr(ArrivalStatus).annotations({ description: "The Arrival's status at that step, where the step has one." })
}).annotations({ identifier: "TrailStep" })
/** @since 0.1.0 @category models */
export type TrailStep = typeof TrailStep.Type

/** An Arrival as the door's routes show it. @since 0.1.0 @category models */
export const ArrivalView = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  received_at: Schema.String.annotations({ description: "When the door stored it (ISO 8601 UTC)." }),
  event_type: Schema.NullOr(Schema.String),
  status: ArrivalStatus,
  status_detail: Schema.NullOr(Schema.String).annotations({ description: "Why it has that status, in words." }),
  contact_id: Schema.NullOr(Schema.String),
  opportunity_id: Schema.NullOr(Schema.String),
  attempts: Schema.Number.annotations({ description: "Processing attempts so far (at most 5)." }),
  raw_notice_kept: Schema.Boolean.annotations({ description: "False once the raw notice was deleted (30 days after it arrived)." }),
  trail: Schema.Array(TrailStep)
}).annotations({ identifier: "Arrival" })
/** @since 0.1.0 @category models */
export type ArrivalView = typeof ArrivalView.Type

/** @since 0.1.0 @category models */
export interface ListInput {
  readonly workspaceId: string
  readonly sourceId?: string | undefined
  readonly status?: ArrivalStatus | undefined
  readonly limit: number
  readonly cursor?: string | undefined
}

/** @since 0.1.0 @category models */
export interface Page {
  readonly arrivals: ReadonlyArray<ArrivalView>
  /** Pass as `cursor` for older Arrivals; null on the last page. */
  readonly nextCursor: string | null
}

/** The cursor is not one this service wrote. @since 0.1.0 @category errors */
export class BadCursor extends Data.TaggedError("BadCursor")<{ readonly detail: string }> {}

/** @since 0.1.0 @category tags */
export class Arrivals extends Context.Tag("@service/door/Arrivals")<Arrivals, {
  readonly list: (input: ListInput) => Effect.Effect<Page, BadCursor>
  readonly get: (workspaceId: string, id: string) => Effect.Effect<Option.Option<ArrivalView>>
}>() {}

const Row = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  received_at: Schema.String,
  event_type: Schema.NullOr(Schema.String),
  status: ArrivalStatus,
  status_detail: Schema.NullOr(Schema.String),
  contact_id: Schema.NullOr(Schema.String),
  opportunity_id: Schema.NullOr(Schema.String),
  attempts: Schema.Number,
  raw_notice_kept: Schema.Boolean
})
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const columns = `id, source_id,
  to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS received_at, event_type,
  ${statusColumn}, ${statusDetailColumn}, contact_id, opportunity_id, queue_attempts AS attempts, body IS NOT NULL AS raw_notice_kept`

// The position after which the next page starts: the last row's instant and id.
const CursorJson = Schema.parseJson(Schema.Tuple(Schema.String, Schema.String))
const encodeCursor = (row: { readonly received_at: string; readonly id: string }): string =>
  Buffer.from(JSON.stringify([row.received_at, row.id]), "utf8").toString("base64url")
const decodeCursor = (cursor: string): Either.Either<readonly [string, string], BadCursor> =>
  Schema.decodeUnknownEither(CursorJson)(Buffer.from(cursor, "base64url").toString("utf8")).pipe(
    Either.mapLeft(() => new BadCursor({ detail: "This cursor was not returned by a previous page." }))
  )

const isStatus = Schema.is(ArrivalStatus)

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ledger = yield* EventLedger

  const withTrails = (workspaceId: string, rows: ReadonlyArray<typeof Row.Type>) =>
    Effect.gen(function*() {
      const entries = yield* ledger.read({
        workspaceId,
        subjects: rows.map((row) => `arrival/${row.id}`),
        limit: 1000
      })
      // Contact and opportunity steps name the Arrival in their payload, not as their subject.
      const related = rows.length === 0 ? [] : yield* sql`SELECT name, payload->>'arrival_id' AS arrival_id,
            to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
          FROM events.ledger WHERE workspace_id = ${workspaceId} AND name IN ('contact.created', 'contact.updated')
            AND payload->>'arrival_id' IN ${sql.in(rows.map((row) => row.id))} ORDER BY id`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ name: Schema.String, arrival_id: Schema.String, at: Schema.String })))),
        Effect.orDie
      )
      return rows.map((row): ArrivalView => {
        const own = entries.filter((e) => e.subject === `arrival/${row.id}`).map((e): TrailStep => {
          const status = typeof e.payload === "object" && e.payload !== null && "status" in e.payload ? e.payload.status : null
          return { event: e.name, at: e.occurred_at, status: isStatus(status) ? status : null }
        })
        const crm = related.filter((r) => r.arrival_id === row.id).map((r): TrailStep => ({ event: r.name, at: r.at, status: null }))
        // The settlement is the last step: CRM steps happen inside the same attempt, before it.
        const trail = [...own.filter((s) => s.event !== "arrival.settled"), ...crm, ...own.filter((s) => s.event === "arrival.settled")]
        return { ...row, trail }
      })
    })

  const list = (input: ListInput) =>
    Effect.gen(function*() {
      const after = input.cursor === undefined ? undefined : yield* decodeCursor(input.cursor)
      const limit = Math.max(1, Math.min(input.limit, 100))
      const rows = yield* sql`SELECT ${sql.literal(columns)} FROM door.arrivals WHERE ${
        sql.and([
          sql`workspace_id = ${input.workspaceId}`,
          ...(input.sourceId === undefined ? [] : [sql`source_id = ${input.sourceId}`]),
          ...(input.status === undefined
            ? []
            : input.status === "failed"
            ? [sql`(queue_state = 'dead' OR status = 'failed')`]
            : [sql`status = ${input.status}`, sql`queue_state <> 'dead'`]),
          ...(after === undefined ? [] : [sql`(received_at, id) < (${after[0]}::timestamptz, ${after[1]})`])
        ])
      } ORDER BY received_at DESC, id DESC LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeRows), Effect.orDie)
      const page = rows.slice(0, limit)
      const last = page[page.length - 1]
      return {
        arrivals: yield* withTrails(input.workspaceId, page),
        nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null
      }
    }).pipe(Effect.withSpan("Arrivals.list", { captureStackTrace: false }))

  const get = (workspaceId: string, id: string) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT ${sql.literal(columns)} FROM door.arrivals WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
        Effect.flatMap(decodeRows),
        Effect.orDie
      )
      return Option.fromNullable((yield* withTrails(workspaceId, rows))[0])
    }).pipe(Effect.withSpan("Arrivals.get", { captureStackTrace: false }))

  return Arrivals.of({ list, get })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Arrivals, never, SqlClient.SqlClient | EventLedger> = Layer.effect(Arrivals, make)
