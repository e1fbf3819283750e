/**
 * The base URL of the server a test file runs (the `HttpServer` its layer started on a free port).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export class Target extends Context.Tag("Target")<Target, { readonly baseUrl: string }>() {}

export const target = Layer.effect(
  Target,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}` }
  })
)
