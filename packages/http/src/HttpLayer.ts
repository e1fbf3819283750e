/**
 * The HTTP API assembled: groups with their handlers, authentication, the API-level middleware, OpenAPI at
 * `/openapi.json` on the host root and the interactive docs page at `/docs`. Mount it with
 * `HttpApiBuilder.serve()` or `HttpApiBuilder.toWebHandler`.
 *
 * @since 0.1.0
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { Authenticator } from "@service/core/Authenticator"
import type { MarketData } from "@service/market-contract/MarketData"
import * as Layer from "effect/Layer"
import { Api } from "./Api.js"
import * as Authentication from "./Authentication.js"
import * as MarketDataHttp from "./MarketDataHttp.js"
import * as Shaping from "./Shaping.js"

/** @since 0.1.0 @category layers */
export const apiLayer: Layer.Layer<HttpApi.Api, never, Authenticator | MarketData> = HttpApiBuilder.api(Api)
  .pipe(
    Layer.provide(MarketDataHttp.layer),
    Layer.provide(Authentication.layer)
  )

/**
 * Everything the HTTP surface needs besides a server: the API, OpenAPI, docs and the shaping middleware.
 *
 * @since 0.1.0 @category layers
 */
export const layer = Layer.mergeAll(
  // Sealed record refs are longer than the router's default 100-character limit for a path parameter.
  HttpRouter.setRouterConfig({ maxParamLength: 4096 }),
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" }),
  Shaping.layer
).pipe(Layer.provideMerge(apiLayer))
