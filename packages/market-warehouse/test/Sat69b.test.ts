import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Option, Schema } from "effect"
import { parseDayFirstDates, parseSpelledDates } from "../src/internal/dates.js"
import { RiskMarkRecord, SupplierObservationRecord } from "../src/internal/records.js"
import type { LoadItem } from "../src/internal/records.js"
import {
  cleanTaxpayerName,
  detectSat69bVariant,
  publishedAsOf,
  sat69bParser,
  sat69bSource
} from "../src/internal/sat69b.js"
import { collectItems, dataPath, emptyContext, marksOf, observationsOf, rejectsOf, tally } from "./harness.js"

const risksPath = (file: string): string => dataPath("risks", file)

const DEFINITIVOS = risksPath("sat_69b_definitivos_2026-01-31_sample.csv")
const PRESUNTOS = risksPath("sat_69b_presuntos_2026-01-31_sample.csv")
const DESVIRTUADOS = risksPath("sat_69b_desvirtuados_2026-01-31_sample.csv")
const LISTADO_2022 = risksPath("sat_69b_listado_completo_2022-11-30_sample.csv")
const BIS = risksPath("sat_69b_bis_global_definitivo_2025-06-13_sample.csv")

// SAT rows need no catalog.
const collect = (path: string) => collectItems(sat69bParser, path, emptyContext)

const markFor = (items: ReadonlyArray<LoadItem>, rfc: string): ReadonlyArray<RiskMarkRecord> =>
  marksOf(items).filter((m) => m.subjectRfc === rfc)

const isMark = Schema.is(RiskMarkRecord)
const isObservation = Schema.is(SupplierObservationRecord)

/** Write a Windows-1252 file (the characters used are all in Latin-1), run `use`, remove it. */
const withCp1252File = <A, E>(name: string, content: string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "sat69b-test-"))
      const path = join(dir, name)
      await writeFile(path, Buffer.from(content, "latin1"))
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const HEADER_69B =
  "No.,RFC,Nombre del Contribuyente,Situación del contribuyente,Número y fecha de oficio global de presunción SAT,Publicación página SAT presuntos,Número y fecha de oficio global de presunción DOF,Publicación DOF presuntos,Número y fecha de oficio global de contribuyentes que desvirtuaron SAT,Publicación página SAT desvirtuados,Número y fecha de oficio global de contribuyentes que desvirtuaron DOF,Publicación DOF desvirtuados,Número y fecha de oficio global de definitivos SAT,Publicación página SAT definitivos,Número y fecha de oficio global de definitivos DOF,Publicación DOF definitivos,Número y fecha de oficio global de sentencia favorable SAT,Publicación página SAT sentencia favorable,Número y fecha de oficio global de sentencia favorable DOF,Publicación DOF sentencia favorable"

/** Per file: data rows (README "Rows"), accepted and rejected (court-suppressed identities). */
const FILES = [
  { path: DEFINITIVOS, rows: 2600, accepted: 2560, rejected: 40 },
  { path: PRESUNTOS, rows: 465, accepted: 450, rejected: 15 },
  { path: DESVIRTUADOS, rows: 176, accepted: 176, rejected: 0 },
  { path: LISTADO_2022, rows: 2600, accepted: 2562, rejected: 38 },
  { path: BIS, rows: 2, accepted: 2, rejected: 0 }
] as const

