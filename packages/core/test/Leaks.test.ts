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

  it("counts a needle of digits only as a whole token", () => {
    const needles = ["1240778", "ABC010101AB1"]
    assert.deepStrictEqual(
      Leaks.find(["ref sr1_x9f1240778ab", "id 91240778", "\"1240778\"", "denue:1240778,", "1240778", "xABC010101AB1x"], needles),
      [[], [], ["1240778"], ["1240778"], ["1240778"], ["ABC010101AB1"]]
    )
  })

  it("agrees with a whole-token search for digits and includes for the rest, on random text", () => {
    const isWord = (c: string | undefined) => c !== undefined && /[0-9A-Za-z]/.test(c)
    const reference = (haystack: string, needle: string): boolean => {
      if (needle.length === 0) return false
      if (!/^[0-9]+$/.test(needle)) return haystack.includes(needle)
      for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
        if (!isWord(haystack[at - 1]) && !isWord(haystack[at + needle.length])) return true
      }
      return false
    }
    const text = fc.string({ unit: fc.constantFrom("1", "2", "a", ":", " "), maxLength: 40 })
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), fc.uniqueArray(text, { maxLength: 12 }), (haystacks, needles) => {
        const expected = haystacks.map((haystack) => needles.filter((needle) => reference(haystack, needle)))
        assert.deepStrictEqual(ordered(Leaks.find(haystacks, needles), needles), ordered(expected, needles))
      }),
      { numRuns: 300 }
    )
  })
})
