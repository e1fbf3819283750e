import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { assert, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Listener from "../src/Listener.js"

const portOf = Effect.gen(function*() {
  const address = (yield* HttpServer.HttpServer).address
  if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  return address.port
})

const answer = (port: number, path: string) =>
  Effect.promise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`)
    const body: unknown = await response.json()
    return { status: response.status, retryAfter: response.headers.get("retry-after"), body }
  })

it.scoped("while the application is built, API requests get a prompt 503 STARTING with Retry-After; then the application answers", () =>
  Effect.gen(function*() {
    const app = yield* Deferred.make<Listener.App>()
    const context = yield* Layer.build(
      Listener.layer({ port: 0, host: "127.0.0.1", app, starting: Effect.succeed(Listener.starting("loading the program")) })
    )
    const port = yield* Effect.provide(portOf, context)
    // Nothing completes the application yet: the answer cannot be waiting for it.
    const starting = yield* answer(port, "/api/v1/workspaces/demo/market-data/capabilities")
    assert.strictEqual(starting.status, 503)
    assert.strictEqual(starting.retryAfter, String(Listener.startingRetryAfterSeconds))
    assert.deepInclude(starting.body, { statusCode: 503, code: "STARTING", retry_after_seconds: Listener.startingRetryAfterSeconds })
    assert.strictEqual((yield* answer(port, "/health")).status, 200)
    assert.strictEqual((yield* answer(port, "/ready")).status, 503)
    yield* Deferred.succeed(app, Effect.succeed(HttpServerResponse.unsafeJson({ served: true })))
    const served = yield* answer(port, "/api/v1/workspaces/demo/market-data/capabilities")
    assert.deepStrictEqual([served.status, served.body], [200, { served: true }])
  }))
