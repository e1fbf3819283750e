/**
 * `GuardedHttp.fetchThrough`: a `fetch` whose requests go through the address guard. Against a local receiver (the
 * tests' loopback guard) it answers like `fetch`; under the production guard a loopback address in any spelling is
 * refused before anything is connected to (the receiver counts connections); a long answer, a method other than GET
 * or POST and an aborted signal fail like network errors.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import * as AddressGuard from "../src/AddressGuard.js"
import { UrlRejected } from "../src/AddressGuard.js"
import * as GuardedHttp from "../src/GuardedHttp.js"

let server: Server
let port = 0
let connections = 0
const received: Array<{ method: string; path: string; host: string; body: string }> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = ""
    request.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
    request.on("end", () => {
      received.push({ method: request.method ?? "", path: request.url ?? "", host: request.headers.host ?? "", body })
      if (request.url === "/long") {
        response.writeHead(200, { "content-type": "text/plain" })
        return response.end("x".repeat(5_000))
      }
      // Never answers: only the caller's signal ends it.
      if (request.url === "/hang") return
      response.writeHead(200, { "content-type": "application/json", "x-seen": "yes" })
      response.end(JSON.stringify({ ok: true, method: request.method }))
    })
  })
  server.on("connection", () => connections++)
  // Both loopback families: a refused [::1] would otherwise not be counted.
  await new Promise<void>((resolve) => server.listen(0, "::", resolve))
  const address: AddressInfo | string | null = server.address()
  if (address === null || typeof address === "string") throw new Error("the receiver has no TCP address")
  port = address.port
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const options = { bodyCap: 1_000, timeout: "5 seconds" } as const
const local = GuardedHttp.fetchThrough(AddressGuard.makeAllowingLoopbackForTests(), options)
const production = GuardedHttp.fetchThrough(AddressGuard.make(), options)

describe("GuardedHttp.fetchThrough", () => {
  it("answers a GET and a POST like fetch: status, headers, body, the URL's host as Host", async () => {
    const got = await local(`http://127.0.0.1:${port}/doc.json?x=1`)
    assert.strictEqual(got.status, 200)
    assert.strictEqual(got.headers.get("x-seen"), "yes")
    assert.deepStrictEqual(await got.json(), { ok: true, method: "GET" })
    const posted = await local(new URL(`http://localhost:${port}/hook`), { method: "POST", body: "hello", headers: { "content-type": "text/plain" } })
    assert.deepStrictEqual(await posted.json(), { ok: true, method: "POST" })
    assert.deepStrictEqual(received.slice(-2).map((r) => [r.method, r.path, r.host, r.body]), [
      ["GET", "/doc.json?x=1", `127.0.0.1:${port}`, ""],
      ["POST", "/hook", `localhost:${port}`, "hello"]
    ])
  })

  it("under the production guard connects to no loopback address, however it is spelled", async () => {
    const before = connections
    const spellings = [
      `https://127.0.0.1:${port}/c.json`,
      `https://[::1]:${port}/c.json`,
      `https://2130706433:${port}/c.json`,
      `https://0x7f.0.0.1:${port}/c.json`,
      `https://127.1:${port}/c.json`,
      `https://localhost:${port}/c.json`,
      `https://[::ffff:127.0.0.1]:${port}/c.json`,
      `https://0.0.0.0:${port}/c.json`,
      `https://[::]:${port}/c.json`,
      `http://127.0.0.1:${port}/c.json`
    ]
    for (const url of spellings) {
      const error = await production(url).then(() => undefined, (e: unknown) => e)
      assert.instanceOf(error, TypeError, url)
      assert.instanceOf(error instanceof TypeError ? error.cause : undefined, UrlRejected, url)
    }
    assert.strictEqual(connections, before, "no connection reached the receiver")
  })

  it("fails an answer longer than the cap, a method other than GET or POST, and an aborted request", async () => {
    const long = await local(`http://127.0.0.1:${port}/long`).then(() => "answered", (e: unknown) => String(e))
    assert.include(long, "longer than 1000 bytes")
    const put = await local(`http://127.0.0.1:${port}/x`, { method: "PUT" }).then(() => "answered", (e: unknown) => String(e))
    assert.include(put, "PUT is not sent")
    // The receiver never answers: the caller's signal ends the request, not the fetch's own 5 s deadline.
    const aborted = await local(`http://127.0.0.1:${port}/hang`, { signal: AbortSignal.timeout(100) }).then(() => "answered", (e: unknown) => String(e))
    assert.include(aborted, "fetch failed: aborted")
  })

  it.effect("the guard's check is the one refusing: the production guard names the range", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(AddressGuard.make().check(`https://127.0.0.1:${port}/`))
      assert.strictEqual(refused.rule, "blocked_address")
      assert.include(refused.message, "loopback")
    }))
})