describe("SAT 69-B parser: reconciliation on every file", () => {
  for (const file of FILES) {
    const name = file.path.slice(file.path.lastIndexOf("/") + 1)
    it.effect(`${name}: accepted + rejected = data rows, one outcome per row, valid records`, () =>
      Effect.gen(function*() {
        const items = yield* collect(file.path)
        const dataRows = yield* sat69bParser.countDataRows(file.path)
        const { accepted, rejected, rejects, outcomeLines } = tally(items)
        assert.strictEqual(dataRows, file.rows)
        assert.strictEqual(accepted + rejected, dataRows)
        assert.strictEqual(accepted, file.accepted)
        assert.strictEqual(rejected, file.rejected)
        for (const r of rejects) assert.isTrue(r.reason.trim().length > 0, `reject on line ${r.line} has a reason`)
        // exactly one outcome per data row
        assert.strictEqual(new Set(outcomeLines).size, outcomeLines.length)
        // each accepted row: one mark and one observation for the same RFC + name, valid against the contract
        const marks = marksOf(items)
        const observations = observationsOf(items)
        assert.strictEqual(marks.length, accepted)
        assert.strictEqual(observations.length, accepted)
        for (const [i, mark] of marks.entries()) {
          assert.isTrue(isMark(mark), `mark ${mark.sourceRecordId} matches RiskMarkRecord`)
          const observation = observations[i]
          assert.isDefined(observation)
          if (observation === undefined) continue
          assert.isTrue(isObservation(observation))
          assert.strictEqual(observation.sourceRecordId, mark.sourceRecordId)
          assert.strictEqual(observation.rfc, mark.subjectRfc)
          assert.strictEqual(observation.name, mark.subjectName)
          assert.strictEqual(mark.kind, "efos")
          // every listing carries the date of the stage that gives its status
          assert.isNotNull(mark.listedOn, `${mark.sourceRecordId} has listedOn`)
          assert.notInclude(mark.subjectName, "//")
        }
        // ids are unique within the file and the same on a second read (idempotent re-load)
        const ids = marks.map((m) => m.sourceRecordId)
        assert.strictEqual(new Set(ids).size, ids.length)
        const again = marksOf(yield* collect(file.path)).map((m) => m.sourceRecordId)
        assert.deepStrictEqual(again, ids)
      }))
  }

  it.effect("rejects are the publisher's court-ordered redactions (RFC XXXXXXXXXXXX, 'Información suprimida …')", () =>
    Effect.gen(function*() {
      for (const path of [DEFINITIVOS, PRESUNTOS, LISTADO_2022]) {
        for (const r of rejectsOf(yield* collect(path))) {
          assert.match(r.reason, /^identity suppressed by the publisher \(RFC "XXXXXXXXXXXX"/)
        }
      }
      // a redacted presunto whose name spans three physical lines (444-446): the next row starts on line 447
      const presuntos = yield* collect(PRESUNTOS)
      const spanning = rejectsOf(presuntos).find((r) => r.reason.includes("Segunda Sala Regional del Noreste"))
      assert.strictEqual(spanning?.line, 444)
      const lines = [...tally(presuntos).outcomeLines].sort((a, b) => a - b)
      const at = lines.indexOf(spanning?.line ?? -1)
      assert.strictEqual((lines[at + 1] ?? 0) - (lines[at] ?? 0), 3)
    }))
})

describe("SAT 69-B parser: variants and preamble", () => {
  it.effect("detects list, legal basis and the 'información actualizada al' date", () =>
    Effect.gen(function*() {
      const expected = [
        [DEFINITIVOS, "definitivos", "art_69b", "2026-01-31", 20],
        [PRESUNTOS, "presuntos", "art_69b", "2026-01-31", 24],
        [DESVIRTUADOS, "desvirtuados", "art_69b", "2026-01-31", 20],
        [LISTADO_2022, "listado_completo", "art_69b", "2022-11-30", 20],
        [BIS, "69b_bis_global_definitivo", "art_69b_bis", "2025-06-13", 8]
      ] as const
      for (const [path, list, legalBasis, asOf, width] of expected) {
        const variant = yield* detectSat69bVariant(path)
        assert.strictEqual(variant.list, list)
        assert.strictEqual(variant.legalBasis, legalBasis)
        assert.strictEqual(variant.headerLine, 3)
        assert.strictEqual(variant.width, width)
        assert.deepStrictEqual(yield* publishedAsOf(path), Option.some(asOf))
      }
    }))

  it.effect("one source for every SAT list", () =>
    Effect.gen(function*() {
      const source = yield* sat69bParser.sourceOf(BIS)
      assert.strictEqual(source, sat69bSource)
      assert.strictEqual(source.slug, "sat_69b")
      assert.strictEqual(source.publisher, "Servicio de Administración Tributaria (SAT)")
      assert.strictEqual(source.evidenceCategory, "administrative_risk")
      assert.isTrue(source.licensedForDisplay)
      assert.strictEqual(sat69bParser.kind, "sat69b")
    }))

  it.effect("a file without a 69-B header fails the stream with SourceFileError", () =>
    withCp1252File("sat_69b_definitivos_x.csv", "a,b,c\n1,2,3\n", (path) =>
      Effect.gen(function*() {
        const result = yield* Effect.either(collect(path))
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "SourceFileError")
          assert.include(result.left.message, "no SAT 69-B header")
        }
      })))
})

