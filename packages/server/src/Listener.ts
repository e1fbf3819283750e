/**
 * The port, bound before the application exists, so a process that is still loading its modules or opening its
 * database already answers: `/health` at once, `/ready` with what is still starting, and every other request with
 * a prompt 503 `STARTING` and `Retry-After` until the application is set. From then on the application answers everything,
 * probes included. Kept apart from `Server` so that `main.ts` can listen after loading only this much.
 *
 * @since 0.1.0
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as RequestContext from "@service/core/RequestContext"
import * as Health from "@service/http/Health"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomBytes } from "node:crypto"
import { createServer, STATUS_CODES } from "node:http"

/** @since 0.1.0 @category models */
export type App = HttpApp.Default<never, HttpRouter.HttpRouter.DefaultServices>

/**
 * The node server. Idle kept-alive connections are closed after 65 s, not Node's 5 s: a client reuses an idle
 * connection until its own idle timeout (undici's is 4 s, counted in event-loop ticks, so later in wall
 * time on a busy machine), and a server that closes first resets the request sent on it (ECONNRESET, "other side
 * closed"). The server must outlast its clients (docs/decisions/0029); `headersTimeout` stays above it, as Node
 * requires. Every host listens through it: `npm start` (this listener) and `Server.layer`.
 *
 * @since 0.1.0 @category constructors
 */
export const nodeServer = () => {
  const server = createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 })
  // Connections whose last answer said `connection: close` (a 413 before the body was read): what the client still
  // sends there is the rest of that body, not a request to answer.
  const closing = new WeakSet<object>()
  server.on("request", (_request, response) => {
    response.on("finish", () => {
      if (String(response.getHeader("connection") ?? "").toLowerCase() === "close") closing.add(response.socket ?? {})
    })
  })
  // What Node's parser refuses before any handler runs (headers over 16 KiB, a malformed request line) is answered
  // in the API's refusal shape, not with Node's bare status line.
  server.on("clientError", (error: Error & { readonly code?: string }, socket) => {
    if (error.code === "ECONNRESET" || !socket.writable || closing.has(socket)) {
      socket.destroy()
      return
    }
    const [status, code, message] = error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "HEADERS_TOO_LARGE", "The request line and headers are over 16 KiB."] as const
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "REQUEST_TIMEOUT", "The request did not arrive in time."] as const
      : [400, "BAD_REQUEST", "The request is not valid HTTP/1.1."] as const
    const body = JSON.stringify({ statusCode: status, code, message, request_id: `req_${randomBytes(12).toString("hex")}` })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
    )
  })
  return server
}

/**
 * What `/ready` answers before the database is open: every check waits for it.
 *
 * @since 0.1.0 @category constructors
 */
export const starting = (what: string): ReadonlyArray<Health.CheckResult> => [
  { name: "database", ready: false, detail: what },
  { name: "migrations", ready: false, detail: "waiting for the database" },
  { name: "publication", ready: false, detail: "waiting for the database" }
]

/**
 * What `Retry-After` says while the application is still being built.
 *
 * @since 0.1.0 @category constants
 */
export const startingRetryAfterSeconds = 2

/** @since 0.1.0 @category layers */
export const layer = (options: {
  readonly port: number
  readonly host: string
  readonly app: Deferred.Deferred<App>
  readonly starting: Effect.Effect<ReadonlyArray<Health.CheckResult>>
}) =>
  HttpServer.serve(
    Effect.gen(function*() {
      const built = yield* Deferred.poll(options.app)
      if (Option.isSome(built)) return yield* Effect.flatten(built.value)
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = request.url.split("?")[0]
      if (request.method === "GET" && path === "/health") return yield* Health.health
      if (request.method === "GET" && path === "/ready") return Health.readyResponse(yield* options.starting)
      // Answered at once rather than held until the application is built (which took ~10 s on a cold start): the
      // client is told to come back, and when (decision 0075).
      return HttpServerResponse.unsafeJson({
        statusCode: 503,
        code: "STARTING",
        message: "The server is starting; retry in a few seconds. GET /ready says what is still starting.",
        request_id: yield* RequestContext.makeRequestId,
        retry_after_seconds: startingRetryAfterSeconds
      }, { status: 503, headers: { "retry-after": String(startingRetryAfterSeconds), "cache-control": "no-store" } })
    })
  ).pipe(Layer.provideMerge(NodeHttpServer.layer(nodeServer, { port: options.port, host: options.host })))
