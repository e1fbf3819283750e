/**
 * An HTTP route a domain declares beside its operations, for what an operation cannot be: a raw-body route that
 * verifies a signature over the exact bytes (the intake door), a public page with no credential (a shared
 * topic), a probe. It is described in plain values (method, path, body limit, responses with their schemas) so
 * the `http` transport mounts it and lists it in OpenAPI without knowing the domain, and the domain writes no
 * HTTP server code: its handler turns a {@link Request} into a {@link Response}.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * The body could not be read within the mount's limit: over it (the rest was never read), or cut short.
 *
 * @since 0.1.0 @category errors
 */
export class BodyError extends Data.TaggedError("BodyError")<{
  readonly reason: "too_large" | "unreadable"
  readonly limit: number
}> {}

/**
 * A request as the handler sees it.
 *
 * @since 0.1.0 @category models
 */
export interface Request {
  readonly method: string
  /** The path without the query string. */
  readonly path: string
  /** The query string without its `?` (empty when there is none): read it with `URLSearchParams`. */
  readonly search: string
  /** The values of the path's `:param` segments, decoded. */
  readonly params: Readonly<Record<string, string>>
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly remoteAddress: Option.Option<string>
  /** The request id the response carries in `x-request-id`. */
  readonly requestId: string
  /** The raw body, read to its end once asked for, refused past the mount's `body.maxBytes`. */
  readonly body: Effect.Effect<Uint8Array, BodyError>
}

/**
 * What a handler answers.
 *
 * @since 0.1.0 @category models
 */
export interface Response {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly body:
    | { readonly _tag: "Json"; readonly value: unknown }
    | { readonly _tag: "Text"; readonly text: string; readonly contentType: string }
    | {
      readonly _tag: "Node"
      /**
       * Hands the request, body unread, to a Node request listener that writes the whole answer itself: for a
       * well-kept library that speaks `node:http` (the OAuth server). `status` and `headers` are then unused.
       */
      readonly serve: (request: IncomingMessage, response: ServerResponse) => Promise<void>
    }
}

/** @since 0.1.0 @category constructors */
export const node = (serve: (request: IncomingMessage, response: ServerResponse) => Promise<void>): Response => ({
  status: 200,
  body: { _tag: "Node", serve }
})

/** @since 0.1.0 @category constructors */
export const json = (value: unknown, status = 200, headers?: Readonly<Record<string, string>>): Response => ({
  status,
  headers,
  body: { _tag: "Json", value }
})

/** @since 0.1.0 @category constructors */
export const text = (text: string, contentType: string, status = 200, headers?: Readonly<Record<string, string>>): Response => ({
  status,
  headers,
  body: { _tag: "Text", text, contentType }
})

/**
 * One answer a route may give, for OpenAPI.
 *
 * @since 0.1.0 @category models
 */
export interface Answer {
  readonly status: number
  readonly description: string
  /** Default `application/json`. */
  readonly contentType?: string | undefined
  readonly schema?: Schema.Schema.AnyNoContext | undefined
  /** Response headers worth naming (`Retry-After`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * How a route is documented: everything but its handler. A host documents a route it serves itself (the MCP
 * endpoint) with this alone.
 *
 * @since 0.1.0 @category models
 */
export interface Description {
  /** The OpenAPI operation id, e.g. `door_receive`. */
  readonly name: string
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
  /** The full path from the host's root with `:param` segments, e.g. `/api/v1/door/:source_id`. */
  readonly path: `/${string}`
  readonly summary: string
  readonly description: string
  /** The OpenAPI tag it is listed under. */
  readonly tag: string
  /** A description of each path parameter. */
  readonly params?: Readonly<Record<string, string>> | undefined
  /** The body the route reads: its limit, the content types it takes and what it is. */
  readonly body?: {
    readonly maxBytes: number
    readonly contentTypes: ReadonlyArray<string>
    readonly description: string
  } | undefined
  readonly answers: ReadonlyArray<Answer>
  /** No credential is read: the route is public (it verifies its own signature or token, if any). */
  readonly public: boolean
  /**
   * Left out of OpenAPI: a path prefix (`/oauth/*`) whose endpoints a standard describes elsewhere (the OAuth
   * server's are in its RFC 8414 metadata).
   */
  readonly undocumented?: boolean | undefined
}

/**
 * A declared route.
 *
 * @since 0.1.0 @category models
 */
export interface Mount<R> extends Description {
  readonly handle: (request: Request) => Effect.Effect<Response, never, R>
}

/**
 * Declares a route.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(mount: Mount<R>): Mount<R> => mount

/**
 * The `:param` names of a path.
 *
 * @since 0.1.0 @category accessors
 */
export const paramsOf = (path: string): ReadonlyArray<string> =>
  path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1))
