/**
 * The HTTP request that calls a declared operation, as every client of the API builds it (the CLI, `@service/client`):
 * the group's path with its parameters filled from the input (URL-encoded) or from the connection (`:workspace`), the
 * rest of the input as a JSON body (`body` bindings) or as query parameters (arrays repeated, other values as text),
 * and the credential as `x-api-key` or `Authorization: Bearer`.
 *
 * @since 0.1.0
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Operation from "@service/core/Operation"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"

/**
 * Where and as whom: the server's address without `/api/v1` (trailing slashes ignored), the credential, and the
 * values of the group prefix's parameters (`workspace`).
 *
 * @since 0.1.0 @category models
 */
export interface Connection {
  readonly baseUrl: string
  readonly credential: { readonly kind: "api_key" | "bearer"; readonly secret: Redacted.Redacted<string> }
  readonly pathParams: Readonly<Record<string, string | undefined>>
}

/**
 * Why no request can be built: a path parameter has no value, or its value is `.` or `..` (a URL drops such
 * segments, so the server would see another path).
 *
 * @since 0.1.0 @category errors
 */
export type Unbuildable = Data.TaggedEnum<{
  MissingPathParam: { readonly param: string }
  UnsendablePathValue: { readonly field: string }
}>

/** @since 0.1.0 @category errors */
export const Unbuildable = Data.taggedEnum<Unbuildable>()

const scalarText = (value: unknown): string =>
  Predicate.isString(value) ? value : Predicate.isNumber(value) || Predicate.isBoolean(value) ? String(value) : JSON.stringify(value)

/**
 * The request for an operation's wire input.
 *
 * @since 0.1.0 @category constructors
 */
export const make = (
  connection: Connection,
  group: { readonly http: { readonly prefix: string } },
  operation: { readonly http: Operation.HttpBinding },
  input: Readonly<Record<string, unknown>>
): Either.Either<HttpClientRequest.HttpClientRequest, Unbuildable> => {
  const binding = operation.http
  const bound = Operation.pathFields(binding.input)
  const rest: Record<string, unknown> = { ...input }
  let problem: Unbuildable | undefined
  const path = Operation.httpPath(group, operation).replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, param: string) => {
    const field = bound[param]
    const value = field === undefined ? connection.pathParams[param] : input[field]
    if (field !== undefined) delete rest[field]
    if (value === undefined || value === null) {
      problem ??= Unbuildable.MissingPathParam({ param })
      return ""
    }
    const text = scalarText(value)
    if (text === "." || text === "..") {
      problem ??= Unbuildable.UnsendablePathValue({ field: field ?? param })
      return ""
    }
    return encodeURIComponent(text)
  })
  if (problem !== undefined) return Either.left(problem)
  let req = HttpClientRequest.make(binding.method)(`${connection.baseUrl.replace(/\/+$/, "")}${path}`).pipe(
    HttpClientRequest.acceptJson,
    connection.credential.kind === "bearer"
      ? HttpClientRequest.bearerToken(Redacted.value(connection.credential.secret))
      : HttpClientRequest.setHeader("x-api-key", Redacted.value(connection.credential.secret))
  )
  if (binding.input.kind === "body") return Either.right(HttpClientRequest.bodyUnsafeJson(req, rest))
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) req = HttpClientRequest.appendUrlParam(req, key, scalarText(item))
  }
  return Either.right(req)
}
