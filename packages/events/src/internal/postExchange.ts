/**
 * One POST over `node:http` / `node:https` to an address the guard validated, read no further than needed.
 * Not API: `WebhookPost` is the public face.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import * as Effect from "effect/Effect"
import type { Target } from "../AddressGuard.js"

/** A receiver's answer: its status, headers and at most `bodyCap` bytes of its body. */
export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  /** The body went on past `bodyCap` bytes; the rest was never read. */
  readonly truncated: boolean
}

/** The request failed before an answer: at the TLS layer or anywhere else on the way. */
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
 * POSTs `body` to the first validated address of `target`, with the URL's host as `Host` and, over TLS, as
 * server name (so the certificate is checked against the name, not the address). No agent is shared and no
 * redirect is followed (Node never follows them). With `bodyCap` 0 the answer is complete at its status line;
 * otherwise at most `bodyCap` bytes are read. Either way the socket is destroyed then, and on interruption.
 */
export const post = (
  target: Target,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  bodyCap: number
): Effect.Effect<Answer, Failure> =>
  Effect.async<Answer, Failure>((resume) => {
    const { url, hostname } = target
    const [{ address, family }] = target.addresses
    const tls = url.protocol === "https:"
    const request = (tls ? httpsRequest : httpRequest)({
      host: address,
      family,
      port: url.port === "" ? (tls ? 443 : 80) : Number(url.port),
      method: "POST",
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, "content-length": String(body.byteLength) },
      agent: false,
      // SNI carries names only; for an IP literal the certificate is checked against the address.
      ...(tls && isIP(hostname) === 0 ? { servername: hostname } : {})
    })
    let settled = false
    const settle = (outcome: Effect.Effect<Answer, Failure>): void => {
      if (settled) return
      settled = true
      request.destroy()
      resume(outcome)
    }
    const failed = (error: Error): void => {
      const detail = codeOf(error)
      settle(Effect.fail({ kind: isTlsCode(detail) ? "tls" : "connection", detail }))
    }
    request.on("error", failed)
    request.on("response", (response) => {
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
    request.end(body)
    return Effect.sync(() => {
      settled = true
      request.destroy()
    })
  })
