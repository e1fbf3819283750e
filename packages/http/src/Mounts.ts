/**
 * Serves the routes bundles declare beside their operations (`Mount`: the intake door, public pages, probes) on
 * the `HttpApiBuilder` router, for any domain: the handler gets the path parameters, headers, remote address,
 * request id and the raw body read under the route's limit (declared or streamed, never buffered past it), and
 * its answer is written as it says. Their OpenAPI entries come from the same declarations ({@link document}).
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApiJsonSchema from "@effect/platform/OpenApiJsonSchema"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Mount from "@service/core/Mount"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Scope from "effect/Scope"
import * as BodyReader from "./BodyReader.js"
import * as ClientAddress from "./ClientAddress.js"
import * as RequestId from "./RequestId.js"
import * as Routes from "./Routes.js"

const respond = (answer: Mount.Response, request: HttpServerRequest.HttpServerRequest) => {
  const headers = answer.headers ?? {}
  switch (answer.body._tag) {
    case "Json":
      return Effect.succeed(HttpServerResponse.unsafeJson(answer.body.value, { status: answer.status, headers }))
    case "Text":
      return Effect.succeed(HttpServerResponse.text(answer.body.text, { status: answer.status, contentType: answer.body.contentType, headers }))
    case "Node": {
      const serve = answer.body.serve
      const incoming = NodeHttpServerRequest.toIncomingMessage(request)
      const outgoing = NodeHttpServerRequest.toServerResponse(request)
      // The listener writes the whole answer; the server sends nothing more for a response already ended.
      return Effect.promise(async () => {
        await serve(incoming, outgoing)
        if (!outgoing.writableEnded) {
          await new Promise<void>((resolve) => {
            outgoing.once("finish", resolve)
            outgoing.once("close", resolve)
          })
        }
      }).pipe(Effect.as(HttpServerResponse.empty()))
    }
  }
}

/**
 * The handler of one mount over the platform's request. The body is read in the request's scope (an unread rest is
 * dropped with the connection, never buffered); the domain's handler runs with `context`, the services captured
 * when the routes were mounted.
 *
 * @since 0.1.0 @category handlers
 */
export const handler = <R>(mount: Mount.Mount<R>, context: Context.Context<R>, trustedProxies: ReadonlyArray<ClientAddress.Range> = []) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const scope = yield* Scope.Scope
    const requestId = yield* RequestId.get
    const maxBytes = mount.body?.maxBytes ?? Routes.defaultMaxBodyBytes
    const body = Scope.extend(BodyReader.readBytes(request, maxBytes), scope).pipe(
      Effect.mapError((error) => new Mount.BodyError({ reason: error._tag === "BodyTooLarge" ? "too_large" : "unreadable", limit: maxBytes }))
    )
    const defined: Record<string, string> = {}
    for (const [name, value] of Object.entries(params)) if (value !== undefined) defined[name] = value
    const question = request.url.indexOf("?")
    const pathname = question === -1 ? request.url : request.url.slice(0, question)
    const answer = yield* mount.handle({
      method: request.method,
      path: pathname,
      search: question === -1 ? "" : request.url.slice(question + 1),
      params: defined,
      headers: request.headers,
      // The client behind a trusted proxy, never a forwarded header from anyone else (ClientAddress).
      remoteAddress: ClientAddress.resolve(trustedProxies, request.remoteAddress, request.headers),
      requestId,
      body
    }).pipe(Effect.provide(context))
    return yield* respond(answer, request)
  })

/**
 * Mounts `mounts` on the `HttpApiBuilder` router. Their requirements are read when the layer is built.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <R>(mounts: ReadonlyArray<Mount.Mount<R>>): Layer.Layer<never, never, R> =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<R>()
      const trustedProxies = yield* Effect.orDie(ClientAddress.trustedProxiesConfig)
      for (const mount of mounts) {
        yield* router.addRoute(HttpRouter.makeRoute(mount.method, mount.path, RequestId.withRequestId(handler(mount, context, trustedProxies))))
      }
    })
  )

type Json = Record<string, unknown>

const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")

const defaultContentType = "application/json"

/**
 * The OpenAPI operation of one route, its schemas written into `defs` (components).
 *
 * @since 0.1.0 @category openapi
 */
export const operation = (route: Mount.Description, defs: Record<string, unknown>): Json => {
  const responses: Json = {}
  for (const answer of route.answers) {
    const contentType = answer.contentType ?? defaultContentType
    const schema = answer.schema === undefined
      ? contentType === defaultContentType ? {} : { type: "string" }
      : OpenApiJsonSchema.makeWithDefs(answer.schema, { defs, defsPath: "#/components/schemas/" })
    responses[String(answer.status)] = {
      description: answer.description,
      content: { [contentType]: { schema } },
      ...(answer.headers === undefined ? {} : {
        headers: Object.fromEntries(
          Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: "string" } }])
        )
      })
    }
  }
  const parameters = Mount.paramsOf(route.path).map((name) => ({
    name,
    in: "path",
    required: true,
    description: route.params?.[name] ?? `The ${name} path segment.`,
    schema: { type: "string" }
  }))
  const body = route.body
  return {
    operationId: route.name,
    summary: route.summary,
    description: route.description,
    tags: [route.tag],
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(body === undefined ? {} : {
      requestBody: {
        required: true,
        description: `${body.description} At most ${body.maxBytes} bytes.`,
        content: Object.fromEntries(body.contentTypes.map((type) => [type, { schema: { type: "string", format: "binary" } }]))
      }
    }),
    responses
  }
}

/**
 * Adds the routes to an OpenAPI document: each under its path and method, its tag listed, its schemas in the
 * components. Meant for `OpenApi.Transform`, before the document-wide finishing.
 *
 * @since 0.1.0 @category openapi
 */
export const document = (routes: ReadonlyArray<Mount.Description>) => (spec: Json): Json => {
  if (routes.length === 0) return spec
  const paths: Json = { ...(Predicate.isRecord(spec["paths"]) ? spec["paths"] : {}) }
  const components = Predicate.isRecord(spec["components"]) ? spec["components"] : {}
  const defs: Record<string, unknown> = { ...(Predicate.isRecord(components["schemas"]) ? components["schemas"] : {}) }
  for (const route of routes) {
    if (route.undocumented === true) continue
    const path = openApiPath(route.path)
    const item = Predicate.isRecord(paths[path]) ? paths[path] : {}
    paths[path] = { ...item, [route.method.toLowerCase()]: operation(route, defs) }
  }
  const tags = Array.isArray(spec["tags"]) ? spec["tags"] : []
  const known = new Set(tags.flatMap((tag) => (Predicate.isRecord(tag) && typeof tag["name"] === "string" ? [tag["name"]] : [])))
  const added = [...new Set(routes.filter((route) => route.undocumented !== true).map((route) => route.tag))]
    .filter((tag) => !known.has(tag))
    .map((name) => ({ name }))
  return { ...spec, paths, tags: [...tags, ...added], components: { ...components, schemas: defs } }
}
