/**
 * The door's intake: `receive` verifies a request on its raw bytes, stores it as received and acknowledges it;
 * `process` (workers on the `WorkQueue`) applies stored Arrivals to the CRM. Every step lands in the event
 * ledger, and every Arrival ends in one of the spec's statuses.
 *
 * - An unknown Source and a bad signature are the same `invalid_signature`: the unknown Source is checked
 *   against a throwaway secret, so both take the same path and give the same refusal.
 * - A known Source keeps a `rejected` Arrival of a request whose signature or event was refused (its trail); a
 *   paused Source stores nothing (the sender retries later), an archived one refuses for good.
 * - Duplicates (same `webhook-id`, or the same CloudEvent `source` and `id`) return the first Arrival.
 * - Processing: a catalog type that is not applied, or a contact without email and phone, is `set_aside`; an
 *   email of one contact and a phone of another is `pending_decision`; an erased person is `rejected`; five
 *   failed attempts in a row leave the Arrival `failed`. Contact and company changes and opportunities are
 *   recorded in the ledger without email or phone.
 *
 * @since 0.1.0
 */
import { generateWebhookSecret } from "@service/core/Crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import * as WorkQueue from "@service/core/WorkQueue"
import { Crm } from "@service/crm/Crm"
import { EventLedger } from "@service/events/EventLedger"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import * as CloudEvent from "./CloudEvent.js"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"
import * as StandardWebhooks from "./StandardWebhooks.js"
import { Sources } from "./Sources.js"

/** The largest body the door reads (spec: 256 KiB). @since 0.1.0 @category constants */
export const MAX_BODY_BYTES = 256 * 1024

/** The waits between the five attempts of processing an Arrival. @since 0.1.0 @category constants */
export const RETRY_DELAYS: ReadonlyArray<Duration.DurationInput> = ["10 seconds", "1 minute", "5 minutes", "30 minutes"]

/** @since 0.1.0 @category models */
export const ArrivalStatus = Schema.Literal(
  "received",
  "accepted",
  "pending_decision",
  "set_aside",
  "no_person",
  "unmapped",
  "failed",
  "rejected"
)
/** @since 0.1.0 @category models */
export type ArrivalStatus = typeof ArrivalStatus.Type

/** An Arrival as read back. @since 0.1.0 @category models */
export const Arrival = Schema.Struct({
  id: Schema.String,
  workspace_id: Schema.String,
  source_id: Schema.String,
  event_type: Schema.NullOr(Schema.String),
  status: ArrivalStatus,
  status_detail: Schema.NullOr(Schema.String),
  contact_id: Schema.NullOr(Schema.String),
  opportunity_id: Schema.NullOr(Schema.String),
  attempts: Schema.Number
})
/** @since 0.1.0 @category models */
export type Arrival = typeof Arrival.Type

/**
 * What the door answers a stored request: 202 `Accepted` for a new Arrival, 200 `Duplicate` with the first one.
 *
 * @since 0.1.0 @category models
 */
export type Receipt = Data.TaggedEnum<{
  Accepted: { readonly arrivalId: string }
  Duplicate: { readonly arrivalId: string; readonly status: ArrivalStatus }
}>
/** @since 0.1.0 @category models */
export const Receipt = Data.taggedEnum<Receipt>()

/** @since 0.1.0 @category tags */
export class Intake extends Context.Tag("@service/door/Intake")<Intake, {
  readonly receive: (
    sourceId: string,
    request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly body: Uint8Array }
  ) => Effect.Effect<Receipt, DoorRefusal>
  readonly arrival: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Arrival>>
  /** Applies every due Arrival, then returns how many attempts it made. */
  readonly drain: (worker: string) => Effect.Effect<number>
  /** Deletes raw notices (body and headers) received more than 30 days ago; returns how many. */
  readonly purgeExpired: Effect.Effect<number>
  /** Applies Arrivals for ever and runs the retention hourly (a worker). */
  readonly work: (worker: string) => Effect.Effect<never>
}>() {}

/** How long a raw notice is kept (spec: 30 days). @since 0.1.0 @category constants */
export const RETENTION: Duration.Duration = Duration.days(30)

