import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import {
  cleanPermitNumber,
  countCreDataRows,
  creParser,
  creSource,
  detectCreTable,
  excelSerialToIsoDate,
  parseCreDecimal,
  permitKey,
  readCreLayout
} from "../src/internal/cre.js"
import type { LoadItem, PermitRecord } from "../src/internal/records.js"
import { collectItems, dataPath, emptyContext, permitsOf, rejectsOf, tally } from "./harness.js"

const ADMINISTERED = dataPath("permits", "cre_permisos_generacion_administrados_2016-06-30_sample.csv")
const TERMINATED = dataPath("permits", "cre_permisos_generacion_terminados_2016-06-30_sample.csv")

// creParser.stream is streamCre: CRE rows resolve nothing against the catalogs.
const collect = (path: string) => collectItems(creParser, path, emptyContext)

const byNumber = (items: ReadonlyArray<LoadItem>, permitNumber: string): PermitRecord | undefined =>
  permitsOf(items).find((p) => p.permitNumber === permitNumber)

/** Write a temporary CSV, run `use` on its path, remove it. */
const withCsv = <A, E>(content: string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "cre-test-"))
      const path = join(dir, "sample.csv")
      await writeFile(path, content, "utf8")
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const ADMINISTERED_HEADER = "Núm.,PERMISIONARIO,CENTRAL,MODALIDAD,\"FECHA DE\nOTORGAMIENTO\",NUMERO DE PERMISO," +
  "CAP. AUTORIZADA (MW),ENERGIA AUTORIZADA (GWh/AÑO),INVERSION (MILES DE DOLARES),FECHA DE ENTRADA EN OPERACIÓN," +
  "ENERGETICO PRIMARIO,ACTIVIDAD ECONOMICA,TIPO DE PLANTA (TECNOLOGIA),ESTADO ACTUAL,UBICACION DE LA PLANTA\n"

describe("CRE helpers", () => {
  it("Excel 1900-system serials", () => {
    assert.deepStrictEqual(excelSerialToIsoDate("34535"), Option.some("1994-07-20"))
    assert.deepStrictEqual(excelSerialToIsoDate("1828"), Option.some("1905-01-01"))
    assert.deepStrictEqual(excelSerialToIsoDate("42551.5"), Option.some("2016-06-30"))
    assert.deepStrictEqual(excelSerialToIsoDate("Antes de 92"), Option.none())
    assert.deepStrictEqual(excelSerialToIsoDate("60"), Option.none())
  })

  it("decimals: binary-float text and exponent form", () => {
    assert.deepStrictEqual(parseCreDecimal("6.4080000000000004"), Option.some("6.408"))
    assert.deepStrictEqual(parseCreDecimal("197.99999999999997"), Option.some("198"))
    assert.deepStrictEqual(parseCreDecimal("1.77E-2"), Option.some("0.0177"))
    assert.deepStrictEqual(parseCreDecimal("6.5000000000000002E-2"), Option.some("0.065"))
    assert.deepStrictEqual(parseCreDecimal("n/d"), Option.none())
  })

  it("permit keys: bare U.P.C. numbers take the modality", () => {
    assert.strictEqual(cleanPermitNumber(" E/1448/PP/2015. "), "E/1448/PP/2015")
    assert.deepStrictEqual(Either.getRight(permitKey("4466", "U.P.C.")), Option.some("UPC/4466"))
    assert.deepStrictEqual(Either.getRight(permitKey("E/35/AUT/96", "AUT.")), Option.some("E/35/AUT/96"))
    assert.isTrue(Either.isLeft(permitKey("4466", "")))
  })
})

