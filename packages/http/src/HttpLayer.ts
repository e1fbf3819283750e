/**
 * The HTTP surface of a list of operation groups, ready to serve: the API derived from the groups with
 * their handlers and authentication, the routes served beside them (the bundles' mounts, the probes), the
 * API-level shaping middleware, OpenAPI at `/openapi.json` on the host root listing all of it, and the
 * interactive docs page at `/docs`. Serve it with `HttpApiBuilder.serve()` (or `HttpApiBuilder.toWebHandler`).
 * Any group can be served alone: `HttpLayer.layer([group])`.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiScalar from "@effect/platform/HttpApiScalar"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { Authenticator } from "@service/core/Authenticator"
import type * as Mount from "@service/core/Mount"
import type * as Operation from "@service/core/Operation"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Authentication from "./Authentication.js"
import * as GroupApi from "./GroupApi.js"
import * as GroupHandlers from "./GroupHandlers.js"
import * as Mounts from "./Mounts.js"
import * as RootIndex from "./RootIndex.js"
import * as Routes from "./Routes.js"
import * as Shaping from "./Shaping.js"

/** @since 0.1.0 @category models */
export interface Options<RM = never> extends Omit<GroupApi.Options, "routes">, Shaping.Options {
  /**
   * Routes served beside the operations (the bundles' mounts, the probes): mounted on the router and listed in
   * OpenAPI.
   */
  readonly mounts?: ReadonlyArray<Mount.Mount<RM>> | undefined
  /** Routes the host serves itself (the MCP endpoint), listed in OpenAPI only. */
  readonly documented?: ReadonlyArray<Mount.Description> | undefined
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
 * The path prefixes of the mounts that read a body: up to their first parameter (`/api/v1/door/`).
 */
const bodyPrefixes = <RM>(mounts: ReadonlyArray<Mount.Mount<RM>>): ReadonlyArray<string> =>
  mounts.flatMap((mount) => {
    if (mount.body === undefined) return []
    const at = mount.path.indexOf("/:")
    return [at === -1 ? mount.path : mount.path.slice(0, at + 1)]
  })

/**
 * Everything the HTTP surface of `groups` and `options.mounts` needs besides a server.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <R, RM = never>(
  groups: ReadonlyArray<Operation.Group<R>>,
  options: Options<RM> = {}
): Layer.Layer<HttpApi.Api, never, Authenticator | GroupHandlers.Requirements<R> | RM> => {
  const openapiPath = options.openapiPath ?? "/openapi.json"
  const docsPath = options.docsPath ?? "/docs"
  const served = options.mounts ?? []
  // `GET /` points to the docs and every other route (decision 0075), unless the host serves its own root.
  const root = served.some((mount) => mount.method === "GET" && mount.path === "/")
    ? []
    : [RootIndex.mount({ groups, routes: [...served, ...(options.documented ?? [])], openapiPath, docsPath })]
  const mounts: ReadonlyArray<Mount.Mount<RM>> = [...served, ...root]
  const routes: ReadonlyArray<Mount.Description> = [...mounts, ...(options.documented ?? [])]
  return Layer.mergeAll(
    // Sealed record refs are longer than the router's default 100-character limit for a path parameter.
    HttpRouter.setRouterConfig({ maxParamLength: Routes.maxPathParamLength }),
    HttpApiBuilder.middlewareOpenApi({ path: openapiPath }),
    HttpApiScalar.layer({ path: docsPath }),
    Mounts.layer(mounts),
    // Mounts that read a body read it under their own limit and answer their own 413, declared length or not.
    Shaping.layer(groups, { ...options, ownBodyLimits: [...(options.ownBodyLimits ?? []), ...bodyPrefixes(mounts)] })
  ).pipe(Layer.provideMerge(apiLayer(groups, { ...options, routes })))
}
