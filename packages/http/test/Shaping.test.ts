import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Authentication from "../src/Authentication.js"
import * as RawHttp from "./support/RawHttp.js"
import * as ToyDomain from "./support/ToyDomain.js"
import * as ToyServer from "./support/ToyServer.js"

const send = (request: RawHttp.Request) => Effect.flatMap(RawHttp.port, (port) => RawHttp.send(port, request))

layer(ToyServer.layer, { excludeTestServices: true })("answers shaped by the API middleware", (it) => {
  it.effect("401 carries a WWW-Authenticate challenge for both schemes and no hint of why", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<Readonly<Record<string, string>>> = [
        {},
        { "x-api-key": "svc_key_unknown_0000000000" },
        { authorization: "Bearer not-a-token" },
        { authorization: "Basic dXNlcjpwYXNz" }
      ]
      const bodies = new Set<string>()
      for (const headers of cases) {
        const answer = yield* send({ method: "GET", path: `${ToyServer.base}/items`, headers })
        assert.strictEqual(answer.status, 401)
        assert.strictEqual(answer.headers["www-authenticate"], Authentication.challenge())
        assert.strictEqual(answer.headers["www-authenticate"], `Bearer realm="service", ApiKey realm="service", header="x-api-key"`)
        assert.deepInclude(answer.json, { statusCode: 401, code: "UNAUTHENTICATED" })
        bodies.add(String(RawHttp.field(answer.json, "message")))
      }
      assert.strictEqual(bodies.size, 1)
      // A body route answers 401 before looking at the body.
      const body = yield* send({ method: "POST", path: `${ToyServer.base}/echo`, headers: { "content-type": "text/plain" }, body: "x" })
      assert.strictEqual(body.status, 401)
    }))

  it.effect("an unknown path under a group lists the group's operations and its discovery route", () =>
    Effect.gen(function*() {
      const answer = yield* send({ method: "GET", path: "/api/v1/workspaces/acme/toy/nothing/here", headers: {} })
      assert.strictEqual(answer.status, 404)
      assert.deepStrictEqual(answer.json, {
        statusCode: 404,
        code: "NOT_FOUND",
        message: "No Toy operation at GET /api/v1/workspaces/acme/toy/nothing/here.",
        request_id: answer.headers["x-request-id"],
        endpoint: { method: "GET", path: "/api/v1/workspaces/acme/toy/nothing/here" },
        documentation_url: "/api/v1/workspaces/acme/toy/items",
        operations: [
          { operation: "list_items", method: "GET", path: "/api/v1/workspaces/acme/toy/items" },
          { operation: "echo", method: "POST", path: "/api/v1/workspaces/acme/toy/echo" },
          { operation: "echo_small", method: "POST", path: "/api/v1/workspaces/acme/toy/echo-small" },
          { operation: "get_item", method: "GET", path: "/api/v1/workspaces/acme/toy/items/:itemId" },
          { operation: "touch_item", method: "POST", path: "/api/v1/workspaces/acme/toy/items/:itemId/touch" }
        ]
      })
      // A group without discovery has no documentation_url.
      const open = yield* send({ method: "GET", path: "/api/v1/toy-open/nothing", headers: {} })
      assert.strictEqual(open.status, 404)
      assert.isUndefined(RawHttp.field(open.json, "documentation_url"))
      // Outside every group: a plain 404.
      const outside = yield* send({ method: "GET", path: "/nothing", headers: {} })
      assert.strictEqual(outside.status, 404)
      assert.deepStrictEqual(Object.keys(outside.json ?? {}).sort(), ["code", "message", "request_id", "statusCode"])
    }))

  it.effect("a wrong verb is 405 with Allow and allowed_methods", () =>
    Effect.gen(function*() {
      const answer = yield* send({ method: "GET", path: `${ToyServer.base}/echo`, headers: { "x-api-key": ToyDomain.KEY } })
      assert.strictEqual(answer.status, 405)
      assert.strictEqual(answer.headers["allow"], "POST")
      assert.deepInclude(answer.json, { statusCode: 405, code: "METHOD_NOT_ALLOWED", allowed_methods: ["POST"] })
      const del = yield* send({ method: "DELETE", path: `${ToyServer.base}/items/a1`, headers: {} })
      assert.strictEqual(del.status, 405)
      assert.strictEqual(del.headers["allow"], "GET")
    }))

  it.effect("keeps a well-formed incoming request id and mints one otherwise", () =>
    Effect.gen(function*() {
      const kept = yield* send({ method: "GET", path: "/nothing", headers: { "x-request-id": "req_0123456789abcdef01234567" } })
      assert.strictEqual(kept.headers["x-request-id"], "req_0123456789abcdef01234567")
      assert.strictEqual(RawHttp.field(kept.json, "request_id"), "req_0123456789abcdef01234567")
      const minted = yield* send({ method: "GET", path: "/nothing", headers: { "x-request-id": "<script>" } })
      assert.match(String(minted.headers["x-request-id"]), /^req_[0-9a-f]{24}$/)
    }))
})
