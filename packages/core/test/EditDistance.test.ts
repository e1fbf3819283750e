import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as EditDistance from "../src/EditDistance.js"

describe("EditDistance.levenshtein", () => {
  it("counts insertions, deletions and substitutions", () => {
    assert.strictEqual(EditDistance.levenshtein("kitten", "sitting"), 3)
    assert.strictEqual(EditDistance.levenshtein("", "abc"), 3)
    assert.strictEqual(EditDistance.levenshtein("serach", "search"), 2)
    assert.strictEqual(EditDistance.levenshtein("same", "same"), 0)
  })

  it("is a metric: zero only for equal strings, symmetric, and within the longer length", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
        const d = EditDistance.levenshtein(a, b)
        assert.strictEqual(d === 0, a === b)
        assert.strictEqual(d, EditDistance.levenshtein(b, a))
        assert.isAtMost(d, Math.max(a.length, b.length))
        assert.isAtLeast(d, Math.abs(a.length - b.length))
      }),
      { numRuns: 200 }
    )
  })
})
