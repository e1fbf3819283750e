import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/client"
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const packageDirectory = fileURLToPath(new URL("..", import.meta.url))
const apiKey = "svc_key_stdio_test_0123456789abcdef"

const temporaryDataDirectory = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "mcp-stdio-"))),
  (directory) => Effect.promise(() => NodeFs.rm(directory, { recursive: true, force: true }))
)

// The server as a separate process, exactly as an MCP client starts it. The environment is the SDK's safe
// default plus ours, so a DATABASE_URL of the test run never reaches it: it always runs on PGlite.
const session = (dataDirectory: string, mode: "auto" | "legacy") => {
  const stderr: Array<string> = []
  const errors: Array<Error> = []
  return Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", "src/main.ts"],
          cwd: packageDirectory,
          env: {
            ...getDefaultEnvironment(),
            SERVICE_DATA_DIR: dataDirectory,
            SERVICE_API_KEY: apiKey,
            SERVICE_BOOTSTRAP_DEMO: "1"
          },
          stderr: "pipe"
        })
        transport.stderr?.on("data", (chunk) => stderr.push(String(chunk)))
        const client = new Client({ name: "stdio-test", version: "0.0.0" }, { versionNegotiation: { mode } })
        // Anything on stdout that is not a protocol message surfaces here.
        client.onerror = (error) => errors.push(error)
        await client.connect(transport, { timeout: 120_000 })
        return client
      },
      catch: (cause) => new Error(`Could not start the stdio server: ${String(cause)}\n${stderr.join("")}`)
    }).pipe(Effect.orDie),
    (client) => Effect.promise(() => client.close())
  ).pipe(Effect.map((client) => ({ client, errors, stderr })))
}

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

describe("mcp-stdio", () => {
  it.scoped("serves the market tools over stdio and keeps its keys across restarts", () =>
    Effect.gen(function*() {
      const dataDirectory = yield* temporaryDataDirectory

      // First start: migrates, loads the demo corpus, generates keys.json, registers the demo key.
      const first = yield* Effect.scoped(Effect.gen(function*() {
        const { client, errors, stderr } = yield* session(dataDirectory, "legacy")
        assert.strictEqual(client.getNegotiatedProtocolVersion(), "2025-11-25")
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), [
          "service_market_capabilities",
          "service_market_get_supplier",
          "service_market_search_suppliers"
        ])
        const result = yield* Effect.promise(() =>
          client.callTool({ name: "service_market_search_suppliers", arguments: { state: "Zacatecas", scian_codes: ["212"] } })
        )
        assert.notStrictEqual(result.isError, true, JSON.stringify(result.content))
        const search = Schema.decodeUnknownSync(SearchResult)(result.structuredContent)
        assert.strictEqual(search.shown, search.results.length)
        assert.deepStrictEqual(errors, [], stderr.join(""))
        return search.results[0]
      }))

      const keys = yield* Effect.promise(() => NodeFs.stat(NodePath.join(dataDirectory, "keys.json")))
      assert.strictEqual(keys.mode & 0o777, 0o600)

      // Second start on the same folder, modern era: a ref sealed by the first process still opens.
      const { client, errors, stderr } = yield* session(dataDirectory, "auto")
      assert.strictEqual(client.getNegotiatedProtocolVersion(), "2026-07-28")
      const got = yield* Effect.promise(() =>
        client.callTool({ name: "service_market_get_supplier", arguments: { record_ref: first.record_ref } })
      )
      assert.notStrictEqual(got.isError, true, JSON.stringify(got.content))
      assert.strictEqual(Schema.decodeUnknownSync(SingleResult)(got.structuredContent).results.record_fingerprint, first.record_fingerprint)
      assert.deepStrictEqual(errors, [], stderr.join(""))
    }), { timeout: 300_000 })
})
