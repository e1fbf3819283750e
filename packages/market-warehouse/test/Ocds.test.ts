import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream, TestClock } from "effect"
import {
  addDecimals,
  countOcdsDataRows,
  decodeEntities,
  detectOcdsSource,
  jsonArrayElements,
  ocdsActionability,
  ocdsParser,
  ocdsProcedureType,
  rfcFromIdentifier
} from "../src/internal/ocds.js"
import type { LoadItem } from "../src/internal/records.js"
import {
  awardsOf,
  collectItems,
  dataPath,
  observationsOf,
  opportunitiesOf,
  rejectsOf,
  tally,
  testContext
} from "./harness.js"

const procurement = (name: string): string => dataPath("procurement", name)

const APF = procurement("ocds_apf_contrataciones_abiertas_records_sample.json")
const INAI = procurement("ocds_inai_releases_sample.json")
const CDMX_RECORDS = procurement("ocds_cdmx_sefin_records_sample.json")
const CDMX_RELEASES = procurement("ocds_cdmx_sefin_releases_sample.json")
const GACM_RECORDS = procurement("ocds_gacm_naicm_records_sample.json")
const GACM_RELEASES = procurement("ocds_gacm_naicm_releases_sample.json")
const JALISCO_RECORDS = procurement("ocds_jalisco_record_packages_sample.json")
const JALISCO_RELEASES = procurement("ocds_jalisco_release_packages_sample.json")

/** Every item of a file, loaded on 2026-01-01 (the test clock otherwise starts at 1970-01-01). */
const collect = (path: string, loadDay = "2026-01-01") =>
  Effect.gen(function*() {
    const ctx = yield* testContext
    yield* TestClock.setTime(Date.parse(`${loadDay}T12:00:00Z`))
    return yield* collectItems(ocdsParser, path, ctx)
  })

const withJson = <A, E>(name: string, content: unknown, use: (path: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const dir = await mkdtemp(join(tmpdir(), "ocds-test-"))
      const path = join(dir, name)
      await writeFile(path, typeof content === "string" ? content : JSON.stringify(content), "utf8")
      return { dir, path }
    }),
    ({ path }) => use(path),
    ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

describe("OCDS: every top-level element is accounted for", () => {
  const cases: ReadonlyArray<readonly [string, string, number]> = [
    [APF, "ocds_apf", 7],
    [INAI, "ocds_inai", 4],
    [CDMX_RECORDS, "ocds_cdmx", 2],
    [CDMX_RELEASES, "ocds_cdmx", 12],
    [GACM_RECORDS, "ocds_gacm", 5],
    [GACM_RELEASES, "ocds_gacm", 186],
    [JALISCO_RECORDS, "ocds_jalisco", 4],
    [JALISCO_RELEASES, "ocds_jalisco", 5]
  ]
  for (const [path, slug, rows] of cases) {
    it.effect(`${path.split("/").at(-1) ?? path}: ${slug}, accepted + rejected = ${rows} data rows`, () =>
      Effect.gen(function*() {
        const items = yield* collect(path)
        const dataRows = yield* ocdsParser.countDataRows(path)
        assert.strictEqual(dataRows, rows)
        const { accepted, rejected, rejects, outcomeLines } = tally(items)
        assert.strictEqual(accepted + rejected, dataRows)
        for (const reject of rejects) assert.isTrue(reject.reason.trim().length > 0)
        assert.deepStrictEqual(rejects, [])
        const lines = [...outcomeLines].sort((a, b) => a - b)
        assert.deepStrictEqual(lines, Array.from({ length: rows }, (_, i) => i + 1))
        const source = yield* ocdsParser.sourceOf(path)
        assert.strictEqual(source.slug, slug)
        assert.isTrue(source.licensedForDisplay)
        assert.strictEqual(source.evidenceCategory, "government_contracting")
        assert.include(source.licence, "BSD-3-Clause")
        assert.include(source.licence, "Términos de Libre Uso MX")
      }))
  }

  it.effect("record counts per file (opportunities, awards, supplier observations)", () =>
    Effect.gen(function*() {
      const counts = (items: ReadonlyArray<LoadItem>) => [
        opportunitiesOf(items).length,
        awardsOf(items).length,
        observationsOf(items).length
      ]
      assert.deepStrictEqual(counts(yield* collect(APF)), [7, 8, 8])
      assert.deepStrictEqual(counts(yield* collect(INAI)), [4, 3, 3])
      assert.deepStrictEqual(counts(yield* collect(CDMX_RECORDS)), [2, 2, 2])
      assert.deepStrictEqual(counts(yield* collect(CDMX_RELEASES)), [12, 12, 12])
      assert.deepStrictEqual(counts(yield* collect(GACM_RECORDS)), [5, 5, 5])
      assert.deepStrictEqual(counts(yield* collect(GACM_RELEASES)), [186, 185, 185])
      assert.deepStrictEqual(counts(yield* collect(JALISCO_RECORDS)), [4, 5, 5])
      assert.deepStrictEqual(counts(yield* collect(JALISCO_RELEASES)), [4, 2, 5])
    }))
})

