import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Either, Schema, Stream } from "effect"
import {
  countDataRows,
  detectDenueFileLayout,
  detectDenueLayout,
  DenueObservation,
  isPresent,
  normalizePostalCode,
  parseDenueMonth,
  splitUbicacion,
  streamDenue
} from "../src/internal/denue.js"
import type { DenueReferences, DenueResult } from "../src/internal/denue.js"
import { isKnownCode } from "../src/internal/scian.js"
import { normalizeName } from "../src/Text.js"
import { collectItems, dataPath, rejectsOf, testContext } from "./harness.js"

const MINING = dataPath("suppliers", "denue_inegi_21_mineria_sample.csv")
const AGUASCALIENTES = dataPath("suppliers", "denue_descarga_aguascalientes_sample.csv")
const API_CDMX = dataPath("suppliers", "denue_api_cdmx_restaurantes_sample.csv")

/** The SCIAN and municipality catalogs: the parsers' shared context. */
const references: Effect.Effect<DenueReferences> = testContext

const collect = (path: string) => collectItems({ stream: streamDenue }, path)

const rowsOf = (results: ReadonlyArray<DenueResult>) => results.flatMap((r) => (r._tag === "Row" ? [r.row] : []))

/** Write a temporary CSV, run `use` on its path, remove it. */
const withCsv = <A, E>(content: string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "denue-test-"))
      const path = join(dir, "sample.csv")
      await writeFile(path, content, "utf8")
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

describe("DENUE bulk layout (sector 21 mining sample)", () => {
  it.effect("yields one result per data row: 2,000 = accepted + rejected = countDataRows", () =>
    Effect.gen(function*() {
      const results = yield* collect(MINING)
      const dataRows = yield* countDataRows(MINING)
      assert.strictEqual(dataRows, 2000)
      assert.strictEqual(results.length, 2000)
      assert.strictEqual(rowsOf(results).length + rejectsOf(results).length, dataRows)
      assert.deepStrictEqual(rejectsOf(results), [])
      // lines are the physical lines, in order, header on line 1
      assert.strictEqual(results[0]?.line, 2)
      assert.strictEqual(results.at(-1)?.line, 2001)
      assert.strictEqual(yield* detectDenueFileLayout(MINING), "bulk")
    }))

  it.effect("maps a known row (line 2, id 6186029)", () =>
    Effect.gen(function*() {
      const results = yield* collect(MINING)
      assert.deepStrictEqual(results[0], {
        _tag: "Row",
        line: 2,
        row: {
          sourceLayout: "bulk",
          sourceRecordId: "6186029",
          name: "MAQUINARIA Y CONSTRUCCIONES CAFA, S.A. DE C.V.",
          legalName: "MAQUINARIA Y CONSTRUCCIONES CAFA, S.A. DE C.V.",
          scianCode: "212321",
          scianTitle: "Minería de arena y grava para la construcción",
          stateCode: "01",
          municipalityCode: "01005",
          employmentBand: "11 a 30 personas",
          hasPhone: true,
          hasEmail: true,
          hasWebsite: true,
          establishmentType: "Fijo",
          postalCode: "20980",
          incorporatedOn: "2011-03",
          contact: { phone: "4499229222", email: "CAFA@CAFA.COM.MX", website: "WWW.CAFA.COM.MX" }
        }
      })
      // every accepted row satisfies the schema
      for (const row of rowsOf(results)) assert.isTrue(Schema.is(DenueObservation)(row))
    }))

  it.effect("space-padded upper-case `entidad` values resolve; MÉXICO is state 15", () =>
    Effect.gen(function*() {
      const rows = rowsOf(yield* collect(MINING))
      const byState = new Map<string, number>()
      for (const r of rows) byState.set(r.stateCode, (byState.get(r.stateCode) ?? 0) + 1)
      assert.strictEqual(byState.size, 32)
      assert.strictEqual(byState.get("15"), 82) // "MÉXICO                      "
      assert.strictEqual(byState.get("22"), 129) // "QUERÉTARO                               "
      assert.strictEqual(byState.get("09"), 32) // "CIUDAD DE MÉXICO"
      assert.strictEqual(byState.get("21"), 332)
      const cocoyoc = rows.find((r) => r.sourceRecordId === "6187435")
      assert.strictEqual(cocoyoc?.name, "AGREGADOS COCOYOC")
      assert.strictEqual(cocoyoc?.stateCode, "15")
      assert.strictEqual(cocoyoc?.municipalityCode, "15099") // Texcoco
      assert.strictEqual(cocoyoc?.incorporatedOn, "2010-07")
    }))

  it.effect("keeps DENUE 2018 SCIAN codes, including 211110 which SCIAN 2023 lacks", () =>
    Effect.gen(function*() {
      const refs = yield* references
      const rows = rowsOf(yield* collect(MINING))
      const oil = rows.filter((r) => r.scianCode === "211110")
      assert.strictEqual(oil.length, 48)
      assert.strictEqual(oil[0]?.scianTitle, "Extracción de petróleo y gas")
      assert.isFalse(isKnownCode(refs.scian, "211110"))
      const codes = new Set(rows.map((r) => r.scianCode))
      assert.strictEqual(codes.size, 29)
      assert.deepStrictEqual([...codes].filter((c) => c === null || !isKnownCode(refs.scian, c)), ["211110"])
    }))

  it.effect("name-match facts: ZAPATA INTERNACIONAL and SERVICIOS PETROLEROS BBH", () =>
    Effect.gen(function*() {
      const rows = rowsOf(yield* collect(MINING))
      const zapata = rows.find((r) => r.sourceRecordId === "6725146")
      assert.strictEqual(zapata?.stateCode, "30")
      assert.strictEqual(zapata?.municipalityCode, "30131") // Poza Rica de Hidalgo
      assert.strictEqual(zapata?.scianCode, "213111")
      assert.strictEqual(normalizeName(zapata?.legalName ?? ""), "zapata internacional")
      const bbh = rows.find((r) => r.sourceRecordId === "203801")
      assert.strictEqual(bbh?.municipalityCode, "04003") // Carmen, Campeche
      assert.strictEqual(normalizeName(bbh?.legalName ?? ""), "servicios petroleros bbh")
    }))

  it.effect("contact presence flags: placeholders are not contacts, raw values kept apart", () =>
    Effect.gen(function*() {
      const rows = rowsOf(yield* collect(MINING))
      assert.strictEqual(rows.filter((r) => r.hasPhone).length, 1040) // 1,050 non-empty minus 10 "NO TIENE"
      assert.strictEqual(rows.filter((r) => r.hasEmail).length, 456)
      assert.strictEqual(rows.filter((r) => r.hasWebsite).length, 133)
      const noTiene = rows.filter((r) => r.contact.phone === "NO TIENE")
      assert.strictEqual(noTiene.length, 10)
      for (const r of noTiene) assert.isFalse(r.hasPhone)
    }))

  it.effect("postal codes: empty → null, 4 digits (leading zero lost) → padded", () =>
    Effect.gen(function*() {
      const rows = rowsOf(yield* collect(MINING))
      assert.strictEqual(rows.filter((r) => r.postalCode === null).length, 159)
      assert.strictEqual(rows.find((r) => r.sourceRecordId === "6186366")?.postalCode, "03510")
      const months = new Set(rows.map((r) => r.incorporatedOn))
      assert.deepStrictEqual(
        [...months].sort(),
        ["2010-07", "2011-03", "2012-06", "2013-07", "2014-12", "2016-01", "2016-10", "2017-03", "2017-11"]
      )
    }))
})

