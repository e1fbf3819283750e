import { assert, describe, layer } from "@effect/vitest"
import * as Operation from "@service/core/Operation"
import * as RateLimiter from "@service/core/RateLimiter"
import { MarketDataBlock } from "@service/market-contract/MarketError"
import * as Operations from "@service/market-contract/Operations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as McpHandler from "../src/McpHandler.js"
import * as Method from "@service/core/Method"
import { connect, generations } from "./support/Clients.js"
import { acquireWebHandler, layerFor, meteredUnits, principalWith } from "./support/Fixture.js"

// An extra JSON-RPC method, as `events/*` will be: decoded params, the caller's principal, typed errors.
const echo = Method.make({
  method: "acme/echo",
  params: Schema.Struct({ word: Schema.String }),
  handler: ({ word }, principal) => {
    if (word === "refuse") {
      return Effect.fail(new Method.MethodError({ code: -32015, message: "CallbackEndpointError", data: { reason: "challenge_failed" } }))
    }
    if (word === "boom") return Effect.die(new Error("secret internals"))
    return Effect.succeed({ word, workspace: principal.workspace.slug })
  }
})

const handlerWith = (options: Partial<McpHandler.Options<Operations.Requirements, never>> = {}) =>
  acquireWebHandler(
    McpHandler.makeWebHandler({ name: "service-test", version: "0.0.0", groups: [Operations.group], methods: [echo], ...options })
  )

const ToolFields = { shown: Schema.Number, has_more: Schema.Boolean, next_action: Schema.String }

const SearchResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  operation: Schema.Literal("search_suppliers"),
  results: Schema.Array(Schema.Struct({ record_ref: Schema.String, record_fingerprint: Schema.String })),
  page: Schema.Struct({ returned: Schema.Number, hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) }),
  ...ToolFields
})

const SingleResult = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  results: Schema.Struct({ record_fingerprint: Schema.String }),
  ...ToolFields
})

const CapabilitiesResult = Schema.Struct({
  results: Schema.Struct({ operations: Schema.Array(Schema.Struct({ operation: Schema.String, mcpTool: Schema.String })) })
})

const Refusal = Schema.Struct({
  code: Schema.Literal("VALIDATION_FAILED"),
  message: Schema.String,
  request_id: Schema.String,
  market_data: MarketDataBlock
})

const OtherError = Schema.Struct({
  code: Schema.Literal("FORBIDDEN", "INTERNAL", "RATE_LIMITED"),
  message: Schema.String,
  request_id: Schema.String,
  retry_after_seconds: Schema.optional(Schema.Number),
  reason: Schema.optional(Schema.String),
  required_scopes: Schema.optional(Schema.Array(Schema.String))
})

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => Schema.decodeUnknownSync(schema)(value)

// Error bodies are checked field for field: nothing more than the documented shape goes out.
const decodeExact = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(value)

// An output schema: one object, success or one of the error shapes.

const searchArgs = { state: "Zacatecas", scian_codes: ["212"] }

// One character of a sealed value changed to another valid one.
const tamper = (ref: string): string => {
  const at = Math.floor(ref.length / 2)
  return `${ref.slice(0, at)}${ref[at] === "A" ? "B" : "A"}${ref.slice(at + 1)}`
}

const expectedVersion = { "1.x": "2025-11-25", "2.x modern": "2026-07-28", "2.x legacy": "2025-11-25" } as const

// -----------------------------------------------------------------------------
// Raw JSON-RPC batches (2025-era clients may send them; the official clients never do)
// -----------------------------------------------------------------------------

const toolCall = (id: number, name: string, args: Readonly<Record<string, unknown>>, meta?: Readonly<Record<string, unknown>>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }
})

const post = (body: unknown, headers: Readonly<Record<string, string>> = { "mcp-protocol-version": "2025-03-26" }) =>
  new Request("http://mcp.test/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body)
  })

const RpcMessage = Schema.Struct({
  id: Schema.NullOr(Schema.Union(Schema.Number, Schema.String)),
  result: Schema.optional(Schema.Struct({
    isError: Schema.optional(Schema.Boolean),
    structuredContent: Schema.optional(Schema.Unknown),
    content: Schema.Tuple(Schema.Struct({ type: Schema.Literal("text"), text: Schema.parseJson() }))
  })),
  error: Schema.optional(Schema.Struct({ code: Schema.Number, message: Schema.String }))
})

