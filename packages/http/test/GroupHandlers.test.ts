import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, it as plain, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as HttpLayer from "../src/HttpLayer.js"
import * as RawHttp from "./support/RawHttp.js"
import * as ToyDomain from "./support/ToyDomain.js"
import * as ToyServer from "./support/ToyServer.js"

const withoutRequestId = (value: unknown): unknown => (Predicate.isRecord(value) ? { ...value, request_id: "" } : value)

const get = (path: string, key = ToyDomain.KEY) =>
  Effect.flatMap(RawHttp.port, (port) => RawHttp.send(port, { method: "GET", path, headers: { "x-api-key": key } }))

const post = (path: string, body: unknown, key = ToyDomain.KEY) =>
  Effect.flatMap(RawHttp.port, (port) =>
    RawHttp.send(port, {
      method: "POST",
      path,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body)
    }))

layer(ToyServer.layer, { excludeTestServices: true })("handlers derived from a group", (it) => {
  it.effect("reads the input from the body, the query, or the path plus the query", () =>
    Effect.gen(function*() {
      const body = yield* post(`${ToyServer.base}/echo`, { text: "hola", mode: "loud" })
      assert.deepStrictEqual(body.json, { text: "HOLA", count: 1 })
      const query = yield* get(`${ToyServer.base}/items?prefix=a`)
      assert.deepStrictEqual(query.json, { items: ["a1", "a2"] })
      const path = yield* get(`${ToyServer.base}/items/b%201?verbose=yes`)
      assert.deepStrictEqual(path.json, { item_id: "b 1", verbose: true })
      assert.match(String(path.headers["x-request-id"]), /^req_/)
    }))

  it.effect("a route whose input needs no body field takes an absent or empty body as {}; a body with content is held to the rules", () =>
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const touch = (headers: Readonly<Record<string, string>>, body?: string) =>
        RawHttp.send(port, { method: "POST", path: `${ToyServer.base}/items/a1/touch`, headers: { "x-api-key": ToyDomain.KEY, ...headers }, ...(body === undefined ? {} : { body }) })
      const touched = { item_id: "a1", note: null }
      // `curl -X POST <url>`: no content type, no body (and the same with content-length 0).
      for (const [headers, body] of [[{}, undefined], [{ "content-length": "0" }, ""], [{ "content-type": "application/json" }, ""], [{ "content-type": "application/json" }, " \n"]] as const) {
        const answer = yield* touch(headers, body)
        assert.strictEqual(answer.status, 200, `${JSON.stringify(headers)}: ${answer.text}`)
        assert.deepStrictEqual(answer.json, touched)
      }
      assert.deepStrictEqual((yield* touch({ "content-type": "application/json" }, "{}")).json, touched)
      assert.deepStrictEqual((yield* touch({ "content-type": "application/json" }, JSON.stringify({ note: "seen" }))).json, { item_id: "a1", note: "seen" })
      // A body with content: its media type, its JSON and its fields are checked as on any body route.
      assert.strictEqual((yield* touch({}, JSON.stringify({ note: "seen" }))).status, 415)
      assert.strictEqual((yield* touch({ "content-type": "text/plain" }, "")).status, 415)
      assert.strictEqual((yield* touch({ "content-type": "application/json" }, "{")).status, 400)
      assert.strictEqual((yield* touch({ "content-type": "application/json" }, JSON.stringify({ bogus: 1 }))).status, 400)
      assert.strictEqual((yield* touch({ "content-type": "application/json" }, JSON.stringify({ note: "x".repeat(21) }))).status, 400)
      // A route that needs a body field still refuses an empty one, naming it.
      const echo = yield* RawHttp.send(port, { method: "POST", path: `${ToyServer.base}/echo`, headers: { "x-api-key": ToyDomain.KEY } })
      assert.strictEqual(echo.status, 415)
      const emptyEcho = yield* RawHttp.send(port, { method: "POST", path: `${ToyServer.base}/echo`, headers: { "x-api-key": ToyDomain.KEY, "content-type": "application/json" }, body: "" })
      assert.strictEqual(emptyEcho.status, 400)
      // OpenAPI says the body may be left out.
      const spec = yield* get("/openapi.json")
      const paths = Predicate.isRecord(spec.json) && Predicate.isRecord(spec.json["paths"]) ? spec.json["paths"] : {}
      const route = paths["/api/v1/workspaces/{workspace}/toy/items/{itemId}/touch"]
      const post = Predicate.isRecord(route) && Predicate.isRecord(route["post"]) ? route["post"] : {}
      assert.isTrue(Predicate.isRecord(post["requestBody"]) && post["requestBody"]["required"] === false, JSON.stringify(post["requestBody"]))
      const echoRoute = paths["/api/v1/workspaces/{workspace}/toy/echo"]
      const echoPost = Predicate.isRecord(echoRoute) && Predicate.isRecord(echoRoute["post"]) ? echoRoute["post"] : {}
      assert.isTrue(Predicate.isRecord(echoPost["requestBody"]) && echoPost["requestBody"]["required"] !== false)
    }))

  it.effect("GET / points to the docs, the OpenAPI document and each group's discovery route; a browser is sent to the docs", () =>
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const index = yield* RawHttp.send(port, { method: "GET", path: "/" })
      assert.strictEqual(index.status, 200, index.text)
      assert.deepInclude(index.json, { docs: "/docs", openapi: "/openapi.json" })
      const discovery = Predicate.isRecord(index.json) ? index.json["discovery"] : undefined
      assert.deepStrictEqual(discovery, [{ group: "Toy", path: "/api/v1/workspaces/{workspace}/toy/items" }])
      const browser = yield* RawHttp.send(port, { method: "GET", path: "/", headers: { accept: "text/html,application/xhtml+xml" } })
      assert.strictEqual(browser.status, 302)
      assert.strictEqual(browser.headers["location"], "/docs")
      // Listed in OpenAPI like every other route.
      const spec = yield* get("/openapi.json")
      const paths = Predicate.isRecord(spec.json) && Predicate.isRecord(spec.json["paths"]) ? spec.json["paths"] : {}
      assert.isDefined(paths["/"])
    }))

  it.effect("a deprecated path segment answers as the canonical one, with Deprecation and a Link to the canonical path", () =>
    Effect.gen(function*() {
      const canonical = yield* get(`${ToyServer.base}/items/b%201?verbose=yes`)
      const old = yield* get(`${ToyServer.base}/things/b%201?verbose=yes`)
      assert.strictEqual(old.status, 200)
      assert.deepStrictEqual(old.json, canonical.json)
      assert.strictEqual(old.headers["deprecation"], `@${Date.parse("2026-01-01T00:00:00Z") / 1000}`)
      assert.strictEqual(old.headers["link"], `<${ToyServer.base}/items/b%201?verbose=yes>; rel="successor-version"`)
      assert.isUndefined(canonical.headers["deprecation"])
      const list = yield* get(`${ToyServer.base}/things?prefix=a`)
      assert.deepStrictEqual(list.json, { items: ["a1", "a2"] })
      // OpenAPI lists the old path as deprecated beside the canonical one.
      const spec = yield* get("/openapi.json")
      const paths = Predicate.isRecord(spec.json) && Predicate.isRecord(spec.json["paths"]) ? spec.json["paths"] : {}
      const oldItem = paths["/api/v1/workspaces/{workspace}/toy/things/{itemId}"]
      assert.isTrue(Predicate.isRecord(oldItem) && Predicate.isRecord(oldItem["get"]) && oldItem["get"]["deprecated"] === true)
      assert.isDefined(paths["/api/v1/workspaces/{workspace}/toy/items/{itemId}"])
    }))

  it.effect("refuses with the rule's status and the codec block, unknown fields included", () =>
    Effect.gen(function*() {
      const gone = yield* get(`${ToyServer.base}/items/gone`)
      assert.strictEqual(gone.status, 410)
      assert.deepStrictEqual(gone.json, {
        statusCode: 410,
        code: "VALIDATION_FAILED",
        message: "That item is gone.",
        request_id: gone.headers["x-request-id"],
        toy: { code: "gone", why: "That item is gone." }
      })
      const busy = yield* post(`${ToyServer.base}/echo`, { text: "busy" })
      assert.strictEqual(busy.status, 503)
      // A retryable 503 says when to come back; a refusal that waiting cannot cure does not.
      assert.strictEqual(busy.headers["retry-after"], "5")
      assert.isUndefined(gone.headers["retry-after"])
      const unknownQuery = yield* get(`${ToyServer.base}/items?prefix=a&sql=1`)
      assert.strictEqual(unknownQuery.status, 400)
      assert.strictEqual(RawHttp.field(unknownQuery.json, "toy", "field"), "sql")
      assert.deepStrictEqual(RawHttp.field(unknownQuery.json, "toy", "allowed_values"), ["prefix"])
      const unknownOnPath = yield* get(`${ToyServer.base}/items/a1?extra=1`)
      assert.strictEqual(unknownOnPath.status, 400)
      const outOfRange = yield* post(`${ToyServer.base}/echo`, { text: "x", count: 99 })
      assert.strictEqual(outOfRange.status, 400)
      assert.deepStrictEqual(RawHttp.field(outOfRange.json, "toy", "allowed_range"), { minimum: 1, maximum: 10 })
      const badEnum = yield* get(`${ToyServer.base}/items/a1?verbose=maybe`)
      assert.deepStrictEqual(RawHttp.field(badEnum.json, "toy", "allowed_values"), ["yes", "no"])
    }))

  it.effect("a foreign workspace is 404 like a missing one; a missing scope is 403", () =>
    Effect.gen(function*() {
      const foreign = yield* get("/api/v1/workspaces/limited/toy/items")
      assert.strictEqual(foreign.status, 404)
      assert.deepInclude(foreign.json, { statusCode: 404, code: "NOT_FOUND" })
      const missing = yield* get("/api/v1/workspaces/nowhere/toy/items")
      assert.deepStrictEqual(withoutRequestId(foreign.json), withoutRequestId(missing.json))
      const unscoped = yield* get("/api/v1/workspaces/unscoped/toy/items", ToyDomain.UNSCOPED_KEY)
      assert.strictEqual(unscoped.status, 403)
      assert.deepInclude(unscoped.json, { statusCode: 403, code: "FORBIDDEN" })
      // Groups that are not workspace-scoped have no workspace segment to check.
      const open = yield* get("/api/v1/toy-open/items")
      assert.strictEqual(open.status, 200)
    }))

  it.effect("a full rate window is 429 with Retry-After", () =>
    Effect.gen(function*() {
      const statuses: Array<number> = []
      let last: RawHttp.Answer | undefined
      for (let i = 0; i < 5; i++) {
        last = yield* get("/api/v1/workspaces/limited/toy/items", ToyDomain.LIMITED_KEY)
        statuses.push(last.status)
      }
      assert.deepStrictEqual(statuses, [200, 200, 200, 429, 429])
      assert.strictEqual(last?.headers["retry-after"], "42")
      assert.deepInclude(last?.json, { statusCode: 429, code: "RATE_LIMITED", retry_after_seconds: 42, limit_per_minute: 3 })
    }))

  it.effect("a defect is a 500 with a request id and no internals", () =>
    Effect.gen(function*() {
      const answer = yield* post(`${ToyServer.base}/echo`, { text: "explode" })
      assert.strictEqual(answer.status, 500)
      assert.deepInclude(answer.json, { statusCode: 500, code: "INTERNAL" })
      assert.notInclude(answer.text, "secret")
    }))
})

plain.effect("a host can serve one group alone, through a web handler", () =>
  Effect.promise(async () => {
    const { dispose, handler } = HttpApiBuilder.toWebHandler(
      Layer.mergeAll(HttpLayer.layer([ToyDomain.openGroup]), HttpServer.layerContext).pipe(Layer.provide(ToyDomain.services))
    )
    try {
      const ok = await handler(new Request("http://host/api/v1/toy-open/items?prefix=b", { headers: { "x-api-key": ToyDomain.KEY } }))
      assert.strictEqual(ok.status, 200)
      assert.deepStrictEqual(await ok.json(), { items: ["b1"] })
      const spec: unknown = await (await handler(new Request("http://host/openapi.json"))).json()
      const paths = RawHttp.field(spec, "paths")
      assert.deepStrictEqual(Predicate.isRecord(paths) ? Object.keys(paths) : [], ["/api/v1/toy-open/items", "/"])
      // The other group of the domain is not served.
      const absent = await handler(new Request("http://host/api/v1/workspaces/demo/toy/items", { headers: { "x-api-key": ToyDomain.KEY } }))
      assert.strictEqual(absent.status, 404)
    } finally {
      await dispose()
    }
  }))
