/**
 * Plain `node:http` requests against a listening server, for the cases a typed client cannot send
 * (missing or wrong content types, compressed or malformed bodies, huge chunked bodies). Each request uses
 * its own connection (`agent: false`), so no test depends on keep-alive reuse.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import { request as httpRequest } from "node:http"

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
  /** The parsed body, or `undefined` when it is not JSON. */
  readonly json: unknown
}

export interface Request {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
}

/** The port of the server under test. */
export const port = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const address = server.address
  if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  return address.port
})

const parse = (text: string): unknown => {
  try {
    const value: unknown = JSON.parse(text)
    return value
  } catch {
    return undefined
  }
}

/** Sends one request and reads the whole answer. */
export const send = (portNumber: number, options: Request): Effect.Effect<Answer> =>
  Effect.async<Answer>((resume) => {
    const req = httpRequest(
      { host: "127.0.0.1", port: portNumber, method: options.method, path: options.path, headers: options.headers, agent: false },
      (res) => {
        const parts: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => parts.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8")
          resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) }))
        })
      }
    )
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(options.body)
  })

/** Reads a field of a JSON object answer. */
export const field = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let current = value
  for (const key of path) current = Predicate.isRecord(current) ? current[key] : undefined
  return current
}

export interface Streamed {
  readonly status: number
  readonly text: string
  /** Bytes written when the answer's head arrived. */
  readonly sentWhenAnswered: number
  /** Whether the client had written the whole body when the answer arrived. */
  readonly finishedSending: boolean
}

/**
 * Streams a body of `totalBytes` in 64 KiB chunks (chunked transfer encoding unless `declareLength`),
 * respecting backpressure, and stops writing as soon as the answer arrives.
 */
export const stream = (
  portNumber: number,
  options: {
    readonly path: string
    readonly headers: Readonly<Record<string, string>>
    readonly totalBytes: number
    readonly declareLength?: boolean
  }
): Effect.Effect<Streamed> =>
  Effect.async<Streamed>((resume) => {
    let sent = 0
    let finished = false
    let answered = false
    const headers: Record<string, string> = { ...options.headers }
    if (options.declareLength === true) headers["content-length"] = String(options.totalBytes)
    const req = httpRequest({ host: "127.0.0.1", port: portNumber, method: "POST", path: options.path, headers, agent: false })
    req.on("response", (res) => {
      answered = true
      const sentWhenAnswered = sent
      const finishedSending = finished
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () =>
        resume(Effect.succeed({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8"), sentWhenAnswered, finishedSending })))
      res.on("error", () =>
        resume(Effect.succeed({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8"), sentWhenAnswered, finishedSending })))
    })
    // Writing after the server answered and closed fails with EPIPE or ECONNRESET: expected here.
    req.on("error", (error) => {
      if (!answered) resume(Effect.die(error))
    })
    const chunk = Buffer.alloc(64 * 1024, "a")
    const pump = () => {
      while (!answered && sent < options.totalBytes) {
        const size = Math.min(chunk.length, options.totalBytes - sent)
        sent += size
        if (!req.write(size === chunk.length ? chunk : chunk.subarray(0, size))) {
          req.once("drain", pump)
          return
        }
      }
      if (!answered) {
        finished = true
        req.end()
      }
    }
    req.write(`{"text":"`)
    pump()
  })
