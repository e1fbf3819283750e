/**
 * The stdio server answers the opening handshake before the application's services are open, and holds every
 * other request until they are (or answers it with the reason they could not open). The services wait on a
 * Deferred the test completes, so no step races a timer; both official client generations (the 2.x one in both
 * eras) talk to `McpStdio.serveOver` over in-memory streams.
 */
import { Client as ClientV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { assert, describe, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Fixture from "@service/conformance/Fixture"
import { Crypto } from "@service/core/Crypto"
import * as Operation from "@service/core/Operation"
import * as McpHandler from "@service/mcp/McpHandler"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { PassThrough } from "node:stream"
import * as McpStdio from "../src/McpStdio.js"
import { StreamTransport } from "./support/StreamTransport.js"

const KEY = "svc_key_stdio_start_0123456789abcdef"

// `ping` is a 2025-era method: the 2026-07-28 era has none to send.
const clients = [
  { name: "1.x", pings: true, make: () => new ClientV1({ name: "stdio-start-v1", version: "0.0.0" }) },
  {
    name: "2.x, 2025 era",
    pings: true,
    make: () => new ClientV2({ name: "stdio-start-v2", version: "0.0.0" }, { versionNegotiation: { mode: "legacy" } })
  },
  {
    name: "2.x, 2026-07-28 (server/discover)",
    pings: false,
    make: () => new ClientV2({ name: "stdio-start-v2", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
  }
]

// The tools the key's one scope (market_data:read) is shown.
const readerTools = App.app.groups.flatMap((group) =>
  Operation.servedOn(group, "mcp")
    .filter((op) => op.scopes.includes("market_data:read"))
    .map((op) => Operation.toolName("service", group.mcp.namespace, op.name))
).sort()

// One database per engine for the whole file, with KEY registered in workspace `demo` (as SERVICE_BOOTSTRAP_DEMO=1
// does, without the demo corpus load); each test's server opens it as its services, once the test says so.
const appLayer = (target: TestDatabase.TestDatabaseTarget) =>
  Layer.provideMerge(
    Layer.effectDiscard(McpStdio.bootstrapDemo(Redacted.make(KEY))),
    App.app.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, Fixture.appOptions)
  ).pipe(Layer.provide(Fixture.config), Layer.orDie)

type AppServices = Layer.Layer.Success<ReturnType<typeof appLayer>>

/**
 * The file's services, opened only once `release` completes, with `apiKey` as SERVICE_API_KEY (a layer's
 * configuration is what the server then reads, as under `app.layerFromConfig()`).
 */
const heldUntil = (release: Deferred.Deferred<void>, apiKey: string) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const services = yield* Effect.context<AppServices>()
      yield* Deferred.await(release)
      return Layer.merge(
        Layer.succeedContext(services),
        Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_API_KEY", apiKey], ["SERVICE_RATE_LIMIT_PER_MINUTE", "1000000"]])))
      )
    })
  )

/** The server on a pair of streams, forked; its stdin ends when the client closes. */
const serving = <A, E, R>(services: Layer.Layer<A, E, R>) =>
  Effect.gen(function*() {
    const toServer = new PassThrough()
    const fromServer = new PassThrough()
    const fiber = yield* Effect.fork(McpStdio.serveOver(App.app, services, { stdin: toServer, stdout: fromServer }))
    return { fiber, transport: new StreamTransport(fromServer, toServer) }
  })

const StartFailed = Schema.Struct({ code: Schema.Literal(McpHandler.serverStartFailed), message: Schema.String })

/** The JSON-RPC error a request was answered with (both generations carry `code` and `message`). */
const startFailure = (request: Promise<unknown>) =>
  Effect.promise(() => request.then((answer) => ({ answered: answer }), (error: unknown) => ({ refused: error }))).pipe(
    Effect.map((outcome) => {
      assert.isTrue("refused" in outcome, `expected a refusal, got ${JSON.stringify(outcome)}`)
      return "refused" in outcome ? Schema.decodeUnknownSync(StartFailed)(outcome.refused) : undefined
    })
  )