describe("SAT 69-B parser: concrete listings", () => {
  it.effect("GTA140724H10 (also an NAICM OCDS supplier) is definitivo in the 2026 list and in the 2022 listado", () =>
    Effect.gen(function*() {
      const [mark2026] = markFor(yield* collect(DEFINITIVOS), "GTA140724H10")
      assert.deepStrictEqual(mark2026, {
        sourceRecordId: "definitivos:GTA140724H10",
        kind: "efos",
        legalBasis: "art_69b",
        subjectRfc: "GTA140724H10",
        // trailing space of the source trimmed
        subjectName: "GLOBAL TOURIST AGENCY, S.A DE C.V.",
        status: "definitivo",
        statusText: "Definitivo",
        listedOn: "2019-11-08",
        stageDates: {
          presunto_oficio: "2019-05-02",
          presunto_sat: "2019-05-02",
          presunto_dof: "2019-05-23",
          presunto: "2019-05-23",
          definitivo_oficio: "2019-10-17",
          definitivo_sat: "2019-10-17",
          definitivo_dof: "2019-11-08",
          definitivo: "2019-11-08"
        },
        sanctioningBody: null,
        caseId: null,
        sanctionType: null,
        period: null,
        fineAmount: null,
        fineCurrency: null
      })
      const listado = yield* collect(LISTADO_2022)
      const [mark2022] = markFor(listado, "GTA140724H10")
      assert.strictEqual(mark2022?.status, "definitivo")
      assert.strictEqual(mark2022?.sourceRecordId, "listado_completo:GTA140724H10")
      const observation = observationsOf(listado).find((o) => o.rfc === "GTA140724H10")
      assert.deepStrictEqual(observation, {
        sourceRecordId: "listado_completo:GTA140724H10",
        name: "GLOBAL TOURIST AGENCY, S.A DE C.V.",
        legalName: "GLOBAL TOURIST AGENCY, S.A DE C.V.",
        rfc: "GTA140724H10",
        scianCode: null,
        scianTitle: null,
        stateCode: null,
        municipalityCode: null,
        employmentBand: null,
        establishmentType: null,
        incorporatedOn: null,
        hasPhone: false,
        hasEmail: false,
        hasWebsite: false,
        contact: { phone: null, email: null, website: null }
      })
    }))

  it.effect("SPB101022S66 and ZIN91022345A (DENUE name links) are definitive marks", () =>
    Effect.gen(function*() {
      const items = yield* collect(DEFINITIVOS)
      const [bbh] = markFor(items, "SPB101022S66")
      assert.strictEqual(bbh?.subjectName, "SERVICIOS PETROLEROS BBH, S.A. DE C.V.")
      assert.strictEqual(bbh?.status, "definitivo")
      assert.strictEqual(bbh?.listedOn, "2021-04-30")
      assert.strictEqual(bbh?.stageDates["definitivo_sat"], "2021-04-15")
      const [zapata] = markFor(items, "ZIN91022345A")
      assert.strictEqual(zapata?.subjectName, "ZAPATA INTERNACIONAL, S.A. DE C.V.")
      assert.strictEqual(zapata?.status, "definitivo")
      assert.strictEqual(zapata?.listedOn, "2017-11-21")
    }))

  it.effect("a desvirtuado row is a published exoneration: status desvirtuado, dated by its DOF publication", () =>
    Effect.gen(function*() {
      const items = yield* collect(DESVIRTUADOS)
      const [mark] = markFor(items, "AAA091014835")
      assert.strictEqual(mark?.subjectName, "AQUAERIS ACUACULTURA Y ARQUITECTURA SUSTENTABLE, S.C.")
      assert.strictEqual(mark?.status, "desvirtuado")
      assert.strictEqual(mark?.statusText, "Desvirtuado")
      assert.strictEqual(mark?.listedOn, "2017-11-02")
      assert.strictEqual(mark?.stageDates["presunto"], "2017-01-19")
      assert.strictEqual(mark?.stageDates["desvirtuado_sat"], "2017-10-13")
      assert.isTrue(marksOf(items).every((m) => m.status === "desvirtuado"))
    }))

  it.effect("the 2022 listado completo maps all four statuses (CRLF file: no stray \\r)", () =>
    Effect.gen(function*() {
      const marks = marksOf(yield* collect(LISTADO_2022))
      const counts = new Map<string, number>()
      for (const m of marks) counts.set(m.status, (counts.get(m.status) ?? 0) + 1)
      assert.deepStrictEqual(Object.fromEntries(counts), {
        sentencia_favorable: 265,
        definitivo: 2202,
        desvirtuado: 67,
        presunto: 28
      })
      const favourable = marks.find((m) => m.subjectRfc === "AAA080808HL8")
      assert.strictEqual(favourable?.status, "sentencia_favorable")
      assert.strictEqual(favourable?.statusText, "Sentencia Favorable")
      // last column of a CRLF line
      assert.strictEqual(favourable?.listedOn, "2019-04-16")
      assert.strictEqual(favourable?.stageDates["definitivo"], "2018-10-23")
      assert.isTrue(marks.every((m) => !m.statusText.includes("\r") && !m.subjectName.includes("\r")))
    }))

  it.effect("accents and Ñ decode from Windows-1252", () =>
    Effect.gen(function*() {
      const definitivos = yield* collect(DEFINITIVOS)
      assert.strictEqual(markFor(definitivos, "AGU120920PJ6")[0]?.subjectName, "AGUIRRE GUTIÉRREZ Y COMPAÑÍA, S.A. DE C.V.")
      assert.strictEqual(markFor(definitivos, "AAAA620217U54")[0]?.subjectName, "AMADOR AQUINO JOSÉ AVENAMAR")
      assert.strictEqual(markFor(yield* collect(DESVIRTUADOS), "CAGV651208P57")[0]?.subjectName, "CASTAÑEDA GARCÍA VICTOR MANUEL")
      assert.strictEqual(markFor(yield* collect(PRESUNTOS), "BIFA901229DI2")[0]?.subjectName, "BRICEÑO FLORES ADRIAN")
      assert.strictEqual(
        markFor(yield* collect(LISTADO_2022), "AAA080808HL8")[0]?.subjectName,
        "ASESORES EN AVALÚOS Y ACTIVOS, S.A. DE C.V."
      )
    }))

  it.effect("69-B Bis rows: legalBasis art_69b_bis, status definitivo_69b_bis; a name with a line break", () =>
    Effect.gen(function*() {
      const items = yield* collect(BIS)
      const [first, second] = marksOf(items)
      assert.strictEqual(first?.sourceRecordId, "69b_bis_global_definitivo:OAN151230HWA")
      assert.strictEqual(first?.legalBasis, "art_69b_bis")
      assert.strictEqual(first?.status, "definitivo_69b_bis")
      assert.strictEqual(first?.statusText, "Definitivo")
      assert.strictEqual(first?.listedOn, "2024-07-05")
      // "900-04-00-00-00-2024-80 de 25 de enero de 2024"
      assert.strictEqual(first?.stageDates["definitivo_oficio"], "2024-01-25")
      assert.strictEqual(second?.subjectRfc, "CPH061010RB7")
      assert.strictEqual(second?.subjectName, "CONSTRUCTORA DE PROYECTOS HIDROELECTRICOS, S.A. DE C.V.")
      assert.deepStrictEqual(items.filter((i) => i._tag === "Accepted").map((i) => i.line), [4, 5])
    }))

  it.effect("an RFC listed twice (re-listed after a court ruling) gives two marks with distinct stable ids", () =>
    Effect.gen(function*() {
      const marks = markFor(yield* collect(DEFINITIVOS), "GSS130419715")
      assert.deepStrictEqual(marks.map((m) => m.sourceRecordId), [
        "definitivos:GSS130419715",
        "definitivos:GSS130419715:500-05-2019-36144"
      ])
      // the publisher's note after "//" is not part of the name
      assert.deepStrictEqual(marks.map((m) => m.subjectName), [
        "GRUPO SAURICA DEL SURESTE, S.A. DE C.V.",
        "GRUPO SAURICA DEL SURESTE, S.A. DE C.V."
      ])
      assert.deepStrictEqual(marks.map((m) => m.listedOn), ["2018-04-17", "2020-06-24"])
    }))

  it.effect("a stage published twice ('28/01/2019 - 16/07/2017', '14-08-19 // 20/09/2018') is dated by the latest", () =>
    Effect.gen(function*() {
      const [mayan] = markFor(yield* collect(DEFINITIVOS), "CMB150723BD6")
      assert.strictEqual(mayan?.stageDates["definitivo_sat"], "2019-01-28")
      assert.strictEqual(mayan?.stageDates["definitivo_dof"], "2019-02-20")
      assert.strictEqual(mayan?.stageDates["definitivo_oficio"], "2019-01-28")
      assert.strictEqual(mayan?.listedOn, "2019-02-20")
      const [bartech] = markFor(yield* collect(LISTADO_2022), "BME140814AC7")
      assert.strictEqual(bartech?.stageDates["definitivo_sat"], "2019-08-14")
      assert.strictEqual(bartech?.stageDates["definitivo_dof"], "2019-09-05")
      assert.strictEqual(bartech?.status, "sentencia_favorable")
      assert.strictEqual(bartech?.listedOn, "2022-03-03")
    }))

  it.effect("an invalid RFC keeps the row with subjectRfc null; an unknown status is rejected with a reason", () =>
    withCp1252File(
      "sat_69b_definitivos_test.csv",
      [
        "Información actualizada al 5 de marzo de 2024,,,,,,,,,,,,,,,,,,,",
        "Listado completo de contribuyentes (Artículo 69-B del CFF),,,,,,,,,,,,,,,,,,,",
        HEADER_69B,
        "1,ABC12345,\"PEÑA Y ASOCIADOS, S.C.\",Definitivo,500-05-2020-1 de fecha 3 de enero de 2020,03/01/2020,,,,,,,,05/06/2021,,,,,,",
        "2,AAA010101AAA,OTRO,Cancelado,,01/01/2020,,,,,,,,,,,,,,"
      ].join("\n"),
      (path) =>
        Effect.gen(function*() {
          const items = yield* collect(path)
          assert.deepStrictEqual(yield* publishedAsOf(path), Option.some("2024-03-05"))
          const [mark] = marksOf(items)
          assert.strictEqual(mark?.subjectRfc, null)
          assert.strictEqual(mark?.subjectName, "PEÑA Y ASOCIADOS, S.C.")
          assert.strictEqual(mark?.sourceRecordId, "definitivos:ABC12345")
          // no DOF date for the definitive stage: the SAT-page date
          assert.strictEqual(mark?.listedOn, "2021-06-05")
          assert.strictEqual(observationsOf(items)[0]?.rfc, null)
          assert.deepStrictEqual(rejectsOf(items), [
            { _tag: "Reject", line: 5, reason: "unknown status \"Cancelado\" for a 69-B list" }
          ])
          assert.strictEqual(yield* sat69bParser.countDataRows(path), 2)
        })
    ))
})

