import { assert, describe, it } from "@effect/vitest"
import * as Erasure from "@service/core/Erasure"

const match = Erasure.matcher({ names: ["Ana María López"], emails: ["ana.lopez@acme.mx"], phones: ["+52 55 1234 5678"] })

describe("Erasure.matcher", () => {
  it("finds the values however a store escaped them", () => {
    for (
      const text of [
        `{"email":"Ana.Lopez@ACME.mx"}`,
        `{"email":"ana.lopez\\u0040acme.mx"}`,
        "email=ana.lopez%40acme.mx&x=1",
        "name=Ana+Mar%C3%ADa+L%C3%B3pez",
        "tel: (55) 1234-5678",
        "+525512345678",
        "ANA MARÍA  LÓPEZ firmó"
      ]
    ) assert.isTrue(match.test(text), text)
  })

  it("leaves other people and a lone first name alone", () => {
    for (const text of ["ana@otra.mx", "Ana vino", "55 9999 0000", "María López Pérez"]) assert.isFalse(match.test(text), text)
    assert.isFalse(Erasure.matcher({ names: ["Ana"], emails: [], phones: [] }).test("Ana vino"))
  })

  it("scrubs strings, and wholly when a value hides in an escape", () => {
    assert.strictEqual(match.scrub("Llamar a Ana María López al 55 1234 5678"), "Llamar a [erased] al [erased]")
    assert.strictEqual(match.scrub("x=ana.lopez%40acme.mx"), Erasure.ERASED)
    assert.deepStrictEqual(match.scrubJson({ a: ["ana.lopez@acme.mx", 3], b: "keep" }), {
      value: { a: ["[erased]", 3], b: "keep" },
      changed: true
    })
  })
})
