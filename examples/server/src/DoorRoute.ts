/**
 * Mounts the intake door at `POST /api/v1/door/:sourceId` and its secret-address variant
 * `POST /api/v1/door/:sourceId/:token` inside the Effect HTTP app. The routes hold no domain logic: they read
 * the raw bytes whatever their content type (JSON, urlencoded or multipart for webhook Sources), refusing more
 * than 256 KiB before buffering, hand them to `Intake.receive` / `Intake.receiveAddress` and write the answer:
 * 202 `{arrival}` (with `status: "unmapped"` when the webhook Source has no mapping yet), 200 `{arrival, status}`
 * for a duplicate, 200 `{ignored: true, reason}` for a notice type the mapping does not accept, and
 * `{arrivals: [{arrival, status, duplicate}], ignored}` for a batch (202 when any Arrival is new, else 200). A
 * refusal's body is `{code, message, request_id}`, so the 401 of an unknown Source, of a bad signature and of a
 * wrong token differ only in the request id.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type DoorRefusal, refuse, statusOf } from "@service/door/DoorRefusal"
import { Delivery } from "@service/events/Delivery"
import { Unlocks } from "@service/contacts/Unlocks"
import { SavedSearches } from "@service/market-contract/SavedSearches"
import { Intake, MAX_BODY_BYTES, type Receipt } from "@service/door/Intake"
import * as RateLimiter from "@service/core/RateLimiter"
import * as BodyReader from "@service/http/BodyReader"
import * as RequestId from "@service/http/RequestId"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { hostname } from "node:os"

/** Requests a minute the door takes from one IP address (spec: 120), counted in PostgreSQL so every node agrees. */
export const REQUESTS_PER_MINUTE_PER_IP = 120

const refusal = (error: DoorRefusal, requestId: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson({ code: error.code, message: error.detail, request_id: requestId }, { status: statusOf[error.code], headers })

const answer = (receipt: Receipt): HttpServerResponse.HttpServerResponse => {
  switch (receipt._tag) {
    case "Accepted":
      return HttpServerResponse.unsafeJson(
        receipt.status === "unmapped" ? { arrival: receipt.arrivalId, status: receipt.status } : { arrival: receipt.arrivalId },
        { status: 202 }
      )
    case "Duplicate":
      return HttpServerResponse.unsafeJson({ arrival: receipt.arrivalId, status: receipt.status }, { status: 200 })
    case "Ignored":
      return HttpServerResponse.unsafeJson({ ignored: true, reason: receipt.reason }, { status: 200 })
    case "Batch":
      return HttpServerResponse.unsafeJson(
        {
          arrivals: receipt.arrivals.map((a) => ({ arrival: a.arrivalId, status: a.status, duplicate: a.duplicate })),
          ignored: receipt.ignored
        },
        { status: receipt.arrivals.some((a) => !a.duplicate) ? 202 : 200 }
      )
  }
}

/** @since 0.1.0 @category layers */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const intake = yield* Intake
    // A limiter of its own (keyed by address), on the same stored fixed windows as the API's.
    const perIp = yield* RateLimiter.makeSql(REQUESTS_PER_MINUTE_PER_IP)
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const address = Option.getOrElse(request.remoteAddress, () => "unknown")
      yield* perIp.consume(`door-ip:${address}`)
      const params = yield* HttpRouter.params
      const sourceId = params["sourceId"] ?? ""
      const token = params["token"]
      const body = yield* BodyReader.readBytes(request, MAX_BODY_BYTES).pipe(
        Effect.mapError((error) =>
          error._tag === "BodyTooLarge"
            ? refuse("payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`)
            : refuse("invalid_event", "The request body could not be read to its end.")
        )
      )
      const received = { headers: request.headers, body }
      return answer(token === undefined ? yield* intake.receive(sourceId, received) : yield* intake.receiveAddress(sourceId, token, received))
    }).pipe(
      Effect.catchTag("DoorRefusal", (error) =>
        Effect.flatMap(RequestId.get, (requestId) =>
          // Over 256 KiB the rest of the body is never read: the connection closes rather than carry it.
          Effect.succeed(refusal(error, requestId, error.code === "payload_too_large" ? { connection: "close" } : {})))),
      Effect.catchTag("RateLimited", (limited) =>
        Effect.flatMap(RequestId.get, (requestId) =>
          Effect.succeed(
            refusal(
              refuse("rate_limited", `More than ${REQUESTS_PER_MINUTE_PER_IP} requests a minute from this address; retry after ${limited.retryAfterSeconds} s.`),
              requestId,
              { "retry-after": String(limited.retryAfterSeconds) }
            )
          )))
    )
    yield* router.post("/api/v1/door/:sourceId", RequestId.withRequestId(app))
    yield* router.post("/api/v1/door/:sourceId/:token", RequestId.withRequestId(app))
  })
)

/**
 * The embedded worker (the default): this process also applies stored Arrivals. Set
 * `SERVICE_EMBEDDED_WORKER=false` when separate worker processes do it against the same PostgreSQL.
 *
 * @since 0.1.0 @category layers
 */
export const worker = Layer.scopedDiscard(
  Effect.gen(function*() {
    const embedded = yield* Config.boolean("SERVICE_EMBEDDED_WORKER").pipe(Config.withDefault(true))
    if (!embedded) return
    const intake = yield* Intake
    const delivery = yield* Delivery
    const name = `server-${hostname()}-${process.pid}`
    yield* Effect.forkScoped(intake.work(name))
    // The same worker sends the catalog events Destinations and MCP subscriptions are waiting for, and compares
    // saved searches with each new publication, and takes over contact unlocks a dead process abandoned.
    yield* Effect.forkScoped(delivery.process(name))
    yield* Effect.forkScoped((yield* SavedSearches).watch)
    yield* Effect.forkScoped((yield* Unlocks).watch(name))
  }).pipe(Effect.orDie)
)
