/**
 * Mounts the intake door at `POST /api/v1/door/:sourceId` inside the Effect HTTP app. The route holds no
 * domain logic: it reads the raw bytes (refusing more than 256 KiB before buffering), hands them to
 * `Intake.receive` and writes its answer. A refusal's body is `{code, message, request_id}`, so the 401 of an
 * unknown Source and of a bad signature differ only in the request id.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type DoorRefusal, refuse, statusOf } from "@service/door/DoorRefusal"
import { Intake, MAX_BODY_BYTES } from "@service/door/Intake"
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
      const sourceId = (yield* HttpRouter.params)["sourceId"] ?? ""
      const body = yield* BodyReader.readBytes(request, MAX_BODY_BYTES).pipe(
        Effect.mapError((error) =>
          error._tag === "BodyTooLarge"
            ? refuse("payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`)
            : refuse("invalid_event", "The request body could not be read to its end.")
        )
      )
      const receipt = yield* intake.receive(sourceId, { headers: request.headers, body })
      return receipt._tag === "Accepted"
        ? HttpServerResponse.unsafeJson({ arrival: receipt.arrivalId }, { status: 202 })
        : HttpServerResponse.unsafeJson({ arrival: receipt.arrivalId, status: receipt.status }, { status: 200 })
    }).pipe(
      Effect.catchTag("DoorRefusal", (error) => Effect.flatMap(RequestId.get, (requestId) => Effect.succeed(refusal(error, requestId)))),
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
    yield* Effect.forkScoped(intake.work(`server-${hostname()}-${process.pid}`))
  }).pipe(Effect.orDie)
)
