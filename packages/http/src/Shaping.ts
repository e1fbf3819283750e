/**
 * API-level middleware: request ids, the 256 KiB body limit, and the shape of refusals the router produces
 * itself (unknown path, wrong verb, undecodable input, unexpected defects). Nothing leaves as an untyped 500.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { toBlock } from "@service/market-contract/MarketError"
import * as Operations from "@service/market-contract/Operations"
import { refusalFromIssues } from "@service/market-contract/Validation"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Api } from "./Api.js"
import { basePath } from "./MarketDataApi.js"
import * as RequestId from "./RequestId.js"

/** @since 0.1.0 @category constants */
export const maxBodyBytes = 256 * 1024

interface Route {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.split("/").map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\~]/g, "\\$&"))).join("/")}/?$`)

/** Every route of the API, read once from the API definition. */
const routes: ReadonlyArray<Route> = (() => {
  const out: Array<Route> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      out.push({ name: endpoint.name, method: endpoint.method, path: endpoint.path, pattern: toPattern(endpoint.path) })
    }
  })
  return out
})()

const underMarketData = /^\/api\/v1\/workspaces\/[^/]+\/market-data(\/|$)/

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers })

const notFoundBody = (method: string, pathname: string, requestId: string) => {
  const slug = /^\/api\/v1\/workspaces\/([^/]+)\//.exec(pathname)?.[1] ?? "<slug>"
  const base = basePath.replace(":workspace", slug)
  return {
    statusCode: 404,
    code: "NOT_FOUND",
    message: `No market-data operation at ${method} ${pathname}.`,
    request_id: requestId,
    endpoint: { method, path: pathname },
    documentation_url: `${base}/capabilities`,
    operations: Operations.all.map((op) => ({ operation: op.name, method: op.method, path: `${base}${op.path}` }))
  }
}

const pathnameOf = (url: string): string => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

const shape = (app: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = yield* RequestId.get
    const declared = Number(request.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      return json(413, {
        code: "PAYLOAD_TOO_LARGE",
        message: `Request bodies are limited to ${maxBodyBytes} bytes.`,
        request_id: requestId
      })
    }
    return yield* app.pipe(
      Effect.catchAllCause((cause) =>
        Effect.gen(function*() {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) {
            // The router's failures are untyped at this level; narrow them one by one.
            const error: unknown = failure.value
            const pathname = pathnameOf(request.url)
            if (error instanceof HttpServerError.RouteNotFound) {
              const sameResource = routes.filter((r) => r.pattern.test(pathname))
              if (sameResource.length > 0) {
                const allowed = [...new Set(sameResource.map((r) => r.method))]
                return json(405, {
                  code: "METHOD_NOT_ALLOWED",
                  message: `${request.method} is not allowed on ${pathname}.`,
                  request_id: requestId,
                  allowed_methods: allowed
                }, { allow: allowed.join(", ") })
              }
              if (underMarketData.test(pathname)) return json(404, notFoundBody(request.method, pathname, requestId))
              return json(404, { code: "NOT_FOUND", message: `Nothing at ${pathname}.`, request_id: requestId })
            }
            if (error instanceof HttpApiError.HttpApiDecodeError) {
              const route = routes.find((r) => r.method === request.method && r.pattern.test(pathname))
              const op = Operations.all.find((o) => o.name === route?.name)
              const issues = error.issues.map((issue) => ({ path: issue.path, message: issue.message, tag: issue._tag }))
              const refusal = refusalFromIssues(
                (op ?? Operations.searchSuppliers).input.ast,
                issues
              )
              return json(400, {
                statusCode: 400,
                code: "VALIDATION_FAILED",
                message: refusal.why,
                request_id: requestId,
                ...(underMarketData.test(pathname) ? { market_data: toBlock(refusal) } : {})
              })
            }
            return yield* Effect.failCause(cause)
          }
          if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
          yield* Effect.logError("Unexpected defect while serving a request", cause)
          return json(500, {
            code: "INTERNAL",
            message: "An unexpected error occurred. Quote the request id when reporting it.",
            request_id: requestId
          })
        })
      )
    )
  })

/**
 * The API-level middleware layer.
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<never> = HttpApiBuilder.middleware((app) => RequestId.withRequestId(shape(app)))
