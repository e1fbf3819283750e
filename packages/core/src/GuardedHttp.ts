/**
 * Every request the service makes to an address someone else chose (a webhook receiver, an OAuth client's metadata
 * document) goes through here: the {@link AddressGuard} resolves and validates the URL, and the request connects to
 * one of exactly the addresses it validated, with the URL's host name as `Host` and TLS server name, so a DNS answer
 * that changes between check and connect (rebinding) cannot steer it elsewhere. No agent is shared, no redirect is
 * followed, the answer is read no further than a cap, and nothing is connected to before the check passed.
 *
 * {@link exchange} is the Effect; {@link fetchThrough} the same as a `fetch` for libraries that take one (the OAuth
 * server's).
 *
 * @since 0.1.0
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Runtime from "effect/Runtime"
import type { AddressGuard, Target } from "./AddressGuard.js"

/**
 * A receiver's answer: its status, headers and at most `bodyCap` bytes of its body.
 *
 * @since 0.1.0 @category models
 */
export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  /** The body went on past `bodyCap` bytes; the rest was never read. */
  readonly truncated: boolean
}

/**
 * The request failed before an answer: at the TLS layer or anywhere else on the way.
 *
 * @since 0.1.0 @category models
 */
export interface Failure {
  readonly kind: "connection" | "tls"
  /** The Node error code, e.g. `ECONNREFUSED` or `ERR_TLS_CERT_ALTNAME_INVALID`. */
  readonly detail: string
}

const codeOf = (error: Error): string =>
  "code" in error && typeof error.code === "string" ? error.code : error.name

// OpenSSL's certificate verdicts (`CERT_HAS_EXPIRED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, ...) and Node's own TLS and
// SSL codes. A reset during the handshake stays a connection failure: nothing says the certificate is wrong.
const isTlsCode = (code: string): boolean =>
  code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_") || code === "EPROTO" || /CERT|SIGNATURE|ISSUER/.test(code)

/**
 * What to send: the method, headers and body (none for `GET`), and how many bytes of the answer to read.
 *
 * @since 0.1.0 @category models
 */
export interface Request {
  readonly method: "GET" | "POST"
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Uint8Array | undefined
  /** 0: the answer is complete at its status line. */
  readonly bodyCap: number
}

/**
 * Sends `request` to the first validated address of `target`, with the URL's host as `Host` and, over TLS, as
 * server name (so the certificate is checked against the name, not the address). No agent is shared and no
 * redirect is followed (Node never follows them). With `bodyCap` 0 the answer is complete at its status line;
 * otherwise at most `bodyCap` bytes are read. Either way the socket is destroyed then, and on interruption.
 *
 * @since 0.1.0 @category requests
 */
export const exchange = (target: Target, request: Request): Effect.Effect<Answer, Failure> =>
  Effect.async<Answer, Failure>((resume) => {
    const { url, hostname } = target
    const [{ address, family }] = target.addresses
    const tls = url.protocol === "https:"
    const { method, headers, body, bodyCap } = request
    const outgoing = (tls ? httpsRequest : httpRequest)({
      host: address,
      family,
      port: url.port === "" ? (tls ? 443 : 80) : Number(url.port),
      method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, ...(body === undefined ? {} : { "content-length": String(body.byteLength) }) },
      agent: false,
      // SNI carries names only; for an IP literal the certificate is checked against the address.
      ...(tls && isIP(hostname) === 0 ? { servername: hostname } : {})
    })
    let settled = false
    const settle = (outcome: Effect.Effect<Answer, Failure>): void => {
      if (settled) return
      settled = true
      outgoing.destroy()
      resume(outcome)
    }
    const failed = (error: Error): void => {
      const detail = codeOf(error)
      settle(Effect.fail({ kind: isTlsCode(detail) ? "tls" : "connection", detail }))
    }
    outgoing.on("error", failed)
    outgoing.on("response", (response) => {
      const chunks: Array<Buffer> = []
      let size = 0
      const answer = (truncated: boolean) =>
        settle(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks), truncated }))
      // Destroying the request may end the response with an error after it settled; it is of no interest then.
      response.on("error", failed)
      if (bodyCap === 0) return answer(false)
      response.on("data", (chunk: Buffer) => {
        const room = bodyCap - size
        chunks.push(chunk.subarray(0, room))
        size += Math.min(room, chunk.length)
        if (chunk.length > room) answer(true)
      })
      response.on("end", () => answer(false))
    })
    outgoing.end(body)
    return Effect.sync(() => {
      settled = true
      outgoing.destroy()
    })
  })

/**
 * Options of {@link fetchThrough}.
 *
 * @since 0.1.0 @category models
 */
export interface FetchOptions {
  /** The largest answer body read; a longer one fails the fetch. */
  readonly bodyCap: number
  /** The whole exchange's deadline, resolution included (a caller's `signal` may end it sooner). */
  readonly timeout: Duration.DurationInput
}

const fetchFailed = (message: string, cause?: unknown) => new TypeError(`fetch failed: ${message}`, { cause })

/**
 * A `fetch` whose every request goes through `guard` and {@link exchange}: `GET` and `POST` only, the URL checked
 * before anything is connected to (a refused URL fails like a network error, with the guard's reason as its cause),
 * at most `bodyCap` bytes read, the caller's `AbortSignal` honoured. For libraries that fetch addresses their callers
 * choose (the OAuth server's client metadata documents, JWKS and logout URIs).
 *
 * @since 0.1.0 @category requests
 */
export const fetchThrough = (
  guard: AddressGuard["Type"],
  options: FetchOptions
): (input: string | URL | globalThis.Request, init?: RequestInit) => Promise<Response> => {
  const run = Runtime.runPromise(Runtime.defaultRuntime)
  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
    const method = (init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET")).toUpperCase()
    if (method !== "GET" && method !== "POST") throw fetchFailed(`${method} is not sent to outside addresses`)
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value))
    const body = init?.body === undefined || init.body === null
      ? undefined
      : typeof init.body === "string"
      ? new TextEncoder().encode(init.body)
      : init.body instanceof Uint8Array
      ? init.body
      : undefined
    if (init?.body !== undefined && init.body !== null && body === undefined) throw fetchFailed("only text and byte bodies are sent")
    const cap = options.bodyCap
    const answered = await run(
      guard.check(url).pipe(
        Effect.mapError((rejected) => fetchFailed(rejected.message, rejected)),
        Effect.flatMap((target) =>
          exchange(target, { method, headers, body, bodyCap: cap }).pipe(
            Effect.mapError((failure) => fetchFailed(`${failure.kind} (${failure.detail})`, failure))
          )
        ),
        Effect.timeoutFail({ duration: options.timeout, onTimeout: () => fetchFailed("timed out") }),
        Effect.either
      ),
      init?.signal === undefined || init.signal === null ? undefined : { signal: init.signal }
    ).catch((error: unknown) => Either.left(fetchFailed("aborted", error)))
    if (Either.isLeft(answered)) throw answered.left
    const answer = answered.right
    if (answer.truncated) throw fetchFailed(`the answer is longer than ${cap} bytes`)
    const responseHeaders = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue
      for (const one of Array.isArray(value) ? value : [value]) responseHeaders.append(name, one)
    }
    // A null-body status (204, 304) takes no body, even an empty one.
    const nullBody = answer.status === 204 || answer.status === 205 || answer.status === 304
    return new Response(nullBody ? null : new Uint8Array(answer.body), { status: answer.status, headers: responseHeaders })
  }
}
