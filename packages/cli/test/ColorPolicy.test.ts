import { assert, describe, it } from "@effect/vitest"
import * as Option from "effect/Option"
import * as ColorPolicy from "../src/ColorPolicy.js"

const env = (stdoutIsTerminal: boolean, noColor?: string, forceColor?: string): ColorPolicy.Environment => ({
  stdoutIsTerminal,
  noColor: Option.fromNullable(noColor),
  forceColor: Option.fromNullable(forceColor)
})

describe("ColorPolicy", () => {
  it("colour only on a terminal, never with NO_COLOR set, and when FORCE_COLOR asks", () => {
    assert.isTrue(ColorPolicy.allows(env(true)))
    assert.isFalse(ColorPolicy.allows(env(false)))
    assert.isFalse(ColorPolicy.allows(env(true, "1")))
    // An empty NO_COLOR does not count (no-color.org).
    assert.isTrue(ColorPolicy.allows(env(true, "")))
    assert.isFalse(ColorPolicy.allows(env(true, "1", "1")), "NO_COLOR wins")
    assert.isTrue(ColorPolicy.allows(env(false, undefined, "1")))
    assert.isFalse(ColorPolicy.allows(env(false, undefined, "0")))
  })

  it("strip removes colour, cursor and hyperlink sequences and keeps the text", () => {
    const styled = "\u001b[0;1m\u001b[0;37;1mservice\u001b[0m \u001b[1mUSAGE\u001b[22m\r\u001b[K \u001b]8;;http://x\u0007link\u001b]8;;\u0007"
    assert.strictEqual(ColorPolicy.strip(styled), "service USAGE\r link")
  })
})
