import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { RiskMarkRecord } from "../src/internal/records.js"
import type { LoadItem } from "../src/internal/records.js"
import { repairSfpFields, sfpParser, sfpPublishedAsOf, sfpSource, sfpStatusOf } from "../src/internal/sfp.js"
import { collectItems, dataPath, emptyContext, rejectsOf, tally } from "./harness.js"

const SFP = dataPath("risks", "sfp_proveedores_contratistas_sancionados_2021-01-14_sample.csv")

// SFP rows need no catalog.
const collect = (path: string) => collectItems(sfpParser, path, emptyContext)

const marksWithLine = (items: ReadonlyArray<LoadItem>) =>
  items.flatMap((i) => (i._tag === "RiskMark" ? [{ line: i.line, mark: i.record }] : []))
const markOnLine = (items: ReadonlyArray<LoadItem>, line: number): RiskMarkRecord | undefined =>
  marksWithLine(items).find((m) => m.line === line)?.mark

const isMark = Schema.is(RiskMarkRecord)

const withCp1252File = <A, E>(content: string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "sfp-test-"))
      const path = join(dir, "sfp.csv")
      await writeFile(path, Buffer.from(content, "latin1"))
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const HEADER = [
  "PROVEEDOR O CONTRATISTA",
  "DEPENDENCIA",
  "NUMERO DE EXPEDIENTE",
  "HECHOS DE LA IRREGULARIDAD",
  "OBJETO SOCIAL",
  "SENTIDO DE RESOLUCION",
  "FECHA DE NOTIFICACION",
  "FECHA DE RESOLUCION",
  "PLAZO",
  "MONTO",
  "NOMBRE DEL RESPONSABLE DE LA INFORMACION",
  "FECHA DE ACTUALIZACION "
].join(", \t")

