/**
 * The intake door as HTTP routes the door bundle declares: `POST /api/v1/door/<source_id>` and its secret-address
 * variant `POST /api/v1/door/<source_id>/<token>`. They read the raw bytes whatever their content type (JSON,
 * urlencoded or multipart for webhook Sources), refuse more than 256 KiB before buffering, hand them to
 * `Intake.receive` / `Intake.receiveAddress` and answer:
 *
 * - 202 `{arrival}` (with `status: "unmapped"` when the webhook Source has no mapping yet);
 * - 200 `{arrival, status}` for a duplicate, 200 `{ignored: true, reason}` for a notice type the mapping does not
 *   accept;
 * - `{arrivals: [{arrival, status, duplicate}], ignored}` for a batch (202 when any Arrival is new, else 200).
 *
 * A refusal's body is `{code, message, request_id}`, so the 401 of an unknown Source, of a bad signature and of a
 * wrong token differ only in the request id. One address may send 120 requests a minute, counted by
 * {@link DoorLimiter} (in memory per node, shared through PostgreSQL every short interval).
 *
 * @since 0.1.0
 */
import { limitKey } from "@service/core/ClientNetwork"
import * as Mount from "@service/core/Mount"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DoorLimiter, REQUESTS_PER_MINUTE_PER_IP } from "./DoorLimiter.js"
import { type DoorCode, type DoorRefusal, refuse, statusOf } from "./DoorRefusal.js"
import { ArrivalStatus, Intake, MAX_BODY_BYTES, type Receipt } from "./Intake.js"

export {
  /** @since 0.1.0 @category constants */
  REQUESTS_PER_MINUTE_PER_IP
}

const refusalBody = (error: DoorRefusal, requestId: string, headers: Readonly<Record<string, string>> = {}): Mount.Response =>
  Mount.json({ code: error.code, message: error.detail, request_id: requestId }, statusOf[error.code], headers)

/**
 * The answer to a receipt.
 *
 * @since 0.1.0 @category answers
 */
export const answer = (receipt: Receipt): Mount.Response => {
  switch (receipt._tag) {
    case "Accepted":
      return Mount.json(
        receipt.status === "unmapped" ? { arrival: receipt.arrivalId, status: receipt.status } : { arrival: receipt.arrivalId },
        202
      )
    case "Duplicate":
      return Mount.json({ arrival: receipt.arrivalId, status: receipt.status })
    case "Ignored":
      return Mount.json({ ignored: true, reason: receipt.reason })
    case "Batch":
      return Mount.json(
        {
          arrivals: receipt.arrivals.map((a) => ({ arrival: a.arrivalId, status: a.status, duplicate: a.duplicate })),
          ignored: receipt.ignored
        },
        receipt.arrivals.some((a) => !a.duplicate) ? 202 : 200
      )
  }
}

