/**
 * The HTTP request that calls an operation with a model-facing input, built from its binding alone: path
 * parameters from the fields they carry, the rest as the JSON body or as query parameters; and the curl command
 * line that sends it. What a start-up banner prints ("Try: ..."), what documentation can show, and what a test
 * client sends, for any domain.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import * as Routes from "./Routes.js"

/** @since 0.1.0 @category models */
export interface Target {
  /** Where the API is, without `/api/v1` (empty for a path alone). */
  readonly baseUrl: string
  readonly apiKey: string
  /** The value of the `:workspace` path segment. */
  readonly workspace: string
}

/** @since 0.1.0 @category models */
export interface Request {
  readonly method: Operation.HttpMethod
  /** The base URL, the path and the query string. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body of a body binding. */
  readonly body: string | undefined
}

const quote = (word: string): string => (/^[A-Za-z0-9_./:=,@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)

/**
 * A query-string value as a user types it: lists as repeated parameters.
 *
 * @since 0.1.0 @category formatting
 */
export const queryValues = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value)
    ? value.flatMap(queryValues)
    : typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? [String(value)]
    : [JSON.stringify(value)]

/**
 * The request for `op` of `group` with `input`.
 *
 * @since 0.1.0 @category requests
 */
export const request = <R>(
  target: Target,
  group: Operation.Group<R>,
  op: Operation.AnyOperation<R>,
  input: Readonly<Record<string, unknown>>
): Request => {
  const binding = op.http.input
  const bound = Operation.pathFields(binding)
  const values: Record<string, string> = { workspace: target.workspace }
  for (const [param, field] of Object.entries(bound)) values[param] = queryValues(input[field]).join(",")
  const path = `${target.baseUrl.replace(/\/+$/, "")}${Routes.fill(Operation.httpPath(group, op), values)}`
  const rest = Object.entries(input).filter(([field]) => !Object.values(bound).includes(field))
  const key = { "x-api-key": target.apiKey }
  if (binding.kind === "body") {
    return { method: op.http.method, url: path, headers: { ...key, "content-type": "application/json" }, body: JSON.stringify(Object.fromEntries(rest)) }
  }
  const query = new URLSearchParams()
  for (const [field, value] of rest) for (const item of queryValues(value)) query.append(field, item)
  const search = query.toString()
  return { method: op.http.method, url: search.length > 0 ? `${path}?${search}` : path, headers: key, body: undefined }
}

/**
 * The curl command line for `op` of `group` with `input`.
 *
 * @since 0.1.0 @category formatting
 */
export const commandLine = <R>(
  target: Target,
  group: Operation.Group<R>,
  op: Operation.AnyOperation<R>,
  input: Readonly<Record<string, unknown>>
): string => {
  const sent = request(target, group, op, input)
  return [
    "curl -s",
    ...(sent.method === "GET" ? [] : [`-X ${sent.method}`]),
    quote(sent.url),
    ...Object.entries(sent.headers).map(([name, value]) => `-H ${quote(`${name}: ${value}`)}`),
    ...(sent.body === undefined ? [] : [`-d ${quote(sent.body)}`])
  ].join(" ")
}