describe("DENUE web-download layout (Aguascalientes, long headers)", () => {
  it.effect("parses 8 rows in state 01", () =>
    Effect.gen(function*() {
      const results = yield* collect(AGUASCALIENTES)
      assert.strictEqual(yield* countDataRows(AGUASCALIENTES), 8)
      assert.strictEqual(results.length, 8)
      const rows = rowsOf(results)
      assert.strictEqual(rows.length, 8)
      for (const r of rows) {
        assert.strictEqual(r.sourceLayout, "web")
        assert.strictEqual(r.stateCode, "01")
        assert.strictEqual(r.municipalityCode, "01001")
        assert.strictEqual(r.incorporatedOn, "2014-12")
        assert.isNull(r.legalName)
      }
      const fumicent = rows.find((r) => r.sourceRecordId === "33984")
      assert.strictEqual(fumicent?.name, "FUMICENT")
      assert.strictEqual(fumicent?.scianCode, "115111")
      assert.strictEqual(fumicent?.scianTitle, "Servicios de fumigación agrícola")
      assert.isTrue(fumicent?.hasWebsite)
      assert.strictEqual(fumicent?.contact.website, "WWW.FUMICENT.COM.MX")
      // one row has no postal code
      assert.isNull(rows.find((r) => r.sourceRecordId === "40906")?.postalCode)
      assert.strictEqual(yield* detectDenueFileLayout(AGUASCALIENTES), "web")
    }))
})

