import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as DataFiles from "../src/DataFiles.js"
import { classCodeForTitle, isKnownCode, levelOf, loadScian, parentChain, titleOf } from "../src/internal/scian.js"

const scianPath = DataFiles.path(DataFiles.catalogs.scian)

describe("SCIAN 2023", () => {
  it.effect("loads the fixture: 2,118 codes across five levels", () =>
    Effect.gen(function*() {
      const scian = yield* loadScian(scianPath)
      assert.strictEqual(scian.byCode.size, 2118)
      const levels = new Map<string, number>()
      for (const e of scian.byCode.values()) levels.set(e.level, (levels.get(e.level) ?? 0) + 1)
      assert.deepStrictEqual(Object.fromEntries(levels), {
        sector: 23,
        subsector: 94,
        rama: 305,
        subrama: 610,
        clase: 1086
      })
      assert.strictEqual(scian.classByTitle.size, 1086)
    }))

  it.effect("titles (trimmed), levels and the parent chain", () =>
    Effect.gen(function*() {
      const scian = yield* loadScian(scianPath)
      assert.deepStrictEqual(titleOf(scian, "212311"), Option.some("Minería de piedra caliza"))
      assert.deepStrictEqual(levelOf(scian, "212311"), Option.some("clase"))
      assert.deepStrictEqual(levelOf(scian, "21"), Option.some("sector"))
      assert.deepStrictEqual(
        parentChain(scian, "212311").map((e) => [e.code, e.level]),
        [["21231", "subrama"], ["2123", "rama"], ["212", "subsector"], ["21", "sector"]]
      )
      assert.deepStrictEqual(titleOf(scian, "21"), Option.some("Minería"))
      assert.deepStrictEqual(parentChain(scian, "21"), [])
      assert.deepStrictEqual(parentChain(scian, "999999"), [])
      assert.deepStrictEqual(
        parentChain(scian, "722518").map((e) => e.code),
        ["72251", "7225", "722", "72"]
      )
      assert.deepStrictEqual(parentChain(scian, "311110").at(-1)?.code, "31")
    }))

  it.effect("isKnownCode: 211110 (DENUE 2018) is not in SCIAN 2023; 31/32/33 are separate sectors", () =>
    Effect.gen(function*() {
      const scian = yield* loadScian(scianPath)
      assert.isFalse(isKnownCode(scian, "211110"))
      assert.isTrue(isKnownCode(scian, "212321"))
      assert.isTrue(isKnownCode(scian, " 213111 "))
      for (const s of ["31", "32", "33", "48", "49"]) assert.isTrue(isKnownCode(scian, s), s)
      assert.isFalse(isKnownCode(scian, "31-33"))
      assert.isTrue(Option.isNone(titleOf(scian, "211110")))
    }))

  it.effect("finds a clase by its folded title", () =>
    Effect.gen(function*() {
      const scian = yield* loadScian(scianPath)
      assert.deepStrictEqual(
        classCodeForTitle(scian, "RESTAURANTES QUE PREPARAN OTRO TIPO DE ALIMENTOS PARA LLEVAR"),
        Option.some("722518")
      )
      assert.deepStrictEqual(classCodeForTitle(scian, "Mineria de piedra caliza"), Option.some("212311"))
      // rama/subrama titles are not clase titles
      assert.isTrue(
        Option.isNone(classCodeForTitle(scian, "Servicios de preparación de alimentos y bebidas alcohólicas y no alcohólicas"))
      )
    }))

  it.effect("fails with ScianCatalogError on a missing file", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadScian(`${scianPath}.missing`))
      assert.strictEqual(error._tag, "ScianCatalogError")
    }))
})
