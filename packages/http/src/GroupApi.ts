/**
 * The HttpApi derived from operation groups, for any domain. Each group becomes an `HttpApiGroup` named
 * after it under `/api/v1` + its prefix, behind the authentication middleware; each operation served on
 * HTTP becomes an endpoint whose method, path, input (body, query parameters or path parameters), success
 * schema, summary and description come from its declaration. Its error responses are exactly what it can
 * answer: the statuses its `refuses` codes map to through the group's codec (the structural 400 always),
 * 401, 403, 404 for an unknown workspace on workspace-scoped groups, 429, and 413/415 on body routes.
 *
 * Endpoints only declare the input for OpenAPI: the handlers (`GroupHandlers`) read it themselves and decode
 * it once, with the operation's canonical schema.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as OpenApi from "@effect/platform/OpenApi"
import type * as Mount from "@service/core/Mount"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import * as ApiError from "./ApiError.js"
import * as InputShape from "./InputShape.js"
import * as Mounts from "./Mounts.js"
import { Authentication } from "./Authentication.js"
import * as OpenApiDocument from "./OpenApiDocument.js"
import * as Routes from "./Routes.js"

/** @since 0.1.0 @category models */
export interface Options {
  /** Default `service API`. */
  readonly title?: string | undefined
  /** Default `0.1.0`. */
  readonly version?: string | undefined
  readonly description?: string | undefined
  /** Default one server at `/`: every path already carries `/api/v1`. */
  readonly servers?: ReadonlyArray<OpenApi.OpenAPISpecServer> | undefined
  /**
   * Routes served beside the operations, listed in the document too: the bundles' mounts (the intake door, public
   * pages), the probes, and routes the host serves itself (the MCP endpoint).
   */
  readonly routes?: ReadonlyArray<Mount.Description> | undefined
}

const pathSchema = <R>(group: Operation.Group<R>, op: Operation.AnyOperation<R>): Schema.Schema.AnyNoContext => {
  const bound = Operation.pathFields(op.http.input)
  const fields: Record<string, Schema.Schema.AnyNoContext> = {}
  for (const param of Routes.paramsOf(Operation.httpPath(group, op))) {
    const field = bound[param]
    const description = field !== undefined
      ? InputShape.descriptionOf(op.input, field) ?? `The ${field} input field.`
      : param === "workspace" && group.http.workspaceScoped
      ? "The slug of the credential's workspace."
      : `The ${param} path segment.`
    fields[param] = Schema.String.annotations({ description })
  }
  return Schema.Struct(fields)
}

/** What each status means for one operation, for its response descriptions. */
const statusDocs = <R>(group: Operation.Group<R>, op: Operation.AnyOperation<R>, body: boolean): ReadonlyMap<number, string> => {
  const codec = group.refusals
  const docs = new Map<number, Array<string>>()
  const add = (status: number, text: string) => docs.set(status, [...(docs.get(status) ?? []), text])
  for (const code of op.refuses) {
    const rule = codec.rules[code]
    if (rule !== undefined) add(rule.status, `\`${code}\`: ${rule.description}`)
  }
  add(200, `${op.title}: the encoded result`)
  add(401, "Missing, unknown or revoked credentials")
  add(403, `The credential has none of the scopes ${op.scopes.join(", ")}`)
  if (group.http.workspaceScoped) add(404, "No such workspace for this credential")
  add(429, "The workspace used its calls for this minute")
  if (op.metered) add(402, "The workspace's insight credits do not cover this call (credits_exhausted); nothing was debited")
  if (body) {
    add(413, "The body is over the limit")
    add(415, Routes.bodyOptional(op)
      ? "A body with content is not uncompressed JSON sent as application/json (an absent or empty body is read as {})"
      : "The body is not uncompressed JSON sent as application/json")
  }
  return new Map([...docs].map(([status, lines]) => [status, `${lines.join("; ")}.`]))
}

/**
 * An endpoint as this module builds it: every slot set with a type-erased schema, so every endpoint of
 * every domain has this one type.
 *
 * @since 0.1.0 @category models
 */
export type DerivedEndpoint = HttpApiEndpoint.HttpApiEndpoint<
  string,
  HttpMethod.HttpMethod,
  Schema.Schema.Type<Schema.Schema.AnyNoContext>,
  Schema.Schema.Type<Schema.Schema.AnyNoContext>,
  Schema.Schema.Type<Schema.Schema.AnyNoContext>,
  never,
  Schema.Schema.Type<Schema.Schema.AnyNoContext>,
  Schema.Schema.Type<Schema.Schema.AnyNoContext>
>

/**
 * A group as this module builds it: derived endpoints behind authentication.
 *
 * @since 0.1.0 @category models
 */
export type DerivedGroup = HttpApiGroup.HttpApiGroup<string, DerivedEndpoint, ApiError.Unauthorized, Authentication>

/** @since 0.1.0 @category models */
export type DerivedApi = HttpApi.HttpApi<"service", DerivedGroup, HttpApiError.HttpApiDecodeError>

// A payload that documents nothing (no request body, no query parameter).
const noPayload: Schema.Schema.AnyNoContext = Schema.make(AST.neverKeyword)
// URL parameters that document nothing and decode anything (the handler reads the query itself).
const noUrlParams: Schema.Schema.AnyNoContext = Schema.Struct({})

/**
 * The endpoint of one operation (path relative to the group's prefix).
 *
 * @since 0.1.0 @category constructors
 */