describe("DENUE API export layout (restaurants, colonia Nápoles)", () => {
  it.effect("parses 6 rows in Benito Juárez, CDMX (09014), SCIAN code from the class title", () =>
    Effect.gen(function*() {
      const results = yield* collect(API_CDMX)
      assert.strictEqual(yield* countDataRows(API_CDMX), 6)
      const rows = rowsOf(results)
      assert.strictEqual(rows.length, 6)
      assert.strictEqual(results.length, 6)
      for (const r of rows) {
        assert.strictEqual(r.sourceLayout, "api")
        assert.strictEqual(r.stateCode, "09")
        assert.strictEqual(r.municipalityCode, "09014")
        assert.isNull(r.incorporatedOn)
        assert.isNotNull(r.scianCode)
      }
      assert.deepStrictEqual(rows.map((r) => r.sourceRecordId), ["875319", "869243", "870908", "870899", "6697132", "870949"])
      const chambelle = rows[0]
      assert.strictEqual(chambelle?.name, "CHAMBELLE NATURALISSIMO")
      assert.strictEqual(chambelle?.legalName, "GRUPO CHAMBELLE, S.A. DE C.V.")
      assert.strictEqual(chambelle?.scianCode, "722518")
      assert.strictEqual(chambelle?.postalCode, "03840")
      assert.strictEqual(chambelle?.employmentBand, "6 a 10 personas")
      assert.deepStrictEqual(
        rows.map((r) => r.scianCode),
        ["722518", "722517", "722511", "722511", "722511", "722513"]
      )
      assert.deepStrictEqual(rows.map((r) => r.hasEmail), [false, true, false, true, true, false])
      assert.strictEqual(yield* detectDenueFileLayout(API_CDMX), "api")
    }))
})

describe("rejects and failures", () => {
  const header =
    "\"id\",\"nom_estab\",\"raz_social\",\"codigo_act\",\"nombre_act\",\"per_ocu\",\"cod_postal\",\"cve_ent\",\"entidad\",\"cve_mun\",\"municipio\",\"telefono\",\"correoelec\",\"www\",\"tipoUniEco\",\"fecha_alta\""
  const csv = [
    header,
    "\"1\",\"MINA UNO\",,\"212321\",\"Minería de arena\",\"0 a 5 personas\",\"20000\",\"01\",\"AGUASCALIENTES\",\"001\",\"Aguascalientes\",,,,\"Fijo\",\"ENERO 2016\"",
    "\"2\",\"  \",,\"212321\",\"x\",\"0 a 5 personas\",\"20000\",\"01\",\"AGUASCALIENTES\",\"001\",\"Aguascalientes\",,,,\"Fijo\",\"ENERO 2016\"",
    "\"3\",\"MINA TRES\",,\"212321\",\"x\",\"0 a 5 personas\",\"20000\",\"\",\"ATLANTIDA\",\"001\",\"X\",,,,\"Fijo\",\"ENERO 2016\"",
    "\"4\",\"MINA CUATRO\",,\"212321\",\"x\",\"0 a 5 personas\",\"20000\",\"21\",\"JALISCO\",\"001\",\"X\",,,,\"Fijo\",\"ENERO 2016\"",
    "\"5\",\"MINA CINCO\",\"too\",\"few\"",
    "",
    "\"6\",\"MINA\nSEIS\",,\"\",\"Minería de piedra caliza\",\"0 a 5 personas\",\"3510\",\"9\",\"CIUDAD DE MÉXICO\",\"14\",\"Benito Juárez\",\"NO TIENE\",\" \",\"-\",\"Fijo\",\"PRIMAVERA 2016\"",
    "\"7\",\"MINA SIETE\",,\"212321\",\"x\",\"0 a 5 personas\",\"20000\",\"\",\"Distrto Federal\",\"001\",\"X\",,,,\"Fijo\",\"ENERO 2016\"",
    ""
  ].join("\n")

  it.effect("every data row gives a Row or a Reject with a reason and its line", () =>
    withCsv(csv, (path) =>
      Effect.gen(function*() {
        const results = yield* collect(path)
        const count = yield* countDataRows(path)
        assert.strictEqual(count, 7)
        assert.strictEqual(results.length, 7)
        assert.deepStrictEqual(results.map((r) => [r._tag, r.line]), [
          ["Row", 2],
          ["Reject", 3],
          ["Reject", 4],
          ["Reject", 5],
          ["Reject", 6],
          ["Row", 8], // line 7 is empty; this record spans lines 8–9
          ["Reject", 10]
        ])
        const reasons = rejectsOf(results).map((r) => r.reason)
        assert.include(reasons[0], "missing establishment name (nom_estab)")
        assert.include(reasons[1], "state cannot be resolved")
        assert.include(reasons[1], "ATLANTIDA")
        assert.include(reasons[2], "disagrees")
        assert.include(reasons[3], "expected 16 fields, found 4")
        assert.include(reasons[4], "Ciudad de México") // suggestion for "Distrto Federal"
        const six = rowsOf(results)[1]
        assert.strictEqual(six?.name, "MINA\nSEIS")
        assert.strictEqual(six?.stateCode, "09")
        assert.strictEqual(six?.municipalityCode, "09014")
        assert.strictEqual(six?.scianCode, "212311") // from the title: no code given
        assert.strictEqual(six?.postalCode, "03510")
        assert.isNull(six?.incorporatedOn)
        assert.deepStrictEqual([six?.hasPhone, six?.hasEmail, six?.hasWebsite], [false, false, false])
        assert.deepStrictEqual(six?.contact, { phone: "NO TIENE", email: null, website: "-" })
      })))

  it.effect("fails with DenueLayoutError on an unknown header and DenueSourceError on a missing file", () =>
    Effect.gen(function*() {
      const layout = yield* withCsv("a,b,c\n1,2,3\n", (path) => Effect.flip(collect(path)))
      assert.strictEqual(layout._tag, "DenueLayoutError")
      assert.include(layout.message, "matches no DENUE layout")
      const missing = yield* Effect.flip(countDataRows(`${MINING}.missing`))
      assert.strictEqual(missing._tag, "DenueSourceError")
      assert.include(missing.message, "ENOENT")
    }))

  it.effect("can be consumed partially (the file stream is released when the consumer stops)", () =>
    Effect.gen(function*() {
      const refs = yield* references
      const firstThree = yield* Stream.runCollect(Stream.take(streamDenue(MINING, refs), 3))
      assert.deepStrictEqual(Chunk.toReadonlyArray(firstThree).map((r) => r.line), [2, 3, 4])
    }))
})