const ArrivalRow = Schema.Struct({
  ...Arrival.fields,
  body: Schema.NullOr(Schema.String)
})
const decodeArrivals = Schema.decodeUnknown(Schema.Array(ArrivalRow))
const IdStatus = Schema.Array(Schema.Struct({ id: Schema.String, status: ArrivalStatus }))

// An Arrival whose processing ran out of attempts is failed, whatever step it stopped at.
const arrivalColumns = `id, workspace_id, source_id, event_type,
  CASE WHEN queue_state = 'dead' THEN 'failed' ELSE status END AS status,
  CASE WHEN queue_state = 'dead' THEN queue_last_error ELSE status_detail END AS status_detail,
  contact_id, opportunity_id, queue_attempts AS attempts, body`

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sources = yield* Sources
  const crm = yield* Crm
  const ledger = yield* EventLedger
  const queue = yield* WorkQueue.make({ table: "door.arrivals", lease: "2 minutes", retryDelays: RETRY_DELAYS })
  // Checked against for unknown Sources, so they take the same path as a bad signature.
  const decoy = generateWebhookSecret()
  const iso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const insertArrival = (input: {
    readonly sourceId: string
    readonly workspaceId: string
    readonly headers: Readonly<Record<string, string | undefined>>
    readonly body: Uint8Array
    readonly webhookId: string | null
    readonly eventKey: string | null
    readonly eventType: string | null
    readonly status: ArrivalStatus
    readonly detail: string | null
  }) =>
    Effect.gen(function*() {
      const id = `arr_${randomBytes(12).toString("hex")}`
      const at = yield* iso
      const headers = JSON.stringify(Object.fromEntries(Object.entries(input.headers).filter(([, v]) => v !== undefined)))
      // A refused request is stored finished: nothing for the queue to do.
      const queueState = input.status === "received" ? "pending" : "done"
      const rows = yield* sql`INSERT INTO door.arrivals (id, workspace_id, source_id, received_at, webhook_id, event_key, event_type,
          content_type, headers, body, status, status_detail, queue_state)
        VALUES (${id}, ${input.workspaceId}, ${input.sourceId}, ${at}, ${input.webhookId}, ${input.eventKey}, ${input.eventType},
          ${input.headers["content-type"] ?? null}, ${headers}::jsonb, ${Buffer.from(input.body).toString("utf8")}, ${input.status},
          ${input.detail}, ${queueState})
        ON CONFLICT DO NOTHING
        RETURNING id, status`.pipe(Effect.flatMap(Schema.decodeUnknown(IdStatus)), Effect.orDie)
      return Option.fromNullable(rows[0])
    })

  const receive = (
    sourceId: string,
    request: { readonly headers: Readonly<Record<string, string | undefined>>; readonly body: Uint8Array }
  ): Effect.Effect<Receipt, DoorRefusal> =>
    Effect.gen(function*() {
      if (request.body.length > MAX_BODY_BYTES) return yield* refuse("payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`)
      const found = yield* sources.forIntake(sourceId)
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      const secrets = Option.match(found, { onNone: () => [decoy], onSome: (f) => f.secrets })
      const verified = StandardWebhooks.verify({ secrets, headers: request.headers, body: request.body, now })
      if (Option.isNone(found)) {
        // The decoy cannot match: an unknown Source ends here exactly as a bad signature does below.
        return yield* Either.match(verified, {
          onLeft: (refusal) => Effect.fail(refusal),
          onRight: () => Effect.fail(refuse("invalid_signature", "No signature matches this body."))
        })
      }
      const { source } = found.value
      const keep = (status: ArrivalStatus, detail: string | null, extra?: { eventType?: string | null }) =>
        insertArrival({
          sourceId,
          workspaceId: source.workspace_id,
          headers: request.headers,
          body: request.body,
          webhookId: null,
          eventKey: null,
          eventType: extra?.eventType ?? null,
          status,
          detail
        })
      if (Either.isLeft(verified)) {
        yield* keep("rejected", verified.left.code)
        return yield* Effect.fail(verified.left)
      }
      if (source.status === "archived") return yield* refuse("source_archived", "This Source is archived.")
      if (source.status === "paused") return yield* refuse("source_paused", "This Source is paused; retry later.")
      const parsed = CloudEvent.parse(request.body)
      if (Either.isLeft(parsed)) {
        yield* keep("rejected", `invalid_event: ${parsed.left.detail}`)
        return yield* Effect.fail(parsed.left)
      }
      const event = parsed.right
      const webhookId = verified.right.id
      const eventKey = JSON.stringify([event.source, event.id])
      return yield* Effect.gen(function*() {
        const inserted = yield* insertArrival({
          sourceId,
          workspaceId: source.workspace_id,
          headers: request.headers,
          body: request.body,
          webhookId,
          eventKey,
          eventType: event.type,
          status: "received",
          detail: null
        })
        if (Option.isNone(inserted)) {
          const first = yield* sql`SELECT id, CASE WHEN queue_state = 'dead' THEN 'failed' ELSE status END AS status
            FROM door.arrivals WHERE source_id = ${sourceId} AND status <> 'rejected'
              AND (webhook_id = ${webhookId} OR event_key = ${eventKey})
            ORDER BY received_at LIMIT 1`.pipe(Effect.flatMap(Schema.decodeUnknown(IdStatus)), Effect.orDie)
          const row = first[0]
          if (row === undefined) return yield* Effect.dieMessage("a duplicate Arrival vanished")
          return Receipt.Duplicate({ arrivalId: row.id, status: row.status })
        }
        const arrivalId = inserted.value.id
        yield* ledger.record({
          workspaceId: source.workspace_id,
          name: "arrival.received",
          subject: `arrival/${arrivalId}`,
          payload: {
            workspace_id: source.workspace_id,
            occurred_at: yield* iso,
            arrival_id: arrivalId,
            source_id: sourceId,
            status: "received",
            event_type: event.type
          }
        })
        return Receipt.Accepted({ arrivalId })
      }).pipe(sql.withTransaction, Effect.orDie)
    }).pipe(Effect.withSpan("Intake.receive", { attributes: { sourceId } }))

  const arrival = (workspaceId: string, id: string) =>
    sql`SELECT ${sql.literal(arrivalColumns)} FROM door.arrivals WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
      Effect.flatMap(decodeArrivals),
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row): Arrival => {
          const { body: _body, ...rest } = row
          return rest
        })
      ),
      Effect.orDie
    )

  const rowOf = (id: string) =>
    sql`SELECT ${sql.literal(arrivalColumns)} FROM door.arrivals WHERE id = ${id}`.pipe(
      Effect.flatMap(decodeArrivals),
      Effect.map((rows) => rows[0]),
      Effect.orDie
    )

  /** Sets the Arrival's outcome and records it in the ledger (inside the attempt's transaction). */
  const settle = (
    row: typeof ArrivalRow.Type,
    status: ArrivalStatus,
    detail: string | null,
    ids: { readonly contactId?: string | null; readonly opportunityId?: string | null } = {}
  ) =>
    Effect.gen(function*() {
      yield* sql`UPDATE door.arrivals SET status = ${status}, status_detail = ${detail},
          contact_id = ${ids.contactId ?? null}, opportunity_id = ${ids.opportunityId ?? null}
        WHERE id = ${row.id}`.pipe(Effect.orDie)
      yield* ledger.record({
        workspaceId: row.workspace_id,
        name: "arrival.settled",
        subject: `arrival/${row.id}`,
        payload: {
          workspace_id: row.workspace_id,
          occurred_at: yield* iso,
          arrival_id: row.id,
          source_id: row.source_id,
          status,
          event_type: row.event_type
        }
      })
    })

  const apply = (claim: WorkQueue.Claim) =>
    Effect.gen(function*() {
      const row = yield* rowOf(claim.id)
      if (row === undefined) return
      const parsed = CloudEvent.parse(Buffer.from(row.body ?? "", "utf8"))
      if (Either.isLeft(parsed)) return yield* settle(row, "rejected", `invalid_event: ${parsed.left.detail}`)
      const event = parsed.right
      if (!CloudEvent.isApplied(event)) return yield* settle(row, "set_aside", `${event.type} is not applied to the CRM yet`)
      const data = CloudEvent.contactData(event)
      if (Option.isNone(data) || !CloudEvent.hasPersonKey(event)) return yield* settle(row, "set_aside", "no email and no phone")
      const outcome = yield* crm.applyContact(row.workspace_id, data.value)
      const occurred_at = yield* iso
      switch (outcome._tag) {
        case "Conflict":
          return yield* settle(row, "pending_decision", "the email belongs to one contact and the phone to another")
        case "Erased":
          return yield* settle(row, "rejected", "the person asked for erasure")
        case "NoPersonKey":
          return yield* settle(row, "set_aside", "no usable email or phone")
        case "Unchanged":
          return yield* settle(row, "accepted", "nothing changed", { contactId: outcome.contact.id })
        case "Created":
        case "Updated": {
          const contact = outcome.contact
          for (const company of Option.toArray(outcome.company)) {
            if (!company.created) continue
            yield* ledger.record({
              workspaceId: row.workspace_id,
              name: "company.created",
              subject: `company/${company.company.id}`,
              payload: { workspace_id: row.workspace_id, occurred_at, company_id: company.company.id, name: company.company.name, domain: company.company.domain }
            })
          }
          yield* ledger.record({
            workspaceId: row.workspace_id,
            name: outcome._tag === "Created" ? "contact.created" : "contact.updated",
            subject: `contact/${contact.id}`,
            payload: {
              workspace_id: row.workspace_id,
              occurred_at,
              contact_id: contact.id,
              name: contact.name,
              company_id: contact.company_id,
              arrival_id: row.id,
              changed_fields: outcome._tag === "Updated" ? outcome.changed : []
            }
          })
          // A new contact from a Source with a Pipeline and stage opens an opportunity there.
          const source = yield* sources.get(row.workspace_id, row.source_id)
          const target = Option.flatMap(source, (source) =>
            source.pipeline_id !== null && source.stage_id !== null
              ? Option.some({ pipelineId: source.pipeline_id, stageId: source.stage_id })
              : Option.none())
          let opportunityId: string | null = null
          if (outcome._tag === "Created" && Option.isSome(target)) {
            const opened = yield* crm.openOpportunity(row.workspace_id, {
              contactId: contact.id,
              pipelineId: target.value.pipelineId,
              stageId: target.value.stageId,
              title: contact.name ?? "New contact"
            }).pipe(Effect.option)
            if (Option.isSome(opened)) {
              opportunityId = opened.value.id
              yield* ledger.record({
                workspaceId: row.workspace_id,
                name: "opportunity.created",
                subject: `opportunity/${opened.value.id}`,
                payload: {
                  workspace_id: row.workspace_id,
                  occurred_at,
                  opportunity_id: opened.value.id,
                  contact_id: contact.id,
                  pipeline_id: opened.value.pipeline_id,
                  stage_id: opened.value.stage_id,
                  previous_stage_id: null
                }
              })
            }
          }
          return yield* settle(row, "accepted", null, { contactId: contact.id, opportunityId })
        }
      }
    })

  // Five failed attempts: the Arrival reads as failed; the ledger says so too.
  const onDead = (claim: WorkQueue.Claim) =>
    Effect.gen(function*() {
      const row = yield* rowOf(claim.id)
      if (row === undefined) return
      yield* ledger.record({
        workspaceId: row.workspace_id,
        name: "arrival.settled",
        subject: `arrival/${row.id}`,
        payload: {
          workspace_id: row.workspace_id,
          occurred_at: yield* iso,
          arrival_id: row.id,
          source_id: row.source_id,
          status: "failed",
          event_type: row.event_type
        }
      })
    })

  const options = (worker: string): WorkQueue.ProcessOptions<never, never> => ({ worker, handler: apply, batch: 10, onDead })

  const purgeExpired = Effect.gen(function*() {
    const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(RETENTION)).toISOString()
    const rows = yield* sql`UPDATE door.arrivals SET body = NULL, headers = '{}'::jsonb
      WHERE received_at < ${cutoff} AND body IS NOT NULL RETURNING id`.pipe(Effect.orDie)
    return rows.length
  }).pipe(Effect.withSpan("Intake.purgeExpired"))

  // Every worker runs it; the statement is idempotent, so several workers at once do no harm.
  const retention = Effect.forever(Effect.zipRight(purgeExpired, Effect.sleep(Duration.hours(1))))

  return Intake.of({
    receive,
    arrival,
    drain: (worker) => queue.drain(options(worker)),
    purgeExpired,
    work: (worker) => Effect.zipRight(Effect.fork(retention), queue.process(options(worker)))
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Intake, never, SqlClient.SqlClient | Sources | Crm | EventLedger> = Layer.effect(Intake, make)
