/**
 * A webhook receiver on a loopback `node:http` server, one per test: it records every request it reads in full
 * and answers with the test's reply. Closed, with every open connection, when the test's scope ends.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { Webhook } from "standardwebhooks"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

export type Reply = (received: Received, response: ServerResponse) => void

export interface Receiver {
  readonly port: number
  /** Every request read so far, in order. */
  readonly received: Queue.Dequeue<Received>
}

/** Answers `status` with optional headers and body. */
export const answer = (status: number, headers: Readonly<Record<string, string>> = {}, body = ""): Reply => (_, response) => {
  response.writeHead(status, headers).end(body)
}

/** Never answers: the request stays open until the sender gives up. */
export const silent: Reply = () => {}

/**
 * Answers `status`, writes `prefix`, then writes padding for as long as the connection stays open;
 * `onClose` runs once the sender hangs up (so a test can see that it did).
 */
export const endless = (status: number, prefix: string, onClose: () => void): Reply => (_, response) => {
  const chunk = Buffer.alloc(64 * 1024, 0x20)
  let open = true
  response.on("close", () => {
    open = false
    onClose()
  })
  response.writeHead(status, { "content-type": "application/json" })
  response.write(prefix)
  const pump = (): void => {
    while (open && response.write(chunk)) {
      // Keep writing until the socket pushes back.
    }
    if (open) response.once("drain", pump)
  }
  pump()
}

/** Echoes the challenge of a verification request, or answers `override` instead when given. */
export const echo = (override?: string): Reply => (received, response) => {
  const parsed: unknown = JSON.parse(received.body.toString("utf8"))
  const challenge = typeof parsed === "object" && parsed !== null && "challenge" in parsed ? parsed.challenge : null
  response.writeHead(200, { "content-type": "application/json" }).end(override ?? JSON.stringify({ challenge }))
}

const listen = (reply: Reply, received: Queue.Queue<Received>): Effect.Effect<Server> =>
  Effect.async<Server>((resume) => {
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const entry = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) }
        Queue.unsafeOffer(received, entry)
        reply(entry, response)
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  })

const close = (server: Server): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    server.closeAllConnections()
    server.close(() => resume(Effect.void))
  })

/** Starts a receiver answering every request with `reply`. */
export const start = (reply: Reply): Effect.Effect<Receiver, never, Scope.Scope> =>
  Effect.gen(function*() {
    const received = yield* Queue.unbounded<Received>()
    const server = yield* Effect.acquireRelease(listen(reply, received), close)
    const address = server.address()
    if (address === null || typeof address === "string") return yield* Effect.dieMessage("the receiver has no port")
    return { port: address.port, received }
  })

/** A port nothing listens on (a server was there a moment ago). */
export const closedPort: Effect.Effect<number> = Effect.scoped(
  Effect.map(start(silent), (receiver) => receiver.port)
)

/** Whether the Standard Webhooks reference package accepts the request with `secret`. */
export const verifies = (secret: string, received: Received): boolean => {
  const header = (name: string): string => {
    const value = received.headers[name]
    return typeof value === "string" ? value : ""
  }
  try {
    new Webhook(secret).verify(received.body.toString("utf8"), {
      "webhook-id": header("webhook-id"),
      "webhook-timestamp": header("webhook-timestamp"),
      "webhook-signature": header("webhook-signature")
    })
    return true
  } catch {
    return false
  }
}
