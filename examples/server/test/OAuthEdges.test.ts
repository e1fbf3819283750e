/**
 * Issue 32 row 3: the OAuth server fetches what a request names (a Client ID Metadata Document `client_id`, before
 * any sign-in), so it must never connect to an internal address. An unauthenticated `GET /oauth/auth` with a
 * `client_id` naming this machine, in every spelling an attacker tried, answers an error page and opens no
 * connection to a listener on that port (it counts them, on both loopback families). The same request under the
 * tests' loopback guard does connect: the listener would have seen the fetch had the guard let it through.
 *
 * Row 10: text PostgreSQL cannot store (a NUL in `client_id` or `client_name`) on every OAuth endpoint, and the
 * device form posted without the browser session that showed it, answer 4xx, never a 500.
 *
 * Neither involves the database beyond what PGlite shows: PGlite only.
 */
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as AddressGuard from "@service/core/AddressGuard"
import { Crypto } from "@service/core/Crypto"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type Socket } from "node:net"
import { rest, running, Running } from "./support/Rest.js"

/** A TCP listener on `::` (IPv4 and IPv6 loopback) that counts connections and closes each at once. */
class Listener extends Context.Tag("Listener")<Listener, { readonly port: number; readonly connections: () => number }>() {}

const listener = Layer.scoped(
  Listener,
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ port: number; connections: () => number; close: () => Promise<void> }>((resolve, reject) => {
        let count = 0
        const sockets = new Set<Socket>()
        const server = createServer((socket) => {
          count++
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.destroy()
        })
        server.on("error", reject)
        server.listen(0, "::", () => {
          const address = server.address()
          if (address === null || typeof address === "string") return reject(new Error("no TCP address"))
          resolve({
            port: address.port,
            connections: () => count,
            close: () =>
              new Promise<void>((done) => {
                for (const socket of sockets) socket.destroy()
                server.close(() => done())
              })
          })
        })
      })
    ),
    (opened) => Effect.promise(() => opened.close())
  )
)

const serverWith = (guard: Layer.Layer<AddressGuard.AddressGuard>) =>
  Layer.mergeAll(running, listener).pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(App.layer(TestDatabase.pglite.layer, Crypto.layerTest, { addressGuard: guard })),
    Layer.orDie
  )

const verifier = randomBytes(32).toString("base64url")
const challenge = createHash("sha256").update(verifier).digest("base64url")

/** An authorization request for a client named by its metadata document's URL, as an MCP client would send it. */
const authorize = (port: number, clientId: string) =>
  rest(
    port,
    "GET",
    `/oauth/auth?${new URLSearchParams({
      client_id: clientId,
      response_type: "code",
      redirect_uri: "https://client.example/callback",
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "openid"
    }).toString()}`
  )

const spellings = (port: number) => [
  `https://127.0.0.1:${port}/c.json`,
  `https://[::1]:${port}/c.json`,
  `https://2130706433:${port}/c.json`,
  `https://0x7f.0.0.1:${port}/c.json`,
  `https://127.1:${port}/c.json`,
  `https://localhost:${port}/c.json`,
  `https://[::ffff:127.0.0.1]:${port}/c.json`,
  `https://0.0.0.0:${port}/c.json`,
  `https://[::]:${port}/c.json`
]

layer(serverWith(AddressGuard.layer), { timeout: Duration.infinity, excludeTestServices: true })("the OAuth server under the production guard", (it) => {
  it.effect("a client_id naming this machine, in any spelling, is refused and nothing connects to it", () =>
    Effect.gen(function*() {
      const { port } = yield* Running
      const target = yield* Listener
      for (const clientId of [...spellings(target.port), "https://127.0.0.1/c.json", "https://169.254.169.254/latest/meta-data"]) {
        const answer = yield* authorize(port, clientId)
        assert.strictEqual(answer.status, 400, `${clientId}: ${answer.text.slice(0, 300)}`)
        assert.include(answer.text, "That did not work", clientId)
      }
      assert.strictEqual(target.connections(), 0, "the OAuth server connected to the listener")
    }))
})

layer(serverWith(AddressGuard.layer), { timeout: Duration.infinity, excludeTestServices: true })("the OAuth endpoints", (it) => {
  it.effect("answer a NUL in client_id or client_name, and a device form without its session, with 4xx", () =>
    Effect.gen(function*() {
      const { port } = yield* Running
      const form = { "content-type": "application/x-www-form-urlencoded" }
      const json = { "content-type": "application/json" }
      const requests: ReadonlyArray<readonly [string, Effect.Effect<{ readonly status: number; readonly text: string }>]> = [
        ["token", rest(port, "POST", "/oauth/token", form, "client_id=%00&grant_type=client_credentials")],
        ["token (refresh)", rest(port, "POST", "/oauth/token", form, "client_id=service-cli&grant_type=refresh_token&refresh_token=%00")],
        ["device authorization", rest(port, "POST", "/oauth/device/auth", form, "client_id=%00&scope=openid")],
        ["revocation", rest(port, "POST", "/oauth/token/revocation", form, "client_id=%00&token=x")],
        ["authorization", rest(port, "GET", "/oauth/auth?client_id=%00&response_type=code")],
        ["registration", rest(port, "POST", "/oauth/reg", json, JSON.stringify({ redirect_uris: ["https://a.example/cb"], client_name: "a\u0000b", token_endpoint_auth_method: "none" }))],
        ["device form without its session", rest(port, "POST", "/oauth/device", form, "user_code=ABCD-EFGH&xsrf=x")]
      ]
      for (const [name, request] of requests) {
        const answer = yield* request
        assert.isTrue(answer.status >= 400 && answer.status < 500, `${name}: ${answer.status} ${answer.text.slice(0, 300)}`)
      }
    }))
})

layer(serverWith(AddressGuard.layerAllowingLoopbackForTests()), { timeout: Duration.infinity, excludeTestServices: true })(
  "the same request under the tests' loopback guard",
  (it) => {
    it.effect("connects to the listener: a fetch the guard lets through would be seen", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const target = yield* Listener
        const answer = yield* authorize(port, `https://127.0.0.1:${target.port}/c.json`)
        assert.strictEqual(answer.status, 400, "the listener is no metadata document")
        assert.isAtLeast(target.connections(), 1)
      }))
  }
)
