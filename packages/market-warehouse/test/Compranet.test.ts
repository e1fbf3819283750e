import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { isoDateOf } from "../src/internal/dates.js"
import {
  compranetParser,
  contractingTypeFromText,
  detectCompranetFileLayout,
  detectCompranetLayout,
  mapCompranetRow,
  procedureTypeFromText,
  sniffEncoding
} from "../src/internal/compranet.js"
import type { CompranetHeader } from "../src/internal/compranet.js"
import type { LoadItem } from "../src/internal/records.js"
import { normalizeName } from "../src/Text.js"
import { awardsOf, collectItems, dataPath, opportunitiesOf, rejectsOf, tally } from "./harness.js"

const procurement = (name: string): string => dataPath("procurement", name)

const FILE_2010_2012 = procurement("compranet_contratos_2010_2012_sample.csv")
const FILE_2013 = procurement("compranet_contratos_2013_sample.csv")
const FILE_2014 = procurement("compranet_contratos_2014_sample.csv")
const FILE_2015 = procurement("compranet_contratos_2015_sample.csv")

const collect = (path: string) => collectItems(compranetParser, path)

const onLine = (items: ReadonlyArray<LoadItem>, line: number) => items.filter((i) => i.line === line)

const withFile = <A, E>(name: string, content: Uint8Array | string, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "compranet-test-"))
      const path = join(dir, name)
      await writeFile(path, content)
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

describe("CompraNet: every data row is accounted for", () => {
  const cases: ReadonlyArray<readonly [string, string, number, number]> = [
    ["2010-2012", FILE_2010_2012, 234, 0],
    ["2013", FILE_2013, 248, 0],
    ["2014", FILE_2014, 224, 2],
    ["2015", FILE_2015, 233, 0]
  ]
  for (const [label, path, accepted, rejected] of cases) {
    it.effect(`${label}: accepted + rejected = countDataRows, one award per accepted row`, () =>
      Effect.gen(function*() {
        const items = yield* collect(path)
        const rows = yield* compranetParser.countDataRows(path)
        const counts = tally(items)
        assert.strictEqual(counts.accepted + counts.rejected, rows)
        assert.strictEqual(counts.accepted, accepted)
        assert.strictEqual(counts.rejected, rejected)
        for (const reject of counts.rejects) assert.isTrue(reject.reason.trim().length > 0)
        // Each data row yields its records then exactly one Accepted (or one Reject): lines are unique.
        const lines = counts.outcomeLines
        assert.strictEqual(new Set(lines).size, lines.length)
        assert.strictEqual(awardsOf(items).length, accepted)
        assert.isTrue(items.every((i) => i._tag !== "SupplierObservation"))
      }))
  }

  it.effect("the 2014 sample prints two contracts twice; the exact repeats are rejected with their reason", () =>
    Effect.gen(function*() {
      const items = yield* collect(FILE_2014)
      const rejects = rejectsOf(items)
      assert.deepStrictEqual(rejects.map((r) => r.line), [54, 163])
      assert.include(rejects[0]?.reason ?? "", "665468")
      assert.include(rejects[0]?.reason ?? "", "line 53")
      assert.strictEqual(awardsOf(items).filter((a) => a.sourceRecordId === "665468").length, 1)
    }))
})

describe("CompraNet layouts", () => {
  it.effect("detects the layout from each file's header and its encoding from its bytes", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* detectCompranetFileLayout(FILE_2010_2012)).layout, "standard")
      assert.strictEqual((yield* detectCompranetFileLayout(FILE_2013)).layout, "standard")
      assert.strictEqual((yield* detectCompranetFileLayout(FILE_2014)).layout, "standard")
      // The 2015 export has an empty first header cell where the others say GOBIERNO.
      const layout2015 = yield* detectCompranetFileLayout(FILE_2015)
      assert.strictEqual(layout2015.layout, "gobierno_unnamed")
      assert.strictEqual(layout2015.columns.gobierno, 0)
      assert.strictEqual(layout2015.width, 39)
      for (const path of [FILE_2010_2012, FILE_2013, FILE_2014, FILE_2015]) {
        assert.strictEqual(yield* sniffEncoding(path), "utf-8")
      }
    }))

  it("rejects a header that is not CompraNet's, naming the missing columns", () => {
    const result = detectCompranetLayout(["id", "nom_estab", "raz_social"])
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.include(result.left, "NUMERO_PROCEDIMIENTO")
  })

  it.effect("reads a Windows-1252 export (accents decoded) and fails on a foreign header", () =>
    Effect.gen(function*() {
      const header =
        "GOBIERNO,SIGLAS,DEPENDENCIA,TITULO_EXPEDIENTE,NUMERO_PROCEDIMIENTO,TIPO_CONTRATACION,TIPO_PROCEDIMIENTO," +
        "CODIGO_CONTRATO,TITULO_CONTRATO,IMPORTE_CONTRATO,MONEDA,ESTATUS_CONTRATO,PROVEEDOR_CONTRATISTA\n"
      const row = "APF,SCT,Secretaría,Obra,LO-1-2014,Obra Pública,Licitación Pública,99,Puente,10.5,MXN,Activo,PEÑA SA\n"
      const bytes = Uint8Array.from([...(header + row)].map((c) => c.charCodeAt(0)))
      const items = yield* withFile("cp1252.csv", bytes, (path) =>
        Effect.gen(function*() {
          assert.strictEqual(yield* sniffEncoding(path), "windows-1252")
          return yield* collect(path)
        }))
      const [award] = awardsOf(items)
      assert.strictEqual(award?.supplierName, "PEÑA SA")
      assert.strictEqual(award?.buyerName, "Secretaría")
      assert.strictEqual(award?.procedureType, "licitacion_publica")
      const failure = yield* withFile("other.csv", "a,b,c\n1,2,3\n", (path) => Effect.flip(collect(path)))
      assert.strictEqual(failure._tag, "SourceFileError")
    }))
})

