import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import {
  AddressGuard,
  layer,
  layerAllowingLoopbackForTests,
  layerConfig,
  make,
  type Resolve,
  type Rule,
  warnings
} from "../src/AddressGuard.js"

const literal = (address: string) => (address.includes(":") ? `https://[${address}]/hook` : `https://${address}/hook`)

// One address per refused range, IPv4 and IPv6, with a word the message must carry.
const refused: ReadonlyArray<readonly [address: string, label: string]> = [
  ["0.0.0.0", "this network"],
  ["0.1.2.3", "this network"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.254", "private"],
  ["192.168.1.1", "private"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "cloud metadata"],
  ["169.254.0.1", "link-local"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["100.127.255.254", "carrier-grade NAT"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["198.18.0.1", "benchmarking"],
  ["198.19.255.254", "benchmarking"],
  ["192.0.2.1", "reserved"],
  ["198.51.100.1", "reserved"],
  ["203.0.113.1", "reserved"],
  ["192.0.0.8", "reserved"],
  ["::1", "loopback"],
  ["::", "unspecified"],
  ["fc00::1", "unique local"],
  ["fd12:3456:789a::1", "unique local"],
  ["fe80::1", "link-local"],
  ["febf::1", "link-local"],
  ["ff02::1", "multicast"],
  ["ff0e::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["3fff::1", "documentation"],
  ["64:ff9b::a00:1", "NAT64"],
  ["64:ff9b::101:101", "NAT64"],
  ["64:ff9b:1::1", "NAT64"],
  ["::ffff:10.0.0.1", "IPv4-mapped (::ffff:0:0/96) carrying private"],
  ["::ffff:127.0.0.1", "IPv4-mapped (::ffff:0:0/96) carrying loopback"],
  ["::ffff:169.254.169.254", "cloud metadata"],
  ["::ffff:0:a00:1", "IPv4-translated"],
  ["::a00:1", "IPv4-compatible"],
  ["::1.1.1.1", "IPv4-compatible"],
  ["2002:a00:1::1", "6to4 (2002::/16) embedding private"],
  ["2002:a9fe:a9fe::1", "6to4 (2002::/16) embedding link-local"],
  ["2002:7f00:1::1", "6to4 (2002::/16) embedding loopback"],
  ["2001::1", "Teredo"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
  ["100::1", "discard-only"],
  ["2001:2::1", "IETF protocol assignments"],
  ["2001:10::1", "IETF protocol assignments"],
  ["5f00::1", "segment routing"],
  ["4000::1", "not global unicast"],
  ["1000::1", "not global unicast"]
]

// Public addresses that must pass, with the address the sender will connect to.
const allowed: ReadonlyArray<readonly [address: string, connectTo: string, family: 4 | 6]> = [
  ["1.1.1.1", "1.1.1.1", 4],
  ["8.8.8.8", "8.8.8.8", 4],
  ["172.15.255.255", "172.15.255.255", 4],
  ["172.32.0.1", "172.32.0.1", 4],
  ["100.63.255.255", "100.63.255.255", 4],
  ["100.128.0.1", "100.128.0.1", 4],
  ["198.17.255.255", "198.17.255.255", 4],
  ["198.20.0.1", "198.20.0.1", 4],
  ["2606:4700:4700::1111", "2606:4700:4700::1111", 6],
  ["2001:4860:4860::8888", "2001:4860:4860::8888", 6],
  ["2a00:1450:4001:80b::200e", "2a00:1450:4001:80b::200e", 6],
  ["::ffff:1.1.1.1", "1.1.1.1", 4],
  ["2002:101:101::1", "2002:101:101::1", 6]
]

const check = (url: string) => Effect.flatMap(AddressGuard, (guard) => Effect.either(guard.check(url)))

const ruleOf = (url: string): Effect.Effect<Rule | "passed", never, AddressGuard> =>
  Effect.map(check(url), Either.match({ onLeft: (error) => error.rule, onRight: () => "passed" as const }))

// A resolver that knows a few names and nothing else.
const resolverOf = (table: Readonly<Record<string, ReadonlyArray<string>>>): Resolve => (hostname) =>
  Effect.succeed(table[hostname] ?? [])

const withResolver = (resolve: Resolve) => Layer.succeed(AddressGuard, make({ resolve }))

describe("AddressGuard", () => {
  describe("production rules", () => {
    for (const [address, label] of refused) {
      it.effect(`refuses ${address} (${label})`, () =>
        Effect.gen(function*() {
          const result = yield* check(literal(address))
          if (Either.isRight(result)) return assert.fail(`${address} passed`)
          assert.strictEqual(result.left.rule, "blocked_address")
          assert.include(result.left.message, label)
          assert.strictEqual(result.left.reason, "url_rejected")
        }).pipe(Effect.provide(layer)))
    }

    for (const [address, connectTo, family] of allowed) {
      it.effect(`allows ${address}`, () =>
        Effect.gen(function*() {
          const result = yield* check(literal(address))
          if (Either.isLeft(result)) return assert.fail(result.left.message)
          assert.deepStrictEqual(result.right.addresses, [{ address: connectTo, family }])
        }).pipe(Effect.provide(layer)))
    }

    it.effect("refuses every scheme but https, user information and what is not a URL", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* ruleOf("http://1.1.1.1/hook"), "scheme")
        assert.strictEqual(yield* ruleOf("ftp://1.1.1.1/hook"), "scheme")
        assert.strictEqual(yield* ruleOf("https://user:pass@1.1.1.1/hook"), "userinfo")
        assert.strictEqual(yield* ruleOf("https://token@1.1.1.1/hook"), "userinfo")
        assert.strictEqual(yield* ruleOf("/relative/hook"), "malformed_url")
        assert.strictEqual(yield* ruleOf("https://[fe80::1%25eth0]/"), "malformed_url")
      }).pipe(Effect.provide(layer)))

    it.effect("never repeats the user information or the query in a message", () =>
      Effect.gen(function*() {
        const messages = yield* Effect.forEach(
          ["https://user:s3cret@1.1.1.1/hook?token=s3cret", "https://10.0.0.1/hook?token=s3cret", "http://1.1.1.1/?token=s3cret"],
          (url) => Effect.map(check(url), Either.match({ onLeft: (error) => error.message, onRight: () => "passed" }))
        )
        for (const message of messages) {
          assert.notInclude(message, "s3cret")
          assert.notStrictEqual(message, "passed")
        }
      }).pipe(Effect.provide(layer)))

    it.effect("reads legacy IPv4 spellings the way the URL parser does", () =>
      Effect.gen(function*() {
        assert.strictEqual(yield* ruleOf("https://0x7f.1/"), "blocked_address")
        assert.strictEqual(yield* ruleOf("https://2130706433/"), "blocked_address")
        assert.strictEqual(yield* ruleOf("https://0251.0376.0251.0376/"), "blocked_address")
      }).pipe(Effect.provide(layer)))

    it.effect("checks every address a host resolves to, and answers them all", () =>
      Effect.gen(function*() {
        const mixed = yield* check("https://mixed.test/hook")
        if (Either.isRight(mixed)) return assert.fail("a host with one private address passed")
        assert.strictEqual(mixed.left.rule, "blocked_address")
        assert.include(mixed.left.message, "mixed.test resolves to 10.1.2.3")
        const mapped = yield* ruleOf("https://mapped.test/hook")
        assert.strictEqual(mapped, "blocked_address")
        const good = yield* check("https://good.test:8443/hook?x=1")
        if (Either.isLeft(good)) return assert.fail(good.left.message)
        assert.strictEqual(good.right.hostname, "good.test")
        assert.strictEqual(good.right.url.port, "8443")
        assert.deepStrictEqual(good.right.addresses, [
          { address: "1.1.1.1", family: 4 },
          { address: "2606:4700:4700::1111", family: 6 }
        ])
        assert.strictEqual(yield* ruleOf("https://nowhere.test/hook"), "unresolvable")
        // A spelling ipaddr.js cannot read is refused, not waved through.
        const odd = yield* check("https://odd.test/hook")
        assert.isTrue(Either.isLeft(odd) && odd.left.message.includes("unreadable"))
      }).pipe(Effect.provide(withResolver(resolverOf({
        "odd.test": ["::1.2.3.4"],
        "mixed.test": ["1.1.1.1", "10.1.2.3"],
        "mapped.test": ["2606:4700:4700::1111", "::ffff:169.254.169.254"],
        "good.test": ["1.1.1.1", "2606:4700:4700::1111"]
      })))))

    it.effect("resolves afresh at every check", () =>
      Effect.gen(function*() {
        let answer: ReadonlyArray<string> = ["1.1.1.1"]
        const guard = make({ resolve: () => Effect.sync(() => answer) })
        assert.isTrue(Either.isRight(yield* Effect.either(guard.check("https://moving.test/"))))
        answer = ["169.254.169.254"]
        const again = yield* Effect.either(guard.check("https://moving.test/"))
        assert.isTrue(Either.isLeft(again) && again.left.rule === "blocked_address")
      }))

    // `localhost` comes from the hosts file: no network is needed, whatever the machine's DNS.
    it.effect("uses the system resolver by default (localhost is loopback, refused)", () =>
      Effect.gen(function*() {
        const result = yield* check("https://localhost/hook")
        if (Either.isRight(result)) return assert.fail("localhost passed")
        assert.strictEqual(result.left.rule, "blocked_address")
        assert.include(result.left.message, "loopback")
      }).pipe(Effect.provide(layer)))
  })

  describe("the test allowance", () => {
    const testLayer = layerAllowingLoopbackForTests({
      resolve: resolverOf({ "receiver.test": ["127.0.0.1"], "private.test": ["127.0.0.1", "192.168.0.10"] })
    })

    it.effect("allows http and loopback, IPv4 and IPv6", () =>
      Effect.gen(function*() {
        for (const url of ["http://127.0.0.1:8080/", "https://127.0.0.1/", "http://[::1]:8080/", "http://127.10.0.1/", "http://[::ffff:127.0.0.1]/", "http://receiver.test/"]) {
          assert.strictEqual(yield* ruleOf(url), "passed", url)
        }
      }).pipe(Effect.provide(testLayer)))

    it.effect("still refuses every other range and every other rule", () =>
      Effect.gen(function*() {
        for (const [address] of refused) {
          if (address === "::1" || address.startsWith("127.") || address === "::ffff:127.0.0.1") continue
          assert.strictEqual(yield* ruleOf(literal(address)), "blocked_address", address)
        }
        assert.strictEqual(yield* ruleOf("http://169.254.169.254/latest/meta-data/"), "blocked_address")
        assert.strictEqual(yield* ruleOf("http://private.test/"), "blocked_address")
        assert.strictEqual(yield* ruleOf("ftp://127.0.0.1/"), "scheme")
        assert.strictEqual(yield* ruleOf("http://user:pw@127.0.0.1/"), "userinfo")
        // A 6to4 address embedding loopback is no loopback address.
        assert.strictEqual(yield* ruleOf(literal("2002:7f00:1::1")), "blocked_address")
      }).pipe(Effect.provide(testLayer)))
  })

  describe("SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES", () => {
    // The setting as a process would read it, without touching this process's environment.
    const configured = (env: Readonly<Record<string, string>>) =>
      layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))))

    const privateAddresses = ["10.0.0.1", "172.16.0.1", "172.31.255.254", "192.168.1.1", "fc00::1", "fd12:3456:789a::1"]

    it.effect("off by default and when false: loopback, private and http refused as in production", () =>
      Effect.gen(function*() {
        for (const env of [{}, { SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES: "false" }]) {
          const ruleWith = (url: string) => Effect.provide(ruleOf(url), configured(env))
          assert.strictEqual(yield* ruleWith("http://127.0.0.1:8080/hook"), "scheme")
          assert.strictEqual(yield* ruleWith("https://127.0.0.1:8080/hook"), "blocked_address")
          assert.strictEqual(yield* ruleWith("https://[::1]/hook"), "blocked_address")
          for (const address of privateAddresses) assert.strictEqual(yield* ruleWith(literal(address)), "blocked_address", address)
          assert.strictEqual(yield* ruleWith("https://1.1.1.1/hook"), "passed")
          assert.deepStrictEqual(yield* Effect.provide(warnings, Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))), [])
        }
      }))

    it.effect("on: http and https to loopback and private receivers, IPv4 and IPv6, and public ones as before", () =>
      Effect.gen(function*() {
        for (const url of ["http://127.0.0.1:41234/hook", "https://127.0.0.1/hook", "http://[::1]:8080/", "http://localhost:3001/x", "http://[::ffff:192.168.0.7]/"]) {
          assert.strictEqual(yield* ruleOf(url), "passed", url)
        }
        for (const address of privateAddresses) {
          assert.strictEqual(yield* ruleOf(literal(address)), "passed", address)
          assert.strictEqual(yield* ruleOf(literal(address).replace("https:", "http:")), "passed", address)
        }
        assert.strictEqual(yield* ruleOf("https://1.1.1.1/hook"), "passed")
        assert.strictEqual(yield* ruleOf("http://8.8.8.8/hook"), "passed")
        const found = yield* check("http://127.0.0.1:41234/hook")
        if (Either.isLeft(found)) return assert.fail(found.left.message)
        assert.deepStrictEqual(found.right.addresses, [{ address: "127.0.0.1", family: 4 }])
      }).pipe(Effect.provide(configured({ SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES: "true" }))))

    it.effect("on: cloud metadata, link-local and every other range still refused, and every other rule", () =>
      Effect.gen(function*() {
        for (const url of ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "http://100.100.100.200/"]) {
          const result = yield* check(url)
          if (Either.isRight(result)) return assert.fail(`${url} passed`)
          assert.strictEqual(result.left.rule, "blocked_address", url)
          assert.match(result.left.message, /metadata|carrier-grade NAT/, url)
        }
        const stillRefused = refused.filter(([address, label]) =>
          !["private", "loopback", "unique local"].some((admitted) => label.startsWith(admitted) || label.includes(`carrying ${admitted}`)) &&
          !address.startsWith("127.")
        )
        for (const [address] of stillRefused) assert.strictEqual(yield* ruleOf(literal(address)), "blocked_address", address)
        assert.strictEqual(yield* ruleOf("ftp://127.0.0.1/"), "scheme")
        assert.strictEqual(yield* ruleOf("http://user:pw@127.0.0.1/"), "userinfo")
        assert.strictEqual(yield* ruleOf("/relative"), "malformed_url")
      }).pipe(Effect.provide(configured({ SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES: "true" }))))

    it.effect("on: the warning a host prints; a value that is not a boolean fails to start", () =>
      Effect.gen(function*() {
        const on = Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES", "true"]])))
        const [line] = yield* Effect.provide(warnings, on)
        assert.include(line ?? "", "never in production")
        const bad = yield* Effect.either(Effect.provide(AddressGuard, configured({ SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES: "maybe" })))
        assert.isTrue(Either.isLeft(bad))
      }))
  })
})
