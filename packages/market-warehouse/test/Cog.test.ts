import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Option, Stream } from "effect"
import {
  capituloOf,
  conceptoOf,
  defaultCogPath,
  descriptionOf,
  isKnownPartida,
  levelOfCode,
  loadCog,
  loadCogCatalog,
  partidaGenericaOf,
  partidaOfCucop,
  streamCog
} from "../src/internal/cog.js"
import { dataPath } from "./harness.js"

const COG = dataPath("catalogs", "cucop_cog_catalogo_edca.csv")

describe("COG/CUCoP code helpers", () => {
  it("levels and structural parents", () => {
    assert.deepStrictEqual(capituloOf("21101"), Option.some("2000"))
    assert.deepStrictEqual(capituloOf("62401009"), Option.some("6000"))
    assert.deepStrictEqual(capituloOf("2110"), Option.some("2000"))
    assert.deepStrictEqual(capituloOf("211"), Option.none())
    assert.deepStrictEqual(conceptoOf("21101"), Option.some("2100"))
    assert.deepStrictEqual(partidaGenericaOf("21101"), Option.some("2110"))
    assert.deepStrictEqual(partidaGenericaOf("21100001"), Option.some("2110"))
    assert.deepStrictEqual(levelOfCode("2000"), Option.some("capitulo"))
    assert.deepStrictEqual(levelOfCode("2100"), Option.some("concepto"))
    assert.deepStrictEqual(levelOfCode("2110"), Option.some("partida_generica"))
    assert.deepStrictEqual(levelOfCode("21101"), Option.some("partida_especifica"))
    assert.deepStrictEqual(levelOfCode("21100001"), Option.some("cucop"))
    assert.deepStrictEqual(levelOfCode("2111"), Option.none())
  })
})

