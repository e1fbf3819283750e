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
 * Webhook Sources (`Mappings`, decision 0054):
 *
 * - `receive` verifies by the template's own scheme with the tool's signing secret, or by Standard Webhooks for a
 *   generic Source; `receiveAddress` checks a secret-address token by keyed fingerprint in constant time. A
 *   Source reached by the other route than its own answers as an unknown Source does, and an unknown Source on
 *   the plain route is checked by the scheme its headers name (a template's, else Standard Webhooks) against a
 *   throwaway secret, so a wrong token or signature is the same `invalid_signature` as an unknown Source.
 * - Secrets the tool echoes back (the token in Jotform's `webhookURL`, a static token header) are redacted from
 *   the stored body, headers and example.
 * - A notice type the mapping does not accept is `Ignored` (no Arrival). Without a mapping the Arrival is
 *   `unmapped` at once, and the first notice becomes the Source's example with a proposed mapping. A batch notice
 *   (`items`) gives one Arrival per element. Duplicates: the `webhook-id`, else the notice id the mapping points
 *   to, else a keyed fingerprint of the body.
 * - Processing reads the stored notice through the Source's current mapping: `unmapped` when it does not fit,
 *   `no_person` without email or phone or with a test or shared mailbox (`Mappings.TEST_MAILBOXES`), otherwise
 *   the CRM as for CloudEvents. `reprocess` re-reads `unmapped` and `no_person` Arrivals and queues them again.
 *
 * @since 0.1.0
 */
import { constantTimeEqual, Crypto, generateWebhookSecret } from "@service/core/Crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import * as WorkQueue from "@service/core/WorkQueue"
import { Crm, type ContactData } from "@service/crm/Crm"
import { EventLedger } from "@service/events/EventLedger"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import * as CloudEvent from "./CloudEvent.js"
import { type DoorRefusal, refuse } from "./DoorRefusal.js"
import { header } from "./internal/templatePath.js"
import * as Mappings from "./Mappings.js"
import * as NoticeBody from "./NoticeBody.js"
import * as StandardWebhooks from "./StandardWebhooks.js"
import { type IntakeView, type SourceDetail, SourceNotFound, Sources, TOKEN_FINGERPRINT_DOMAIN } from "./Sources.js"
import * as Templates from "./Templates.js"
import { statusColumn, statusDetailColumn } from "./internal/arrivalStatus.js"

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

/** One element of a batch notice and what became of it. @since 0.1.0 @category models */
export interface BatchArrival {
  readonly arrivalId: string
  readonly status: ArrivalStatus
  /** Already received: `arrivalId` is the first Arrival of that element. */
  readonly duplicate: boolean
}

/**
 * What the door answers a request: 202 `Accepted` for a new Arrival (`unmapped` at once when its webhook Source
 * has no mapping yet), 200 `Duplicate` with the first one, 200 `Ignored` for a notice type the mapping does not
 * accept (no Arrival), and `Batch` for a batch notice: one Arrival per element, and how many elements were of a
 * type not accepted.
 *
 * @since 0.1.0 @category models
 */
export type Receipt = Data.TaggedEnum<{
  Accepted: { readonly arrivalId: string; readonly status: "received" | "unmapped" }
  Duplicate: { readonly arrivalId: string; readonly status: ArrivalStatus }
  Ignored: { readonly reason: "unsupported_event"; readonly eventType: string | null }
  Batch: { readonly arrivals: ReadonlyArray<BatchArrival>; readonly ignored: number }
}>
/** @since 0.1.0 @category models */
export const Receipt = Data.taggedEnum<Receipt>()

/**
 * What `reprocess` did with the `unmapped` and `no_person` Arrivals it looked at:
 *
 * - `expired`: their raw notice was deleted (30 days), so nothing can be read again; left as they are;
 * - `requeued`: every other one, set back to `received` and queued (processing decides their new status);
 * - `changed` / `unchanged`: of the requeued, whether reading the notice through the current mapping gives other
 *   person fields, or another verdict (not understood, no person, a person), than last time
 *   (`changed + unchanged = requeued`);
 * - `created`: of the requeued, those whose new reading names a person (a usable email or phone, no test or
 *   shared mailbox), which processing will apply to the CRM: counted at the call, before any worker runs.
 *
 * @since 0.1.0 @category models
 */
export const ReprocessCounts = Schema.Struct({
  requeued: Schema.Number,
  changed: Schema.Number,
  unchanged: Schema.Number,
  expired: Schema.Number,
  created: Schema.Number
})
/** @since 0.1.0 @category models */
export type ReprocessCounts = typeof ReprocessCounts.Type

/** @since 0.1.0 @category errors */
export class ArrivalNotFound extends Data.TaggedError("ArrivalNotFound")<{ readonly id: string }> {}

/** A request as the door reads it: headers and the raw body bytes. @since 0.1.0 @category models */
export interface DoorRequest {
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: Uint8Array
}

/** @since 0.1.0 @category tags */
export class Intake extends Context.Tag("@service/door/Intake")<Intake, {
  readonly receive: (sourceId: string, request: DoorRequest) => Effect.Effect<Receipt, DoorRefusal>
  /** The secret-address variant (`POST /door/<source>/<token>`): the token authenticates the request. */
  readonly receiveAddress: (sourceId: string, token: string, request: DoorRequest) => Effect.Effect<Receipt, DoorRefusal>
  /** Reads a webhook Source's `unmapped` and `no_person` Arrivals (or one of them) again and queues them. */
  readonly reprocess: (
    workspaceId: string,
    sourceId: string,
    arrivalId?: string | undefined
  ) => Effect.Effect<ReprocessCounts, SourceNotFound | ArrivalNotFound>
  readonly arrival: (workspaceId: string, id: string) => Effect.Effect<Option.Option<Arrival>>
  /** Applies every due Arrival, then returns how many attempts it made. */
  readonly drain: (worker: string) => Effect.Effect<number>
  /** Waits until the records of the refused requests answered so far are written (they are written after the answer). */
  readonly refusalsKept: Effect.Effect<void>
  /**
   * Deletes raw notices (body, headers and the fields read from them) received more than 30 days ago, and Source
   * examples stored more than 30 days ago; returns how many.
   */
  readonly purgeExpired: Effect.Effect<number>
  /** Applies Arrivals for ever and runs the retention hourly (a worker). */
  readonly work: (worker: string) => Effect.Effect<never>
  /**
   * Applies Arrivals for ever, woken by each one stored (`WorkQueue.process`); waits at most `idle` (the fallback
   * poll) when none is due, and tells `onRound` how many attempts each round made.
   */
  readonly process: (worker: string, options?: {
    readonly idle?: Duration.DurationInput | undefined
    readonly onRound?: ((attempted: number) => Effect.Effect<void>) | undefined
  }) => Effect.Effect<never>
}>() {}

/** How many raw notices one statement of the retention job deletes. @since 0.1.0 @category constants */
export const PURGE_BATCH = 500

/** How long a raw notice is kept (spec: 30 days). @since 0.1.0 @category constants */
export const RETENTION: Duration.Duration = Duration.days(30)

const ArrivalRow = Schema.Struct({
  ...Arrival.fields,
  body: Schema.NullOr(Schema.String),
  content_type: Schema.NullOr(Schema.String),
  headers: Schema.Unknown,
  batch_index: Schema.NullOr(Schema.Number),
  reading: Schema.Unknown
})
type ArrivalRow = typeof ArrivalRow.Type
const decodeArrivals = Schema.decodeUnknown(Schema.Array(ArrivalRow))
const IdStatus = Schema.Array(Schema.Struct({ id: Schema.String, status: ArrivalStatus }))
const StoredHeaders = Schema.Record({ key: Schema.String, value: Schema.String })
const decodeReading = Schema.decodeUnknownOption(Mappings.Reading)

const arrivalColumns = `id, workspace_id, source_id, event_type, ${statusColumn}, ${statusDetailColumn},
  contact_id, opportunity_id, queue_attempts AS attempts, body, content_type, headers, batch_index, reading`

const toArrival = (row: ArrivalRow): Arrival => ({
  id: row.id,
  workspace_id: row.workspace_id,
  source_id: row.source_id,
  event_type: row.event_type,
  status: row.status,
  status_detail: row.status_detail,
  contact_id: row.contact_id,
  opportunity_id: row.opportunity_id,
  attempts: row.attempts
})

/**
 * What a webhook notice (or one element of a batch) means under a mapping: it does not fit, it names no person,
 * or it names one (the CRM's input).
 */
type Interpretation =
  | { readonly _tag: "Unmapped"; readonly why: string; readonly reading: Mappings.Reading | null }
  | { readonly _tag: "NoPerson"; readonly why: string; readonly reading: Mappings.Reading }
  | { readonly _tag: "Person"; readonly reading: Mappings.Reading; readonly data: ContactData }

const interpret = (
  mapping: Mappings.SourceMapping | null,
  notice: { readonly body: string | null; readonly contentType: string | null; readonly headers: Templates.Headers; readonly batchIndex: number | null }
): Interpretation => {
  if (mapping === null) return { _tag: "Unmapped", why: "the Source has no mapping yet", reading: null }
  if (notice.body === null) return { _tag: "Unmapped", why: "the raw notice was deleted after 30 days", reading: null }
  const decoded = NoticeBody.decode(notice.contentType ?? "", Buffer.from(notice.body, "utf8"))
  if (Either.isLeft(decoded)) return { _tag: "Unmapped", why: decoded.left.detail, reading: null }
  const list = Mappings.elements(mapping, decoded.right, notice.headers)
  const element = notice.batchIndex === null ? (mapping.items === null ? decoded.right : undefined) : list?.[notice.batchIndex]
  const misfit = `the notice does not fit mapping version ${mapping.version}`
  if (list === undefined || element === undefined) return { _tag: "Unmapped", why: `${misfit}: no element to read`, reading: null }
  const reading = Mappings.read(mapping, element, notice.headers)
  if (!Mappings.fits(mapping, reading, element, decoded.right, notice.headers)) {
    return { _tag: "Unmapped", why: `${misfit}: none of its paths reads`, reading }
  }
  if (reading.email !== null) {
    const test = Mappings.testMailbox(reading.email)
    if (test !== null) return { _tag: "NoPerson", why: `a test or shared mailbox (${test})`, reading }
  }
  if (reading.email === null && reading.phone === null) return { _tag: "NoPerson", why: "no email, phone or LinkedIn", reading }
  const joined = [reading.first_name, reading.last_name].filter(Predicate.isNotNull).join(" ")
  const name = reading.name ?? (joined === "" ? null : joined)
  const data: { -readonly [K in keyof ContactData]: ContactData[K] } = {}
  if (name !== null) data.name = name
  if (reading.email !== null) data.email = reading.email
  if (reading.phone !== null) data.phone = reading.phone
  if (reading.role !== null) data.role = reading.role
  if (reading.company !== null) data.company = reading.company
  if (reading.website !== null) data.website = reading.website
  return { _tag: "Person", reading, data }
}

// Same readings, whatever order their keys were stored in (jsonb reorders them).
const sameReading = (a: Mappings.Reading | null, b: Mappings.Reading | null): boolean =>
  a === null || b === null ? a === b : Templates.PersonField.literals.every((field) => a[field] === b[field])

// PostgreSQL text and jsonb cannot hold NUL; a binary multipart part may carry some.
const withoutNul = (text: string): string => text.replace(/\u0000/g, "\uFFFD")
const jsonSafe = (value: unknown): unknown => {
  if (Predicate.isString(value)) return withoutNul(value)
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (Predicate.isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutNul(k), jsonSafe(v)]))
  return value
}