describe("OCDS: GACM (NAICM airport)", () => {
  it.effect("the award published with currency \"MNX\" loads as MXN and reports MNX", () =>
    Effect.gen(function*() {
      const awards = awardsOf(yield* collect(GACM_RELEASES))
      const mnx = awards.filter((a) => a.currencyReported === "MNX")
      assert.strictEqual(mnx.length, 1)
      assert.deepStrictEqual(
        mnx.map((a) => [a.sourceRecordId, a.supplierName, a.amount, a.currency, a.amountScope]),
        [["390/0/PIL010531ILA", "Parsons International Limited", "2692314541.99", "MXN", "supplier_contract"]]
      )
      assert.isTrue(awards.every((a) => a.currency === "MXN"))
    }))

  it.effect("supplier RFC GTA140724H10 (also in the SAT 69-B lists) is an award supplierRfc", () =>
    Effect.gen(function*() {
      const items = yield* collect(GACM_RELEASES)
      const award = awardsOf(items).find((a) => a.supplierRfc === "GTA140724H10")
      // The award prints GACM's own RFC for Global Tourist Agency; the contract payee of that name has its RFC.
      assert.strictEqual(award?.sourceRecordId, "268/LA-009KDH999-E29-2016/GTA140724H10")
      assert.strictEqual(award?.supplierName, "Global Tourist Agency, S. A. de C.V.")
      assert.strictEqual(award?.amount, "15856320")
      assert.strictEqual(award?.awardDate, "2016-04-25")
      assert.strictEqual(award?.buyerAcronym, "GACM")
      assert.strictEqual(award?.procedureType, "licitacion_publica")
      assert.isFalse(awardsOf(items).some((a) => a.supplierRfc === "GAC9806011J4"))
      const observation = observationsOf(items).find((s) => s.rfc === "GTA140724H10")
      assert.strictEqual(observation?.sourceRecordId, "268/GTA140724H10")
      assert.strictEqual(observation?.stateCode, "20")
    }))

  it.effect("4-digit partidas genéricas give no cogPartidas; HTML entities and joint bids in identifiers", () =>
    Effect.gen(function*() {
      const items = [...(yield* collect(GACM_RELEASES)), ...(yield* collect(GACM_RECORDS))]
      assert.isTrue(awardsOf(items).every((a) => a.cogPartidas.length === 0))
      assert.isTrue(opportunitiesOf(items).every((o) => o.cogPartidas.length === 0))
      const awards = awardsOf(items)
      const hl = awards.find((a) => a.sourceRecordId.startsWith("164/"))
      assert.strictEqual(hl?.supplierRfc, "H&L001219R14")
      assert.strictEqual(hl?.supplierName, "H&L CONSULTORIAS ASOCIADAS, S.A. DE C.V.")
      // "OCI820920II7 /CCO980814BU4 /CDS970212MV3": a joint bid is not one RFC.
      const joint = awards.find((a) => a.sourceRecordId.startsWith("284/"))
      assert.isNull(joint?.supplierRfc)
      assert.include(joint?.supplierName ?? "", "Omega Construcciones Industriales")
      // Hyphenated RFC and a CURP: the first is an RFC, the second is not.
      assert.strictEqual(awards.find((a) => a.sourceRecordId.startsWith("93/"))?.supplierRfc, "STO020301G28")
      assert.isNull(awards.find((a) => a.sourceRecordId.startsWith("263/"))?.supplierRfc)
      // Records: the supplier's RFC is on the party the award's hashed supplier id points to.
      assert.strictEqual(awards.find((a) => a.sourceRecordId.startsWith("100/"))?.supplierRfc, "BEFE590915R81")
    }))

  it.effect("historical procedures: active tenders with awards are awarded, none is open at load", () =>
    Effect.gen(function*() {
      const opportunities = opportunitiesOf(yield* collect(GACM_RELEASES))
      assert.isTrue(opportunities.every((o) => !o.isOpen))
      assert.isTrue(opportunities.every((o) => o.actionability === "awarded"))
      const noSupplier = opportunities.find((o) => o.sourceRecordId === "373")
      assert.include(noSupplier?.actionabilityReason ?? "", "signed contract")
      assert.strictEqual(opportunities.find((o) => o.sourceRecordId === "100")?.statusText, "active")
      assert.strictEqual(opportunities.find((o) => o.sourceRecordId === "100")?.procedureType, "adjudicacion_directa")
    }))
})