describe("CRE administered permits (30 June 2016 sample)", () => {
  it.effect("title line and two-line header skipped: 667 data rows = 666 accepted + 1 rejected", () =>
    Effect.gen(function*() {
      const layout = yield* readCreLayout(ADMINISTERED)
      assert.strictEqual(layout.table, "administrados")
      assert.strictEqual(layout.headerIndex, 1)
      assert.strictEqual(layout.headerLine, 2)
      const dataRows = yield* creParser.countDataRows(ADMINISTERED)
      assert.strictEqual(dataRows, 667)
      const items = yield* collect(ADMINISTERED)
      const { accepted, rejected, rejects } = tally(items)
      assert.strictEqual(accepted + rejected, dataRows)
      assert.strictEqual(permitsOf(items).length, accepted)
      assert.strictEqual(accepted, 666)
      for (const reject of rejects) assert.isTrue(reject.reason.length > 0)
      // The sheet repeats E/1769/GEN/2016 on two identical rows (Núm. 1280 and 1281).
      assert.deepStrictEqual(rejects, [{
        _tag: "Reject",
        line: 646,
        reason: "duplicate NUMERO DE PERMISO E/1769/GEN/2016: already loaded from line 645"
      }])
      // The header spans lines 2-3: the first data row starts on line 4.
      assert.strictEqual(items[0]?.line, 4)
      const ids = permitsOf(items).map((p) => p.sourceRecordId)
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.deepStrictEqual(yield* creParser.sourceOf(ADMINISTERED), creSource)
    }))

  it.effect("maps a known permit: Fersinsa GB, 08/COG/94 (granted serial 34535)", () =>
    Effect.gen(function*() {
      const items = yield* collect(ADMINISTERED)
      assert.deepStrictEqual(items.slice(0, 2), [
        {
          _tag: "Permit",
          line: 4,
          record: {
            sourceRecordId: "administrados:08/COG/94",
            permitNumber: "08/COG/94",
            holderName: "Fersinsa GB, S. A. de C. V.",
            holderRfc: null,
            plantName: null,
            permitType: "COG.",
            statusText: "En operación",
            isActiveRisk: false,
            isTerminated: false,
            isExpansion: false,
            investmentMdd: "5.4",
            capacityMw: "6",
            estimatedGeneration: "42.4",
            fuel: "Gas Natural",
            technology: "Turbina de Gas",
            stateCode: "05",
            grantedOn: "1994-07-20",
            operationStartText: "1994-11-30",
            endedOn: null
          }
        },
        { _tag: "Accepted", line: 4 }
      ])
    }))

  it.effect("exact decimals, text dates, old U.P.C. ids, holder run-on, empty amounts", () =>
    Effect.gen(function*() {
      const items = yield* collect(ADMINISTERED)
      const bismark = byNumber(items, "E/89/AUT/98")
      assert.strictEqual(bismark?.estimatedGeneration, "0.0177") // printed 1.77E-2
      assert.strictEqual(bismark?.investmentMdd, "2.88") // printed 2.8800000000000003
      assert.strictEqual(bismark?.operationStartText, "Antes de 92")
      assert.strictEqual(bismark?.stateCode, "08")

      const sal = byNumber(items, "4466")
      assert.strictEqual(sal?.sourceRecordId, "administrados:UPC/4466")
      assert.strictEqual(sal?.permitType, "U.P.C.")
      assert.strictEqual(sal?.capacityMw, "22.053")
      assert.strictEqual(sal?.estimatedGeneration, "29.18433")
      assert.strictEqual(sal?.investmentMdd, "19.8477")
      assert.strictEqual(sal?.plantName, "Planta Guerrero Negro e Isla de Cedros")
      assert.strictEqual(sal?.stateCode, "03")

      const necaxa = byNumber(items, "E/1730/GEN/2016")
      assert.strictEqual(necaxa?.operationStartText, "1905-01-01") // serial 1828
      assert.strictEqual(necaxa?.grantedOn, "2016-01-28")

      const casasano = byNumber(items, "3242")
      assert.strictEqual(
        casasano?.holderName,
        "Nacional Financiera, Sociedad Nacional de Crédito, Institución de Banca de Desarrollo " +
          "como Fiduciaria en el Fideicomiso Ingenio Casasano"
      )
      assert.strictEqual(casasano?.plantName, null)

      const tai = byNumber(items, "E/1262/AUT/2015")
      assert.strictEqual(tai?.capacityMw, "15.625")
      assert.strictEqual(tai?.estimatedGeneration, null)
      assert.strictEqual(tai?.investmentMdd, null)
      assert.strictEqual(tai?.statusText, "Inactivo")
      assert.strictEqual(tai?.isActiveRisk, false)

      // Printed "E/1448/PP/2015." with a trailing period.
      assert.strictEqual(byNumber(items, "E/1448/PP/2015")?.sourceRecordId, "administrados:E/1448/PP/2015")

      // Import permit (A.IMP) still names a state.
      assert.strictEqual(byNumber(items, "AUT/002/2015")?.stateCode, "28")

      const permits = permitsOf(items)
      assert.isTrue(permits.every((p) => p.holderRfc === null && !p.isTerminated && p.endedOn === null))
      // Every UBICACION of this sample is one of the 32 states.
      assert.isTrue(permits.every((p) => p.stateCode !== null))
    }))

  it.effect("isActiveRisk: En construcción / Por iniciar obras, not En operación or Inactivo", () =>
    Effect.gen(function*() {
      const items = yield* collect(ADMINISTERED)
      const tacotan = byNumber(items, "E/757/PP/2008")
      assert.strictEqual(tacotan?.holderName, "Hidroeléctrica de Tacotán, S. A. de C. V.")
      assert.strictEqual(tacotan?.statusText, "En construcción")
      assert.strictEqual(tacotan?.isActiveRisk, true)
      assert.strictEqual(tacotan?.capacityMw, "6")
      assert.strictEqual(tacotan?.operationStartText, "2016-10-31")
      assert.strictEqual(byNumber(items, "E/1769/GEN/2016")?.isActiveRisk, true) // Por iniciar obras
      assert.strictEqual(byNumber(items, "E/146/AUT/99")?.isActiveRisk, false) // Inactivo
      const permits = permitsOf(items)
      const counts = new Map<string, number>()
      for (const p of permits) counts.set(p.statusText, (counts.get(p.statusText) ?? 0) + 1)
      assert.deepStrictEqual(Object.fromEntries(counts), {
        "En operación": 314,
        "En construcción": 194,
        "Por iniciar obras": 153,
        "Inactivo": 5
      })
      assert.strictEqual(permits.filter((p) => p.isActiveRisk).length, 194 + 153)
      // No CENTRAL of this sample says "Ampliación" (see the synthetic test below).
      assert.strictEqual(permits.filter((p) => p.isExpansion).length, 0)
    }))
})