describe("SAT 69-B date and name helpers", () => {
  it("reads day-first dates in their published forms", () => {
    assert.deepStrictEqual(parseDayFirstDates("01/01/2017"), ["2017-01-01"])
    assert.deepStrictEqual(parseDayFirstDates("28/01/2019 - 16/07/2017"), ["2019-01-28", "2017-07-16"])
    assert.deepStrictEqual(parseDayFirstDates("14-08-19 // 20/09/2018"), ["2019-08-14", "2018-09-20"])
    assert.deepStrictEqual(parseDayFirstDates("17/10/2019    27/08/2018"), ["2019-10-17", "2018-08-27"])
    assert.deepStrictEqual(parseDayFirstDates("30/Jun/2006"), ["2006-06-30"])
    assert.deepStrictEqual(parseDayFirstDates("31/02/2020"), [])
    assert.deepStrictEqual(parseDayFirstDates(""), [])
  })

  it("reads spelled dates out of oficio texts", () => {
    assert.deepStrictEqual(parseSpelledDates("500-05-2016-38728 de fecha 16 de diciembre de 2016"), ["2016-12-16"])
    assert.deepStrictEqual(parseSpelledDates("500-05-2020-13526 de  fecha 21 de abril de  2020"), ["2020-04-21"])
    assert.deepStrictEqual(parseSpelledDates("500-05-2017-16195 de fecha 16 junio 2017"), ["2017-06-16"])
    assert.deepStrictEqual(parseSpelledDates("500-05-2018-14334 de fecha 18 de junio del 2018"), ["2018-06-18"])
    assert.deepStrictEqual(parseSpelledDates("900-04-00-00-00-2024-80 de 25 de enero de 2024"), ["2024-01-25"])
    assert.deepStrictEqual(
      parseSpelledDates("500-05-2019-7235 de fecha 28 de enero de 2019 // 500-05-2017-16301 de fecha 14 de julio de 2017"),
      ["2019-01-28", "2017-07-14"]
    )
    assert.deepStrictEqual(parseSpelledDates("sin fecha"), [])
  })

  it("drops the publisher's notes from names", () => {
    assert.strictEqual(cleanTaxpayerName("ARKDIS, S.A. DE C.V.// En cumplimiento a la sentencia"), "ARKDIS, S.A. DE C.V.")
    assert.strictEqual(cleanTaxpayerName("  NI JAU TEXTILES, S.A. DE C.V. "), "NI JAU TEXTILES, S.A. DE C.V.")
    assert.strictEqual(cleanTaxpayerName("\"TRANS NAU\", S.A. DE C.V."), "\"TRANS NAU\", S.A. DE C.V.")
  })
})