describe("helpers", () => {
  it.effect("detectDenueLayout tolerates the trailing space and accents in headers", () =>
    Effect.sync(() => {
      const web = detectDenueLayout([
        "ID",
        "NOMBRE DE LA UNIDAD ECONOMICA",
        "Razón social",
        "Código de la clase de actividad SCIAN",
        "Nombre de clase de la actividad",
        "Descripcion estrato personal ocupado",
        "Código Postal ",
        "Clave entidad",
        "Entidad federativa",
        "Clave municipio",
        "Municipio",
        "Número de teléfono",
        "Correo electrónico",
        "Sitio en Internet",
        "Tipo de establecimiento",
        "Fecha de incorporación al DENUE",
        "Área geoestadística básica "
      ])
      assert.isTrue(Either.isRight(web) && web.right.layout === "web")
      const none = detectDenueLayout(["id", "nom_estab"])
      assert.isTrue(Either.isLeft(none) && none.left.includes("missing"))
    }))

  it.effect("parseDenueMonth, normalizePostalCode, isPresent, splitUbicacion", () =>
    Effect.sync(() => {
      assert.strictEqual(parseDenueMonth("MARZO 2011"), "2011-03")
      assert.strictEqual(parseDenueMonth("diciembre 2014"), "2014-12")
      assert.strictEqual(parseDenueMonth("SEPTIEMBRE 2019"), "2019-09")
      assert.strictEqual(parseDenueMonth("2016-01"), "2016-01")
      assert.isNull(parseDenueMonth("2016-13"))
      assert.isNull(parseDenueMonth(""))
      assert.isNull(parseDenueMonth("MARZOS 2011"))
      assert.strictEqual(normalizePostalCode("03840"), "03840")
      assert.strictEqual(normalizePostalCode("3510"), "03510")
      assert.isNull(normalizePostalCode(""))
      assert.isNull(normalizePostalCode("ABC12"))
      assert.isTrue(isPresent("5556829511"))
      assert.isFalse(isPresent("  "))
      assert.isFalse(isPresent("NO TIENE"))
      assert.deepStrictEqual(splitUbicacion("BENITO JUÁREZ, Benito Juárez, CIUDAD DE MÉXICO"), {
        municipality: "Benito Juárez",
        state: "CIUDAD DE MÉXICO"
      })
      assert.deepStrictEqual(
        splitUbicacion(
          "HEROICA VILLA TEZOATLÁN DE SEGURA Y LUNA, CUNA DE LA INDEPENDENCIA DE OAXACA, Heroica Villa Tezoatlán de Segura y Luna, Cuna de la Independencia de Oaxaca, OAXACA"
        ),
        { municipality: "Heroica Villa Tezoatlán de Segura y Luna, Cuna de la Independencia de Oaxaca", state: "OAXACA" }
      )
    }))
})
