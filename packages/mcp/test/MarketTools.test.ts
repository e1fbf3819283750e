import { assert, describe, it, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { fromJsonSchema, InMemoryTransport, McpServer } from "@modelcontextprotocol/server"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import { Principal, type Scope } from "@service/core/Principal"
import { Workspace } from "@service/core/Workspace"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import { MarketDataBlock } from "@service/market-contract/MarketError"
import * as MarketLayer from "@service/market-contract/MarketLayer"
import * as MarketMigrations from "@service/market-contract/MarketMigrations"
import type * as Operation from "@service/market-contract/Operation"
import * as Operations from "@service/market-contract/Operations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as MarketTools from "../src/MarketTools.js"
import * as McpHandler from "../src/McpHandler.js"

const migrations = [CoreMigrations.migrations, MarketMigrations.migrations]

const layerFor = (target: TestDatabase.TestDatabaseTarget) =>
  Layer.effectDiscard(Effect.orDie(DemoCorpus.loadAndPublish)).pipe(
    Layer.provideMerge(MarketLayer.layer),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations))
  )

const principalWith = (scopes: ReadonlyArray<Scope>) =>
  new Principal({
    workspace: new Workspace({ id: WorkspaceId.make("ws_test"), slug: WorkspaceSlug.make("test"), name: "Test" }),
    person: Option.none(),
    role: "member",
    scopes,
    credential: { id: CredentialId.make("key_test"), kind: "api_key" }
  })

const reader = principalWith(["market_data:read"])

type Mode = "auto" | "legacy"

// In process: the client's fetch goes straight to the web handler, no socket.
const connect = (mode: Mode, principal: Principal = reader) =>
  Effect.gen(function*() {
    const web = yield* Effect.acquireRelease(
      McpHandler.makeWebHandler({ name: "service-test", version: "0.0.0" }),
      (handler) => Effect.promise(() => handler.close())
    )
    return yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "test-client", version: "0.0.0" }, { versionNegotiation: { mode } })
        await client.connect(
          new StreamableHTTPClientTransport(new URL("http://mcp.test/mcp"), {
            fetch: (url, init) => web.handle(new Request(url, init), principal)
          })
        )
        return client
      }),
      (client) => Effect.promise(() => client.close())
    )
  })

const call = (client: Client, name: string, args: Record<string, unknown>) =>
  Effect.promise(() => client.callTool({ name, arguments: args }))

const SearchResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  requestId: Schema.String,
  operation: Schema.String,
  results: Schema.Array(Schema.Struct({ record_ref: Schema.String, record_fingerprint: Schema.String, name: Schema.String })),
  page: Schema.Struct({ returned: Schema.Number, hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) }),
  shown: Schema.Number,
  has_more: Schema.Boolean,
  next_action: Schema.String
})

const SingleResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  operation: Schema.String,
  results: Schema.Struct({ record_ref: Schema.String, record_fingerprint: Schema.String }),
  shown: Schema.Number,
  has_more: Schema.Boolean,
  next_action: Schema.String
})

const CapabilitiesResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  results: Schema.Struct({ operations: Schema.Array(Schema.Struct({ operation: Schema.String })) }),
  shown: Schema.Number,
  has_more: Schema.Boolean,
  next_action: Schema.String
})

const ErrorResult = Schema.Struct({
  code: Schema.Literal("VALIDATION_FAILED", "FORBIDDEN", "UNAUTHENTICATED", "INTERNAL"),
  message: Schema.String,
  request_id: Schema.String,
  market_data: Schema.optional(MarketDataBlock)
})

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => Schema.decodeUnknownSync(schema)(value)

const refusal = (result: { readonly isError?: boolean | undefined; readonly structuredContent?: unknown }) => {
  assert.isTrue(result.isError)
  return decode(ErrorResult, result.structuredContent)
}

const searchArgs = { state: "Zacatecas", scian_codes: ["212"] }

// One character of a sealed value changed to another valid one.
const tamper = (ref: string): string => {
  const at = Math.floor(ref.length / 2)
  return `${ref.slice(0, at)}${ref[at] === "A" ? "B" : "A"}${ref.slice(at + 1)}`
}

describe("tool derivation", () => {
  it("names tools <prefix>_market_<operation> and describes only", () => {
    assert.strictEqual(MarketTools.toolName("service", "market_capabilities"), "service_market_capabilities")
    assert.strictEqual(MarketTools.toolName("acme", "search_suppliers"), "acme_market_search_suppliers")
  })

  it("SDK fact: fromJsonSchema validates with Ajv and rejects unknown properties (why we describe only)", () =>
    Effect.gen(function*() {
      const strict = fromJsonSchema({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false })
      const rejected = yield* Effect.promise(async () => strict["~standard"].validate({ a: "x", extra: 1 }))
      assert.deepStrictEqual(rejected.issues?.map((issue) => issue.message), ["data must NOT have additional properties"])
      // Valid input comes back unchanged: Ajv neither strips nor coerces.
      const kept = yield* Effect.promise(async () => strict["~standard"].validate({ a: "x" }))
      assert.deepStrictEqual(kept.issues, undefined)
    }).pipe(Effect.runPromise))
})

