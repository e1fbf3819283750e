/**
 * The port, bound before the application exists, so a process that is still loading its modules or opening its
 * database already answers: `/health` at once, `/ready` with what is still starting, and every other request
 * once the application is set (it waits rather than fails). From then on the application answers everything,
 * probes included. Kept apart from `Server` so that `main.ts` can listen after loading only this much.
 *
 * @since 0.1.0
 */
import type * as HttpApp from "@effect/platform/HttpApp"
import type * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Health from "@service/http/Health"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { createServer } from "node:http"

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
export const nodeServer = () => createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 })

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
      return yield* Effect.flatten(Deferred.await(options.app))
    })
  ).pipe(Layer.provideMerge(NodeHttpServer.layer(nodeServer, { port: options.port, host: options.host })))