describe("CRE terminated permits (30 June 2016 sample)", () => {
  it.effect("title line and header with two line breaks skipped: 359 data rows, all accepted", () =>
    Effect.gen(function*() {
      const layout = yield* readCreLayout(TERMINATED)
      assert.strictEqual(layout.table, "terminados")
      const dataRows = yield* countCreDataRows(TERMINATED)
      assert.strictEqual(dataRows, 359)
      const items = yield* collect(TERMINATED)
      const { accepted, rejected, rejects } = tally(items)
      assert.strictEqual(accepted + rejected, dataRows)
      assert.strictEqual(accepted, 359)
      assert.deepStrictEqual(rejects, [])
      assert.strictEqual(items[0]?.line, 5) // header on lines 2-4
    }))

  it.effect("a terminated permit carries isTerminated and its end date", () =>
    Effect.gen(function*() {
      const items = yield* collect(TERMINATED)
      assert.deepStrictEqual(byNumber(items, "01/COG/94"), {
        sourceRecordId: "terminados:01/COG/94",
        permitNumber: "01/COG/94",
        holderName: "Energía de Nuevo León, S. A. de C. V.",
        holderRfc: null,
        plantName: null,
        permitType: "COG.",
        statusText: "Permiso Caducado",
        isActiveRisk: false,
        isTerminated: true,
        isExpansion: false,
        investmentMdd: null,
        capacityMw: null,
        estimatedGeneration: null,
        fuel: null,
        technology: null,
        stateCode: null,
        grantedOn: "1994-03-10",
        operationStartText: null,
        endedOn: "1998-10-09"
      })
      const zacapu = byNumber(items, "3630")
      assert.strictEqual(zacapu?.sourceRecordId, "terminados:UPC/3630")
      assert.strictEqual(zacapu?.plantName, "Complejo Zacapu") // footnote "**" dropped
      assert.strictEqual(zacapu?.statusText, "Permiso Nuevo")
      assert.strictEqual(zacapu?.endedOn, "1999-08-09")
      const permits = permitsOf(items)
      assert.isTrue(permits.every((p) => p.isTerminated && !p.isActiveRisk && p.endedOn !== null))
    }))

  it.effect("ids never collide with the administered table", () =>
    Effect.gen(function*() {
      const administered = permitsOf(yield* collect(ADMINISTERED)).map((p) => p.sourceRecordId)
      const terminated = permitsOf(yield* collect(TERMINATED)).map((p) => p.sourceRecordId)
      assert.isTrue(administered.every((id) => id.startsWith("administrados:")))
      assert.isTrue(terminated.every((id) => id.startsWith("terminados:")))
    }))
})

