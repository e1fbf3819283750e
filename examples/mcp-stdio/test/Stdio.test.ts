import * as App from "@service/app/App"
import * as Operation from "@service/core/Operation"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { ServerProcess } from "./support/ServerProcess.js"

const packageDirectory = fileURLToPath(new URL("..", import.meta.url))
const apiKey = "svc_key_stdio_test_0123456789abcdef"

// Hang guards only: the server is asked nothing before it says it is serving, so no step races a timer.
const hangGuard = 10 * 60_000
const requestOptions = { timeout: hangGuard }

const temporaryDataDirectory = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "mcp-stdio-"))),
  (directory) => Effect.promise(() => NodeFs.rm(directory, { recursive: true, force: true }))
)

// The server as a separate process, started the way a local MCP client starts it; always on PGlite.
const session = (dataDirectory: string, mode: "auto" | "legacy") => {
  const errors: Array<Error> = []
  const server = new ServerProcess({
    cwd: packageDirectory,
    args: ["bin/mcp-stdio.mjs"],
    env: { SERVICE_DATA_DIR: dataDirectory, SERVICE_API_KEY: apiKey, SERVICE_BOOTSTRAP_DEMO: "1" }
  })
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Client({ name: "stdio-test", version: "0.0.0" }, { versionNegotiation: { mode } })
        // Anything on stdout that is not a protocol message surfaces here.
        client.onerror = (error) => errors.push(error)
        await client.connect(server, requestOptions)
        return client
      },
      catch: (cause) => new Error(`Could not start the stdio server: ${String(cause)}\n${server.stderr}`)
    }).pipe(Effect.orDie),
    // Waits for the process to exit on its own, so the next start finds a closed database.
    (client) => Effect.promise(() => client.close())
  ).pipe(Effect.map((client) => ({ client, errors, server })))
}

const call = (client: Client, name: string, args: Readonly<Record<string, unknown>>) =>
  Effect.promise(() => client.callTool({ name, arguments: { ...args } }, requestOptions))

// A tool answers one JSON text block (decision 0074).
const jsonOf = (result: { readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }> }): unknown =>
  JSON.parse(result.content[0]?.text ?? "null")

const SearchResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  results: Schema.NonEmptyArray(Schema.Struct({ record_ref: Schema.String, record_fingerprint: Schema.String })),
  shown: Schema.Number,
  has_more: Schema.Boolean
})

const SingleResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  results: Schema.Struct({ record_fingerprint: Schema.String })
})