const redactText = (text: string, secrets: ReadonlyArray<string>): string => {
  const redacted = NoticeBody.redact(text, secrets)
  return Predicate.isString(redacted) ? redacted : text
}

const invalidSignature = () => refuse("invalid_signature", "No signature matches this body.")

const isSourceId = (id: string): boolean => /^src_[0-9a-f]{24}$/.test(id)

/** What is kept of a refused request until the writer stores it. */
interface RefusedRecord {
  readonly sourceId: string
  readonly workspaceId: string
  readonly headers: Readonly<Record<string, string>>
  readonly bodyBytes: number
  readonly bodySha256: string
  readonly detail: string
}

/** The headers a refused request keeps: at most 40, names to 100 and values to 1,024 characters. */
const boundedHeaders = (headers: Readonly<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([name, value]) => (value === undefined ? [] : [[name.slice(0, 100), value.slice(0, 1024)] as const])).slice(0, 40)
  )

// The templates that sign, by the header their scheme reads first: an unknown Source is checked by the scheme a
// request's headers name, so it answers exactly as a Source of that template would to a wrong signature.
const signingTemplates = Templates.templates.filter((template) => !Templates.requiresSecretAddress(template))

/**
 * How long a worker holds an Arrival before another may take it over (renewed while the attempt runs): how long
 * the Arrivals of a killed worker wait. Two minutes unless `SERVICE_ARRIVAL_LEASE` says otherwise.
 *
 * @since 0.1.0 @category config
 */
