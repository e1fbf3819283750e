import * as HttpServer from "@effect/platform/HttpServer"
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Crypto } from "@service/core/Crypto"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AppLayer from "../src/AppLayer.js"
import { ensureDemo } from "../src/Bootstrap.js"
import * as Server from "../src/Server.js"

const KEY = "svc_key_server_e2e_0123456789abcdef"

class Running extends Context.Tag("Running")<Running, { readonly baseUrl: string; readonly scan: ReadonlyArray<string> }>() {}

const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}`, scan: yield* forbiddenValues }
  })
)

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* DemoCorpus.ensureLoaded
    yield* ensureDemo(Option.some(Redacted.make(KEY)))
  }).pipe(Effect.orDie)
)

const SearchContent = Schema.Struct({
  schemaVersion: Schema.String,
  shown: Schema.Number,
  has_more: Schema.Boolean,
  page: Schema.Struct({ hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) }),
  results: Schema.Array(Schema.Struct({ record_ref: Schema.String }))
})
const RefusalContent = Schema.Struct({ market_data: Schema.Struct({ semantic_code: Schema.String }) })

/** Flips one character in the middle of a sealed value. */
const tamper = (value: string): string => {
  const i = Math.floor(value.length / 2)
  return value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1)
}

for (const target of TestDatabase.targets()) {
  const services = AppLayer.make(target.layer, Crypto.layerTest)
  const Env = running.pipe(
    Layer.provideMerge(Server.layer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(services)
  )

  layer(Env, { timeout: "120 seconds", excludeTestServices: true })(`server runtime on ${target.name}`, (it) => {
    const mcpClient = (baseUrl: string, headers: Record<string, string>) =>
      Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "e2e", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
          await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )

    it.scoped("serves MCP at /mcp through the official client: read-only tools, envelope in structuredContent", () =>
      Effect.gen(function*() {
        const { baseUrl, scan } = yield* Running
        const client = yield* mcpClient(baseUrl, { "x-api-key": KEY })
        const { tools } = yield* Effect.promise(() => client.listTools())
        assert.deepStrictEqual(
          tools.map((t) => t.name).sort(),
          ["service_market_capabilities", "service_market_get_supplier", "service_market_search_suppliers"]
        )
        for (const tool of tools) assert.strictEqual(tool.annotations?.readOnlyHint, true)

        const bodies: Array<string> = []
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args })).pipe(
            Effect.tap((result) => Effect.sync(() => bodies.push(JSON.stringify(result))))
          )
        const search = yield* call("service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"], limit: 5 })
        const content = Schema.decodeUnknownSync(SearchContent)(search.structuredContent)
        assert.strictEqual(content.schemaVersion, "market-data/domain/1")
        assert.strictEqual(content.shown, 5)
        assert.strictEqual(content.has_more, content.page.hasMore)
        const ref = content.results[0]?.record_ref ?? ""
        assert.isAbove(ref.length, 20)

        const detail = yield* call("service_market_get_supplier", { record_ref: ref })
        assert.notStrictEqual(detail.isError, true)
        const refused = yield* call("service_market_get_supplier", { record_ref: tamper(ref) })
        assert.strictEqual(refused.isError, true)
        assert.strictEqual(Schema.decodeUnknownSync(RefusalContent)(refused.structuredContent).market_data.semantic_code, "invalid_record_ref")

        const next = content.page.nextCursor ?? ""
        const badCursor = yield* call("service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"], limit: 5, cursor: tamper(next) })
        assert.strictEqual(Schema.decodeUnknownSync(RefusalContent)(badCursor.structuredContent).market_data.semantic_code, "invalid_cursor")

        yield* call("service_market_capabilities", {})
        for (const state of ["CDMX", "Sonora", "Chihuahua", "Coahuila", "Durango"]) {
          yield* call("service_market_search_suppliers", { state, limit: 50 })
        }
        for (const body of bodies) for (const needle of scan) assert.notInclude(body, needle)
      }))

    it.scoped("refuses MCP and REST without a valid key, and serves OpenAPI at the host root", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const mcp = yield* Effect.promise(() =>
          fetch(`${baseUrl}/mcp`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "wrong-key-000000000" }, body: "{}" })
        )
        assert.strictEqual(mcp.status, 401)
        const rest = yield* Effect.promise(() => fetch(`${baseUrl}/api/v1/workspaces/demo/market-data/coverage`))
        assert.strictEqual(rest.status, 401)
        const openapi = yield* Effect.promise(() => fetch(`${baseUrl}/openapi.json`).then((r) => r.json()))
        assert.property(openapi, "openapi")
        const ok = yield* Effect.promise(() =>
          fetch(`${baseUrl}/api/v1/workspaces/demo/market-data/capabilities`, { headers: { "x-api-key": KEY } })
        )
        assert.strictEqual(ok.status, 200)
        assert.match(ok.headers.get("x-request-id") ?? "", /^req_/)
        const docs = yield* Effect.promise(() => fetch(`${baseUrl}/docs`))
        assert.strictEqual(docs.status, 200)
      }))
  })
}
