/**
 * The node HTTP runtime: REST under /api/v1, the intake door at /api/v1/door/:sourceId (with an embedded worker
 * applying Arrivals), MCP at /mcp, OpenAPI at /openapi.json, docs at /docs, and the
 * probes `/health` and `/ready`. `npm start` listens first with `Listener` and hands requests to {@link makeApp}
 * once it is built; {@link layer} serves everything at once (tests, hosts).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as App from "@service/app/App"
import * as Health from "@service/http/Health"
import * as HttpLayer from "@service/http/HttpLayer"
import * as Projection from "@service/market-contract/Projection"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import * as DoorRoute from "./DoorRoute.js"
import * as ShareRoute from "./ShareRoute.js"
import * as McpRoute from "./McpRoute.js"
import * as ServerReadiness from "./ServerReadiness.js"

/**
 * Everything the server mounts on the `HttpApiBuilder` router. Needs the domain services (`App.layer`).
 *
 * @since 0.1.0 @category layers
 */
export const routes = Layer.mergeAll(
  McpRoute.layer,
  DoorRoute.layer,
  DoorRoute.worker,
  ShareRoute.layer,
  Health.layer,
  // The door reads its own body (up to 256 KiB) and answers its own 413, declared length or not.
  HttpLayer.layer(App.groups, { ownBodyLimits: ["/api/v1/door/"] })
).pipe(
  Layer.provide(Projection.layerAbstracted),
  Layer.provide(ServerReadiness.layer)
)

/**
 * The node server. Idle kept-alive connections are closed after 65 s, not Node's 5 s: a client reuses an idle
 * connection until its own idle timeout (undici's is 4 s, counted in event-loop ticks, so later in wall
 * time on a busy machine), and a server that closes first resets the request sent on it (ECONNRESET).
 * The server must outlast its clients (docs/decisions/0029); `headersTimeout` stays above it, as Node requires.
 *
 * @since 0.1.0 @category constructors
 */
export const nodeServer = () => createServer({ keepAliveTimeout: 65_000, headersTimeout: 66_000 })

/**
 * Serves the API on a port (0 picks a free one). Needs the domain services (`App.layer`).
 *
 * @since 0.1.0 @category layers
 */
export const layer = (options: { readonly port: number; readonly host: string }) =>
  HttpApiBuilder.serve().pipe(
    Layer.provide(routes),
    Layer.provideMerge(NodeHttpServer.layer(nodeServer, { port: options.port, host: options.host }))
  )

/**
 * The whole application as one `HttpApp`, built from the domain services; it lives as long as the scope.
 *
 * @since 0.1.0 @category constructors
 */
export const makeApp = Effect.gen(function*() {
  const context = yield* Layer.build(
    routes.pipe(Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)))
  )
  return yield* Effect.provide(HttpApiBuilder.httpApp, context)
})
