import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ClientAddress from "../src/ClientAddress.js"

const ranges = (...texts: ReadonlyArray<string>) => texts.map((text) => Option.getOrThrow(ClientAddress.parseRange(text)))
const resolve = (trusted: ReadonlyArray<ClientAddress.Range>, socket: string, headers: Record<string, string> = {}) =>
  Option.getOrNull(ClientAddress.resolve(trusted, Option.some(socket), headers))

describe("the client address behind a proxy", () => {
  const proxies = ranges("10.0.0.0/8", "fd00::/8", "127.0.0.1")

  it("reads no forwarded header unless a trusted proxy sent the request", () => {
    assert.strictEqual(resolve([], "203.0.113.9", { "x-forwarded-for": "198.51.100.1" }), "203.0.113.9")
    assert.strictEqual(resolve(proxies, "203.0.113.9", { "x-forwarded-for": "198.51.100.1" }), "203.0.113.9")
    assert.strictEqual(resolve(proxies, "203.0.113.9", { forwarded: "for=198.51.100.1" }), "203.0.113.9")
  })

  it("takes the nearest hop that is not a trusted proxy, from the right", () => {
    assert.strictEqual(resolve(proxies, "10.1.2.3", { "x-forwarded-for": "198.51.100.1" }), "198.51.100.1")
    // A client can put anything on the left; only what the trusted proxies appended counts.
    assert.strictEqual(resolve(proxies, "10.1.2.3", { "x-forwarded-for": "1.2.3.4, 198.51.100.1, 10.9.9.9" }), "198.51.100.1")
    // Behind the proxy with no header: the proxy itself.
    assert.strictEqual(resolve(proxies, "10.1.2.3"), "10.1.2.3")
    // Only proxies in the chain: the leftmost.
    assert.strictEqual(resolve(proxies, "10.1.2.3", { "x-forwarded-for": "10.0.0.5, 10.0.0.6" }), "10.0.0.5")
    // A malformed hop stops the walk at the last trusted one.
    assert.strictEqual(resolve(proxies, "10.1.2.3", { "x-forwarded-for": "198.51.100.1, nonsense" }), "10.1.2.3")
  })

  it("reads RFC 7239 Forwarded first, quoted, bracketed and with ports, and IPv4 seen through IPv6 sockets", () => {
    assert.strictEqual(resolve(proxies, "::ffff:10.1.2.3", { forwarded: "for=198.51.100.7;proto=https", "x-forwarded-for": "1.1.1.1" }), "198.51.100.7")
    assert.strictEqual(resolve(proxies, "fd00::1", { forwarded: 'for="[2001:db8::17]:4711", for=10.0.0.2:8080' }), "2001:db8::17")
    assert.strictEqual(resolve(proxies, "127.0.0.1", { forwarded: "for=192.0.2.60:8080;by=10.0.0.1" }), "192.0.2.60")
  })

  it("SERVICE_TRUSTED_PROXIES takes addresses and blocks, and refuses anything else at start", () =>
    Effect.gen(function*() {
      const read = (value: string) =>
        Effect.either(Effect.withConfigProvider(ClientAddress.trustedProxiesConfig, ConfigProvider.fromMap(new Map([["SERVICE_TRUSTED_PROXIES", value]]))))
      const ok = yield* read("10.0.0.0/8, 192.168.1.1 ,fd00::/8")
      assert.isTrue(Either.isRight(ok) && ok.right.length === 3)
      assert.isTrue(Either.isLeft(yield* read("10.0.0.0/33")))
      assert.isTrue(Either.isLeft(yield* read("proxy.internal")))
      const unset = yield* Effect.withConfigProvider(ClientAddress.trustedProxiesConfig, ConfigProvider.fromMap(new Map()))
      assert.deepStrictEqual(unset, [])
    }).pipe(Effect.runPromise))
})