describe("OCDS: APF and INAI (COG partidas)", () => {
  it.effect("APF contracts: supplier RFC, valueWithTax, signature date and the Economic partida", () =>
    Effect.gen(function*() {
      const items = yield* collect(APF)
      const award = awardsOf(items).find((a) => a.sourceRecordId === "ocds-07smqs-1035/1035/GFM010122DZ9")
      assert.deepStrictEqual(award, {
        sourceRecordId: "ocds-07smqs-1035/1035/GFM010122DZ9",
        opportunitySourceRecordId: "ocds-07smqs-1035",
        title: "Fletes y maniobras",
        supplierRfc: "GFM010122DZ9",
        supplierName: "GRUAS FLETES Y MANIOBRAS SA DE CV",
        supplierSize: null,
        buyerName: "Servicio de Administración Tributaria",
        buyerAcronym: null,
        procedureType: null,
        contractingType: null,
        awardDate: "2017-03-06",
        amount: "10440",
        currency: "MXN",
        currencyReported: null,
        amountScope: "supplier_contract",
        cogPartidas: ["34701"],
        stateCode: null
      })
      // Every APF award carries five-digit partidas; the hashed MX-RFC identifier is not an RFC.
      assert.isTrue(awardsOf(items).every((a) => a.cogPartidas.length > 0))
      assert.isTrue(awardsOf(items).every((a) => a.cogPartidas.every((p) => /^\d{5}$/.test(p))))
      const hashed = awardsOf(items).find((a) => a.supplierName === "JESUS ALBERTO ROSAS GARDUZA")
      assert.isNull(hashed?.supplierRfc)
      // Two contracts with two buyers in one compiled release.
      const twoBuyers = awardsOf(items).filter((a) => a.opportunitySourceRecordId === "ocds-07smqs-1457")
      assert.deepStrictEqual(
        twoBuyers.map((a) => [a.supplierRfc, a.buyerName, a.amount]).sort(),
        [
          ["FGG0309129E1", "Instituto Nacional de Psiquiatría Ramón de la Fuente Muñiz", "55769.1"],
          ["SDS040719E51", "delegación SEDESOL en México", "33840"]
        ]
      )
    }))

  it.effect("INAI: five-digit CUCoP partidas, RFC-<rfc> supplier ids, Spanish roles, unsuccessful award", () =>
    Effect.gen(function*() {
      const items = yield* collect(INAI)
      const awards = awardsOf(items)
      assert.deepStrictEqual(
        awards.map((a) => [a.sourceRecordId, a.supplierRfc, a.amount, a.cogPartidas]),
        [
          ["PC-0001/OA/A001/HPR060210B71", "HPR060210B71", "62000", ["38301"]],
          ["PC-0013/OA/A013/ACO110203LH1", "ACO110203LH1", "220861.68", ["33301"]],
          ["PC-0014/OA/A014/TLB110322C48", "TLB110322C48", "295800", ["33104", "33401"]]
        ]
      )
      assert.isTrue(awards.every((a) => a.amountScope === "supplier_contract" && a.contractingType === "services"))
      // ARG Comunicación is only a "Participante" party, but it is the awarded supplier: it is observed.
      const arg = observationsOf(items).find((s) => s.rfc === "ACO110203LH1")
      assert.strictEqual(arg?.legalName, "ARG Comunicación, S.A. de C.V.")
      assert.strictEqual(arg?.stateCode, "09")
      // Bidders that were not awarded ("Participante") are not observations.
      assert.isFalse(observationsOf(items).some((s) => s.name === "GECED" || s.name === "IT LAWYERS SC"))
      const opportunities = opportunitiesOf(items)
      const pc1 = opportunities.find((o) => o.sourceRecordId === "PC-0001")
      assert.strictEqual(pc1?.buyerAcronym, "DGEALSUPFM")
      assert.strictEqual(pc1?.procedureType, "invitacion_tres")
      assert.strictEqual(opportunities.find((o) => o.sourceRecordId === "PC-0013")?.procedureType, "adjudicacion_directa")
      const failed = opportunities.find((o) => o.sourceRecordId === "PC-0016")
      assert.strictEqual(failed?.actionability, "closed")
      assert.isFalse(failed?.isOpen)
      assert.deepStrictEqual(failed?.cogPartidas, ["33104"])
      assert.isFalse(awards.some((a) => a.opportunitySourceRecordId === "PC-0016"))
    }))
})

