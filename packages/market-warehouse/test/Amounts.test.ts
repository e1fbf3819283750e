import { assert, describe, it } from "@effect/vitest"
import { parseCurrency, parseDecimal, shortestDecimal } from "../src/Amounts.js"

describe("amounts", () => {
  it("keeps exact decimals and strips separators", () => {
    assert.strictEqual(parseDecimal("1,234,567.50"), "1234567.5")
    assert.strictEqual(parseDecimal("$ 15000"), "15000")
    assert.strictEqual(parseDecimal("0.10"), "0.1")
    assert.strictEqual(parseDecimal("007"), "7")
    assert.strictEqual(parseDecimal("1.77E-2"), "0.0177")
    assert.strictEqual(parseDecimal(62000), "62000")
    assert.strictEqual(parseDecimal(1234.56), "1234.56")
    assert.isUndefined(parseDecimal("12a"))
    assert.isUndefined(parseDecimal(""))
    assert.isUndefined(parseDecimal(Number.NaN))
  })

  it("turns binary-float text back into what the publisher typed", () => {
    assert.strictEqual(parseDecimal("6.4080000000000004"), "6.408")
    assert.strictEqual(parseDecimal("0.30000000000000004"), "0.3")
    assert.strictEqual(shortestDecimal(1e21), "1000000000000000000000")
  })

  it("maps non-ISO currency spellings and reports the original", () => {
    assert.deepStrictEqual(parseCurrency("MNX"), { code: "MXN", reported: "MNX" })
    assert.deepStrictEqual(parseCurrency("MXN"), { code: "MXN", reported: null })
    assert.deepStrictEqual(parseCurrency("usd"), { code: "USD", reported: "usd" })
    assert.isUndefined(parseCurrency("pesitos"))
    assert.isUndefined(parseCurrency(""))
  })
})