describe("CUCoP/COG catalog (EDCA)", () => {
  it.effect("the repository copy is the default path", () =>
    Effect.sync(() => assert.strictEqual(defaultCogPath, COG)))

  it.effect("streams every row after the header, in file order", () =>
    Effect.gen(function*() {
      const rows = Chunk.toReadonlyArray(yield* Stream.runCollect(streamCog(COG)))
      assert.strictEqual(rows.length, 12049)
      assert.deepStrictEqual(rows[0], {
        _tag: "Entry",
        line: 2,
        rowId: "1",
        code: "2000",
        level: "capitulo",
        description: "Materiales y suministros",
        unit: null
      })
      assert.deepStrictEqual(rows[4], {
        _tag: "Entry",
        line: 6,
        rowId: "5",
        code: "21100001",
        level: "cucop",
        description: "Abrecartas",
        unit: "Pieza"
      })
      assert.isTrue(rows.every((row) => row._tag === "Entry"))
    }))

  it.effect("counts per level: 4 capítulos, 29 conceptos, 195 partidas genéricas, 274 específicas, 11,547 items", () =>
    Effect.gen(function*() {
      const cog = yield* loadCogCatalog(COG)
      assert.deepStrictEqual([...cog.capitulos.keys()], ["2000", "3000", "5000", "6000"])
      assert.strictEqual(cog.conceptos.size, 29)
      assert.strictEqual(cog.partidasGenericas.size, 195)
      assert.strictEqual(cog.partidasEspecificas.size, 274)
      assert.strictEqual(cog.items.size, 11547)
      assert.strictEqual(
        cog.capitulos.size + cog.conceptos.size + cog.partidasGenericas.size + cog.partidasEspecificas.size +
          cog.items.size,
        12049
      )
      assert.deepStrictEqual(cog.anomalies, [])
      // Every structural parent is in the catalog.
      for (const level of [cog.conceptos, cog.partidasGenericas, cog.partidasEspecificas]) {
        for (const entry of level.values()) {
          const parent = entry.parent
          assert.isTrue(
            parent !== null && (cog.capitulos.has(parent) || cog.conceptos.has(parent) || cog.partidasGenericas.has(parent)),
            entry.code
          )
        }
      }
      assert.isTrue([...cog.items.values()].every((item) => cog.partidasGenericas.has(item.partidaGenerica)))
    }))

  it.effect("partidas específicas: 21101 is known, its capítulo is 2000; chapter 1000 is absent", () =>
    Effect.gen(function*() {
      const cog = yield* loadCogCatalog(COG)
      assert.isTrue(isKnownPartida(cog, "21101"))
      assert.isFalse(isKnownPartida(cog, "21100")) // the first 5 digits of 21100001, not a partida
      assert.isFalse(isKnownPartida(cog, "11101"))
      assert.isFalse(isKnownPartida(cog, "2110"))
      assert.deepStrictEqual(cog.partidasEspecificas.get("21101"), {
        code: "21101",
        level: "partida_especifica",
        description: "Materiales y utiles de oficina",
        parent: "2110",
        line: 5
      })
      assert.deepStrictEqual(capituloOf("21101"), Option.some("2000"))
      assert.deepStrictEqual(descriptionOf(cog, "2000"), Option.some("Materiales y suministros"))
      // Known source error, kept as published: 21301 carries 21201's description.
      assert.deepStrictEqual(descriptionOf(cog, "21301"), descriptionOf(cog, "21201"))
      assert.deepStrictEqual(descriptionOf(cog, "21301"), Option.some("Materiales y utiles de impresion y reproduccion"))
    }))

  it.effect("CUCoP items map to their partida específica", () =>
    Effect.gen(function*() {
      const cog = yield* loadCogCatalog(COG)
      // Genérica 2110 has one partida específica.
      assert.deepStrictEqual(partidaOfCucop(cog, "21100001"), Option.some("21101"))
      assert.strictEqual(cog.items.get("21100001")?.partidaRule, "only_partida_of_generica")
      // Chapter 6000 writes <partida específica><3 digits>; the row sits far from 62401 in the file.
      assert.deepStrictEqual(partidaOfCucop(cog, "62401009"), Option.some("62401"))
      assert.strictEqual(cog.items.get("62401009")?.partidaRule, "code_prefix")
      // Genérica 2210 has six partidas; the item is listed under 22101 (and repeats its description).
      assert.deepStrictEqual(partidaOfCucop(cog, "22100393"), Option.some("22101"))
      assert.strictEqual(cog.items.get("22100393")?.partidaRule, "listed_under")
      assert.deepStrictEqual(partidaOfCucop(cog, "22100001"), Option.some("22104"))
      // Listed after partida 59101 (out of place), still mapped inside its own genérica 2380.
      assert.deepStrictEqual(partidaOfCucop(cog, "23800115"), Option.some("23801"))
      // Genérica 6140 has no partida específica in this catalog; 54100045 comes before any 541xx partida.
      assert.isTrue(cog.items.has("61400101"))
      assert.deepStrictEqual(partidaOfCucop(cog, "61400101"), Option.none())
      assert.isTrue(cog.items.has("54100045"))
      assert.deepStrictEqual(partidaOfCucop(cog, "54100045"), Option.none())
      assert.deepStrictEqual(partidaOfCucop(cog, "99999999"), Option.none())
      const rules = new Map<string, number>()
      for (const item of cog.items.values()) {
        const rule = item.partidaRule ?? "none"
        rules.set(rule, (rules.get(rule) ?? 0) + 1)
      }
      assert.deepStrictEqual(Object.fromEntries(rules), {
        only_partida_of_generica: 9126,
        code_prefix: 982,
        listed_under: 1012,
        none: 427
      })
      // Every resolved partida is a partida of the catalog, inside the item's genérica.
      for (const item of cog.items.values()) {
        if (item.partidaEspecifica !== null) {
          assert.isTrue(isKnownPartida(cog, item.partidaEspecifica))
          assert.strictEqual(item.partidaEspecifica.slice(0, 3), item.code.slice(0, 3))
        }
      }
    }))

  it.effect("flat rows for the reference table", () =>
    Effect.gen(function*() {
      const rows = yield* loadCog(COG)
      assert.strictEqual(rows.length, 12049)
      assert.deepStrictEqual(rows[0], {
        code: "2000",
        level: "capitulo",
        description: "Materiales y suministros",
        parent_code: null,
        unit: null
      })
      assert.deepStrictEqual(rows.find((r) => r.code === "21100001"), {
        code: "21100001",
        level: "cucop",
        description: "Abrecartas",
        parent_code: "21101",
        unit: "Pieza"
      })
      assert.strictEqual(rows.find((r) => r.code === "61400101")?.parent_code, "6140")
      assert.strictEqual(new Set(rows.map((r) => r.code)).size, rows.length)
    }))

  it.effect("a wrong header fails; malformed and repeated codes are anomalies", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "cog-test-"))),
      (dir) =>
        Effect.gen(function*() {
          const bad = join(dir, "bad.csv")
          yield* Effect.promise(() => writeFile(bad, "code,description\n2000,x\n", "utf8"))
          const failed = yield* Effect.either(loadCogCatalog(bad))
          assert.isTrue(failed._tag === "Left")
          const odd = join(dir, "odd.csv")
          yield* Effect.promise(() =>
            writeFile(odd, "id,classificationid,description,unit\n1,2000,A,\n2,21x,B,\n3,2000,C,\n", "utf8")
          )
          const cog = yield* loadCogCatalog(odd)
          assert.deepStrictEqual(cog.anomalies, [
            { line: 3, reason: "not a COG/CUCoP code: \"21x\"" },
            { line: 4, reason: "code 2000 repeated (first on line 2)" }
          ])
          assert.strictEqual(cog.capitulos.get("2000")?.description, "A")
        }),
      (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
    ))
})
