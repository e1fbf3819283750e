/**
 * REST calls as a user's client makes them, for the server's end-to-end tests.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import type * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { request as httpRequest } from "node:http"
import * as Server from "@service/server/Server"

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
  readonly text: string
}

/**
 * One REST call on a connection of its own (`agent: false`), read to the end: no call depends on reusing a
 * kept-alive socket, whose reuse races the server closing it when the machine is slow.
 */
export const rest = (port: number, method: string, path: string, headers: Readonly<Record<string, string>> = {}, body?: string) =>
  Effect.async<Answer>((resume) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString("utf8") })))
    })
    req.on("error", (error) => resume(Effect.die(error)))
    req.end(body)
  })

/** The JSON of a body, or undefined when it is not JSON. */
export const jsonOf = (text: string): unknown => {
  try {
    const value: unknown = JSON.parse(text)
    return value
  } catch {
    return undefined
  }
}

/** Where the server under test listens. */
export class Running extends Context.Tag("Running")<Running, { readonly port: number; readonly baseUrl: string }>() {}

/** The listening address of the file's server, for REST and MCP clients. */
export const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { port: address.port, baseUrl: `http://127.0.0.1:${address.port}` }
  })
)

/**
 * The file's server (`npm start`'s layers) listening on a free port over every domain on `target`, after
 * `prepared` (the file's own records, built over the domains), with `Running` for its clients.
 */
export const serverOn = <A, E, R>(target: TestDatabase.TestDatabaseTarget, prepared: Layer.Layer<A, E, R>) =>
  running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(target.layer, Crypto.layerTest)),
    Layer.orDie
  )