describe("OCDS: CDMX and Jalisco", () => {
  it.effect("CDMX: truncated names extended from another entry, region DF → 09, RFC with &, USD kept", () =>
    Effect.gen(function*() {
      const items = yield* collect(CDMX_RELEASES)
      const awards = awardsOf(items)
      assert.isTrue(awards.some((a) => a.supplierName === "TIENDAS COMERCIAL MEXICANA S.A DE C"))
      assert.isFalse(awards.some((a) => a.supplierName === "TIENDAS COMERCIAL MEXICANA S.A D"))
      const cc = awards.find((a) => a.supplierRfc === "C&C021030KX2")
      assert.strictEqual(cc?.supplierName, "COMUNIC@RTE & CONSULTING SA DE CV")
      assert.strictEqual(cc?.stateCode, "09")
      assert.deepStrictEqual(
        [...new Set(awards.filter((a) => a.currency === "USD").map((a) => `${a.supplierRfc} ${a.amount}`))],
        ["BSM971107ME6 75464.96"]
      )
      const observation = observationsOf(items).find((s) => s.rfc === "C&C021030KX2")
      assert.strictEqual(observation?.stateCode, "09")
      assert.strictEqual(observation?.contact.phone, "5532-8810")
      assert.isTrue(observation?.hasPhone)
      // tender.status "planned" on a release that already has an active award: awarded.
      const planned = opportunitiesOf(items).find((o) => o.statusText === "planned")
      assert.strictEqual(planned?.actionability, "awarded")
      const records = yield* collect(CDMX_RECORDS)
      assert.deepStrictEqual(
        awardsOf(records).map((a) => [a.sourceRecordId, a.amount]),
        [
          ["OCDS-87SD3T-SEFIN-DRM-A-001-2016/1/TCM951030A17", "984398.88"],
          ["OCDS-87SD3T-SEFIN-DRM-A-002-2016/1/TCM951030A17", "1000597.44"]
        ]
      )
    }))

  it.effect("Jalisco: registry ids are not RFCs, FAM-GOB-JAL is not COG, a tenderless release inherits the procedure", () =>
    Effect.gen(function*() {
      const records = yield* collect(JALISCO_RECORDS)
      const awards = awardsOf(records)
      assert.isTrue(awards.every((a) => a.supplierRfc === null && a.cogPartidas.length === 0))
      assert.deepStrictEqual(
        awards.filter((a) => a.opportunitySourceRecordId === "ocds-xs1qbl-SFIN-03-0012-00-2017").map((a) => [
          a.supplierName,
          a.amount,
          a.amountScope
        ]),
        [
          ["GENERICOS DE LIMPIEZA, S. DE R.L. DE C.V.", "657640.946", "supplier_contract"],
          ["PACKLIFE, S.A. DE C.V.", "130386.32", "supplier_contract"]
        ]
      )
      const opportunity = opportunitiesOf(records)[0]
      assert.strictEqual(opportunity?.buyerAcronym, "SEPAF")
      assert.strictEqual(opportunity?.buyerName, "SECRETARíA DE PLANEACIóN, ADMINISTRACIóN Y FINANZAS (SUB-FINANZAS)")
      assert.strictEqual(opportunity?.stateCode, "14")
      assert.strictEqual(opportunity?.contractingType, "goods")
      const coformex = observationsOf(records).find((s) => s.name === "COFORMEX, S.A. DE C.V.")
      assert.isNull(coformex?.rfc)
      assert.strictEqual(coformex?.stateCode, "09")

      const releases = yield* collect(JALISCO_RELEASES)
      // planned (no dates) → unknown; active (no dates) → unknown; complete with award → awarded.
      assert.deepStrictEqual(
        opportunitiesOf(releases).map((o) => [o.statusText, o.actionability]),
        [["planned", "unknown"], ["active", "unknown"], ["complete", "awarded"], ["planned", "unknown"]]
      )
      const contractStage = releases.filter((i) => i.line === 4)
      assert.deepStrictEqual(contractStage.map((i) => i._tag), ["Award", "SupplierObservation", "Accepted"])
      const inherited = awardsOf(contractStage)[0]
      assert.strictEqual(inherited?.procedureType, "licitacion_publica")
      assert.strictEqual(inherited?.contractingType, "goods")
      assert.strictEqual(inherited?.buyerAcronym, "SEPAF")
    }))
})