// The legacy transport answers a request POST with an SSE stream, one `data:` line per response.
const messagesOf = (response: Response) =>
  Effect.promise(() => response.text()).pipe(
    Effect.map((text) => {
      const json = response.headers.get("content-type")?.includes("text/event-stream") === true
        ? text.split("\n").filter((line) => line.startsWith("data: ")).map((line): unknown => JSON.parse(line.slice(6)))
        : [JSON.parse(text)].flat()
      return json.map((message) => Schema.decodeUnknownSync(RpcMessage)(message))
    })
  )

for (const target of TestDatabase.targets()) {
  layer(layerFor(target), { timeout: "180 seconds" })(`MCP web handler on ${target.name}`, (it) => {
    for (const generation of generations) {
      describe(`client ${generation}`, () => {
        it.scoped("negotiates its era and lists one tool per operation served on MCP, annotated from the declaration", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const client = yield* connect(generation, web, yield* principalWith(["market_data:read"]))
            assert.strictEqual(client.protocolVersion, expectedVersion[generation])
            const served = Operation.servedOn(Operations.group, "mcp")
            assert.deepStrictEqual(
              client.tools.map((tool) => tool.name).sort(),
              served.map((op) => Operation.toolName("service", "market", op.name)).sort()
            )
            // capabilities_compact and coverage are HTTP-only.
            assert.notInclude(client.tools.map((tool) => tool.name), "service_market_coverage")
            for (const op of served) {
              const tool = client.tools.find((candidate) => candidate.name === Operation.toolName("service", "market", op.name))
              // Only the hints a client cannot assume (a market tool is read-only and closed-world).
              assert.deepStrictEqual(tool?.annotations, { readOnlyHint: true, openWorldHint: false })
              assert.deepStrictEqual(tool?._meta, op.metered ? { "service/metered": true } : undefined)
              assert.strictEqual(tool?.inputSchema.type, "object")
              // No output schema: the answer is one JSON text block (decision 0074).
              assert.isUndefined(tool?.outputSchema)
            }
            const search = client.tools.find((tool) => tool.name === "service_market_search_suppliers")
            assert.notInclude(Object.keys(search?.inputSchema.properties ?? {}), "source_slugs")
          }))

        it.scoped("searches, pages with the cursor named in next_action, and reads one by the ref of a row", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const client = yield* connect(generation, web, yield* principalWith(["market_data:read"]))
            const first = yield* client.call("service_market_search_suppliers", { ...searchArgs, limit: 1 })
            assert.isFalse(first.isError)
            // One JSON text block, nothing beside it (decision 0074).
            assert.isUndefined(first.structuredContent)
            const page = decode(SearchResult, first.text)
            assert.strictEqual(page.shown, 1)
            assert.isTrue(page.has_more)
            const cursor = page.page.nextCursor ?? ""
            assert.strictEqual(page.next_action, "call again with the same arguments and cursor set to page.nextCursor to read more")
            const second = decode(
              SearchResult,
              (yield* client.call("service_market_search_suppliers", { ...searchArgs, limit: 1, cursor })).text
            )
            assert.notStrictEqual(second.results[0]?.record_fingerprint, page.results[0]?.record_fingerprint)

            const got = yield* client.call("service_market_get_supplier", { record_ref: page.results[0]?.record_ref ?? "" })
            assert.isFalse(got.isError)
            const single = decode(SingleResult, got.text)
            assert.strictEqual(single.results.record_fingerprint, page.results[0]?.record_fingerprint)
            assert.strictEqual(single.shown, 1)
            assert.strictEqual(single.next_action, "done")
          }))

        it.scoped("a refusal reaches the caller: code, request id and the market_data block, structured and as text", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const client = yield* connect(generation, web, yield* principalWith(["market_data:read"]))
            const search = decode(SearchResult, (yield* client.call("service_market_search_suppliers", searchArgs)).text)
            const refused = yield* client.call("service_market_get_supplier", { record_ref: tamper(search.results[0]?.record_ref ?? "") })
            assert.isTrue(refused.isError)
            const body = decodeExact(Refusal, refused.text)
            assert.match(body.request_id, /^req_/)
            assert.strictEqual(body.market_data.semantic_code, "invalid_record_ref")
            assert.strictEqual(body.market_data.recovery.action, "search_again")
            assert.isNotEmpty(body.market_data.suggested_correction)
            // The text is the whole answer: no structured copy beside it.
            assert.isUndefined(refused.structuredContent)
          }))

        it.scoped("structural refusals come from the operation's own decode: unknown property, closed set, canonical-only field", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const client = yield* connect(generation, web, yield* principalWith(["market_data:read"]))
            const unknown = decodeExact(Refusal, (yield* client.call("service_market_search_suppliers", { ...searchArgs, colour: "blue" })).text)
            assert.strictEqual(unknown.market_data.semantic_code, "invalid_field_value")
            assert.strictEqual(unknown.market_data.field, "colour")
            const closed = decode(
              Refusal,
              (yield* client.call("service_market_search_suppliers", { ...searchArgs, query: "oro", query_mode: "fuzzy" })).text
            )
            assert.deepStrictEqual(closed.market_data.allowed_values, ["auto", "exact_phrase", "all_terms", "any_terms"])
            const canonical = decode(
              Refusal,
              (yield* client.call("service_market_search_suppliers", { ...searchArgs, source_slugs: ["denue"] })).text
            )
            assert.strictEqual(canonical.market_data.field, "source_slugs")
          }))

        it.scoped("refuses a principal without any of the operation's scopes; accepts the transitional context:read", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const outsider = yield* connect(generation, web, yield* principalWith(["commercial:read"]))
            // Not listed for it (decision 0074), yet a call is answered with the refusal that says what is missing.
            assert.deepStrictEqual(outsider.tools.map((tool) => tool.name), [])
            const forbidden = yield* outsider.call("service_market_search_suppliers", searchArgs)
            assert.isTrue(forbidden.isError)
            const body = decodeExact(OtherError, forbidden.text)
            assert.strictEqual(body.code, "FORBIDDEN")
            assert.strictEqual(body.reason, "missing_scope")
            assert.deepStrictEqual(body.required_scopes, ["market_data:read", "context:read"])
            assert.match(body.request_id, /^req_/)
            const transitional = yield* connect(generation, web, yield* principalWith(["context:read"]))
            assert.isFalse((yield* transitional.call("service_market_capabilities", {})).isError)
          }))

        it.scoped("serves an extra JSON-RPC method with decoded params and the caller's principal", () =>
          Effect.gen(function*() {
            const web = yield* handlerWith()
            const principal = yield* principalWith(["market_data:read"])
            const client = yield* connect(generation, web, principal)
            const answered = decode(
              Schema.Struct({ word: Schema.String, workspace: Schema.String, resultType: Schema.optional(Schema.String) }),
              yield* client.request("acme/echo", { word: "hola" })
            )
            assert.deepStrictEqual([answered.word, answered.workspace], ["hola", principal.workspace.slug])

            const invalid = yield* Effect.flip(client.request("acme/echo", { word: 7 }))
            assert.strictEqual(invalid.code, -32602)
            assert.deepStrictEqual(invalid.data, { reason: "invalid_arguments", field: "word" })

            const refused = yield* Effect.flip(client.request("acme/echo", { word: "refuse" }))
            assert.strictEqual(refused.code, -32015)
            assert.deepStrictEqual(refused.data, { reason: "challenge_failed" })

            const defect = yield* Effect.flip(client.request("acme/echo", { word: "boom" }))
            assert.strictEqual(defect.code, -32603)
            assert.notInclude(JSON.stringify(defect), "secret")
            assert.match(JSON.stringify(defect.data), /"request_id":"req_/)
          }))
      })
    }

    it.scoped("meters each successful metered call once; free calls and refusals cost nothing", () =>
      Effect.gen(function*() {
        const web = yield* handlerWith()
        const principal = yield* principalWith(["market_data:read"])
        const client = yield* connect("2.x modern", web, principal)
        yield* client.call("service_market_search_suppliers", searchArgs)
        yield* client.call("service_market_capabilities", {})
        yield* client.call("service_market_search_suppliers", { ...searchArgs, colour: "blue" })
        assert.strictEqual(yield* meteredUnits(principal), 1)
      }))

    it.scoped("answers RATE_LIMITED with retry_after_seconds once the workspace's window is full", () =>
      Effect.gen(function*() {
        const web = yield* handlerWith().pipe(Effect.provide(Layer.scoped(RateLimiter.RateLimiter, RateLimiter.makeSql(2))))
        const client = yield* connect("1.x", web, yield* principalWith(["market_data:read"]))
        assert.isFalse((yield* client.call("service_market_capabilities", {})).isError)
        assert.isFalse((yield* client.call("service_market_capabilities", {})).isError)
        const limited = yield* client.call("service_market_capabilities", {})
        assert.isTrue(limited.isError)
        const body = decodeExact(OtherError, limited.text)
        assert.strictEqual(body.code, "RATE_LIMITED")
        assert.isAtLeast(body.retry_after_seconds ?? 0, 1)
        assert.isAtMost(body.retry_after_seconds ?? 0, 60)
      }))

    it.scoped("answers a defect with INTERNAL and the request id, no internals", () =>
      Effect.gen(function*() {
        const broken: Operation.AnyOperation<Operations.Requirements> = {
          ...Operations.marketCapabilities,
          name: "broken",
          runModel: () => Effect.die(new Error("secret internals"))
        }
        const web = yield* handlerWith({ groups: [{ ...Operations.group, operations: [broken] }] })
        const client = yield* connect("1.x", web, yield* principalWith(["market_data:read"]))
        assert.deepStrictEqual(client.tools.map((tool) => tool.name), ["service_market_broken"])
        const result = yield* client.call("service_market_broken", {})
        const body = decodeExact(OtherError, result.text)
        assert.strictEqual(body.code, "INTERNAL")
        assert.match(body.request_id, /^req_/)
        assert.notInclude(JSON.stringify(result), "secret")
      }))

    it.scoped("a host prefix names the tools and the tools capabilities lists", () =>
      Effect.gen(function*() {
        const web = yield* handlerWith({ prefix: "acme" })
        const client = yield* connect("2.x modern", web, yield* principalWith(["market_data:read"]))
        const served = Operation.servedOn(Operations.group, "mcp").map((op) => Operation.toolName("acme", "market", op.name))
        assert.deepStrictEqual(client.tools.map((tool) => tool.name).sort(), [...served].sort())
        const capabilities = decode(
          Schema.Struct({ text: CapabilitiesResult }),
          { text: (yield* client.call("acme_market_capabilities", {})).text }
        )
        assert.deepStrictEqual(
          capabilities.text.results.operations.map((op) => op.mcpTool),
          served
        )
      }))

    describe("request bodies", () => {
      const chunked = (bytes: Uint8Array) =>
        new Request("http://mcp.test/mcp", {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" },
          // No Content-Length: the body streams in chunks, as a client's chunked transfer does.
          body: new ReadableStream<Uint8Array>({
            start(controller) {
              for (let at = 0; at < bytes.length; at += 16 * 1024) controller.enqueue(bytes.slice(at, at + 16 * 1024))
              controller.close()
            }
          }),
          duplex: "half"
        } as RequestInit)

      it.scoped("a chunked body over 256 KiB is 413, whatever its length header says (none)", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const principal = yield* principalWith(["market_data:read"])
          const big = new TextEncoder().encode(JSON.stringify(toolCall(1, "service_market_search_suppliers", { ...searchArgs, query: "x".repeat(300 * 1024) })))
          const response = yield* Effect.promise(() => web.handle(chunked(big), principal))
          assert.strictEqual(response.status, 413)
          assert.strictEqual(yield* meteredUnits(principal), 0)
          // Under the limit, the same chunked transfer is served.
          const small = new TextEncoder().encode(JSON.stringify(toolCall(2, "service_market_capabilities", {})))
          assert.strictEqual((yield* Effect.promise(() => web.handle(chunked(small), principal))).status, 200)
        }))

      it.scoped("a compressed body is 415, never inflated", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const principal = yield* principalWith(["market_data:read"])
          const response = yield* Effect.promise(() =>
            web.handle(post(toolCall(1, "service_market_capabilities", {}), { "mcp-protocol-version": "2025-03-26", "content-encoding": "gzip" }), principal)
          )
          assert.strictEqual(response.status, 415)
        }))

      it.scoped("nesting deeper than 64 levels is an invalid request, before any schema walks it", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const principal = yield* principalWith(["market_data:read"])
          // Written as text: JSON.stringify itself recurses.
          const text = JSON.stringify(toolCall(1, "service_market_search_suppliers", { ...searchArgs, query: "DEEP" }))
            .replace("\"DEEP\"", `${"[".repeat(10_000)}${"]".repeat(10_000)}`)
          const request = new Request("http://mcp.test/mcp", {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" },
            body: text
          })
          const response = yield* Effect.promise(() => web.handle(request, principal))
          assert.strictEqual(response.status, 400)
          const [message] = yield* messagesOf(response)
          assert.strictEqual(message?.error?.code, -32600)
          assert.include(message?.error?.message, "deeper than 64 levels")
        }))

      it.scoped("a NUL or a lone surrogate in tool arguments is the tool's structural refusal, as REST's 400", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const principal = yield* principalWith(["market_data:read"])
          for (const query of ["a\u0000b", "a\ud800b"]) {
            const answered = yield* messagesOf(yield* Effect.promise(() => web.handle(post(toolCall(1, "service_market_search_suppliers", { ...searchArgs, query })), principal)))
            const result = answered[0]?.result
            assert.strictEqual(result?.isError, true, query)
            const refusal = decodeExact(Refusal, result?.content[0].text)
            assert.strictEqual(refusal.market_data.semantic_code, "invalid_field_value", query)
            assert.strictEqual(refusal.market_data.field, "query", query)
          }
          assert.strictEqual(yield* meteredUnits(principal), 0)
        }))
    })

    describe("JSON-RPC batches", () => {
      it.scoped("a batch over the cap is refused with the cap before anything runs", () =>
        Effect.gen(function*() {
          const principal = yield* principalWith(["market_data:read"])
          const web = yield* handlerWith()
          const eleven = Array.from({ length: 11 }, (_, i) => toolCall(i + 1, "service_market_search_suppliers", searchArgs))
          const response = yield* Effect.promise(() => web.handle(post(eleven), principal))
          assert.strictEqual(response.status, 400)
          const [message] = yield* messagesOf(response)
          assert.strictEqual(message?.error?.code, -32600)
          assert.include(message?.error?.message, "at most 10 messages")
          assert.include(message?.error?.message, "holds 11")
          assert.strictEqual(yield* meteredUnits(principal), 0)

          // The host may choose its own cap.
          const strict = yield* handlerWith({ maxBatchSize: 2 })
          const three = yield* Effect.promise(() => strict.handle(post(eleven.slice(0, 3)), principal))
          assert.strictEqual(three.status, 400)
          assert.include((yield* messagesOf(three))[0]?.error?.message, "at most 2 messages")
        }))

      it.scoped("each call of a batch is authorized, rate-limited and metered like a single call", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const reader = yield* principalWith(["market_data:read"])
          const batch = [1, 2, 3].map((id) => toolCall(id, "service_market_search_suppliers", searchArgs))
          const answered = yield* messagesOf(yield* Effect.promise(() => web.handle(post(batch), reader)))
          assert.deepStrictEqual(answered.map((message) => message.id).sort(), [1, 2, 3])
          for (const message of answered) assert.notStrictEqual(message.result?.isError, true)
          // Each call ran on its own: its own request id.
          const requestIds = answered.map((message) =>
            Schema.decodeUnknownSync(Schema.Struct({ requestId: Schema.String }))(message.result?.content[0].text).requestId
          )
          assert.strictEqual(new Set(requestIds).size, 3)
          assert.strictEqual(yield* meteredUnits(reader), 3)

          const outsider = yield* principalWith(["commercial:read"])
          const forbidden = yield* messagesOf(yield* Effect.promise(() => web.handle(post(batch), outsider)))
          assert.deepStrictEqual(forbidden.map((message) => decodeExact(OtherError, message.result?.content[0].text).code), [
            "FORBIDDEN",
            "FORBIDDEN",
            "FORBIDDEN"
          ])

          const limitedWeb = yield* handlerWith().pipe(Effect.provide(Layer.scoped(RateLimiter.RateLimiter, RateLimiter.makeSql(2))))
          const limitedReader = yield* principalWith(["market_data:read"])
          const limited = yield* messagesOf(yield* Effect.promise(() => limitedWeb.handle(post(batch), limitedReader)))
          const codes = limited.map((message) => message.result?.isError === true ? decodeExact(OtherError, message.result.content[0].text).code : "ok")
          assert.deepStrictEqual(codes.sort(), ["RATE_LIMITED", "ok", "ok"])
          assert.strictEqual(yield* meteredUnits(limitedReader), 2)
        }))

      it.scoped("under the cap, the SDK serves a batch whatever 2025-era version the header names", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const principal = yield* principalWith(["market_data:read"])
          for (const version of ["2025-03-26", "2025-06-18", "2025-11-25"]) {
            const batch = [1, 2].map((id) => toolCall(id, "service_market_capabilities", {}))
            const answered = yield* messagesOf(yield* Effect.promise(() => web.handle(post(batch, { "mcp-protocol-version": version }), principal)))
            assert.deepStrictEqual(answered.map((message) => message.result?.isError === true).sort(), [false, false], version)
          }
        }))

      it.scoped("the 2026-07-28 era refuses batches outright (the SDK's own rule)", () =>
        Effect.gen(function*() {
          const web = yield* handlerWith()
          const meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
          }
          const batch = [1, 2].map((id) => toolCall(id, "service_market_capabilities", {}, meta))
          const principal = yield* principalWith(["market_data:read"])
          const response = yield* Effect.promise(() => web.handle(post(batch, { "mcp-protocol-version": "2026-07-28" }), principal))
          assert.strictEqual(response.status, 400)
          assert.strictEqual((yield* messagesOf(response))[0]?.error?.code, -32600)
        }))
    })
  })
}
