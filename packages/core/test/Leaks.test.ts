import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Leaks from "../src/Leaks.js"

// The scanner must find exactly what one `includes` per needle finds.
const naive = (haystacks: ReadonlyArray<string>, needles: ReadonlyArray<string>) =>
  haystacks.map((haystack) => [...new Set(needles.filter((needle) => needle.length > 0 && haystack.includes(needle)))])

const ordered = (found: ReadonlyArray<ReadonlyArray<string>>, needles: ReadonlyArray<string>) =>
  found.map((list) => [...new Set(list)].sort((a, b) => needles.indexOf(a) - needles.indexOf(b)))

describe("Leaks.find", () => {
  it("finds overlapping, nested and repeated needles, and nothing in clean text", () => {
    const needles = ["he", "she", "his", "hers", "RFC ABC010101AB1", "ñandú@correo.mx", ""]
    assert.deepStrictEqual(Leaks.find(["ushers", "this", "clean", "x ñandú@correo.mx RFC ABC010101AB1 x"], needles), [
      ["he", "she", "hers"],
      ["his"],
      [],
      ["RFC ABC010101AB1", "ñandú@correo.mx"]
    ])
  })

  it("agrees with includes on random text over a small alphabet", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", "c", "é", "\"") , maxLength: 60 })
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), fc.uniqueArray(text, { maxLength: 12 }), (haystacks, needles) => {
        assert.deepStrictEqual(ordered(Leaks.find(haystacks, needles), needles), ordered(naive(haystacks, needles), needles))
      }),
      { numRuns: 300 }
    )
  })
})