describe("CompraNet rows as records", () => {
  it.effect("2010-2012 line 150: ALVARGA CONSTRUCCIONES, public works tender of API Dos Bocas", () =>
    Effect.gen(function*() {
      const items = onLine(yield* collect(FILE_2010_2012), 150)
      assert.deepStrictEqual(items.map((i) => i._tag), ["Opportunity", "Award", "Accepted"])
      assert.deepStrictEqual(awardsOf(items)[0], {
        sourceRecordId: "37472",
        opportunitySourceRecordId: "LO-009J2P002-N14-2011",
        title: "CONSTRUCCIÓN DEL PARQUE INDUSTRIAL DE DOS BOCAS, PRIMERA ETAPA",
        supplierRfc: null,
        supplierName: "ALVARGA CONSTRUCCIONES",
        supplierSize: "Mediana",
        buyerName: "Administración Portuaria Integral de Dos Bocas, S.A. de C.V.",
        buyerAcronym: "API-Dos Bocas",
        procedureType: "licitacion_publica",
        contractingType: "works",
        awardDate: "2011-08-19",
        amount: "23017295.12",
        currency: "MXN",
        currencyReported: null,
        amountScope: "supplier_contract",
        cogPartidas: [],
        stateCode: null
      })
      const opportunity = opportunitiesOf(items)[0]
      assert.strictEqual(opportunity?.sourceRecordId, "LO-009J2P002-N14-2011")
      assert.strictEqual(opportunity?.title, "CONSTRUCCIÓN DEL PARQUE INDUSTRIAL DE DOS BOCAS, PRIMERA ETAPA")
      assert.strictEqual(opportunity?.procedureTypeText, "Licitación Pública")
      assert.strictEqual(opportunity?.statusText, "Expirado")
      assert.strictEqual(opportunity?.publishedOn, "2011-07-28")
      assert.strictEqual(opportunity?.tenderEndOn, "2011-08-12")
      assert.isFalse(opportunity?.isOpen)
      assert.strictEqual(opportunity?.actionability, "awarded")
      assert.include(opportunity?.actionabilityReason ?? "", "contract status EXPIRADO recorded at load")
    }))

  it.effect("2010-2012 line 2: direct award of AFSEDF to ANGEL REYES REYES (size from ESTRATIFICACION_MUC)", () =>
    Effect.gen(function*() {
      const items = onLine(yield* collect(FILE_2010_2012), 2)
      const award = awardsOf(items)[0]
      assert.strictEqual(award?.sourceRecordId, "280113")
      assert.strictEqual(award?.supplierName, "ANGEL REYES REYES")
      assert.strictEqual(award?.buyerAcronym, "AFSEDF")
      assert.strictEqual(award?.amount, "28143")
      assert.strictEqual(award?.procedureType, "adjudicacion_directa")
      assert.strictEqual(award?.contractingType, "goods")
      // No fallo and no signature date: the contract start date.
      assert.strictEqual(award?.awardDate, "2012-11-22")
      // ESTRATIFICACION_MPC is empty on this row; ESTRATIFICACION_MUC says Micro.
      assert.strictEqual(award?.supplierSize, "Micro")
    }))

  it.effect("2015 line 2 (unnamed first column): API Dos Bocas invitation awarded to a Paraíso contractor", () =>
    Effect.gen(function*() {
      const items = onLine(yield* collect(FILE_2015), 2)
      const award = awardsOf(items)[0]
      assert.strictEqual(award?.sourceRecordId, "738814")
      assert.strictEqual(award?.opportunitySourceRecordId, "IO-009J2P002-N5-2015")
      assert.strictEqual(award?.supplierName, "CONSTRUCCIONES CIVILES Y ELECTROMECANICAS DE PARAISO SA DE CV")
      assert.strictEqual(award?.supplierSize, "Pequeña")
      assert.strictEqual(award?.buyerName, "Administración Portuaria Integral de Dos Bocas, S.A. de C.V.")
      assert.strictEqual(award?.buyerAcronym, "API-Dos Bocas")
      assert.strictEqual(award?.amount, "735984.59")
      assert.strictEqual(award?.currency, "MXN")
      assert.strictEqual(award?.procedureType, "invitacion_tres")
      assert.strictEqual(award?.contractingType, "works")
      // EXP_F_FALLO "2015-05-08 00:00:00 GMT" (the ruling) before FECHA_CELEBRACION 2015-05-13.
      assert.strictEqual(award?.awardDate, "2015-05-08")
      const opportunity = opportunitiesOf(items)[0]
      assert.strictEqual(opportunity?.statusText, "Activo")
      assert.strictEqual(opportunity?.actionability, "awarded")
      assert.isFalse(opportunity?.isOpen)
    }))

  it.effect("suppliers named in the SFP sanctions directory appear as award supplier names", () =>
    Effect.gen(function*() {
      const names = new Set(
        [
          ...awardsOf(yield* collect(FILE_2010_2012)),
          ...awardsOf(yield* collect(FILE_2013)),
          ...awardsOf(yield* collect(FILE_2014)),
          ...awardsOf(yield* collect(FILE_2015))
        ].map((a) => normalizeName(a.supplierName))
      )
      assert.isTrue(names.has("alvarga construcciones"))
      assert.isTrue(names.has("ausel capitaine valenzuela"))
      assert.isTrue(names.has("convertidora de papel pratz"))
      assert.isTrue([...names].some((n) => n.startsWith("tecon construccion y supervision")))
    }))

  it.effect("a contract without NUMERO_PROCEDIMIENTO yields its award only (no procedure id is invented)", () =>
    Effect.gen(function*() {
      const items = onLine(yield* collect(FILE_2010_2012), 188)
      assert.deepStrictEqual(items.map((i) => i._tag), ["Award", "Accepted"])
      const award = awardsOf(items)[0]
      assert.strictEqual(award?.sourceRecordId, "32269")
      assert.isNull(award?.opportunitySourceRecordId)
      // TIPO_PROCEDIMIENTO is empty; PLANTILLA_EXPEDIENTE says "22. Adjudicación Directa Nacional Art. 43 LOPSRM".
      assert.strictEqual(award?.procedureType, "adjudicacion_directa")
      assert.strictEqual(award?.supplierName, "IVAN DE JESUS CERVANTES RODRIGUEZ")
    }))

  it.effect("USD contracts keep their currency; every award is a supplier_contract amount; procedures repeat", () =>
    Effect.gen(function*() {
      const items = yield* collect(FILE_2013)
      const awards = awardsOf(items)
      assert.strictEqual(awards.filter((a) => a.currency === "USD").length, 3)
      assert.isTrue(awards.every((a) => a.amountScope === "supplier_contract" && a.cogPartidas.length === 0))
      assert.isTrue(awards.every((a) => a.amount !== null && /^\d+(\.\d+)?$/.test(a.amount)))
      const opportunities = opportunitiesOf(items)
      assert.strictEqual(opportunities.length, 248)
      assert.strictEqual(new Set(opportunities.map((o) => o.sourceRecordId)).size, 227)
      assert.isTrue(opportunities.every((o) => !o.isOpen && o.actionability === "awarded"))
      assert.isTrue(opportunities.every((o) => o.actionabilityReason.includes("recorded at load")))
    }))
})

