import { assert, describe, it } from "@effect/vitest"
import { limitKey } from "@service/core/ClientNetwork"

describe("ClientNetwork.limitKey", () => {
  it("an IPv4 address is its own key; an IPv4-mapped IPv6 address is its IPv4 address", () => {
    assert.strictEqual(limitKey("203.0.113.9"), "203.0.113.9")
    assert.strictEqual(limitKey("::ffff:203.0.113.9"), "203.0.113.9")
    assert.strictEqual(limitKey("[::ffff:cb00:7109]"), "203.0.113.9")
  })

  it("every IPv6 address of one /64 has one key, whatever its spelling; another /64 another", () => {
    const keys = ["2001:db8:1:2::1", "2001:0db8:0001:0002:ffff:ffff:ffff:ffff", "[2001:db8:1:2:a:b:c:d]"].map(limitKey)
    assert.deepStrictEqual(new Set(keys), new Set(["2001:db8:1:2::/64"]))
    assert.notStrictEqual(limitKey("2001:db8:1:3::1"), keys[0])
    assert.strictEqual(limitKey("::1"), "::/64")
  })

  it("what is not an address stays as it is", () => {
    assert.strictEqual(limitKey("unknown"), "unknown")
  })
})
