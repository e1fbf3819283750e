import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  compactKey,
  editDistance,
  foldText,
  foldWords,
  nameSimilarity,
  normalizeName,
  trigramSimilarity
} from "../src/Text.js"

describe("foldText", () => {
  it.effect("lower-cases, strips accents, collapses and trims whitespace", () =>
    Effect.sync(() => {
      assert.strictEqual(foldText("  Ciudad de  MÉXICO "), "ciudad de mexico")
      assert.strictEqual(foldText("Michoacán de Ocampo"), "michoacan de ocampo")
      assert.strictEqual(foldText("PEÑOLES\t\nÜ"), "penoles u")
      // DENUE pads `entidad` with spaces; NBSP is whitespace too
      assert.strictEqual(foldText("QUERÉTARO                               "), "queretaro")
      assert.strictEqual(foldText("Nuevo\u00a0León"), "nuevo leon")
      assert.strictEqual(foldText(""), "")
    }))

  it.effect("foldWords and compactKey drop punctuation", () =>
    Effect.sync(() => {
      assert.strictEqual(foldWords("Q. Roo"), "q roo")
      assert.strictEqual(foldWords("Edo.-Méx."), "edo mex")
      assert.strictEqual(compactKey("D.F."), "df")
      assert.strictEqual(compactKey("Edo. Mex."), "edomex")
      assert.strictEqual(compactKey(" Nuevo  León "), "nuevoleon")
    }))
})

describe("normalizeName", () => {
  it.effect("drops Mexican legal-form suffixes in their usual spellings", () =>
    Effect.sync(() => {
      assert.strictEqual(normalizeName("ZAPATA INTERNACIONAL, S.A. DE C.V."), "zapata internacional")
      assert.strictEqual(normalizeName("Zapata Internacional SA de CV"), "zapata internacional")
      assert.strictEqual(normalizeName("Servicios Petroleros BBH SA DE CV"), "servicios petroleros bbh")
      assert.strictEqual(normalizeName("Grupo Chambelle, S. A. de C. V."), "grupo chambelle")
      assert.strictEqual(normalizeName("Fintech Uno, S.A.P.I. de C.V."), "fintech uno")
      assert.strictEqual(normalizeName("WEATHERFORD DE MEXICO S DE RL DE CV"), "weatherford de mexico")
      assert.strictEqual(normalizeName("Kanutam, S. de R.L. de C.V."), "kanutam")
      assert.strictEqual(normalizeName("CORP GRAVEL BIG STONE S RL CV"), "corp gravel big stone")
      assert.strictEqual(normalizeName("Despacho Pérez, S.C."), "despacho perez")
      assert.strictEqual(normalizeName("Fundación Minera, A.C."), "fundacion minera")
      assert.strictEqual(normalizeName("Industrias Peñoles, S.A.B. de C.V."), "industrias penoles")
      assert.strictEqual(normalizeName("Grupo México S.A.B."), "grupo mexico")
      assert.strictEqual(normalizeName("Cementos Moctezuma, S.A."), "cementos moctezuma")
      assert.strictEqual(normalizeName("Minera Sociedad Anónima de Capital Variable"), "minera")
    }))

  it.effect("keeps inner words, punctuation-only differences and never returns empty for a suffix-only name", () =>
    Effect.sync(() => {
      assert.strictEqual(normalizeName("Limpia-Tec & Asociados"), "limpia tec asociados")
      assert.strictEqual(normalizeName("S.A. de C.V. Minerales del Norte"), "sa de cv minerales del norte")
      assert.strictEqual(normalizeName("S.A."), "sa")
      assert.strictEqual(normalizeName("   "), "")
      assert.strictEqual(
        normalizeName("MATERIALES GERO  S.A. DE C.V."),
        normalizeName("Materiales Gero")
      )
    }))
})

describe("similarity", () => {
  it.effect("editDistance", () =>
    Effect.sync(() => {
      assert.strictEqual(editDistance("", "abc"), 3)
      assert.strictEqual(editDistance("kitten", "sitting"), 3)
      assert.strictEqual(editDistance("distrto federal", "distrito federal"), 1)
      assert.strictEqual(editDistance("same", "same"), 0)
    }))

  it.effect("trigramSimilarity and nameSimilarity", () =>
    Effect.sync(() => {
      assert.strictEqual(trigramSimilarity("Álamos", "alamos"), 1)
      assert.strictEqual(trigramSimilarity("abc", ""), 0)
      const close = trigramSimilarity("San José Iturbide", "San José de Iturbide")
      const far = trigramSimilarity("San José Iturbide", "Tlaxcala")
      assert.isTrue(close > 0.6 && close < 1, `close=${close}`)
      assert.isTrue(far < 0.2, `far=${far}`)
      assert.isTrue(nameSimilarity("Jalsco", "Jalisco") > 0.8)
      assert.strictEqual(nameSimilarity("", ""), 0)
    }))
})
