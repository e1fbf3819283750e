/**
 * Adding a domain is one entry in the application's bundle list. The toy domain below is declared here, in this
 * test file, and nowhere else: one operation, one worker, one route, its own table. The application of the core
 * bundle and this one is then served by the hosts as they are, with no edit to any host or transport:
 *
 * - the HTTP host serves the operation and the route, lists both in OpenAPI, and runs the worker embedded;
 * - MCP lists and calls the operation as a tool, over streamable HTTP (both official client generations) and over
 *   stdio;
 * - the CLI derives a command for it and calls it over HTTP;
 * - the worker process's loop (`Workers.run`) runs the worker too;
 * - the shared conformance suite runs the operation over HTTP from its declaration.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as InProcess from "@service/cli/InProcess"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import * as Bundle from "@service/core/Bundle"
import * as CoreBundle from "@service/core/CoreBundle"
import { Crypto } from "@service/core/Crypto"
import * as Mount from "@service/core/Mount"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as Worker from "@service/core/Worker"
import * as HttpLayer from "@service/http/HttpLayer"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"
import { PassThrough } from "node:stream"
import * as McpStdio from "../src/McpStdio.js"
import * as Server from "../src/Server.js"
import * as Workers from "../src/Workers.js"
import { StreamTransport } from "./support/StreamTransport.js"

// -----------------------------------------------------------------------------
// The toy domain, whole
// -----------------------------------------------------------------------------

const defined = Refusal.define({ key: "toy", identifier: "Toy", rules: {}, outage: { code: "toy_unavailable", store: "the toy store" } })
class ToyRefusal extends Schema.TaggedError<ToyRefusal>("test/ToyRefusal")("ToyRefusal", defined.fields) {}
const { codec } = defined.codecFor(ToyRefusal)
const kit = Operation.kit({ refusals: codec, scopes: ["market_data:read"], annotations: Operation.readOnly })

const Ticks = Schema.Struct({
  ticks: Schema.Number,
  workers: Schema.Array(Schema.String).annotations({ description: "The workers that ticked, by name." })
}).annotations({ identifier: "ToyTicks" })

const ticks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ worker: string; ticks: number }>`SELECT worker, count(*)::int AS ticks FROM toy.ticks GROUP BY worker ORDER BY worker`
  return { ticks: rows.reduce((sum, row) => sum + row.ticks, 0), workers: rows.map((row) => row.worker) }
}).pipe(Effect.orDie)

const ticksCount = kit.make({
  name: "ticks_count",
  title: "Count the ticks",
  description: "How many ticks the toy workers wrote, and which workers wrote them.",
  refuses: [],
  http: { method: "GET", path: "/ticks", input: { kind: "query" } },
  cli: { words: ["ticks"] },
  input: Schema.Struct({}),
  output: Ticks,
  capability: { question: "Are the toy workers running?", requires: "Nothing.", example: {} },
  run: () => ticks
})

const group = kit.group({
  name: "toy",
  title: "Toy",
  description: "A domain declared in a test file.",
  operations: [ticksCount],
  http: { prefix: "/workspaces/:workspace/toy", workspaceScoped: true },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "The toy domain." }
})

const ticker = Worker.make({
  name: "toy.ticker",
  description: "writes a tick",
  unit: "ticks",
  poll: "20 millis",
  run: ({ done, name, poll }) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forever(
        sql`INSERT INTO toy.ticks (worker) VALUES (${name})`.pipe(Effect.orDie, Effect.zipRight(done(1)), Effect.zipRight(Effect.sleep(poll)))
      ))
})

const ping = Mount.make({
  name: "toy_ping",
  method: "GET",
  path: "/api/v1/toy/ping/:word",
  summary: "Ping the toy domain",
  description: "A public route beside the operations: echoes the word with the ticks so far.",
  tag: "Toy",
  params: { word: "Any word." },
  answers: [{ status: 200, description: "Pong.", schema: Schema.Struct({ pong: Schema.String, ticks: Schema.Number }) }],
  public: true,
  handle: (request) => Effect.map(ticks, (counted) => Mount.json({ pong: request.params["word"] ?? "", ticks: counted.ticks }))
})

const toy = Bundle.make({
  name: "toy",
  layer: Layer.empty,
  migrations: [{
    name: "toy",
    dependsOn: ["core"],
    migrations: {
      "0001_ticks": Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(sql`CREATE SCHEMA toy`, sql`CREATE TABLE toy.ticks (worker text NOT NULL, at timestamptz NOT NULL DEFAULT now())`))
    }
  }],
  groups: [group],
  workers: [ticker],
  mounts: [ping]
})

// The whole change: one more entry in the list.
const app = App.make([CoreBundle.bundle, toy])

// -----------------------------------------------------------------------------
// The hosts, unchanged
// -----------------------------------------------------------------------------

const KEY = "svc_key_toy_domain_0123456789abcdef"

class Running extends Context.Tag("Running")<Running, { readonly port: number; readonly baseUrl: string }>() {}

const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { port: address.port, baseUrl: `http://127.0.0.1:${address.port}` }
  })
)

/** The server (embedded worker included) over the toy application, with a `demo` workspace and its owner's key. */
const served = (target: TestDatabase.TestDatabaseTarget) =>
  running.pipe(
    Layer.provideMerge(Server.layer(app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Layer.effectDiscard(McpStdio.bootstrapDemo(Redacted.make(KEY)).pipe(Effect.orDie))),
    Layer.provideMerge(app.layer(target.layer, Crypto.layerTest)),
    Layer.orDie
  )

const getJson = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers })
    return { status: response.status, body: (await response.json()) as unknown }
  })