describe("SFP sanctioned suppliers parser", () => {
  it.effect("accepted + rejected = data rows (1,136); every reject has a reason; records match the contract", () =>
    Effect.gen(function*() {
      const items = yield* collect(SFP)
      const dataRows = yield* sfpParser.countDataRows(SFP)
      const { accepted, rejected, rejects, outcomeLines } = tally(items)
      assert.strictEqual(dataRows, 1136)
      assert.strictEqual(accepted + rejected, dataRows)
      assert.strictEqual(accepted, 1135)
      // the only reject: line 1010 repeats line 1009 byte for byte
      assert.deepStrictEqual(rejects, [
        { _tag: "Reject", line: 1010, reason: "duplicate of line 1009 (same expediente, dependencia and supplier)" }
      ])
      for (const r of rejects) assert.isTrue(r.reason.length > 0)
      assert.strictEqual(new Set(outcomeLines).size, dataRows)
      // no supplier observations from the directory (no RFC)
      assert.isFalse(items.some((i) => i._tag === "SupplierObservation"))
      const marks = marksWithLine(items).map((m) => m.mark)
      assert.strictEqual(marks.length, accepted)
      for (const mark of marks) {
        assert.isTrue(isMark(mark), `${mark.sourceRecordId} matches RiskMarkRecord`)
        assert.strictEqual(mark.kind, "sancion")
        assert.strictEqual(mark.legalBasis, "sfp_directory")
        assert.isNull(mark.subjectRfc)
        assert.strictEqual(mark.fineCurrency, mark.fineAmount === null ? null : "MXN")
      }
      const ids = marks.map((m) => m.sourceRecordId)
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.deepStrictEqual(marksWithLine(yield* collect(SFP)).map((m) => m.mark.sourceRecordId), ids)
      const counts = new Map<string, number>()
      for (const m of marks) counts.set(m.status, (counts.get(m.status) ?? 0) + 1)
      assert.deepStrictEqual(Object.fromEntries(counts), {
        sancion_multa_inhabilitacion: 875,
        sancion_multa: 244,
        sancion_otra: 16
      })
    }))

  it.effect("MULTA E INHABILITACIÓN → sancion_multa_inhabilitacion with its exact fine, period and dates", () =>
    Effect.gen(function*() {
      const mark = markOnLine(yield* collect(SFP), 3)
      assert.deepStrictEqual(mark, {
        sourceRecordId: "0001/2013|iii servicios s a de c v|a y v industrial y comercial s a de c v",
        kind: "sancion",
        legalBasis: "sfp_directory",
        subjectRfc: null,
        subjectName: "A Y V INDUSTRIAL Y COMERCIAL S.A. DE C.V.",
        status: "sancion_multa_inhabilitacion",
        statusText: "SANCIONATORIA CON MULTA E INHABILITACIÓN",
        listedOn: "2014-04-30",
        stageDates: { resolution: "2014-04-30", notification: "2014-05-08" },
        sanctioningBody: "III SERVICIOS S. A. DE C. V.",
        caseId: "0001/2013",
        sanctionType: "SANCIONATORIA CON MULTA E INHABILITACIÓN",
        period: "3 MESES",
        fineAmount: "133502.74",
        fineCurrency: "MXN"
      })
    }))

  it.effect("OSCAR PERALTA RANGEL (one ',\\t' missing between HECHOS and OBJETO SOCIAL) is repaired and accepted", () =>
    Effect.gen(function*() {
      const items = yield* collect(SFP)
      const mark = markOnLine(items, 857)
      assert.isTrue(items.some((i) => i._tag === "Accepted" && i.line === 857))
      assert.strictEqual(mark?.subjectName, "OSCAR PERALTA RANGEL")
      assert.strictEqual(mark?.sanctioningBody, "PROCURADURIA FEDERAL DEL CONSUMIDOR")
      assert.strictEqual(mark?.caseId, "0001/2015")
      assert.strictEqual(mark?.status, "sancion_multa")
      assert.strictEqual(mark?.statusText, "SANCIONATORIA CON MULTA")
      assert.deepStrictEqual(mark?.stageDates, { resolution: "2016-01-07", notification: "2016-01-18" })
      assert.strictEqual(mark?.listedOn, "2016-01-07")
      assert.strictEqual(mark?.period, null)
      assert.strictEqual(mark?.fineAmount, "100935")
    }))

  it.effect("accents, quotes inside values, 'dd/Mon/yyyy' dates and thousands separators", () =>
    Effect.gen(function*() {
      const items = yield* collect(SFP)
      // the same expediente number at two agencies: two marks
      const alba = marksWithLine(items).filter((m) => m.mark.subjectName === "ALBA MARÍA DE LA ASUNCIÓN HERRASTI FERNÁNDEZ")
      assert.deepStrictEqual(alba.map((m) => [m.line, m.mark.sanctioningBody, m.mark.caseId]), [
        [40, "SECRETARIA DE ECONOMIA", "0001/2015"],
        [41, "PEMEX GAS Y PETROQUIMICA BASICA", "0001/2015"]
      ])
      assert.strictEqual(
        markOnLine(items, 913)?.sanctioningBody,
        "INSTITUTO NACIONAL DE CIENCIAS MEDICAS Y LA NUTRICIÓN \"SALVADOR ZUBIRAN\""
      )
      const eguia = markOnLine(items, 675)
      assert.strictEqual(eguia?.subjectName, "JUAN PABLO EGUIA SANDOVAL")
      assert.deepStrictEqual(eguia?.stageDates, { notification: "2006-06-30" })
      assert.strictEqual(eguia?.listedOn, null)
      assert.strictEqual(eguia?.fineAmount, "70200")
      assert.strictEqual(eguia?.period, "TRES MESES")
    }))

  it.effect("resolutions that name no fine or disqualification are sancion_otra, raw text kept", () =>
    Effect.gen(function*() {
      const items = yield* collect(SFP)
      const dilme = markOnLine(items, 334)
      assert.strictEqual(dilme?.status, "sancion_otra")
      assert.strictEqual(dilme?.statusText, "SANCIONATORIA")
      assert.strictEqual(dilme?.sanctionType, "SANCIONATORIA")
      assert.strictEqual(dilme?.period, "7 MESES")
      assert.strictEqual(dilme?.fineAmount, "679272")
      const empty = markOnLine(items, 184)
      assert.strictEqual(empty?.subjectName, "COMERCIALIZADORA STA. MARIA S.A DE C.V.")
      assert.strictEqual(empty?.status, "sancion_otra")
      assert.strictEqual(empty?.statusText, "")
      assert.strictEqual(empty?.sanctionType, null)
      assert.strictEqual(empty?.fineAmount, null)
      assert.strictEqual(empty?.fineCurrency, null)
      assert.deepStrictEqual(empty?.stageDates, {})
    }))

  it.effect("suppliers that CompraNet also names are in the directory (name match)", () =>
    Effect.gen(function*() {
      const names = marksWithLine(yield* collect(SFP)).map((m) => m.mark.subjectName)
      for (const name of ["ALVARGA CONSTRUCCIONES S.A. DE C.V.", "LIMPIA TEC S.A. DE C.V.", "CONVERTIDORA DE PAPEL PRATZ S.A. DE C.V."]) {
        assert.include(names, name)
      }
    }))

  it.effect("source definition and publication date", () =>
    Effect.gen(function*() {
      const source = yield* sfpParser.sourceOf(SFP)
      assert.strictEqual(source, sfpSource)
      assert.strictEqual(source.slug, "sfp_sanciones")
      assert.strictEqual(source.publisher, "Secretaría de la Función Pública (SFP)")
      assert.strictEqual(source.licence, "Términos de Libre Uso MX (datos.gob.mx)")
      assert.strictEqual(source.evidenceCategory, "administrative_risk")
      assert.isTrue(source.licensedForDisplay)
      assert.strictEqual(sfpParser.kind, "sfp")
      assert.deepStrictEqual(yield* sfpPublishedAsOf(SFP), Option.some("2021-01-14"))
    }))

  it.effect("a row whose missing separator cannot be located is rejected with the reason", () =>
    withCp1252File(
      [
        HEADER,
        // two bare TABs: where the ",\t" was lost is ambiguous
        "EMPRESA UNO,\tDEPENDENCIA X,\t0001/2020,\tA\tB\tC,\tSANCIONATORIA CON MULTA,\t01/02/2020,\t03/02/2020,\t,\t10.50,\tRESPONSABLE,\t14/01/2021 08:01",
        "EMPRESA DOS,\tDEPENDENCIA X,\t0002/2020",
        "EMPRESA TRES,\tDEPENDENCIA Y,\t0003/2020,\tHECHOS, CON COMA,\tOBJETO,\tSANCIONATORIA CON INHABILITACIÓN,\t01/02/2020,\t03/02/2020,\t1 AÑO,\t,\tRESPONSABLE,\t14/01/2021 08:01",
        ""
      ].join("\n"),
      (path) =>
        Effect.gen(function*() {
          const items = yield* collect(path)
          assert.strictEqual(yield* sfpParser.countDataRows(path), 3)
          assert.deepStrictEqual(rejectsOf(items), [
            {
              _tag: "Reject",
              line: 2,
              reason: "11 fields instead of 12 and the missing \",\\t\" separator cannot be located unambiguously"
            },
            { _tag: "Reject", line: 3, reason: "3 fields instead of 12" }
          ])
          const tres = markOnLine(items, 4)
          assert.strictEqual(tres?.status, "sancion_inhabilitacion")
          assert.strictEqual(tres?.subjectName, "EMPRESA TRES")
          assert.strictEqual(tres?.period, "1 AÑO")
          assert.strictEqual(tres?.fineAmount, null)
          assert.strictEqual(tres?.listedOn, "2020-02-03")
        })
    ))

  it("repairSfpFields and sfpStatusOf", () => {
    const repaired = repairSfpFields(["A", "B\tC", "D"], 4)
    assert.deepStrictEqual(repaired, Either.right({ fields: ["A", "B", "C", "D"], repaired: true }))
    assert.isTrue(Either.isLeft(repairSfpFields(["A\tX", "B\tC", "D"], 4)))
    assert.isTrue(Either.isLeft(repairSfpFields(["A", "B\tC\tE", "D"], 4)))
    assert.deepStrictEqual(repairSfpFields(["A", "B"], 2), Either.right({ fields: ["A", "B"], repaired: false }))
    assert.strictEqual(sfpStatusOf("SANCIONATORIA CON MULTA E INHABILITACIÓN"), "sancion_multa_inhabilitacion")
    assert.strictEqual(sfpStatusOf("SANCIONATORIA CON MULTA"), "sancion_multa")
    assert.strictEqual(sfpStatusOf("SANCIONATORIA CON INHABILITACION"), "sancion_inhabilitacion")
    assert.strictEqual(sfpStatusOf("SANCIONATORIA"), "sancion_otra")
    assert.strictEqual(sfpStatusOf(""), "sancion_otra")
  })
})
