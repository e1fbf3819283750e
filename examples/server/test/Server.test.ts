import { generateWebhookSecret } from "@service/core/Crypto"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Crypto } from "@service/core/Crypto"
import * as Leaks from "@service/core/Leaks"
import * as Operation from "@service/core/Operation"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { Validator } from "@seriousme/openapi-schema-validator"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import * as Intake from "@service/door/Intake"
import * as Sources from "@service/door/Sources"
import * as StandardWebhooks from "@service/door/StandardWebhooks"
import * as Schedule from "effect/Schedule"
import { ensureDemo } from "@service/server/Demo"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as Server from "@service/server/Server"
import { type Answer, jsonOf, rest } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const KEY = "svc_key_server_e2e_0123456789abcdef"

class Running extends Context.Tag("Running")<Running, {
  readonly port: number
  readonly baseUrl: string
  readonly scan: ReadonlyArray<string>
}>() {}

const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { port: address.port, baseUrl: `http://127.0.0.1:${address.port}`, scan: yield* forbiddenValues }
  })
)

const prepared = Layer.effectDiscard(ensureDemo(Option.some(Redacted.make(KEY))).pipe(Effect.orDie))

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

// One server per database target, shared by the tests of this file, over a copy of the run's prepared demo corpus
// (`TestDatabase.prepared`). No wall-clock budget: a loaded machine makes the searches slower, not wrong.
for (const target of TestDatabase.targets()) {
  const services = App.layer(TestDatabase.prepared(target, DemoSnapshot.over(App.migrations)), Crypto.layerTest)
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(services),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`server runtime on ${target.name}`, (it) => {
    const mcpClient = (baseUrl: string, headers: Record<string, string>) =>
      Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new Client({ name: "e2e", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
          await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }))
          return client
        }),
        (client) => Effect.promise(() => client.close())
      )

    it.scoped("serves MCP at /mcp through the official client: tools annotated as declared, envelope as the JSON text", () =>
      Effect.gen(function*() {
        const { baseUrl, scan } = yield* Running
        const client = yield* mcpClient(baseUrl, { "x-api-key": KEY })
        const { tools } = yield* Effect.promise(() => client.listTools())
        // The demo owner key holds every scope but commercial:activate: it is shown every tool but the one that needs it.
        assert.deepStrictEqual(
          tools.map((t) => t.name).sort(),
          App.groups.flatMap((group) =>
            Operation.servedOn(group, "mcp")
              .filter((op) => !(op.scopes.length === 1 && op.scopes[0] === "commercial:activate"))
              .map((op) => Operation.toolName("service", group.mcp.namespace, op.name))
          ).sort()
        )
        // Each tool says what its declaration says: the market reads are read-only, arrival_send_test writes.
        const declared = new Map(
          App.groups.flatMap((group) =>
            Operation.servedOn(group, "mcp").map((op) => [Operation.toolName("service", group.mcp.namespace, op.name), op.annotations.readOnly] as const)
          )
        )
        // A write tool leaves readOnlyHint out (MCP's default is false).
        for (const tool of tools) assert.strictEqual(tool.annotations?.readOnlyHint === true, declared.get(tool.name), tool.name)
        assert.strictEqual(declared.get("service_arrival_send_test"), false)
        assert.strictEqual(declared.get("service_arrival_read"), true)

        const bodies: Array<string> = []
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.promise(() => client.callTool({ name, arguments: args })).pipe(
            Effect.tap((result) => Effect.sync(() => bodies.push(JSON.stringify(result))))
          )
        const search = yield* call("service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"], limit: 5 })
        const content = Schema.decodeUnknownSync(SearchContent)(answerOf(search))
        assert.strictEqual(content.schemaVersion, "market-data/domain/1")
        assert.strictEqual(content.shown, 5)
        assert.strictEqual(content.has_more, content.page.hasMore)
        const ref = content.results[0]?.record_ref ?? ""
        assert.isAbove(ref.length, 20)

        const detail = yield* call("service_market_get_supplier", { record_ref: ref })
        assert.notStrictEqual(detail.isError, true)
        const refused = yield* call("service_market_get_supplier", { record_ref: tamper(ref) })
        assert.strictEqual(refused.isError, true)
        assert.strictEqual(Schema.decodeUnknownSync(RefusalContent)(answerOf(refused)).market_data.semantic_code, "invalid_record_ref")

        const next = content.page.nextCursor ?? ""
        const badCursor = yield* call("service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"], limit: 5, cursor: tamper(next) })
        assert.strictEqual(Schema.decodeUnknownSync(RefusalContent)(answerOf(badCursor)).market_data.semantic_code, "invalid_cursor")

        yield* call("service_market_capabilities", {})
        for (const state of ["CDMX", "Sonora", "Chihuahua", "Coahuila", "Durango"]) {
          yield* call("service_market_search_suppliers", { state, limit: 50 })
        }
        const leaked = Leaks.find(bodies, scan).flat()
        assert.deepStrictEqual(leaked, [], "a tool result leaked a source identity or a contact")
      }), 0)

    it.effect("serves REST under /api/v1 with the demo key, refuses without one, and serves OpenAPI and docs at the root", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const market = "/api/v1/workspaces/demo/market-data"
        const mcp = yield* rest(port, "POST", "/mcp", { "content-type": "application/json", "x-api-key": "wrong-key-000000000" }, "{}")
        assert.strictEqual(mcp.status, 401)
        // The good key beside a bad bearer token: two credentials are none, on /mcp as on REST.
        const both = yield* rest(port, "POST", "/mcp", { "content-type": "application/json", "x-api-key": KEY, authorization: "Bearer not-a-token" }, "{}")
        assert.strictEqual(both.status, 401)
        const anonymous = yield* rest(port, "GET", `${market}/coverage`)
        assert.strictEqual(anonymous.status, 401)
        assert.match(String(anonymous.headers["www-authenticate"]), /^Bearer realm=/)
        const capabilities = yield* rest(port, "GET", `${market}/capabilities?facets=states`, { "x-api-key": KEY })
        assert.strictEqual(capabilities.status, 200)
        assert.match(String(capabilities.headers["x-request-id"]), /^req_/)
        const search = yield* rest(
          port,
          "POST",
          `${market}/suppliers/search`,
          { "x-api-key": KEY, "content-type": "application/json" },
          JSON.stringify({ state: "Zacatecas", scian_codes: ["212"], limit: 3 })
        )
        assert.strictEqual(search.status, 200, search.text.slice(0, 300))
        const found = jsonOf(search.text)
        assert.isTrue(Predicate.isRecord(found) && Array.isArray(found["results"]) && found["results"].length > 0)
        const openapi = jsonOf((yield* rest(port, "GET", "/openapi.json")).text)
        assert.isTrue(Predicate.isRecord(openapi) && openapi["openapi"] === "3.1.0")
        // Everything a user can call is listed: every operation, the bundles' routes, the probes, and /mcp.
        const paths = Predicate.isRecord(openapi) && Predicate.isRecord(openapi["paths"]) ? Object.keys(openapi["paths"]) : []
        const openApiPath = (path: string) => path.replace(/:(\w+)/g, "{$1}")
        assert.includeMembers(paths, [
          ...App.groups.flatMap((group) => Operation.servedOn(group, "http").map((op) => openApiPath(Operation.httpPath(group, op)))),
          // A path prefix a standard describes elsewhere (the OAuth server's) is not listed.
          ...App.app.mounts.filter((mount) => mount.undocumented !== true).map((mount) => openApiPath(mount.path)),
          "/api/v1/door/{source_id}",
          "/api/v1/door/{source_id}/{token}",
          "/api/v1/s/{token}",
          "/api/v1/s/{token}/raw",
          "/health",
          "/ready",
          "/mcp"
        ])
        const valid = yield* Effect.promise(() => new Validator().validate(Predicate.isRecord(openapi) ? openapi : {}))
        assert.isTrue(valid.valid, JSON.stringify(valid.errors))
        const docs = yield* rest(port, "GET", "/docs")
        assert.strictEqual(docs.status, 200)
      }), 0)

    it.effect("the door takes a signed CloudEvent with 202, the embedded worker applies it, resends get 200, refusals are as the spec says", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const demo = Option.getOrThrow(yield* (yield* Accounts.Accounts).findWorkspaceBySlug("demo"))
        const { secret, source } = yield* (yield* Sources.Sources).create(demo.id, { name: "e2e form" })
        const body = JSON.stringify({
          specversion: "1.0",
          id: "e2e-1",
          source: "https://forms.example.com/e2e",
          type: "contact.created",
          data: { name: "Door E2E", email: "door.e2e@acme.mx" }
        })
        const headersFor = (key: string, id: string) => {
          const timestamp = Math.floor(Date.now() / 1000)
          return {
            "content-type": "application/cloudevents+json",
            "webhook-id": id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": StandardWebhooks.sign({ secret: key, id, timestamp, body: new TextEncoder().encode(body) })
          }
        }
        const path = `/api/v1/door/${source.id}`
        const first = yield* rest(port, "POST", path, headersFor(Redacted.value(secret), "msg_e2e_1"), body)
        assert.strictEqual(first.status, 202, first.text)
        const arrivalOf = (text: string) => {
          const answer = jsonOf(text)
          return Predicate.isRecord(answer) ? String(answer["arrival"]) : ""
        }
        const arrivalId = arrivalOf(first.text)
        const again = yield* rest(port, "POST", path, headersFor(Redacted.value(secret), "msg_e2e_1"), body)
        assert.strictEqual(again.status, 200)
        assert.strictEqual(arrivalOf(again.text), arrivalId)
        // The embedded worker applies it: no wall-clock budget, it is polled until it settles.
        const intake = yield* Intake.Intake
        const settled = yield* intake.arrival(demo.id, arrivalId).pipe(
          Effect.flatMap((found) => (Option.isSome(found) && found.value.status !== "received" ? Effect.succeed(found.value) : Effect.fail("waiting"))),
          Effect.retry(Schedule.spaced("200 millis"))
        )
        assert.strictEqual(settled.status, "accepted")
        // A forged signature and an unknown Source: the same 401 body but for the request id.
        const forged = headersFor(generateWebhookSecret(), "msg_e2e_2")
        const bad = yield* rest(port, "POST", path, forged, body)
        const unknown = yield* rest(port, "POST", "/api/v1/door/src_doesnotexist000000000000", forged, body)
        assert.deepStrictEqual([bad.status, unknown.status], [401, 401])
        const withoutId = (text: string) => text.replace(/"request_id":"[^"]*"/, "")
        assert.strictEqual(withoutId(bad.text), withoutId(unknown.text))
        assert.include(bad.text, "invalid_signature")
        const tooLarge = yield* rest(port, "POST", path, { ...forged, "content-length": String(300 * 1024) }, "x".repeat(300 * 1024))
        assert.strictEqual(tooLarge.status, 413)
      }), 0)

    it.effect("the door's secret address takes a multipart notice; a wrong token is the unknown Source's 401; unmapped and ignored answers", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const demo = Option.getOrThrow(yield* (yield* Accounts.Accounts).findWorkspaceBySlug("demo"))
        const sources = yield* Sources.Sources
        const form = yield* sources.create(demo.id, { name: "e2e jotform", type: "webhook", template: "jotform" })
        const token = Redacted.value(form.token ?? Redacted.make(""))
        const boundary = "e2eBoundary7"
        const body = [
          `--${boundary}\r\nContent-Disposition: form-data; name="submissionID"\r\n\r\n9000000000000000001`,
          `--${boundary}\r\nContent-Disposition: form-data; name="rawRequest"\r\n\r\n` +
          JSON.stringify({ q3_fullName: { first: "Door", last: "Multipart" }, q4_email: "door.multipart@acme.mx" }),
          `--${boundary}--\r\n`
        ].join("\r\n")
        const multipart = { "content-type": `multipart/form-data; boundary=${boundary}` }
        const first = yield* rest(port, "POST", `/api/v1/door/${form.source.id}/${token}`, multipart, body)
        assert.strictEqual(first.status, 202, first.text)
        const withoutId = (text: string) => text.replace(/"request_id":"[^"]*"/, "")
        const wrong = yield* rest(port, "POST", `/api/v1/door/${form.source.id}/tok_wrong`, multipart, body)
        const unknown = yield* rest(port, "POST", `/api/v1/door/src_doesnotexist000000000000/${token}`, multipart, body)
        assert.deepStrictEqual([wrong.status, unknown.status], [401, 401])
        assert.strictEqual(withoutId(wrong.text), withoutId(unknown.text))
        // A generic Source: unmapped before a mapping is confirmed, then a type it does not accept is ignored.
        const generic = yield* sources.create(demo.id, { name: "e2e generic", type: "webhook", verification: "secret-address" })
        const address = `/api/v1/door/${generic.source.id}/${Redacted.value(generic.token ?? Redacted.make(""))}`
        const json = { "content-type": "application/json" }
        const unmapped = yield* rest(port, "POST", address, json, JSON.stringify({ type: "signup", email: "door.generic@acme.mx" }))
        assert.strictEqual(unmapped.status, 202)
        assert.include(unmapped.text, `"status":"unmapped"`)
        yield* sources.confirmMapping(demo.id, generic.source.id, {
          event_type: ["type"],
          accepted_events: ["signup"],
          notice_id: [],
          items: null,
          fields: { email: ["email"] }
        })
        const ignored = yield* rest(port, "POST", address, json, JSON.stringify({ type: "pageview", email: "door.generic@acme.mx" }))
        assert.deepStrictEqual([ignored.status, jsonOf(ignored.text)], [200, { ignored: true, reason: "unsupported_event" }])
      }), 0)

    // Last: it spends this address's door allowance for the current minute.
    it.effect("the door takes at most 120 requests a minute from one address, then 429 with Retry-After", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const path = "/api/v1/door/src_doesnotexist000000000000"
        // A fixed window may turn over mid-run: within two windows' worth a 429 must come.
        let limited: Answer | undefined
        let served = 0
        while (limited === undefined && served <= 240) {
          const answer = yield* rest(port, "POST", path, { "content-type": "application/json" }, "{}")
          if (answer.status === 429) limited = answer
          else served += 1
        }
        assert.isDefined(limited, `no 429 after ${served} requests`)
        assert.isAtLeast(served, 1)
        assert.match(String(limited?.headers["retry-after"]), /^\d+$/)
        assert.include(limited?.text ?? "", "rate_limited")
      }), 0)
  })
}
