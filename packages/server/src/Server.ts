/**
 * The node HTTP host of an application: its operations under `/api/v1`, its bundles' routes (the intake door at
 * `/api/v1/door/<source_id>`, public topic pages), MCP at `/mcp`, the probes `/health` and `/ready`, OpenAPI at
 * `/openapi.json` listing all of it, docs at `/docs`, and its workers embedded (unless
 * `SERVICE_EMBEDDED_WORKER=false`). It loops over the application and imports no domain: serving another set of
 * bundles is `Server.layer(App.make([...]), ...)`.
 *
 * `npm start` listens first with `Listener` and hands requests to {@link makeApp} once it is built; {@link layer}
 * serves everything at once (tests, host applications).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as App from "@service/app/App"
import type * as Operation from "@service/core/Operation"
import { PublicAddress } from "@service/core/PublicAddress"
import * as Health from "@service/http/Health"
import * as HttpLayer from "@service/http/HttpLayer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Cors from "./Cors.js"
import * as Listener from "./Listener.js"
import * as McpRoute from "./McpRoute.js"
import * as Readiness from "./Readiness.js"
import * as Workers from "./Workers.js"

/**
 * Everything the server mounts on the `HttpApiBuilder` router for `app`, and its embedded workers. Needs the
 * application's services (`app.layer`).
 *
 * @since 0.1.0 @category layers
 */
export const routes = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  Layer.mergeAll(
    McpRoute.layer(app),
    Cors.layer,
    Workers.embedded(app),
    HttpLayer.layer<R, Exclude<R, Operation.Provided> | Health.Readiness>(app.groups, { mounts: [...app.mounts, ...Health.mounts], documented: [McpRoute.description] })
  ).pipe(Layer.provide(Readiness.layer(app)))

/**
 * The node server every host listens through (65 s keep-alive, decision 0029): see `Listener.nodeServer`.
 *
 * @since 0.1.0 @category constructors
 */
export const nodeServer = Listener.nodeServer

/**
 * Tells the application's PublicAddress where the server listens (a port picked at random included), so the links
 * and OAuth identifiers it hands out point here when SERVICE_PUBLIC_URL is not set.
 *
 * @since 0.1.0 @category layers
 */
export const announceAddress = (host: string, port: number) =>
  Effect.flatMap(Effect.serviceOption(PublicAddress), Option.match({ onNone: () => Effect.void, onSome: (address) => address.listening(host, port) }))

const announced = Layer.effectDiscard(
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag === "TcpAddress") yield* announceAddress(address.hostname, address.port)
  })
)

/**
 * Serves `app` on a port (0 picks a free one). Needs the application's services (`app.layer`).
 *
 * @since 0.1.0 @category layers
 */
export const layer = <S, E, D, R>(app: App.Application<S, E, D, R>, options: { readonly port: number; readonly host: string }) =>
  Layer.merge(HttpApiBuilder.serve().pipe(Layer.provide(routes(app))), announced).pipe(
    Layer.provideMerge(NodeHttpServer.layer(nodeServer, { port: options.port, host: options.host }))
  )

/**
 * The whole of `app` as one `HttpApp`, built from its services; it lives as long as the scope.
 *
 * @since 0.1.0 @category constructors
 */
export const makeApp = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      routes(app).pipe(Layer.provideMerge(Layer.mergeAll(HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer)))
    )
    return yield* Effect.provide(HttpApiBuilder.httpApp, context)
  })