for (const target of TestDatabase.targets()) {
  layer(appLayer(target), { timeout: "120 seconds" })(`McpStdio on ${target.name}`, (it) => {
    for (const { make, name, pings } of clients) {
      describe(`client ${name}`, () => {
        it.effect("answers the handshake while the services open, then the held tools/list in full and a tool call", () =>
          Effect.gen(function*() {
            const release = yield* Deferred.make<void>()
            const { fiber, transport } = yield* serving(heldUntil(release, KEY))
            const client = make()

            // Answered while the services wait on `release`.
            yield* Effect.promise(() => client.connect(transport))
            assert.strictEqual(client.getServerVersion()?.name, "service")
            assert.include(client.getInstructions() ?? "", "service_market_capabilities")

            let listed = false
            const listing = client.listTools().then((answer) => {
              listed = true
              return answer
            })
            // A ping sent after the tools/list is answered first: the tools/list is held, not answered empty.
            if (pings) {
              yield* Effect.promise(() => client.ping())
              assert.isFalse(listed, "tools/list was answered before the services opened")
            }

            yield* Deferred.succeed(release, undefined)
            const { tools } = yield* Effect.promise(() => listing)
            assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), readerTools)
            const called = yield* Effect.promise((): Promise<unknown> => client.callTool({ name: "service_market_capabilities", arguments: {} }))
            assert.isTrue(Predicate.isRecord(called) && called["isError"] !== true && Array.isArray(called["content"]), JSON.stringify(called))

            yield* Effect.promise(() => client.close())
            assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
          }))

        it.effect("a start-up that fails after the handshake answers the held and the later requests with its reason", () =>
          Effect.gen(function*() {
            const release = yield* Deferred.make<void>()
            // The services open; the key is unknown there.
            const { fiber, transport } = yield* serving(heldUntil(release, "svc_key_stdio_unknown_0123456789abcdef"))
            const client = make()

            yield* Effect.promise(() => client.connect(transport))
            const held = client.listTools()
            yield* Deferred.succeed(release, undefined)

            const expected = "The server could not start: SERVICE_API_KEY is not a valid API key here"
            const first = yield* startFailure(held)
            assert.include(first?.message, expected)
            const later = yield* startFailure(client.callTool({ name: "service_market_capabilities", arguments: {} }))
            assert.include(later?.message, expected)

            yield* Effect.promise(() => client.close())
            const exit = yield* Fiber.await(fiber)
            assert.isTrue(Exit.isFailure(exit))
            if (Exit.isFailure(exit)) assert.include(String(Cause.squash(exit.cause)), "SERVICE_API_KEY is not a valid API key here")
          }))
      })
    }

    it.effect("services that fail to open (a locked data folder) answer every request, the handshake's too, with the reason", () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const refusing = yield* Deferred.make<void>()
        // Logged once the server refuses: from then on, even an `initialize` is answered with the reason.
        const watch = Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ message }) => {
            if (String(message).includes("could not start")) Deferred.unsafeDone(refusing, Exit.void)
          })
        )
        const locked = Layer.unwrapEffect(
          Deferred.await(release).pipe(Effect.as(Layer.fail(new Error("The data folder .data/pglite is in use by process 4242."))))
        )
        const { fiber, transport } = yield* serving(locked).pipe(Effect.provide(watch))
        yield* Deferred.succeed(release, undefined)
        yield* Deferred.await(refusing)

        const client = new ClientV1({ name: "stdio-start-locked", version: "0.0.0" })
        const refused = yield* Effect.either(Effect.tryPromise(() => client.connect(transport)))
        assert.isTrue(refused._tag === "Left", "initialize after a failed start must be refused")
        if (refused._tag === "Left") assert.include(String(refused.left.cause), "The server could not start: The data folder .data/pglite is in use by process 4242.")
        yield* Effect.promise(() => transport.close())
        assert.isTrue(Exit.isFailure(yield* Fiber.await(fiber)))
      }))
  })
}