describe("OCDS rules on synthetic packages", () => {
  const release = (overrides: Record<string, unknown>) => ({
    ocid: "ocds-xs1qbl-TEST-1",
    id: "r1",
    date: "2025-12-01T00:00:00Z",
    tag: ["tender"],
    tender: {
      id: "T1",
      title: "Papel bond",
      status: "active",
      procurementMethod: "open",
      mainProcurementCategory: "goods",
      tenderPeriod: { startDate: "2025-12-01T00:00:00Z", endDate: "2026-03-31T00:00:00Z" },
      items: [
        { classification: { scheme: "CUCoP", id: 21101 } },
        { classification: { scheme: "CUCoP", id: "21100001" } }
      ]
    },
    ...overrides
  })

  it.effect("an award value covering several suppliers is an award_group_published_total on each row", () =>
    Effect.gen(function*() {
      const pkg = [{
        publisher: { name: "SEPAF | Gobierno de Jalisco" },
        releases: [release({
          awards: [{
            id: "A1",
            status: "active",
            date: "2026-04-02T00:00:00Z",
            value: { amount: "1000.50", currency: "M.N." },
            suppliers: [{ id: "RFC-ACO110203LH1", name: "ARG" }, { id: "P1", name: "Otro, S.A." }]
          }],
          parties: [
            { id: "RFC-ACO110203LH1", name: "ARG", roles: ["Participante"], identifier: { scheme: "RFC", id: "ACO110203LH1" } },
            { id: "P1", name: "Otro, S.A.", roles: ["supplier"], address: { region: "Nuevo León" } },
            { id: "P2", name: "Perdedor", roles: ["tenderer"] }
          ]
        })]
      }]
      const items = yield* withJson("package.json", pkg, (path) => collect(path))
      const awards = awardsOf(items)
      assert.deepStrictEqual(
        awards.map((a) => [a.sourceRecordId, a.supplierRfc, a.amount, a.currency, a.currencyReported, a.amountScope]),
        [
          ["ocds-xs1qbl-TEST-1/A1/ACO110203LH1", "ACO110203LH1", "1000.5", "MXN", "M.N.", "award_group_published_total"],
          ["ocds-xs1qbl-TEST-1/A1/P1", null, "1000.5", "MXN", "M.N.", "award_group_published_total"]
        ]
      )
      // Only the five-digit CUCoP id is a partida; the 8-digit item (partida genérica + sequence) is not.
      assert.deepStrictEqual(awards[0]?.cogPartidas, ["21101"])
      assert.deepStrictEqual(
        observationsOf(items).map((s) => [s.sourceRecordId, s.stateCode]),
        [["ocds-xs1qbl-TEST-1/P1", "19"], ["ocds-xs1qbl-TEST-1/ACO110203LH1", null]]
      )
      assert.strictEqual(yield* withJson("package.json", pkg, detectOcdsSource).pipe(Effect.map((s) => s.slug)), "ocds_jalisco")
    }))

  it.effect("contract values matched to each supplier are supplier_contract, summed within one currency only", () =>
    Effect.gen(function*() {
      const data = [release({
        awards: [{
          id: "A1",
          value: { amount: 999, currency: "MXN" },
          suppliers: [{ id: "S1", name: "Uno SA" }, { id: "S2", name: "Dos SA" }]
        }],
        contracts: [
          { id: "C1", awardID: "A1", suppliers: [{ id: "S1", name: "Uno SA" }], value: { amount: 0.1, currency: "MXN" } },
          { id: "C2", awardID: "A1", suppliers: [{ id: "S1", name: "Uno SA" }], value: { amount: 0.2, currency: "MXN" } },
          { id: "C3", awardID: "A1", suppliers: [{ id: "S2", name: "Dos SA" }], value: { amount: 5, currency: "USD" } },
          { id: "C4", awardID: "A1", suppliers: [{ id: "S2", name: "Dos SA" }], value: { amount: 7, currency: "MXN" } }
        ]
      })]
      const awards = awardsOf(yield* withJson("ocds_cdmx_test.json", data, (path) => collect(path)))
      assert.deepStrictEqual(
        awards.map((a) => [a.sourceRecordId, a.amount, a.currency, a.amountScope]),
        [
          ["ocds-xs1qbl-TEST-1/A1/S1", "0.3", "MXN", "supplier_contract"],
          // USD and MXN contracts are never summed: the award's group total is used instead.
          ["ocds-xs1qbl-TEST-1/A1/S2", "999", "MXN", "award_group_published_total"]
        ]
      )
    }))

  it.effect("open at load only while the tender period runs, judged by the clock at load time", () =>
    Effect.gen(function*() {
      const data = [release({})]
      const during = opportunitiesOf(yield* withJson("ocds_inai_x.json", data, (path) => collect(path, "2026-01-15")))
      assert.deepStrictEqual(during.map((o) => [o.isOpen, o.actionability]), [[true, "open_at_load"]])
      assert.include(during[0]?.actionabilityReason ?? "", "2026-03-31")
      const after = opportunitiesOf(yield* withJson("ocds_inai_x.json", data, (path) => collect(path, "2026-05-01")))
      assert.deepStrictEqual(after.map((o) => [o.isOpen, o.actionability]), [[false, "closed"]])
      const before = opportunitiesOf(yield* withJson("ocds_inai_x.json", data, (path) => collect(path, "2025-06-01")))
      assert.deepStrictEqual(before.map((o) => o.actionability), ["unknown"])
      // The synthetic opportunity's partidas and type.
      assert.deepStrictEqual(during[0]?.cogPartidas, ["21101"])
      assert.strictEqual(during[0]?.procedureType, "licitacion_publica")
      assert.strictEqual(during[0]?.procedureTypeText, "open")
    }))

  it.effect("elements that are not OCDS, or records without an embedded release, are rejected with a reason", () =>
    Effect.gen(function*() {
      const data = [
        42,
        { foo: "bar" },
        { ocid: "ocds-x-1", releases: [{ url: "https://example.org/r1", date: "2017-01-01", tag: ["tender"] }] },
        { ocid: "ocds-x-2", tag: ["planning"], planning: {} },
        { records: [{ ocid: "ocds-x-3", releases: [{ ocid: "ocds-x-3", date: "2017-01-01", tender: { title: "A" } }, {
          ocid: "ocds-x-3",
          date: "2017-02-01",
          tender: { title: "B", status: "cancelled" }
        }] }] }
      ]
      const items = yield* withJson("ocds_gacm_bad.json", data, (path) => collect(path))
      const rejects = rejectsOf(items)
      assert.deepStrictEqual(rejects.map((r) => r.line), [1, 2, 3, 4])
      assert.include(rejects[0]?.reason ?? "", "not a JSON object")
      assert.include(rejects[1]?.reason ?? "", "not an OCDS release")
      assert.include(rejects[2]?.reason ?? "", "only links")
      assert.include(rejects[3]?.reason ?? "", "no tender")
      // The record's latest embedded release (by date) is used.
      assert.deepStrictEqual(opportunitiesOf(items).map((o) => [o.title, o.actionability]), [["B", "cancelled"]])
      assert.strictEqual(yield* withJson("ocds_gacm_bad.json", data, countOcdsDataRows), 5)
    }))

  it.effect("streams fail on a file that is not a JSON array; an unknown publisher is refused", () =>
    Effect.gen(function*() {
      const notArray = yield* withJson("x.json", { ocid: "a" }, (path) => Effect.flip(Stream.runCollect(jsonArrayElements(path))))
      assert.strictEqual(notArray._tag, "SourceFileError")
      const broken = yield* withJson("y.json", "[{\"ocid\": ", (path) => Effect.flip(countOcdsDataRows(path)))
      assert.strictEqual(broken._tag, "SourceFileError")
      const unknown = yield* withJson("z.json", [{ ocid: "abc" }], (path) => Effect.flip(detectOcdsSource(path)))
      assert.include(unknown.message, "publisher")
    }))
})