export const endpoint = <R>(
  group: Operation.Group<R>,
  op: Operation.AnyOperation<R>,
  /** A deprecated alias of the route: its endpoint name and path relative to the group's prefix. */
  alias?: { readonly name: string; readonly path: `/${string}` }
): DerivedEndpoint => {
  const codec = group.refusals
  const input = op.http.input
  const body = input.kind === "body"
  const bound = Object.values(Operation.pathFields(input))
  const query = body ? undefined : InputShape.parametersView(op.input, bound)
  // Handlers read the input themselves (`handleRaw` never decodes a payload), so a bodiless method's payload
  // only documents its query parameters. Elsewhere query fields are URL parameters.
  const queryAsPayload = !HttpMethod.hasBody(op.http.method)
  // A body route whose path names the resource documents the body without the path-bound fields.
  const bodyPayload = bound.length === 0 ? op.input : InputShape.parametersView(op.input, bound) ?? Schema.Struct({})
  const payload = body ? bodyPayload : queryAsPayload ? query ?? noPayload : noPayload
  const urlParams = !body && !queryAsPayload ? query ?? noUrlParams : noUrlParams
  let e: DerivedEndpoint = HttpApiEndpoint.make(op.http.method)(alias?.name ?? op.name, alias?.path ?? op.http.path)
    // URL parameters first: `setUrlParams` reads the context of the path schema set so far.
    .setUrlParams(urlParams)
    .setPath(pathSchema(group, op))
    .setPayload(payload)
    .addSuccess(op.output)
    .addError(ApiError.Forbidden)
    .addError(ApiError.RateLimitExceeded)
  for (const status of Refusal.statusesOf(codec, op.refuses)) e = e.addError(ApiError.refusal(codec, status))
  if (group.http.workspaceScoped) e = e.addError(ApiError.WorkspaceNotFound)
  if (op.metered) e = e.addError(ApiError.CreditsExhausted)
  if (body) e = e.addError(ApiError.PayloadTooLarge).addError(ApiError.UnsupportedMediaType)
  const responses = statusDocs(group, op, body)
  const structural = codec.rules[codec.invalidInputCode]?.status
  return e
    .annotate(OpenApi.Summary, op.title)
    .annotate(OpenApi.Description, op.description)
    .annotate(
      OpenApi.Transform,
      OpenApiDocument.operation({
        responses,
        statuses: new Set(responses.keys()),
        badRequestSchema: structural === 400 ? `${codec.identifier}Refusal400` : undefined,
        maxBodyBytes: body ? input.maxBodyBytes ?? Routes.defaultMaxBodyBytes : undefined,
        bodyOptional: Routes.bodyOptional(op)
      })
    )
}

/**
 * The `HttpApiGroup` of one operation group: its HTTP operations under `/api/v1` + the group's prefix,
 * behind authentication. A host can add it to its own `HttpApi`.
 *
 * @since 0.1.0 @category constructors
 */
export const group = <R>(group: Operation.Group<R>): DerivedGroup => {
  let g: HttpApiGroup.HttpApiGroup<string, DerivedEndpoint, never> = HttpApiGroup.make(group.name)
  for (const op of Operation.servedOn(group, "http")) {
    g = g.add(endpoint(group, op))
    for (const { alias, relative } of Routes.aliasesOf(group, op)) {
      g = g.add(
        endpoint(group, op, { name: `${op.name}__${alias.segment}`, path: relative })
          .annotate(OpenApi.Deprecated, true)
          .annotate(OpenApi.Summary, `${op.title} (deprecated path: use /${alias.canonical})`)
      )
    }
  }
  return g
    .middleware(Authentication)
    .prefix(`/api/v1${group.http.prefix}`)
    .annotate(OpenApi.Title, group.title)
    .annotate(OpenApi.Description, group.description)
}

/**
 * The HttpApi serving `groups` (groups with no HTTP operation are left out).
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(groups: ReadonlyArray<Operation.Group<R>>, options: Options = {}): DerivedApi => {
  let api: DerivedApi = HttpApi.make("service")
  for (const g of groups) {
    if (Operation.servedOn(g, "http").length > 0) api = api.add(group(g))
  }
  return annotate(api, groups, options)
}

/**
 * Annotates an API built from `groups`: title, version, description, servers and the document transform.
 *
 * @since 0.1.0 @category constructors
 */
export const annotate = <Groups extends HttpApiGroup.HttpApiGroup.Any, R>(
  api: HttpApi.HttpApi<"service", Groups, HttpApiError.HttpApiDecodeError>,
  groups: ReadonlyArray<Operation.Group<R>>,
  options: Options
): HttpApi.HttpApi<"service", Groups, HttpApiError.HttpApiDecodeError> =>
  api
    .annotate(OpenApi.Title, options.title ?? "service API")
    .annotate(OpenApi.Version, options.version ?? "0.1.0")
    .annotate(
      OpenApi.Description,
      options.description ??
        `Every operation's path carries the /api/v1 prefix. Groups: ${groups.map((g) => `${g.title} (/api/v1${g.http.prefix})`).join("; ")}.${
          (options.routes ?? []).length === 0
            ? ""
            : ` Also served: ${(options.routes ?? []).map((route) => `${route.method} ${route.path} (${route.summary})`).join("; ")}.`
        }`
    )
    .annotate(OpenApi.Servers, options.servers ?? [{ url: "/", description: "This host" }])
    .annotate(OpenApi.Transform, (spec) => OpenApiDocument.document(Mounts.document(options.routes ?? [])(spec)))