export const leaseConfig = Config.duration("SERVICE_ARRIVAL_LEASE").pipe(
  Config.withDefault(Duration.minutes(2)),
  Config.validate({ message: "must be at least 3 seconds", validation: (d) => Duration.toMillis(d) >= 3000 }),
  Config.withDescription("How long a worker's claim on an Arrival lasts before another worker may take it over.")
)

/** @since 0.1.0 @category constructors */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sources = yield* Sources
  const crm = yield* Crm
  const ledger = yield* EventLedger
  const crypto = yield* Crypto
  const lease = yield* Effect.orDie(leaseConfig)
  const queue = yield* WorkQueue.make({ table: "door.arrivals", lease, retryDelays: RETRY_DELAYS })
  // Checked against for unknown Sources, so they take the same path as a bad signature or token.
  const decoy = generateWebhookSecret()
  const decoyFingerprint = yield* crypto.fingerprint(TOKEN_FINGERPRINT_DOMAIN, `decoy-${randomBytes(24).toString("hex")}`)
  const iso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())
  const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
  // The records of refused requests, queued by the answers and written in batches by a writer of their own.
  // Bounded: past 10,000 waiting, more are dropped (a flood costs memory of that many small records at most).
  const refusals = yield* Queue.dropping<RefusedRecord>(10_000)
  const writing = yield* Effect.makeSemaphore(1)
  const flushScheduled = yield* Ref.make(false)
  const scope = yield* Effect.scope

  const insertArrival = (input: {
    readonly sourceId: string
    readonly workspaceId: string
    readonly headers: Readonly<Record<string, string | undefined>>
    /** Null for a refused request: only its size and digest are kept. */
    readonly body: Uint8Array | string | null
    readonly bodyBytes?: number | undefined
    readonly bodySha256?: string | undefined
    readonly webhookId: string | null
    readonly eventKey: string | null
    readonly eventType: string | null
    readonly status: ArrivalStatus
    readonly detail: string | null
    readonly batchIndex?: number | null
  }) =>
    Effect.gen(function*() {
      const id = `arr_${randomBytes(12).toString("hex")}`
      const at = yield* iso
      const headers = JSON.stringify(Object.fromEntries(Object.entries(input.headers).filter(([, v]) => v !== undefined)))
      const body = input.body === null ? null : typeof input.body === "string" ? input.body : Buffer.from(input.body).toString("utf8")
      // Only an Arrival waiting to be applied is pending; a refused or unmapped one is stored finished.
      const queueState = input.status === "received" ? "pending" : "done"
      const rows = yield* sql`INSERT INTO door.arrivals (id, workspace_id, source_id, received_at, webhook_id, event_key, event_type,
          content_type, headers, body, body_bytes, body_sha256, status, status_detail, queue_state, batch_index)
        VALUES (${id}, ${input.workspaceId}, ${input.sourceId}, ${at}, ${input.webhookId}, ${input.eventKey}, ${input.eventType},
          ${header(input.headers, "content-type") ?? null}, ${headers}::jsonb, ${body}, ${input.bodyBytes ?? null}, ${input.bodySha256 ?? null},
          ${input.status}, ${input.detail}, ${queueState}, ${input.batchIndex ?? null})
        ON CONFLICT DO NOTHING
        RETURNING id, status`.pipe(Effect.flatMap(Schema.decodeUnknown(IdStatus)), Effect.orDie)
      return Option.fromNullable(rows[0])
    })

  /**
   * What the door keeps of a request it refused (a bad signature or token, a body that is not an event it can
   * store): a rejected Arrival with the Source's trail, bounded headers, the body's size and SHA-256, never the
   * body. Queued by the answer and written in batches apart from any request: the 401 of a known Source then costs
   * what the 401 of an unknown one costs (nothing tells them apart, not even the time), and a flood of refused
   * requests costs small rows, not their bodies.
   */
  const keepRefused = (sourceId: string, workspaceId: string, headers: Readonly<Record<string, string | undefined>>, body: Uint8Array, detail: string) =>
    Effect.gen(function*() {
      yield* Queue.offer(refusals, {
        sourceId,
        workspaceId,
        headers: boundedHeaders(headers),
        bodyBytes: body.byteLength,
        bodySha256: createHash("sha256").update(body).digest("hex"),
        detail
      })
      // One flush a second at most, apart from any request, so writing adds nothing to an answer's time.
      if (yield* Ref.getAndSet(flushScheduled, true)) return
      yield* Effect.forkIn(Effect.zipRight(Effect.sleep("1 second"), Effect.zipRight(Ref.set(flushScheduled, false), flushRefusals)), scope)
    })

  /** Writes every record waiting, in one transaction; one writer at a time. */
  const flushRefusals = writing.withPermits(1)(
    Effect.gen(function*() {
      const waiting = yield* Queue.takeAll(refusals)
      if (waiting.length === 0) return
      yield* Effect.forEach(waiting, (record) =>
        insertArrival({
          ...record,
          body: null,
          webhookId: null,
          eventKey: null,
          eventType: null,
          status: "rejected"
        }), { discard: true }).pipe(sql.withTransaction, Effect.orDie)
    }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Could not keep the records of refused door requests", cause)))
  )
  // What is still waiting when the service stops is written then.
  yield* Effect.addFinalizer(() => flushRefusals)

  const firstOf = (sourceId: string, webhookId: string | null, eventKey: string | null) =>
    Effect.gen(function*() {
      const first = yield* sql`SELECT id, ${sql.literal(statusColumn)}
        FROM door.arrivals WHERE source_id = ${sourceId} AND status <> 'rejected'
          AND (webhook_id = ${webhookId} OR event_key = ${eventKey})
        ORDER BY received_at LIMIT 1`.pipe(Effect.flatMap(Schema.decodeUnknown(IdStatus)), Effect.orDie)
      const row = first[0]
      if (row === undefined) return yield* Effect.dieMessage("a duplicate Arrival vanished")
      return row
    })

  const recordReceived = (workspaceId: string, sourceId: string, arrivalId: string, status: ArrivalStatus, eventType: string | null) =>
    Effect.gen(function*() {
      yield* ledger.record({
        workspaceId,
        name: "arrival.received",
        subject: `arrival/${arrivalId}`,
        payload: {
          workspace_id: workspaceId,
          occurred_at: yield* iso,
          arrival_id: arrivalId,
          source_id: sourceId,
          status,
          event_type: eventType
        }
      })
    })

  // An unknown Source, or a known one reached by the route it does not use: verified against a throwaway
  // secret by the scheme the headers name, so it ends exactly as a wrong signature does.
  const asUnknown = (request: DoorRequest, now: number): Effect.Effect<never, DoorRefusal> => {
    const named = signingTemplates.find((template) => {
      const first = template.signatureHeaders[0]
      return first !== undefined && header(request.headers, first) !== undefined
    })
    const verified = named === undefined
      ? Either.map(StandardWebhooks.verify({ secrets: [decoy], headers: request.headers, body: request.body, now }), () => undefined)
      : Templates.verify(named, { secret: decoy, headers: request.headers, body: request.body, now })
    return Effect.fail(Either.match(verified, { onLeft: (refusal) => refusal, onRight: invalidSignature }))
  }

  const receiveCloudEvent = (found: IntakeView, request: DoorRequest, now: number): Effect.Effect<Receipt, DoorRefusal> =>
    Effect.gen(function*() {
      const { source } = found
      const sourceId = source.id
      const verified = StandardWebhooks.verify({ secrets: found.secrets, headers: request.headers, body: request.body, now })
      if (Either.isLeft(verified)) {
        yield* keepRefused(sourceId, source.workspace_id, request.headers, request.body, verified.left.code)
        return yield* Effect.fail(verified.left)
      }
      if (source.status === "archived") return yield* refuse("source_archived", "This Source is archived.")
      if (source.status === "paused") return yield* refuse("source_paused", "This Source is paused; retry later.")
      const parsed = CloudEvent.parse(request.body)
      if (Either.isLeft(parsed)) {
        yield* keepRefused(sourceId, source.workspace_id, request.headers, request.body, `invalid_event: ${parsed.left.detail}`)
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
          const row = yield* firstOf(sourceId, webhookId, eventKey)
          return Receipt.Duplicate({ arrivalId: row.id, status: row.status })
        }
        const arrivalId = inserted.value.id
        yield* recordReceived(source.workspace_id, sourceId, arrivalId, "received", event.type)
        return Receipt.Accepted({ arrivalId, status: "received" })
      }).pipe(sql.withTransaction, Effect.orDie)
    })

  /** A webhook Source's notice, once its scheme or address said who sent it. */
  const receiveWebhook = (
    found: IntakeView,
    request: DoorRequest,
    verified: Either.Either<{ readonly webhookId: string | null }, DoorRefusal>,
    token: string | null
  ): Effect.Effect<Receipt, DoorRefusal> =>
    Effect.gen(function*() {
      const { mapping, source } = found
      const sourceId = source.id
      // What the tool may echo back: the token of the address, the key it signs with (Hotmart's is a header).
      const secrets = [token, found.signingSecret].filter(Predicate.isNotNull)
      const storedBody = withoutNul(redactText(Buffer.from(request.body).toString("utf8"), secrets))
      const storedHeaders = Object.fromEntries(
        Object.entries(request.headers).flatMap(([name, value]) => (value === undefined ? [] : [[name, redactText(value, secrets)]]))
      )
      if (Either.isLeft(verified)) {
        yield* keepRefused(sourceId, source.workspace_id, storedHeaders, request.body, verified.left.code)
        return yield* Effect.fail(verified.left)
      }
      if (source.status === "archived") return yield* refuse("source_archived", "This Source is archived.")
      if (source.status === "paused") return yield* refuse("source_paused", "This Source is paused; retry later.")
      const decoded = NoticeBody.decode(header(request.headers, "content-type") ?? "", request.body)
      if (Either.isLeft(decoded)) {
        yield* keepRefused(sourceId, source.workspace_id, storedHeaders, request.body, `invalid_event: ${decoded.left.detail}`)
        return yield* Effect.fail(decoded.left)
      }
      const notice = decoded.right
      const shown = jsonSafe(NoticeBody.redact(notice, secrets))
      const webhookId = verified.right.webhookId
      const contentKey = `content:${yield* crypto.fingerprint("door.notice-content", Buffer.from(request.body).toString("base64"))}`

      if (mapping === null) {
        yield* sources.noteNotice(sourceId, { body: shown, elements: [shown] })
        return yield* Effect.gen(function*() {
          const inserted = yield* insertArrival({
            sourceId,
            workspaceId: source.workspace_id,
            headers: storedHeaders,
            body: storedBody,
            webhookId,
            eventKey: contentKey,
            eventType: null,
            status: "unmapped",
            detail: "the Source has no mapping yet"
          })
          if (Option.isNone(inserted)) {
            const row = yield* firstOf(sourceId, webhookId, contentKey)
            return Receipt.Duplicate({ arrivalId: row.id, status: row.status })
          }
          yield* recordReceived(source.workspace_id, sourceId, inserted.value.id, "unmapped", null)
          return Receipt.Accepted({ arrivalId: inserted.value.id, status: "unmapped" })
        }).pipe(sql.withTransaction, Effect.orDie)
      }

      const list = Mappings.elements(mapping, notice, request.headers)
      const batch = mapping.items !== null
      const candidates = (list ?? [notice]).map((element, index) => ({
        element,
        index,
        type: Mappings.eventType(mapping, element, notice, request.headers)
      }))
      const kept = list === undefined ? candidates : candidates.filter((c) => Mappings.accepts(mapping, c.type))
      const ignored = candidates.length - kept.length
      if (!batch && kept.length === 0) return Receipt.Ignored({ reason: "unsupported_event", eventType: candidates[0]?.type ?? null })
      const shownElements = Mappings.elements(mapping, shown, request.headers) ?? [shown]
      yield* sources.noteNotice(sourceId, {
        body: shown,
        elements: kept.flatMap((c) => {
          const element = shownElements[c.index]
          return element === undefined ? [] : [element]
        })
      })
      const noticeId = Templates.readRules(mapping.notice_id, notice, request.headers)
      // A batch element's key: its own id, else the whole notice's key and its position.
      const keyOf = (element: unknown, index: number): string => {
        if (!batch) return noticeId === null ? contentKey : `id:${noticeId}`
        const own = Templates.readRules(mapping.notice_id, element, request.headers)
        if (own !== null && own !== noticeId) return `id:${own}`
        const base = webhookId !== null ? `webhook:${webhookId}` : noticeId !== null ? `id:${noticeId}` : contentKey
        return `${base}#${index}`
      }
      return yield* Effect.gen(function*() {
        const results: Array<BatchArrival> = []
        for (const { element, index, type } of kept) {
          const eventKey = keyOf(element, index)
          const unfit = list === undefined
          const status: ArrivalStatus = unfit ? "unmapped" : "received"
          const inserted = yield* insertArrival({
            sourceId,
            workspaceId: source.workspace_id,
            headers: storedHeaders,
            body: storedBody,
            // The webhook-id names the whole request: a batch's elements are told apart by their keys.
            webhookId: batch ? null : webhookId,
            eventKey,
            eventType: type,
            status,
            detail: unfit ? `the notice does not fit mapping version ${mapping.version}: items is not a list` : null,
            batchIndex: batch && !unfit ? index : null
          })
          if (Option.isNone(inserted)) {
            const row = yield* firstOf(sourceId, batch ? null : webhookId, eventKey)
            results.push({ arrivalId: row.id, status: row.status, duplicate: true })
            continue
          }
          yield* recordReceived(source.workspace_id, sourceId, inserted.value.id, status, type)
          results.push({ arrivalId: inserted.value.id, status, duplicate: false })
        }
        const only = results[0]
        if (batch && list !== undefined) return Receipt.Batch({ arrivals: results, ignored })
        if (only === undefined) return yield* Effect.dieMessage("a single notice gave no Arrival")
        return only.duplicate
          ? Receipt.Duplicate({ arrivalId: only.arrivalId, status: only.status })
          : Receipt.Accepted({ arrivalId: only.arrivalId, status: only.status === "unmapped" ? "unmapped" : "received" })
      }).pipe(sql.withTransaction, Effect.orDie)
    })

  const verifyWebhook = (
    found: IntakeView,
    request: DoorRequest,
    now: number
  ): Either.Either<{ readonly webhookId: string | null }, DoorRefusal> => {
    const template = Schema.decodeUnknownOption(Templates.TemplateName)(found.source.template)
    if (Option.isSome(template)) {
      return Either.map(
        Templates.verify(Templates.template(template.value), {
          secret: found.signingSecret ?? "",
          headers: request.headers,
          body: request.body,
          now
        }),
        () => ({ webhookId: null })
      )
    }
    return Either.map(
      StandardWebhooks.verify({ secrets: found.secrets, headers: request.headers, body: request.body, now }),
      (verified) => ({ webhookId: verified.id })
    )
  }

  const tooLarge = (request: DoorRequest) =>
    request.body.length > MAX_BODY_BYTES
      ? Effect.fail(refuse("payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`))
      : Effect.void

  const receive = (sourceId: string, request: DoorRequest): Effect.Effect<Receipt, DoorRefusal> =>
    Effect.gen(function*() {
      yield* tooLarge(request)
      // An id that is not a Source id's shape names no Source: it is not looked up (it may hold anything).
      const found = isSourceId(sourceId) ? yield* sources.forIntake(sourceId) : Option.none()
      const now = yield* nowSeconds
      // A secret-address Source is not reachable on the signed route: it answers as an unknown Source.
      const reachable = Option.filter(found, (view) => view.verification !== "secret-address")
      if (Option.isNone(reachable)) return yield* asUnknown(request, now)
      const view = reachable.value
      if (view.source.type === "cloudevents") return yield* receiveCloudEvent(view, request, now)
      return yield* receiveWebhook(view, request, verifyWebhook(view, request, now), null)
    }).pipe(Effect.withSpan("Intake.receive", { captureStackTrace: false, attributes: { sourceId } }))

  const receiveAddress = (sourceId: string, token: string, request: DoorRequest): Effect.Effect<Receipt, DoorRefusal> =>
    Effect.gen(function*() {
      yield* tooLarge(request)
      const found = isSourceId(sourceId) ? yield* sources.forIntake(sourceId) : Option.none()
      // Every path computes one fingerprint and one comparison: unknown Sources, Sources that do not use the
      // address and wrong tokens take the same time and give the same refusal.
      const reachable = Option.filter(found, (view) => view.verification === "secret-address" && view.tokenFingerprint !== null)
      const expected = Option.match(reachable, { onNone: () => decoyFingerprint, onSome: (view) => view.tokenFingerprint ?? decoyFingerprint })
      const presented = yield* crypto.fingerprint(TOKEN_FINGERPRINT_DOMAIN, token)
      const matches = token.length > 0 && constantTimeEqual(presented, expected)
      if (Option.isNone(reachable)) return yield* Effect.fail(invalidSignature())
      const verified = matches ? Either.right({ webhookId: null }) : Either.left(invalidSignature())
      return yield* receiveWebhook(reachable.value, request, verified, matches ? token : null)
    }).pipe(Effect.withSpan("Intake.receiveAddress", { captureStackTrace: false, attributes: { sourceId } }))

  const arrival = (workspaceId: string, id: string) =>
    sql`SELECT ${sql.literal(arrivalColumns)} FROM door.arrivals WHERE workspace_id = ${workspaceId} AND id = ${id}`.pipe(
      Effect.flatMap(decodeArrivals),
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toArrival)),
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
    row: ArrivalRow,
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

  /** Applies a person to the CRM; `noKey` is the status of a person the CRM finds no usable key in. */
  const applyPerson = (row: ArrivalRow, data: ContactData, noKey: ArrivalStatus) =>
    Effect.gen(function*() {
      const outcome = yield* crm.applyContact(row.workspace_id, data, { sourceId: row.source_id })
      const occurred_at = yield* iso
      switch (outcome._tag) {
        case "Conflict":
          return yield* settle(row, "pending_decision", "the email belongs to one contact and the phone to another")
        case "Erased": {
          // An erased person's notice is not kept either: the Arrival stays, as the audit that one came.
          yield* sql`UPDATE door.arrivals SET body = NULL, headers = '{}'::jsonb, reading = NULL, erased_at = ${yield* iso}
            WHERE id = ${row.id}`.pipe(Effect.orDie)
          return yield* settle(row, "rejected", "the person asked for erasure")
        }
        case "NoPersonKey":
          return yield* settle(row, noKey, "no usable email or phone")
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

  const headersOf = (row: ArrivalRow): Templates.Headers =>
    Option.getOrElse(Schema.decodeUnknownOption(StoredHeaders)(row.headers), () => ({}))

  const interpretRow = (row: ArrivalRow, mapping: Mappings.SourceMapping | null) =>
    interpret(mapping, { body: row.body, contentType: row.content_type, headers: headersOf(row), batchIndex: row.batch_index })

  const applyWebhook = (row: ArrivalRow, detail: SourceDetail) =>
    Effect.gen(function*() {
      const meaning = interpretRow(row, detail.mapping)
      const reading = meaning.reading === null ? null : JSON.stringify(jsonSafe(meaning.reading))
      yield* sql`UPDATE door.arrivals SET reading = ${reading}::jsonb, mapping_version = ${detail.mapping?.version ?? null}
        WHERE id = ${row.id}`.pipe(Effect.orDie)
      switch (meaning._tag) {
        case "Unmapped":
          return yield* settle(row, "unmapped", meaning.why)
        case "NoPerson":
          return yield* settle(row, "no_person", meaning.why)
        case "Person":
          return yield* applyPerson(row, meaning.data, "no_person")
      }
    })

  const apply = (claim: WorkQueue.Claim) =>
    Effect.gen(function*() {
      const row = yield* rowOf(claim.id)
      if (row === undefined) return
      const detail = yield* sources.detail(row.workspace_id, row.source_id)
      if (Option.isSome(detail) && detail.value.source.type === "webhook") return yield* applyWebhook(row, detail.value)
      const parsed = CloudEvent.parse(Buffer.from(row.body ?? "", "utf8"))
      if (Either.isLeft(parsed)) return yield* settle(row, "rejected", `invalid_event: ${parsed.left.detail}`)
      const event = parsed.right
      if (!CloudEvent.isApplied(event)) return yield* settle(row, "set_aside", `${event.type} is not applied to the CRM yet`)
      const data = CloudEvent.contactData(event)
      if (Option.isNone(data) || !CloudEvent.hasPersonKey(event)) return yield* settle(row, "set_aside", "no email and no phone")
      return yield* applyPerson(row, data.value, "set_aside")
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

  const reprocess = (workspaceId: string, sourceId: string, arrivalId?: string | undefined) =>
    Effect.gen(function*() {
      const detail = yield* sources.detail(workspaceId, sourceId)
      if (Option.isNone(detail)) return yield* new SourceNotFound({ id: sourceId })
      if (arrivalId !== undefined) {
        const known = yield* sql`SELECT id FROM door.arrivals
          WHERE workspace_id = ${workspaceId} AND source_id = ${sourceId} AND id = ${arrivalId}`.pipe(Effect.orDie)
        if (known.length === 0) return yield* new ArrivalNotFound({ id: arrivalId })
      }
      const rows = yield* sql`SELECT ${sql.literal(arrivalColumns)} FROM door.arrivals
        WHERE workspace_id = ${workspaceId} AND source_id = ${sourceId} AND status IN ('unmapped', 'no_person')
          AND queue_state <> 'dead' ${arrivalId === undefined ? sql`` : sql`AND id = ${arrivalId}`}
        ORDER BY received_at`.pipe(Effect.flatMap(decodeArrivals), Effect.orDie)
      const counts = { requeued: 0, changed: 0, unchanged: 0, expired: 0, created: 0 }
      const requeue: Array<string> = []
      for (const row of rows) {
        if (row.body === null) {
          counts.expired++
          continue
        }
        const meaning = interpretRow(row, detail.value.mapping)
        const before = Option.getOrNull(decodeReading(row.reading))
        const verdict = meaning._tag === "Unmapped" ? "unmapped" : meaning._tag === "NoPerson" ? "no_person" : "person"
        if (sameReading(before, meaning.reading) && verdict === row.status) counts.unchanged++
        else counts.changed++
        if (meaning._tag === "Person") counts.created++
        requeue.push(row.id)
      }
      if (requeue.length > 0) {
        yield* sql`UPDATE door.arrivals SET status = 'received', status_detail = NULL
          WHERE id IN ${sql.in(requeue)}`.pipe(Effect.orDie)
        counts.requeued = yield* queue.requeue(requeue)
      }
      const result: ReprocessCounts = counts
      return result
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("Intake.reprocess", { captureStackTrace: false, attributes: { sourceId } }))

  // In batches, each its own short statement on the partial index of what is still kept, oldest first. A row
  // another worker is purging (or the queue holds) is skipped, not waited for: it is purged by whoever holds it, or
  // on the next run, so several workers at once neither block nor count a notice twice.
  const purgeExpired = Effect.gen(function*() {
    const cutoff = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(RETENTION)).toISOString()
    let purged = 0
    for (;;) {
      const rows = yield* sql`UPDATE door.arrivals SET body = NULL, headers = '{}'::jsonb, reading = NULL
        WHERE id IN (SELECT id FROM door.arrivals WHERE body IS NOT NULL AND received_at < ${cutoff}
          ORDER BY received_at LIMIT ${PURGE_BATCH} FOR UPDATE SKIP LOCKED)
        RETURNING id`.pipe(Effect.orDie)
      purged += rows.length
      if (rows.length < PURGE_BATCH) break
    }
    const examples = yield* sql`UPDATE door.sources SET example = NULL, example_at = NULL
      WHERE id IN (SELECT id FROM door.sources WHERE example IS NOT NULL AND example_at < ${cutoff} FOR UPDATE SKIP LOCKED)
      RETURNING id`.pipe(Effect.orDie)
    return purged + examples.length
  }).pipe(Effect.withSpan("Intake.purgeExpired", { captureStackTrace: false }))

  // Every worker runs it; the statement is idempotent, so several workers at once do no harm.
  const retention = Effect.forever(Effect.zipRight(purgeExpired, Effect.sleep(Duration.hours(1))))

  return Intake.of({
    receive,
    receiveAddress,
    reprocess,
    arrival,
    drain: (worker) => queue.drain(options(worker)),
    purgeExpired,
    refusalsKept: flushRefusals,
    work: (worker) => Effect.zipRight(Effect.fork(retention), queue.process(options(worker))),
    process: (worker, more) => queue.process({ ...options(worker), idle: more?.idle, onRound: more?.onRound })
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<Intake, never, SqlClient.SqlClient | Sources | Crm | EventLedger | Crypto> = Layer.scoped(
  Intake,
  make
)
