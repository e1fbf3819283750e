import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as DataFiles from "../src/DataFiles.js"
import { loadMunicipalities, municipalityByCode, resolveMunicipality } from "../src/Municipalities.js"

const municipalitiesPath = DataFiles.path(DataFiles.catalogs.municipalities)

describe("municipalities", () => {
  it.effect("loads and decodes the 2,478 municipalities", () =>
    Effect.gen(function*() {
      const catalog = yield* loadMunicipalities(municipalitiesPath)
      assert.strictEqual(catalog.byCode.size, 2478)
      assert.strictEqual(catalog.byState.size, 32)
      assert.strictEqual(catalog.byState.get("09")?.length, 16)
      assert.strictEqual(municipalityByCode(catalog, "01001")?.name, "Aguascalientes")
      assert.strictEqual(municipalityByCode(catalog, "30131")?.name, "Poza Rica de Hidalgo")
    }))

  it.effect("fails with MunicipalityCatalogError on a missing or malformed file", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(loadMunicipalities(`${municipalitiesPath}.missing`))
      assert.strictEqual(missing._tag, "MunicipalityCatalogError")
      const wrong = yield* Effect.flip(
        loadMunicipalities(DataFiles.path(DataFiles.catalogs.states))
      )
      assert.strictEqual(wrong._tag, "MunicipalityCatalogError")
      assert.include(wrong.message, "cve_entidad")
    }))

  it.effect("resolves folded exact names to canonical spelling", () =>
    Effect.gen(function*() {
      const catalog = yield* loadMunicipalities(municipalitiesPath)
      assert.deepStrictEqual(resolveMunicipality(catalog, "09", "BENITO JUÁREZ"), {
        _tag: "Resolved",
        code: "09014",
        name: "Benito Juárez",
        exact: true,
        input: "BENITO JUÁREZ"
      })
      // same name, other state
      const qroo = resolveMunicipality(catalog, "23", "benito juarez")
      assert.isTrue(qroo._tag === "Resolved" && qroo.code === "23005")
      // DENUE 2018 writes "Alamos"; the 2020 catalog "Álamos"
      const alamos = resolveMunicipality(catalog, "26", "Alamos")
      assert.isTrue(alamos._tag === "Resolved" && alamos.code === "26003" && alamos.name === "Álamos" && alamos.exact)
      const comma = resolveMunicipality(
        catalog,
        "20",
        "HEROICA VILLA TEZOATLÁN DE SEGURA Y LUNA, CUNA DE LA INDEPENDENCIA DE OAXACA"
      )
      assert.isTrue(comma._tag === "Resolved" && comma.code === "20549" && comma.exact)
    }))

  it.effect("falls back to the closest spelling, flags it as not exact", () =>
    Effect.gen(function*() {
      const catalog = yield* loadMunicipalities(municipalitiesPath)
      // DENUE 2018 name vs catalog "San José de Iturbide"
      assert.deepStrictEqual(resolveMunicipality(catalog, "11", "San José Iturbide"), {
        _tag: "Resolved",
        code: "11032",
        name: "San José de Iturbide",
        exact: false,
        input: "San José Iturbide"
      })
      // leading words of a long official name beat a similar short name ("Amatepec")
      const ecatepec = resolveMunicipality(catalog, "15", "Ecatepec")
      assert.isTrue(ecatepec._tag === "Resolved" && ecatepec.code === "15033" && ecatepec.name === "Ecatepec de Morelos")
      // DENUE 2018 "Ahualulco" (San Luis Potosí) vs catalog "Ahualulco del Sonido 13"
      const ahualulco = resolveMunicipality(catalog, "24", "Ahualulco")
      assert.isTrue(ahualulco._tag === "Resolved" && ahualulco.code === "24001" && !ahualulco.exact)
      const typo = resolveMunicipality(catalog, "14", "Guadalajra")
      assert.isTrue(typo._tag === "Resolved" && typo.code === "14039" && !typo.exact)
    }))

  it.effect("reports ambiguity and unknown names with suggestions", () =>
    Effect.gen(function*() {
      const catalog = yield* loadMunicipalities(municipalitiesPath)
      const mixtepec = resolveMunicipality(catalog, "20", "San Juan Mixtepec")
      assert.strictEqual(mixtepec._tag, "Ambiguous")
      if (mixtepec._tag === "Ambiguous") {
        assert.deepStrictEqual(mixtepec.candidates.map((c) => c.code), ["20208", "20209"])
      }
      const unknown = resolveMunicipality(catalog, "09", "Zzyzx")
      assert.deepStrictEqual(unknown, { _tag: "Unknown", input: "Zzyzx", suggestions: [] })
      // a prefix shared by many names is not resolved: suggestions instead
      const sanPedro = resolveMunicipality(catalog, "20", "San Pedro")
      assert.strictEqual(sanPedro._tag, "Unknown")
      if (sanPedro._tag === "Unknown") {
        assert.strictEqual(sanPedro.suggestions.length, 3)
        for (const name of sanPedro.suggestions) assert.isTrue(name.startsWith("San Pedro"), name)
      }
      assert.deepStrictEqual(resolveMunicipality(catalog, "99", "Centro"), {
        _tag: "Unknown",
        input: "Centro",
        suggestions: []
      })
    }))
})
