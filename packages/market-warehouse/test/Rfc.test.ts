import { assert, describe, it } from "@effect/vitest"
import { normalizeRfc, parseRfc, rfcKind } from "../src/Rfc.js"

describe("RFC", () => {
  it("accepts companies (12) and persons (13) and normalizes separators", () => {
    assert.strictEqual(rfcKind("GTA140724H10"), "moral")
    assert.strictEqual(rfcKind("SPB101022S66"), "moral")
    assert.strictEqual(rfcKind("ZIN91022345A"), "moral")
    assert.strictEqual(rfcKind("PERJ800101AB1"), "fisica")
    assert.strictEqual(rfcKind("Ñ&A010101AB1"), "moral")
    assert.strictEqual(parseRfc(" gta-140724-h10 "), "GTA140724H10")
    assert.strictEqual(normalizeRfc("a.b c"), "ABC")
  })

  it("refuses wrong lengths, impossible dates and bad characters", () => {
    for (const bad of ["GTA140724H1", "GTA141324H10", "GTA140732H10", "G1A140724H10", "PERJ800230AB1", "", "RFC-PROV"]) {
      assert.isUndefined(parseRfc(bad), bad)
    }
    // 29 February exists in leap years of either century.
    assert.strictEqual(rfcKind("ABC000229XX1"), "moral")
    assert.isUndefined(rfcKind("ABC010229XX1"))
    assert.isUndefined(parseRfc(null))
  })
})