describe("CompraNet value parsing", () => {
  const header: CompranetHeader = Either.getOrThrow(
    detectCompranetLayout([
      "GOBIERNO",
      "SIGLAS",
      "DEPENDENCIA",
      "TITULO_EXPEDIENTE",
      "NUMERO_PROCEDIMIENTO",
      "TIPO_CONTRATACION",
      "TIPO_PROCEDIMIENTO",
      "CODIGO_CONTRATO",
      "TITULO_CONTRATO",
      "IMPORTE_CONTRATO",
      "MONEDA",
      "ESTATUS_CONTRATO",
      "PROVEEDOR_CONTRATISTA",
      "RFC"
    ])
  )
  const row = (importe: string, moneda: string, supplier = "ACME SA DE CV", rfc = "") => [
    "APF",
    "SCT",
    "Secretaría",
    "Obra",
    "LO-1-2014",
    "Servicios Relacionados con la OP",
    "Invitación a Cuando Menos 3 Personas",
    "99",
    "Estudio",
    importe,
    moneda,
    "Terminado",
    supplier,
    rfc
  ]

  it("rejects rows that cannot be loaded, with the reason", () => {
    assert.deepStrictEqual(mapCompranetRow(header, row("10", "TEST")), Either.left("MONEDA \"TEST\" is not a currency"))
    assert.deepStrictEqual(
      mapCompranetRow(header, row("diez", "MXN")),
      Either.left("IMPORTE_CONTRATO \"diez\" is not a number")
    )
    assert.deepStrictEqual(
      mapCompranetRow(header, row("10", "MXN", "")),
      Either.left("missing supplier name (PROVEEDOR_CONTRATISTA)")
    )
    assert.deepStrictEqual(mapCompranetRow(header, ["APF"]), Either.left("expected 14 fields, found 1"))
  })

  it("maps currencies, amounts and an RFC column when the export has one", () => {
    const mapped = mapCompranetRow(header, row("1,250.50", "pesos", "ACME SA DE CV", "aco-110203-lh1"))
    assert.isTrue(Either.isRight(mapped))
    if (Either.isRight(mapped)) {
      const award = mapped.right.award
      assert.strictEqual(award.amount, "1250.5")
      assert.strictEqual(award.currency, "MXN")
      assert.strictEqual(award.currencyReported, "pesos")
      assert.strictEqual(award.supplierRfc, "ACO110203LH1")
      assert.strictEqual(award.contractingType, "services")
      assert.strictEqual(award.procedureType, "invitacion_tres")
      assert.strictEqual(mapped.right.opportunity?.statusText, "Terminado")
    }
    const invalidRfc = mapCompranetRow(header, row("0", "MXN", "ACME SA DE CV", "XAXX010101000"))
    assert.isTrue(Either.isRight(invalidRfc) && invalidRfc.right.award.supplierRfc === null)
    assert.isTrue(Either.isRight(invalidRfc) && invalidRfc.right.award.amount === "0")
  })

  it("normalizes procedure and contracting types and dates", () => {
    assert.strictEqual(procedureTypeFromText("Adjudicación Directa Federal"), "adjudicacion_directa")
    assert.strictEqual(procedureTypeFromText("Invitación a Cuando Menos 3 Personas"), "invitacion_tres")
    assert.strictEqual(procedureTypeFromText("Licitación Pública"), "licitacion_publica")
    assert.strictEqual(
      procedureTypeFromText("Adjudicación directa por excepción a la licitación pública"),
      "adjudicacion_directa"
    )
    assert.strictEqual(procedureTypeFromText("Concurso"), "other")
    assert.isNull(procedureTypeFromText("  "))
    assert.strictEqual(contractingTypeFromText("Adquisiciones"), "goods")
    assert.strictEqual(contractingTypeFromText("Arrendamientos"), "goods")
    assert.strictEqual(contractingTypeFromText("Servicios"), "services")
    assert.strictEqual(contractingTypeFromText("Servicios Relacionados con la OP"), "services")
    assert.strictEqual(contractingTypeFromText("Obra Pública"), "works")
    assert.strictEqual(contractingTypeFromText("consultingServices"), "services")
    assert.isNull(contractingTypeFromText("Otro"))
    assert.strictEqual(isoDateOf("2012-10-30 19:24"), "2012-10-30")
    assert.strictEqual(isoDateOf("2013-11-27 00:00:00 GMT"), "2013-11-27")
    assert.strictEqual(isoDateOf("2015-12-22T00:00:00-06:00"), "2015-12-22")
    assert.strictEqual(isoDateOf("7/3/2014"), "2014-03-07")
    assert.isNull(isoDateOf("2013-02-30"))
    assert.isNull(isoDateOf("Antes de 92"))
  })

  it.effect("one source for every CompraNet file", () =>
    Effect.gen(function*() {
      const source = yield* compranetParser.sourceOf(FILE_2015)
      assert.strictEqual(source.slug, "compranet")
      assert.strictEqual(source.publisher, "Secretaría de la Función Pública (CompraNet)")
      assert.strictEqual(source.licence, "Términos de Libre Uso MX (datos.gob.mx)")
      assert.isTrue(source.licensedForDisplay)
      assert.strictEqual(source.evidenceCategory, "government_contracting")
      assert.strictEqual(compranetParser.kind, "compranet")
    }))
})