describe("OCDS helpers", () => {
  it("procedure type: details, then rationale, then the method code", () => {
    assert.deepStrictEqual(ocdsProcedureType("Licitación Pública", null, "open"), {
      type: "licitacion_publica",
      text: "Licitación Pública"
    })
    assert.deepStrictEqual(ocdsProcedureType(null, "22 ADJUDICACION DIRECTA NACIONAL ART. 43 LOPSRM", "limited"), {
      type: "adjudicacion_directa",
      text: "22 ADJUDICACION DIRECTA NACIONAL ART. 43 LOPSRM"
    })
    assert.deepStrictEqual(ocdsProcedureType(null, "Nacional", "selective"), {
      type: "invitacion_tres",
      text: "selective; Nacional"
    })
    assert.deepStrictEqual(ocdsProcedureType(null, null, null), { type: null, text: null })
  })

  it("actionability rules", () => {
    const base = { status: "active", awarded: 0, signedContracts: 0, unsuccessful: false, loadDate: "2026-01-01" }
    assert.strictEqual(ocdsActionability({ ...base, tenderStart: null, tenderEnd: "2026-02-01" }).actionability, "open_at_load")
    assert.strictEqual(ocdsActionability({ ...base, tenderStart: null, tenderEnd: "2017-02-01" }).actionability, "closed")
    assert.strictEqual(ocdsActionability({ ...base, tenderStart: null, tenderEnd: null }).actionability, "unknown")
    assert.strictEqual(
      ocdsActionability({ ...base, status: "cancelled", tenderStart: null, tenderEnd: "2026-02-01" }).actionability,
      "cancelled"
    )
    assert.strictEqual(
      ocdsActionability({ ...base, awarded: 2, tenderStart: null, tenderEnd: "2026-02-01" }).actionability,
      "awarded"
    )
    assert.strictEqual(
      ocdsActionability({ ...base, status: "complete", tenderStart: null, tenderEnd: null }).actionability,
      "closed"
    )
  })

  it("RFCs from identifiers, entities and exact decimal sums", () => {
    assert.strictEqual(rfcFromIdentifier("RFC-HPR060210B71"), "HPR060210B71")
    assert.strictEqual(rfcFromIdentifier("H&#38;L001219R14"), "H&L001219R14")
    assert.strictEqual(rfcFromIdentifier("INA-770420-DW1"), "INA770420DW1")
    assert.isNull(rfcFromIdentifier("P00268"))
    assert.isNull(rfcFromIdentifier("95F5D7F5DD77D73E3232026B4732232A"))
    assert.isNull(rfcFromIdentifier("OEMC500117HDFRRR03"))
    assert.isNull(rfcFromIdentifier("COC000315HY4 /CPV810615PP5"))
    assert.isNull(rfcFromIdentifier("XAXX010101000"))
    assert.strictEqual(decodeEntities("Currie &#38; Brown &amp; Co &#x41;"), "Currie & Brown & Co A")
    assert.strictEqual(addDecimals("0.1", "0.2"), "0.3")
    assert.strictEqual(addDecimals("1762803241.34", "7359204570.23"), "9122007811.57")
    assert.strictEqual(addDecimals("5", "-5.00"), "0")
  })
})