const TicksBody = Schema.decodeUnknownSync(Ticks)
// A tool answers the JSON of one text block (decision 0074).
const answerOf = (result: unknown): unknown =>
  Schema.decodeUnknownSync(Schema.Struct({ content: Schema.Tuple(Schema.Struct({ type: Schema.Literal("text"), text: Schema.parseJson() })) }))(result).content[0].text

/** Waits until the toy workers wrote a tick under a name that passes `named`. */
const tickedBy = (baseUrl: string, named: (worker: string) => boolean) =>
  getJson(`${baseUrl}/api/v1/workspaces/demo/toy/ticks`, { "x-api-key": KEY }).pipe(
    Effect.map((answer) => TicksBody(answer.body)),
    Effect.flatMap((counted) => (counted.workers.some(named) ? Effect.succeed(counted) : Effect.fail("no tick yet"))),
    Effect.retry(Schedule.spaced(Duration.millis(50)))
  )

for (const target of TestDatabase.targets()) {
  describe(`a domain declared in a test file, on ${target.name}`, () => {
    layer(served(target), { timeout: "120 seconds" })("served by the hosts as they are", (it) => {
      it.effect("HTTP serves the operation and the route; OpenAPI lists both, the probes and /mcp; the embedded worker ticks", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const counted = yield* tickedBy(baseUrl, (worker) => worker.startsWith("server-"))
          assert.isAbove(counted.ticks, 0)
          const pong = yield* getJson(`${baseUrl}/api/v1/toy/ping/hola`)
          assert.strictEqual(pong.status, 200)
          assert.strictEqual(Predicate.isRecord(pong.body) ? pong.body["pong"] : undefined, "hola")
          const spec = yield* getJson(`${baseUrl}/openapi.json`)
          const paths = Predicate.isRecord(spec.body) && Predicate.isRecord(spec.body["paths"]) ? spec.body["paths"] : {}
          assert.includeMembers(Object.keys(paths), [
            "/api/v1/workspaces/{workspace}/toy/ticks",
            "/api/v1/toy/ping/{word}",
            "/health",
            "/ready",
            "/mcp"
          ])
          const ready = yield* getJson(`${baseUrl}/ready`)
          assert.strictEqual(ready.status, 200, JSON.stringify(ready.body))
        }))

      it.effect("MCP over streamable HTTP lists and calls it as a tool, on both official client generations", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const endpoint = new URL(`${baseUrl}/mcp`)
          const headers = { "x-api-key": KEY }
          for (const connect of [
            async () => {
              const client = new ClientV2({ name: "toy-v2", version: "0.0.0" })
              await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }))
              return client
            },
            async () => {
              const { StreamableHTTPClientTransport: TransportV1 } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js")
              const client = new ClientV1({ name: "toy-v1", version: "0.0.0" })
              await client.connect(new TransportV1(endpoint, { requestInit: { headers } }))
              return client
            }
          ]) {
            const result = yield* Effect.promise(async () => {
              const client = await connect()
              try {
                const tools = await client.listTools()
                const called = await client.callTool({ name: "service_toy_ticks_count", arguments: {} })
                return { names: tools.tools.map((tool) => tool.name), called }
              } finally {
                await client.close()
              }
            })
            assert.includeMembers(result.names, ["service_toy_ticks_count", "service_account_usage"])
            assert.isNotTrue(result.called.isError)
            assert.isAbove(TicksBody(answerOf(result.called)).ticks, 0)
          }
        }))

      it.effect("MCP over stdio lists and calls it as a tool, on both official client generations", () =>
        Effect.gen(function*() {
          for (const client of [new ClientV1({ name: "toy-stdio-v1", version: "0.0.0" }), new ClientV2({ name: "toy-stdio-v2", version: "0.0.0" })]) {
            const toServer = new PassThrough()
            const fromServer = new PassThrough()
            // Serves until the client closes the server's stdin.
            const fiber = yield* McpStdio.serve(app, { stdin: toServer, stdout: fromServer }).pipe(
              Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_API_KEY", KEY]]))),
              Effect.scoped,
              Effect.fork
            )
            const result = yield* Effect.promise(async () => {
              await client.connect(new StreamTransport(fromServer, toServer))
              const tools = await client.listTools()
              const called = await client.callTool({ name: "service_toy_ticks_count", arguments: {} })
              await client.close()
              return { names: tools.tools.map((tool) => tool.name), called }
            })
            yield* Fiber.join(fiber)
            assert.includeMembers(result.names, ["service_toy_ticks_count"])
            assert.isAbove(TicksBody(answerOf(result.called)).ticks, 0)
          }
        }))

      it.effect("the CLI derives a command for it and calls it over HTTP", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const out = yield* InProcess.run(["--base-url", baseUrl, "--api-key", KEY, "toy", "ticks", "--json"], { groups: app.groups }).pipe(
            Effect.provide(NodeHttpClient.layerUndici),
            Effect.provide(NodeContext.layer),
            Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
          )
          assert.strictEqual(out.code, 0, out.stderr)
          assert.isAbove(TicksBody(JSON.parse(out.stdout)).ticks, 0)
          const help = yield* InProcess.run(["toy", "--help"], { groups: app.groups }).pipe(
            Effect.provide(NodeHttpClient.layerUndici),
            Effect.provide(NodeContext.layer)
          )
          assert.include(help.stdout, "service toy ticks")
        }))

      it.effect("the worker process's loop runs the worker too", () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const fiber = yield* Workers.run(app, { name: "worker-toy-test", idle: Option.none(), reportEvery: Duration.minutes(1) }).pipe(
            Effect.scoped,
            Effect.fork
          )
          yield* tickedBy(baseUrl, (worker) => worker === "worker-toy-test")
          yield* Fiber.interrupt(fiber)
        }))
    })

    // The shared suite, from the declaration alone, over HTTP: the groups it asks for (the toy group and its refusal
    // twin) served by the http transport over the toy application's services.
    Conformance.suite({
      surface: "http",
      groups: app.groups,
      harness: (groups) =>
        Layer.effect(
          Conformance.HarnessService,
          Effect.gen(function*() {
            const { baseUrl } = yield* Running
            const seeded = yield* Fixture.seed(app, "toy", groups)
            return {
              forbidden: ["never-in-an-answer"],
              examples: { workspace: seeded.seats.workspace.examples, test_workspace: seeded.seats.test_workspace.examples },
              listed: Effect.map(getJson(`${baseUrl}/openapi.json`), (spec) => {
                const paths = Predicate.isRecord(spec.body) && Predicate.isRecord(spec.body["paths"]) ? spec.body["paths"] : {}
                // Operations live under /api/v1; the host's own routes (the `GET /` index) are not operations.
                return Object.entries(paths).filter(([path]) => path.startsWith("/api/v1/")).flatMap(([path, item]) =>
                  Object.keys(Predicate.isRecord(item) ? item : {}).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`)
                )
              }),
              call: (groupName, operation, input, where = "workspace") =>
                Effect.gen(function*() {
                  const found = groups.find((candidate) => candidate.name === groupName)
                  const op = found?.operations.find((candidate) => candidate.name === operation)
                  if (found === undefined || op === undefined) return yield* Effect.dieMessage(`No ${groupName}.${operation}`)
                  const seat = seeded.seats[where]
                  const query = new URLSearchParams(Object.entries(input).map(([field, value]) => [field, String(value)]))
                  const path = `/api/v1${found.http.prefix.replace(":workspace", seat.workspace.slug)}${op.http.path}`
                  const answer = yield* Effect.promise(async () => {
                    const response = await fetch(`${baseUrl}${path}?${query}`, { headers: { "x-api-key": seat.key } })
                    const text = await response.text()
                    return { status: response.status, text, json: JSON.parse(text) as unknown }
                  })
                  if (answer.status < 300) return { _tag: "Success", body: answer.json, raw: answer.text } satisfies Conformance.Outcome
                  const block = Predicate.isRecord(answer.json) ? answer.json[found.refusals.key] : undefined
                  return { _tag: "Refusal", status: answer.status, block, raw: answer.text } satisfies Conformance.Outcome
                })
            }
          })
        ).pipe(
          Layer.provide(running),
          Layer.provide(
            HttpApiBuilder.serve().pipe(
              Layer.provide(HttpLayer.layer(groups)),
              Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
            )
          ),
          Layer.provideMerge(app.layer(target.layer, Crypto.layerTest)),
          Layer.orDie
        )
    })
  })
}
