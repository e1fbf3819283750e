/**
 * `GET /`: where a newcomer (or an agent) who opens the host's root learns where to go (decision 0075). A small JSON
 * index: the docs page, the OpenAPI document, each group's discovery route (the market's capabilities), and every
 * route served beside the API (probes, MCP, public pages). A browser (`Accept: text/html`) is sent to the docs page.
 *
 * @since 0.1.0
 */
import * as Mount from "@service/core/Mount"
import * as Operation from "@service/core/Operation"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** @since 0.1.0 @category models */
export interface Options<R> {
  readonly groups: ReadonlyArray<Operation.Group<R>>
  /** The routes served beside the operations, listed with their summaries. */
  readonly routes: ReadonlyArray<Mount.Description>
  readonly openapiPath: `/${string}`
  readonly docsPath: `/${string}`
}

const Index = Schema.Struct({
  service: Schema.String,
  docs: Schema.String.annotations({ description: "The interactive API docs." }),
  openapi: Schema.String.annotations({ description: "The OpenAPI document listing every route." }),
  discovery: Schema.Array(Schema.Struct({ group: Schema.String, path: Schema.String })).annotations({
    description: "Each group's discovery route (what it can answer), `{workspace}` being the credential's workspace slug."
  }),
  routes: Schema.Array(Schema.Struct({ method: Schema.String, path: Schema.String, summary: Schema.String }))
}).annotations({ identifier: "RootIndex", description: "Where to start." })

/**
 * The index's content for `options`.
 *
 * @since 0.1.0 @category constructors
 */
export const index = <R>(options: Options<R>): typeof Index.Type => ({
  service: "service API: start with the docs, or read the OpenAPI document; every operation is under /api/v1.",
  docs: options.docsPath,
  openapi: options.openapiPath,
  discovery: options.groups.flatMap((group) =>
    Operation.servedOn(group, "http").filter((op) => op.name === group.http.discovery).map((op) => ({
      group: group.title,
      path: Operation.httpPath(group, op).replace(/:([A-Za-z_]+)/g, "{$1}")
    }))
  ),
  routes: options.routes.filter((route) => route.undocumented !== true && !route.path.includes("/:")).map((route) => ({
    method: route.method,
    path: route.path,
    summary: route.summary
  }))
})

/**
 * `GET /` as a mount.
 *
 * @since 0.1.0 @category mounts
 */
export const mount = <R>(options: Options<R>): Mount.Mount<never> => {
  const body = index(options)
  return Mount.make({
    name: "root_index",
    method: "GET",
    path: "/",
    summary: "Where to start",
    description: "A JSON index pointing to the docs page, the OpenAPI document, each group's discovery route and the other routes; a browser (Accept: text/html) is redirected to the docs page. No credential.",
    tag: "Probes",
    answers: [
      { status: 200, description: "The index.", schema: Index },
      { status: 302, description: "A browser is sent to the docs page." }
    ],
    public: true,
    handle: (request) =>
      Effect.succeed(
        (request.headers["accept"] ?? "").includes("text/html")
          ? { status: 302, headers: { location: options.docsPath }, body: { _tag: "Text", text: "", contentType: "text/plain" } }
          : Mount.json(body, 200, { "cache-control": "no-store" })
      )
  })
}