for (const target of TestDatabase.targets()) {
  layer(layerFor(target), { timeout: "120 seconds" })(`MCP market tools on ${target.name}`, (it) => {
    for (const mode of ["auto", "legacy"] as const) {
      describe(`client versionNegotiation ${mode}`, () => {
        it.scoped("negotiates the expected era and lists exactly the three read-only tools", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            assert.strictEqual(client.getNegotiatedProtocolVersion(), mode === "auto" ? "2026-07-28" : "2025-11-25")
            const { tools } = yield* Effect.promise(() => client.listTools())
            assert.deepStrictEqual(tools.map((tool) => tool.name).sort(), [
              "service_market_capabilities",
              "service_market_get_supplier",
              "service_market_search_suppliers"
            ])
            for (const tool of tools) {
              assert.strictEqual(tool.annotations?.readOnlyHint, true)
              assert.strictEqual(tool.annotations?.destructiveHint, false)
              assert.strictEqual(tool.inputSchema.type, "object")
              assert.strictEqual(tool.outputSchema?.type, "object")
              assert.includeMembers(Object.keys(tool.outputSchema?.properties ?? {}), ["schemaVersion", "page", "shown", "has_more", "next_action"])
            }
            const search = tools.find((tool) => tool.name === "service_market_search_suppliers")
            assert.notInclude(Object.keys(search?.inputSchema.properties ?? {}), "source_slugs")
            assert.strictEqual(search?._meta?.["service/metered"], true)
            const capabilities = tools.find((tool) => tool.name === "service_market_capabilities")
            assert.strictEqual(capabilities?._meta?.["service/metered"], false)
          }))

        it.scoped("searches suppliers and reads one by the ref of a row", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const result = yield* call(client, "service_market_search_suppliers", searchArgs)
            assert.notStrictEqual(result.isError, true)
            const search = decode(SearchResult, result.structuredContent)
            assert.strictEqual(search.operation, "search_suppliers")
            assert.isAbove(search.results.length, 0)
            assert.strictEqual(search.shown, search.page.returned)
            assert.strictEqual(search.has_more, search.page.hasMore)
            assert.strictEqual(search.next_action, search.has_more ? `call again with the same arguments and cursor=${search.page.nextCursor} to read more` : "done")
            // The text content carries the same JSON for clients that ignore structuredContent.
            const [text] = result.content
            assert.deepStrictEqual(text?.type === "text" ? JSON.parse(text.text) : undefined, result.structuredContent)

            const row = search.results[0]
            const got = yield* call(client, "service_market_get_supplier", { record_ref: row?.record_ref ?? "" })
            assert.notStrictEqual(got.isError, true)
            const single = decode(SingleResult, got.structuredContent)
            // Refs are sealed afresh in every response; the fingerprint names the observation.
            assert.strictEqual(single.results.record_fingerprint, row?.record_fingerprint)
            assert.strictEqual(single.shown, 1)
            assert.isFalse(single.has_more)
            assert.strictEqual(single.next_action, "done")
          }))

        it.scoped("pages with the cursor named in next_action", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const first = decode(SearchResult, (yield* call(client, "service_market_search_suppliers", { ...searchArgs, limit: 1 })).structuredContent)
            assert.strictEqual(first.shown, 1)
            assert.isTrue(first.has_more)
            const cursor = first.page.nextCursor ?? ""
            assert.strictEqual(first.next_action, `call again with the same arguments and cursor=${cursor} to read more`)
            const second = yield* call(client, "service_market_search_suppliers", { ...searchArgs, limit: 1, cursor })
            assert.notStrictEqual(second.isError, true)
            assert.notStrictEqual(
              decode(SearchResult, second.structuredContent).results[0]?.record_fingerprint,
              first.results[0]?.record_fingerprint
            )
          }))

        it.scoped("answers capabilities", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const result = yield* call(client, "service_market_capabilities", {})
            assert.notStrictEqual(result.isError, true)
            const capabilities = decode(CapabilitiesResult, result.structuredContent)
            assert.deepStrictEqual(capabilities.results.operations.map((op) => op.operation), [
              "market_capabilities",
              "search_suppliers",
              "get_supplier"
            ])
            assert.isFalse(capabilities.has_more)
          }))

        it.scoped("refuses a tampered record_ref with invalid_record_ref", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const search = decode(SearchResult, (yield* call(client, "service_market_search_suppliers", searchArgs)).structuredContent)
            const ref = search.results[0]?.record_ref ?? ""
            const body = refusal(yield* call(client, "service_market_get_supplier", { record_ref: tamper(ref) }))
            assert.strictEqual(body.code, "VALIDATION_FAILED")
            assert.match(body.request_id, /^req_/)
            assert.strictEqual(body.market_data?.semantic_code, "invalid_record_ref")
            assert.strictEqual(body.market_data?.recovery.action, "search_again")
          }))

        it.scoped("refuses an unknown property through the operation's own decode", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const result = yield* call(client, "service_market_search_suppliers", { ...searchArgs, colour: "blue" })
            const body = refusal(result)
            assert.strictEqual(body.code, "VALIDATION_FAILED")
            assert.strictEqual(body.market_data?.semantic_code, "invalid_field_value")
            assert.strictEqual(body.market_data?.recovery.action, "fix_arguments")
            assert.strictEqual(body.market_data?.field, "colour")
            const [text] = result.content
            assert.deepStrictEqual(text?.type === "text" ? JSON.parse(text.text) : undefined, result.structuredContent)
          }))

        it.scoped("refuses a closed-set value with allowed_values", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const body = refusal(yield* call(client, "service_market_search_suppliers", { ...searchArgs, query: "oro", query_mode: "fuzzy" }))
            assert.strictEqual(body.market_data?.semantic_code, "invalid_field_value")
            assert.deepStrictEqual(body.market_data?.allowed_values, ["auto", "exact_phrase", "all_terms", "any_terms"])
          }))

        it.scoped("refuses source_slugs: it belongs to the canonical HTTP route only", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode)
            const body = refusal(yield* call(client, "service_market_search_suppliers", { ...searchArgs, source_slugs: ["denue"] }))
            assert.strictEqual(body.market_data?.semantic_code, "invalid_field_value")
            assert.strictEqual(body.market_data?.field, "source_slugs")
          }))

        it.scoped("refuses a principal without market_data:read or context:read", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode, principalWith(["commercial:read"]))
            const body = refusal(yield* call(client, "service_market_search_suppliers", searchArgs))
            assert.strictEqual(body.code, "FORBIDDEN")
            assert.match(body.request_id, /^req_/)
            assert.isUndefined(body.market_data)
          }))

        it.scoped("accepts the transitional context:read scope", () =>
          Effect.gen(function*() {
            const client = yield* connect(mode, principalWith(["context:read"]))
            const result = yield* call(client, "service_market_capabilities", {})
            assert.notStrictEqual(result.isError, true)
          }))
      })
    }

    it.scoped("answers a defect with INTERNAL and the request id, no internals", () =>
      Effect.gen(function*() {
        const broken: Operation.AnyOperation<Operations.Requirements> = {
          ...Operations.marketCapabilities,
          name: "broken",
          runModel: () => Effect.die(new Error("secret internals"))
        }
        const tools = yield* MarketTools.make({ prefix: "acme", operations: [broken] })
        assert.deepStrictEqual(tools.tools.map((tool) => tool.name), ["acme_market_broken"])
        const server = new McpServer({ name: "service-test", version: "0.0.0" })
        tools.register(server, Option.some(reader))
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        const client = new Client({ name: "test-client", version: "0.0.0" })
        yield* Effect.acquireRelease(
          Effect.promise(() => Promise.all([server.connect(serverSide), client.connect(clientSide)])),
          () => Effect.promise(() => Promise.all([client.close(), server.close()]))
        )
        const result = yield* call(client, "acme_market_broken", {})
        const body = refusal(result)
        assert.strictEqual(body.code, "INTERNAL")
        assert.match(body.request_id, /^req_/)
        assert.notInclude(JSON.stringify(result), "secret")
      }))

    it.scoped("refuses every call when the host passed no principal", () =>
      Effect.gen(function*() {
        const tools = yield* MarketTools.make()
        const server = new McpServer({ name: "service-test", version: "0.0.0" })
        tools.register(server, Option.none())
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
        const client = new Client({ name: "test-client", version: "0.0.0" })
        yield* Effect.acquireRelease(
          Effect.promise(() => Promise.all([server.connect(serverSide), client.connect(clientSide)])),
          () => Effect.promise(() => Promise.all([client.close(), server.close()]))
        )
        const body = refusal(yield* call(client, "service_market_capabilities", {}))
        assert.strictEqual(body.code, "UNAUTHENTICATED")
      }))
  })
}
