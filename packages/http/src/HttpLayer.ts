/**
 * The HTTP surface of a list of operation groups, ready to serve: the API derived from the groups with
 * their handlers and authentication, the API-level shaping middleware, OpenAPI at `/openapi.json` on the
 * host root and the interactive docs page at `/docs`. Serve it with `HttpApiBuilder.serve()` (or
 * `HttpApiBuilder.toWebHandler`). Any group can be served alone: `HttpLayer.layer([group])`.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { Authenticator } from "@service/core/Authenticator"
import type * as Operation from "@service/core/Operation"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Authentication from "./Authentication.js"
import * as GroupApi from "./GroupApi.js"
import * as GroupHandlers from "./GroupHandlers.js"
import * as Shaping from "./Shaping.js"

/** @since 0.1.0 @category models */
export interface Options extends GroupApi.Options, Shaping.Options {
  /** Where the OpenAPI document is served (default `/openapi.json`). */
  readonly openapiPath?: `/${string}` | undefined
  /** Where the docs page is served (default `/docs`). */
  readonly docsPath?: `/${string}` | undefined
}

/**
 * The API alone (groups, handlers, authentication), for a host that adds its own middleware and docs.
 *
 * @since 0.1.0 @category layers
 */
export const apiLayer = <R>(
  groups: ReadonlyArray<Operation.Group<R>>,
  options: GroupApi.Options = {}
): Layer.Layer<HttpApi.Api, never, Authenticator | GroupHandlers.Requirements<R>> => {
  const api = GroupApi.make(groups, options)
  return Option.match(GroupHandlers.layer(api, groups), {
    // No group serves HTTP: an API with no group still serves OpenAPI and the docs page.
    onNone: () => HttpApiBuilder.api(GroupApi.annotate(HttpApi.make("service"), groups, options)),
    onSome: (handlers) =>
      HttpApiBuilder.api(api).pipe(Layer.provide(handlers), Layer.provide(Authentication.layer))
  })
}

/**
 * Everything the HTTP surface of `groups` needs besides a server.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <R>(
  groups: ReadonlyArray<Operation.Group<R>>,
  options: Options = {}
): Layer.Layer<HttpApi.Api, never, Authenticator | GroupHandlers.Requirements<R>> =>
  Layer.mergeAll(
    // Sealed record refs are longer than the router's default 100-character limit for a path parameter.
    HttpRouter.setRouterConfig({ maxParamLength: 4096 }),
    HttpApiBuilder.middlewareOpenApi({ path: options.openapiPath ?? "/openapi.json" }),
    HttpApiScalar.layer({ path: options.docsPath ?? "/docs" }),
    Shaping.layer(groups, options)
  ).pipe(Layer.provideMerge(apiLayer(groups, options)))
