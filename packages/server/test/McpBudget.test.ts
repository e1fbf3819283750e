/**
 * What an agent pays on the whole application (every bundle's groups, as `npm start` serves them): the tool list
 * an owner's session receives, the tools narrower credentials are shown, the size of a 10-row supplier search,
 * and the session's instructions (docs/decisions/0074). The official 1.x client connects in process to the web
 * handler built with the host's own options.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as App from "@service/app/App"
import * as Fixture from "@service/conformance/Fixture"
import { Crypto } from "@service/core/Crypto"
import * as Operation from "@service/core/Operation"
import type { Principal } from "@service/core/Principal"
import * as McpHandler from "@service/mcp/McpHandler"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as McpRoute from "../src/McpRoute.js"

const toolNames = (keep: (op: Operation.AnyOperation<unknown>) => boolean) =>
  App.app.groups.flatMap((group) =>
    Operation.servedOn(group, "mcp").filter(keep).map((op) => Operation.toolName("service", group.mcp.namespace, op.name))
  ).sort()

const connect = (web: McpHandler.WebHandler, principal: Principal) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "budget", version: "0.0.0" })
      const fetch = (url: string | URL, init?: RequestInit) => web.handle(new Request(url, init), principal)
      await client.connect(new StreamableHTTPClientTransport(new URL("http://mcp.test/mcp"), { fetch }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

// Every field the spec's envelope requires, and the three the MCP result adds.
const SearchAnswer = Schema.Struct({
  schemaVersion: Schema.Literal("market-data/domain/1"),
  requestId: Schema.String,
  operation: Schema.Literal("search_suppliers"),
  interpretedRequest: Schema.Struct({ normalizations: Schema.Array(Schema.Unknown) }),
  results: Schema.Array(Schema.Struct({
    evidence_category: Schema.String,
    evidence_category_label: Schema.String,
    record_ref: Schema.String,
    record_fingerprint: Schema.String
  })),
  page: Schema.Struct({ limit: Schema.Number, returned: Schema.Number, hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) }),
  coverage: Schema.NonEmptyArray(Schema.Struct({ licensedForDisplay: Schema.Boolean, visibleRows: Schema.Number })),
  corpusBasis: Schema.Struct({ snapshotId: Schema.String }),
  semanticWarnings: Schema.Array(Schema.Unknown),
  provenance: Schema.Array(Schema.Struct({ record_ref: Schema.String })),
  diagnostics: Schema.Struct({ elapsedMs: Schema.Number, rowsExamined: Schema.Number, truncated: Schema.Boolean }),
  shown: Schema.Number,
  has_more: Schema.Boolean,
  next_action: Schema.String
})

const ForbiddenAnswer = Schema.Struct({
  code: Schema.Literal("FORBIDDEN"),
  reason: Schema.Literal("missing_scope"),
  required_scopes: Schema.Array(Schema.String),
  request_id: Schema.String
})

const textJson = (result: unknown): unknown => {
  const decoded = Schema.decodeUnknownSync(Schema.Struct({ content: Schema.Tuple(Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })) }))(result)
  return JSON.parse(decoded.content[0].text)
}

// Titles and descriptions Effect derives from its own annotations: never shown to a model.
const annotationNames = /"title":"(?:[A-Za-z]+\(.*?\)|Trimmed|NonEmptyString|Int|unknown)"|a string that will be trimmed|character\(s\)|item\(s\)/

const appLayer = (target: TestDatabase.TestDatabaseTarget) =>
  App.app.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, Fixture.appOptions).pipe(
    Layer.provide(Fixture.config),
    Layer.orDie
  )

for (const target of TestDatabase.targets()) {
  layer(appLayer(target), { timeout: "300 seconds" })(`MCP budget of the whole application on ${target.name}`, (it) => {
    describe("tools/list", () => {
      it.scoped("an owner is shown every tool in at most 60,000 characters, with no output schema or annotation name", () =>
        Effect.gen(function*() {
          const web = yield* McpHandler.makeWebHandler(McpRoute.handlerOptions(App.app))
          const seeded = yield* Fixture.seed(App.app, "mcp-budget-owner")
          const client = yield* connect(web, seeded.seats.workspace.as.owner.caller)
          const listed = yield* Effect.promise(() => client.listTools())
          const text = JSON.stringify(listed)
          assert.deepStrictEqual(listed.tools.map((tool) => tool.name).sort(), toolNames(() => true))
          assert.isAtMost(text.length, 60_000, `tools/list is ${text.length} characters`)
          assert.isTrue(listed.tools.every((tool) => tool.outputSchema === undefined))
          assert.notMatch(text, annotationNames)
          // Real descriptions stay, and a tool still says what it refuses.
          const unlock = listed.tools.find((tool) => tool.name === "service_contact_unlock")
          assert.include(unlock?.description, "quote_expired")
        }))

      it.scoped("a narrower credential is shown only what its scopes and role allow; a call to another tool is refused, naming the scope", () =>
        Effect.gen(function*() {
          const web = yield* McpHandler.makeWebHandler(McpRoute.handlerOptions(App.app))
          const seeded = yield* Fixture.seed(App.app, "mcp-budget-narrow")
          const { reader, member } = seeded.seats.workspace.as

          const readerClient = yield* connect(web, reader.caller)
          const readerTools = (yield* Effect.promise(() => readerClient.listTools())).tools
          const readerScopes = reader.caller.scopes
          assert.deepStrictEqual(
            readerTools.map((tool) => tool.name).sort(),
            toolNames((op) => op.scopes.some((scope) => readerScopes.includes(scope)))
          )
          assert.isTrue(readerTools.every((tool) => tool.annotations?.readOnlyHint === true), "a read-only key is shown read-only tools")
          const refused = yield* Effect.promise(() => readerClient.callTool({ name: "service_crm_contact_create", arguments: { email: "a@example.com" } }))
          assert.isTrue(refused.isError)
          const forbidden = Schema.decodeUnknownSync(ForbiddenAnswer)(textJson(refused))
          assert.deepStrictEqual(forbidden.required_scopes, ["crm:write"])

          // A member holds every scope, but not the owner-or-admin tools.
          const memberClient = yield* connect(web, member.caller)
          const memberTools = (yield* Effect.promise(() => memberClient.listTools())).tools.map((tool) => tool.name)
          assert.include(memberTools, "service_crm_contact_create")
          assert.notInclude(memberTools, "service_crm_contact_erase")
          assert.notInclude(memberTools, "service_crm_pipeline_create")
        }))
    })

    it.scoped("a 10-row supplier search answers in at most 12,000 characters, with every envelope field and one text block", () =>
      Effect.gen(function*() {
        const web = yield* McpHandler.makeWebHandler(McpRoute.handlerOptions(App.app))
        const seeded = yield* Fixture.seed(App.app, "mcp-budget-search")
        const client = yield* connect(web, seeded.seats.workspace.as.owner.caller)
        yield* Effect.promise(() => client.listTools())
        const result = yield* Effect.promise(() => client.callTool({ name: "service_market_search_suppliers", arguments: { state: "Zacatecas", limit: 10 } }))
        // What the client holds: the text the model reads, plus everything else in the result (one text block here,
        // and no structuredContent). The text is counted as the characters it has, not as escaped inside the JSON.
        const texts = Schema.decodeUnknownSync(Schema.Struct({ content: Schema.Array(Schema.Struct({ text: Schema.String })) }))(result).content
        const rest = JSON.stringify({ ...result, content: texts.map(() => ({ type: "text", text: "" })) }).length
        const size = texts.reduce((sum, block) => sum + block.text.length, rest)
        assert.isAtMost(size, 12_000, `the result is ${size} characters`)
        assert.notProperty(result, "structuredContent")
        const answer = Schema.decodeUnknownSync(SearchAnswer)(textJson(result))
        assert.strictEqual(answer.results.length, 10)
        assert.strictEqual(answer.shown, 10)
        // The spec: a row's ref is the same in the row and in its provenance entry.
        assert.deepStrictEqual(answer.provenance.map((entry) => entry.record_ref), answer.results.map((row) => row.record_ref))
      }))

    it.scoped("the session starts with instructions written for agents", () =>
      Effect.gen(function*() {
        const web = yield* McpHandler.makeWebHandler(McpRoute.handlerOptions(App.app))
        const seeded = yield* Fixture.seed(App.app, "mcp-budget-instructions")
        const client = yield* connect(web, seeded.seats.workspace.as.reader.caller)
        const instructions = client.getInstructions() ?? ""
        for (const needed of ["service_market_capabilities", "coverage", "trust", "recovery.action", "cursor", "credit"]) {
          assert.include(instructions, needed)
        }
        assert.isAtMost(instructions.split(/\s+/).length, 450)
      }))
  })
}
