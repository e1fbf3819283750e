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
 * Rows 12 and 13: registration takes only OAuth 2.1 redirect URIs and is limited per client address, a registered
 * client no one allowed lives a day; the device flow answers `slow_down` to a poll sooner than its interval (which
 * then grows by 5 s), and limits the user codes one address tries.
 *
 * Neither involves the database beyond what PGlite shows: PGlite only.
 */
import * as SqlClient from "@effect/sql/SqlClient"
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
import * as Schema from "effect/Schema"
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

const form = { "content-type": "application/x-www-form-urlencoded" }
const json = { "content-type": "application/json" }
const register = (port: number, redirectUris: ReadonlyArray<string>) =>
  rest(port, "POST", "/oauth/reg", json, JSON.stringify({ redirect_uris: redirectUris, client_name: "Edge", token_endpoint_auth_method: "none" }))

layer(serverWith(AddressGuard.layer), { timeout: Duration.infinity, excludeTestServices: true })("client registration", (it) => {
  it.effect("takes https, or http on loopback, and nothing else; an address registers 10 clients an hour; an unused client lives a day", () =>
    Effect.gen(function*() {
      const { port } = yield* Running
      const sql = yield* SqlClient.SqlClient
      for (const uri of ["http://evil.example/cb", "https://user:pass@client.example/cb", "https://*.client.example/cb", "*", "https://client.example/cb#frag"]) {
        const refused = yield* register(port, [uri])
        assert.strictEqual(refused.status, 400, `${uri}: ${refused.text}`)
        assert.include(refused.text, "invalid_redirect_uri", uri)
      }
      const Registered = Schema.parseJson(Schema.Struct({ client_id: Schema.String }))
      const ids: Array<string> = []
      for (const uri of ["https://client.example/cb", "http://127.0.0.1:8123/cb", "http://localhost/cb", "http://[::1]:8123/cb", "https://other.example/cb"]) {
        const accepted = yield* register(port, [uri])
        assert.strictEqual(accepted.status, 201, `${uri}: ${accepted.text}`)
        ids.push(Schema.decodeUnknownSync(Registered)(accepted.text).client_id)
      }
      // Ten registrations from this address this hour, refused ones included: the eleventh waits.
      const limited = yield* register(port, ["https://client.example/cb"])
      assert.strictEqual(limited.status, 429, limited.text)
      assert.match(String(limited.headers["retry-after"]), /^\d+$/)
      assert.include(limited.text, "Too many client registrations")
      const lifetimes = yield* sql`SELECT extract(epoch FROM expires_at - now())::int AS seconds FROM identity.oauth_models
        WHERE model = 'Client' AND id IN ${sql.in(ids)}`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ seconds: Schema.Number }))))
      )
      assert.strictEqual(lifetimes.length, ids.length)
      for (const { seconds } of lifetimes) assert.isTrue(seconds > 23 * 3600 && seconds <= 24 * 3600, `${seconds} s`)
    }))
})

layer(serverWith(AddressGuard.layer), { timeout: Duration.infinity, excludeTestServices: true })("the device flow", (it) => {
  it.effect("a poll sooner than the interval is told to slow down, and the interval grows; an address tries 20 user codes per 10 minutes", () =>
    Effect.gen(function*() {
      const { port } = yield* Running
      const sql = yield* SqlClient.SqlClient
      const started = yield* rest(port, "POST", "/oauth/device/auth", form, "client_id=service-cli&scope=openid%20market_data:read")
      assert.strictEqual(started.status, 200, started.text)
      const deviceCode = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ device_code: Schema.String })))(started.text).device_code
      const poll = rest(port, "POST", "/oauth/token", form, new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: "service-cli" }).toString())
      const first = yield* poll
      assert.include(first.text, "authorization_pending")
      const second = yield* poll
      assert.strictEqual(second.status, 400, second.text)
      assert.include(second.text, "slow_down")
      assert.include((yield* poll).text, "slow_down")
      const intervals = yield* sql`SELECT poll_interval FROM identity.oauth_models WHERE model = 'DeviceCode'`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ poll_interval: Schema.Number }))))
      )
      assert.deepStrictEqual(intervals, [{ poll_interval: 15 }], "5 s, plus 5 for each slow_down")

      for (let i = 0; i < 20; i++) {
        const guess = yield* rest(port, "GET", `/oauth/device?user_code=BCDF-${String(i).padStart(4, "G").replace(/\d/g, "H")}`)
        assert.strictEqual(guess.status, 200, `guess ${i + 1}: ${guess.text.slice(0, 200)}`)
      }
      const limited = yield* rest(port, "GET", "/oauth/device?user_code=BCDF-GHJK")
      assert.strictEqual(limited.status, 429, limited.text.slice(0, 300))
      assert.include(limited.text, "Too many sign-in codes tried")
      assert.strictEqual(limited.headers["x-frame-options"], "DENY")
    }))
})