// Any JSON object: custom results keep every field.
const AnyResult = Schema.standardSchemaV1(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const EventList = Schema.Struct({ events: Schema.Array(Schema.Struct({ name: Schema.String })) })

const Refusal = Schema.Struct({
  code: Schema.Literal("VALIDATION_FAILED"),
  request_id: Schema.String,
  market_data: Schema.Struct({ semantic_code: Schema.String, field: Schema.String, suggested_correction: Schema.String })
})

describe("mcp-stdio", () => {
  it.scoped("serves the market tools and the events methods over stdio for the configured key and keeps its keys across restarts", () =>
    Effect.gen(function*() {
      const dataDirectory = yield* temporaryDataDirectory

      // First start: migrates, loads the demo corpus, generates keys.json, registers the demo key.
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const { client, errors, server } = yield* session(dataDirectory, "legacy")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2025-11-25")
        const { tools } = yield* Effect.promise(() => client.listTools(undefined, requestOptions))
        // The demo key holds market_data:read only: it is shown the tools that scope can call, no others (decision 0074).
        assert.deepStrictEqual(
          tools.map((tool) => tool.name).sort(),
          App.groups.flatMap((group) =>
            Operation.servedOn(group, "mcp")
              .filter((op) => op.scopes.includes("market_data:read"))
              .map((op) => Operation.toolName("service", group.mcp.namespace, op.name))
          ).sort()
        )
        assert.include(client.getInstructions() ?? "", "service_market_capabilities")
        // The demo corpus loads in the background after the server answers; reads wait for its publication.
        yield* Effect.promise(() => server.waitForStderr(/Published the demo corpus/))
        const result = yield* call(client, "service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"] })
        assert.notStrictEqual(result.isError, true, JSON.stringify(result.content))
        const search = Schema.decodeUnknownSync(SearchResult)(jsonOf(result))
        assert.strictEqual(search.shown, search.results.length)
        assert.deepStrictEqual(errors, [], server.stderr)
        return search.results[0]
      }))

      const keys = yield* Effect.promise(() => NodeFs.stat(NodePath.join(dataDirectory, "keys.json")))
      assert.strictEqual(keys.mode & 0o777, 0o600)

      // Second start on the same folder, modern era: a ref sealed by the first process still opens.
      const { client, errors, server } = yield* session(dataDirectory, "auto")
      assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
      const got = yield* call(client, "service_market_get_supplier", { record_ref: first.record_ref })
      assert.notStrictEqual(got.isError, true, JSON.stringify(got.content))
      assert.strictEqual(Schema.decodeUnknownSync(SingleResult)(jsonOf(got)).results.record_fingerprint, first.record_fingerprint)

      // The bundles' extra methods are served over stdio too: the events catalog, and a subscription refused to an
      // API key (only a person may subscribe) with the spec's error.
      const catalog = yield* Effect.promise(() => client.request({ method: "events/list", params: {} }, AnyResult, requestOptions))
      const listed = Schema.decodeUnknownSync(EventList)(catalog)
      assert.includeMembers(listed.events.map((event) => event.name), ["contact.created", "opportunity.moved", "search.matched"])
      const subscribed = yield* Effect.either(Effect.tryPromise(() =>
        client.request({
          method: "events/subscribe",
          params: { name: "contact.created", delivery: { mode: "webhook", url: "https://hooks.example.com/x", secret: "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=" } }
        }, AnyResult, requestOptions)
      ))
      assert.isTrue(subscribed._tag === "Left")
      if (subscribed._tag === "Left") assert.include(JSON.stringify(subscribed.left), "person_required")

      // A second server on the same data folder cannot open it (the first holds it): the official client is told why,
      // not only "Connection closed". Its handshake is answered before the folder is opened, so the reason comes with
      // the answer to the first request that needs the database, or to the handshake when it came later.
      const second = new Client({ name: "stdio-second", version: "0.0.0" })
      const refusedStart = yield* Effect.either(Effect.tryPromise({
        try: async () => {
          await second.connect(
            new StdioClientTransport({
              command: process.execPath,
              args: ["bin/mcp-stdio.mjs"],
              cwd: packageDirectory,
              env: { ...getDefaultEnvironment(), SERVICE_DATA_DIR: dataDirectory, SERVICE_API_KEY: apiKey },
              stderr: "pipe"
            }),
            requestOptions
          )
          try {
            await second.listTools(undefined, requestOptions)
          } finally {
            await second.close()
          }
        },
        catch: (error) => error instanceof Error ? error.message : String(error)
      }))
      assert.isTrue(refusedStart._tag === "Left", "a second server on a held data folder must not start")
      if (refusedStart._tag === "Left") {
        const text = refusedStart.left
        assert.include(text, "The server could not start")
        assert.notInclude(text, "Connection closed")
        assert.include(text, "is in use by process")
        assert.include(text, NodePath.basename(dataDirectory))
      }

      // A refusal carries the market_data block, with the next working call.
      const refused = yield* call(client, "service_market_search_suppliers", { state: "Zacatecas", colour: "blue" })
      assert.isTrue(refused.isError)
      const refusal = Schema.decodeUnknownSync(Refusal)(jsonOf(refused))
      assert.strictEqual(refusal.market_data.field, "colour")
      assert.isNotEmpty(refusal.market_data.suggested_correction)
      assert.deepStrictEqual(errors, [], server.stderr)
    }), { timeout: 2 * hangGuard })
})