describe("CRE synthetic rows", () => {
  it.effect("Ampliación in CENTRAL marks an expansion; bad cells are rejected with a reason", () =>
    withCsv(
      "TABLA DE PERMISOS,,,,,,,,,,,,,,\n" + ADMINISTERED_HEADER +
        "1,Comisión Federal de Electricidad,Central Temascal y Ampliación Temascal,GEN.,41000,E/1/GEN/2015,354,1000,12.5,Antes de 92,Agua,Generador,Turbina Hidráulica,En operación,Oaxaca\n" +
        "2,\"Otra, S. A.\",CENTRAL AMPLIACION NORTE,AUT.,abc,E/2/AUT/2015,1,2,3,42000,Sol,Servicios,Fotovoltaico,En operación,Sonora\n" +
        "3,,Central,AUT.,41000,E/3/AUT/2015,1,2,3,42000,Sol,Servicios,Fotovoltaico,En operación,Sonora\n" +
        "4,\"Importadora, S. A.\",,IMP.,41000,E/4/IMP/2015,1,2,3,42000,Importación,Importación,Importación,En construcción,Frontera norte\n" +
        ",,,,,,,,,,,,,,\n",
      (path) =>
        Effect.gen(function*() {
          const items = yield* collect(path)
          assert.strictEqual(yield* countCreDataRows(path), 5)
          const { accepted, rejected } = tally(items)
          assert.strictEqual(accepted + rejected, 5)
          const temascal = byNumber(items, "E/1/GEN/2015")
          assert.strictEqual(temascal?.isExpansion, true)
          assert.strictEqual(temascal?.plantName, "Central Temascal y Ampliación Temascal")
          assert.strictEqual(temascal?.stateCode, "20")
          assert.deepStrictEqual(rejectsOf(items).map((r) => [r.line, r.reason]), [
            [5, "FECHA DE OTORGAMIENTO is not a date (Excel serial or dd/mm/yyyy): \"abc\""],
            [6, "PERMISIONARIO is empty"],
            [8, "empty row"]
          ])
          // A location that is not a state gives a null stateCode, not a reject.
          const importer = byNumber(items, "E/4/IMP/2015")
          assert.strictEqual(importer?.stateCode, null)
          assert.strictEqual(importer?.isActiveRisk, true)
        })
    ))

  it.effect("a file without a CRE header fails the stream", () =>
    withCsv("a,b,c\n1,2,3\n", (path) =>
      Effect.gen(function*() {
        const result = yield* Effect.either(collect(path))
        assert.isTrue(result._tag === "Left")
        assert.deepStrictEqual(detectCreTable(["Núm.", "PERMISIONARIO", "NUMERO DE PERMISO"]), Option.none())
      })))
})