const receive = (request: Mount.Request) =>
  Effect.gen(function*() {
    const intake = yield* Intake
    // A limiter of its own (keyed by address), on the same shared fixed windows as the API's.
    const perIp = yield* DoorLimiter
    yield* perIp.consume(`door-ip:${Option.getOrElse(Option.map(request.remoteAddress, limitKey), () => "unknown")}`)
    const sourceId = request.params["source_id"] ?? ""
    const token = request.params["token"]
    const body = yield* request.body.pipe(
      Effect.mapError((error) =>
        error.reason === "too_large"
          ? refuse("payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`)
          : refuse("invalid_event", "The request body could not be read to its end.")
      )
    )
    const received = { headers: request.headers, body }
    return answer(token === undefined ? yield* intake.receive(sourceId, received) : yield* intake.receiveAddress(sourceId, token, received))
  }).pipe(
    // Over 256 KiB the rest of the body is never read: the connection closes rather than carry it.
    Effect.catchTag("DoorRefusal", (error) =>
      Effect.succeed(refusalBody(error, request.requestId, error.code === "payload_too_large" ? { connection: "close" } : {}))),
    Effect.catchTag("RateLimited", (limited) =>
      Effect.succeed(
        refusalBody(
          refuse(
            "rate_limited",
            `More than ${REQUESTS_PER_MINUTE_PER_IP} requests a minute from this address; retry after ${limited.retryAfterSeconds} s.`
          ),
          request.requestId,
          { "retry-after": String(limited.retryAfterSeconds) }
        )
      ))
  )

const Refused = Schema.Struct({
  code: Schema.String.annotations({ description: "The intake error code." }),
  message: Schema.String,
  request_id: Schema.String
}).annotations({ identifier: "DoorIntakeRefusal", description: "Why the door refused the request." })

const Received = Schema.Union(
  Schema.Struct({ arrival: Schema.String, status: Schema.optional(Schema.Literal("unmapped")) }),
  Schema.Struct({
    arrivals: Schema.Array(Schema.Struct({ arrival: Schema.String, status: ArrivalStatus, duplicate: Schema.Boolean })),
    ignored: Schema.Number
  })
).annotations({ identifier: "DoorIntakeAccepted", description: "The new Arrival (or a batch's Arrivals), stored before this answer." })

const Repeated = Schema.Union(
  Schema.Struct({ arrival: Schema.String, status: ArrivalStatus }),
  Schema.Struct({ ignored: Schema.Literal(true), reason: Schema.Literal("unsupported_event") }),
  Schema.Struct({
    arrivals: Schema.Array(Schema.Struct({ arrival: Schema.String, status: ArrivalStatus, duplicate: Schema.Boolean })),
    ignored: Schema.Number
  })
).annotations({ identifier: "DoorIntakeRepeated", description: "A duplicate (the first Arrival), a notice type not accepted, or a batch of duplicates." })

const refusedWith = (codes: ReadonlyArray<DoorCode>): string => codes.map((code) => `\`${code}\``).join(", ")

const answers: ReadonlyArray<Mount.Answer> = [
  { status: 202, description: "Stored: processing applies it to the CRM (a batch: at least one element is new).", schema: Received },
  { status: 200, description: "Nothing new: a duplicate, a notice type the mapping does not accept, or a batch of duplicates.", schema: Repeated },
  { status: 400, description: `${refusedWith(["webhook_headers", "invalid_event"])}: missing Standard Webhooks headers, or not a CloudEvent.`, schema: Refused },
  {
    status: 401,
    description: `${refusedWith(["invalid_signature", "stale_timestamp"])}: unknown Source, bad signature or token, or a timestamp over 5 minutes off. Never says which.`,
    schema: Refused
  },
  { status: 410, description: "`source_archived`: the Source is archived.", schema: Refused },
  { status: 413, description: `\`payload_too_large\`: the body is over ${MAX_BODY_BYTES} bytes (the connection closes).`, schema: Refused },
  {
    status: 429,
    description: `\`rate_limited\`: over ${REQUESTS_PER_MINUTE_PER_IP} requests a minute from this address.`,
    schema: Refused,
    headers: { "Retry-After": "Seconds until the next window opens." }
  },
  { status: 503, description: "`source_paused`: the Source is paused; retry later.", schema: Refused }
]

const body = {
  maxBytes: MAX_BODY_BYTES,
  contentTypes: ["application/cloudevents+json", "application/cloudevents-batch+json", "application/json", "application/x-www-form-urlencoded", "multipart/form-data"],
  description:
    "A CloudEvent (structured or batch) signed with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature), or a tool's own notice for a webhook Source, read as raw bytes."
}

/** @since 0.1.0 @category routes */
export const signed = Mount.make({
  name: "door_receive",
  method: "POST",
  path: "/api/v1/door/:source_id",
  summary: "Receive an event or a notice",
  description:
    "The intake door: stores the request as received before it answers, then workers apply it to the CRM. Signed with Standard Webhooks 1.0.0 under the Source's secret (or the tool's own signature for a template Source). No API key.",
  tag: "Door intake",
  params: { source_id: "The Source's id (src_...)." },
  body,
  answers,
  public: true,
  handle: receive
})

/** @since 0.1.0 @category routes */
export const secretAddress = Mount.make({
  name: "door_receive_address",
  method: "POST",
  path: "/api/v1/door/:source_id/:token",
  summary: "Receive a notice at a secret address",
  description:
    "The intake door for a webhook Source verified by its secret address instead of a signature (tools that cannot sign): the token in the path is the secret. Stores the request as received before it answers. No API key.",
  tag: "Door intake",
  params: { source_id: "The Source's id (src_...).", token: "The Source's secret address token." },
  body,
  answers,
  public: true,
  handle: receive
})

/** @since 0.1.0 @category routes */
export const mounts = [signed, secretAddress] as const
