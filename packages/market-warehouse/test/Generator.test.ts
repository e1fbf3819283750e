import { assert, describe, it, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Corpus } from "../src/Corpus.js"
import * as DataFiles from "../src/DataFiles.js"
import * as Generator from "../src/Generator.js"
import { streamCompranet } from "../src/internal/compranet.js"
import type { RecordKind } from "../src/internal/kinds.js"
import { ocdsActionability, streamOcds } from "../src/internal/ocds.js"
import {
  AwardRecord,
  type LoadItem,
  OpportunityRecord,
  PermitRecord,
  RiskMarkRecord,
  SupplierObservationRecord
} from "../src/internal/records.js"
import { sfpStatusOf, streamSfp } from "../src/internal/sfp.js"
import { rfcKind } from "../src/Rfc.js"
import * as MarketMigrations from "../src/MarketMigrations.js"
import * as WarehouseLayer from "../src/WarehouseLayer.js"

const kinds: ReadonlyArray<RecordKind> = ["supplier_observation", "opportunity", "award", "risk_mark", "permit"]

const planFor = (seed: number, scale: number) =>
  Effect.flatMap(Generator.cachedProfile(), (profile) => Generator.makePlan(profile, { seed, scale }))

const records = (plan: Generator.GeneratorPlan, kind: RecordKind, count: number) =>
  Array.from({ length: Math.min(count, plan.counts[kind]) }, (_, i) => Generator.itemAt(plan, kind, i).record)

/** The first `count` records of one kind, typed by its generator. */
const take = <A>(plan: Generator.GeneratorPlan, kind: RecordKind, count: number, at: (plan: Generator.GeneratorPlan, i: number) => A) =>
  Array.from({ length: Math.min(count, plan.counts[kind]) }, (_, i) => at(plan, i))

/** The most frequent value of a list (ties: first seen). */
const mode = <A>(values: ReadonlyArray<A>): A | undefined => {
  const counts = new Map<A, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
}

describe("Generator", () => {
  it.effect("derives a profile from the real samples and catalogs", () =>
    Effect.gen(function*() {
      const profile = yield* Generator.cachedProfile()
      assert.strictEqual(profile.suppliers.states.length, 32)
      assert.strictEqual(profile.suppliers.scianClasses.length, 1086)
      assert.isTrue(profile.procurement.partidas.every((p) => /^\d{5}$/.test(p.value.code)))
      assert.isAbove(profile.procurement.buyers.length, 10)
      assert.isTrue(profile.procurement.buyers.some((b) => b.value.acronym === "AFSEDF"))
      // SAT lists: definitivo is the largest status; roughly a fifth of the RFCs are personas físicas.
      assert.strictEqual(profile.risks.efosStatuses[0]?.value.status, "definitivo")
      assert.isTrue(profile.names.personaFisicaShare > 0.1 && profile.names.personaFisicaShare < 0.4)
      assert.isTrue(profile.procurement.amounts.MXN.n > 100)
      assert.isTrue(profile.procurement.amounts.usdShare > 0 && profile.procurement.amounts.usdShare < 0.1)
      // As parsed, every sample award names one supplier: no group totals (the generator keeps a floor of them).
      assert.isTrue(profile.procurement.amounts.groupTotalShare >= 0 && profile.procurement.amounts.groupTotalShare < 1)
      assert.isTrue(profile.risks.sanctions.some((s) => s.value.status === "sancion_multa_inhabilitacion"))
      assert.isTrue(profile.permits.statuses.some((s) => s.value.isActiveRisk))
      assert.isTrue(profile.inputs.some((i) => i.file.startsWith("procurement/ocds_")))
    }), { timeout: 60_000 })

  it.effect("is deterministic: same seed and scale give the same records, another seed different ones", () =>
    Effect.gen(function*() {
      const a = yield* planFor(42, 0.001)
      const b = yield* planFor(42, 0.001)
      const c = yield* planFor(43, 0.001)
      for (const kind of kinds) {
        const first = records(a, kind, 50)
        assert.deepStrictEqual(records(b, kind, 50), first)
        assert.notDeepEqual(records(c, kind, 50), first)
      }
      // Random access equals sequential iteration: a record does not depend on the ones before it.
      const sequential = [...Generator.itemsOf(a, "award", { from: 10, count: 5 })]
        .flatMap((item) => (item._tag === "Award" ? [item.record] : []))
      assert.deepStrictEqual(sequential, take(a, "award", 15, Generator.awardAt).slice(10))
    }))

  it.effect("generates records that decode with their schemas and link across kinds", () =>
    Effect.gen(function*() {
      const plan = yield* planFor(7, 0.001)
      const suppliers = take(plan, "supplier_observation", plan.counts.supplier_observation, Generator.supplierAt)
      const opportunities = take(plan, "opportunity", plan.counts.opportunity, Generator.opportunityAt)
      const awards = take(plan, "award", plan.counts.award, Generator.awardAt)
      const risks = take(plan, "risk_mark", plan.counts.risk_mark, Generator.riskMarkAt)
      const permits = take(plan, "permit", plan.counts.permit, Generator.permitAt)
      const valid = <A, I>(schema: Schema.Schema<A, I>, values: ReadonlyArray<unknown>) => {
        const decode = Schema.decodeUnknownEither(schema)
        for (const value of values) assert.isTrue(Either.isRight(decode(value)), JSON.stringify(value))
      }
      valid(SupplierObservationRecord, suppliers)
      valid(OpportunityRecord, opportunities)
      valid(AwardRecord, awards)
      valid(RiskMarkRecord, risks)
      valid(PermitRecord, permits)

      // RFCs: well-formed (calendar dates), mostly 12-character company RFCs, unique per supplier.
      const supplierRfcs = suppliers.flatMap((s) => (s.rfc === null ? [] : [s.rfc]))
      assert.isTrue(supplierRfcs.every((rfc) => rfcKind(rfc) !== undefined))
      assert.isAbove(supplierRfcs.filter((rfc) => rfc.length === 12).length, supplierRfcs.length / 2)
      assert.strictEqual(new Set(supplierRfcs).size, supplierRfcs.length)

      // Awards name generated procedures; amounts are decimal strings; both scopes occur, one per record.
      const opportunityIds = new Set(opportunities.map((o) => o.sourceRecordId))
      assert.isTrue(awards.every((a) => a.opportunitySourceRecordId !== null && opportunityIds.has(a.opportunitySourceRecordId)))
      assert.isTrue(awards.every((a) => a.amount !== null && /^\d+\.\d{2}$/.test(a.amount)))
      assert.deepStrictEqual(new Set(awards.map((a) => a.amountScope)), new Set(["supplier_contract", "award_group_published_total"]))
      assert.isTrue(awards.every((a) => a.cogPartidas.every((p) => /^\d{5}$/.test(p))))

      // Cross-source joins exist: award supplier RFCs that are also risk-mark subjects and supplier observations.
      const riskRfcs = new Set(risks.flatMap((r) => (r.subjectRfc === null ? [] : [r.subjectRfc])))
      const observed = new Set(supplierRfcs)
      const joined = awards.filter((a) => a.supplierRfc !== null && riskRfcs.has(a.supplierRfc) && observed.has(a.supplierRfc))
      assert.isAbove(joined.length, 0)
      assert.isTrue(risks.some((r) => r.kind === "efos") && risks.some((r) => r.kind === "sancion"))
    }))

  it.effect("follows the profile's distributions", () =>
    Effect.gen(function*() {
      const plan = yield* planFor(11, 0.02)
      const profile = plan.profile
      const suppliers = take(plan, "supplier_observation", 20_000, Generator.supplierAt)
      const topStates = profile.suppliers.states.slice(0, 3).map((s) => s.value)
      assert.include(topStates, mode(suppliers.map((s) => s.stateCode)))
      const opportunities = take(plan, "opportunity", 4_000, Generator.opportunityAt)
      const topTypes = [...profile.procurement.procedureTypes]
        .reduce((acc, w) => acc.set(w.value.type, (acc.get(w.value.type) ?? 0) + w.weight), new Map<string, number>())
      const expected = [...topTypes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0]
      assert.strictEqual(mode(opportunities.map((o) => o.procedureType)), expected)
      const awards = take(plan, "award", 20_000, Generator.awardAt)
      const usd = awards.filter((a) => a.currency === "USD").length / awards.length
      assert.approximately(usd, profile.procurement.amounts.usdShare, 0.01)
      // Median amount close to exp(mu) of the fitted log-normal (MXN).
      const mxn = awards.filter((a) => a.currency === "MXN").map((a) => Number(a.amount)).sort((x, y) => x - y)
      const medianLog = Math.log(mxn[Math.floor(mxn.length / 2)] ?? 1)
      assert.approximately(medianLog, profile.procurement.amounts.MXN.mu, 0.15)
      const risks = take(plan, "risk_mark", 2_000, Generator.riskMarkAt)
      assert.approximately(risks.filter((r) => r.kind === "efos").length / risks.length, profile.risks.efosShare, 0.05)
    }))
})

/**
 * A data directory holding the package's catalogs and the given sample files, built from lines of the real
 * samples (bytes kept: the SFP file is windows-1252), removed afterwards.
 */
const withSamples = <A, E>(
  files: ReadonlyArray<{ readonly path: string; readonly from: string; readonly keep?: (line: string) => boolean }>,
  use: (directory: string) => Effect.Effect<A, E>
) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const directory = await mkdtemp(join(tmpdir(), "generator-samples-"))
      await symlink(DataFiles.path("catalogs"), join(directory, "catalogs"))
      for (const file of files) {
        const content = await readFile(DataFiles.path(file.from), "latin1")
        const [header = "", ...lines] = content.split("\n")
        const keep = file.keep
        const kept = keep === undefined ? content : [header, ...lines.filter((line) => line !== "" && keep(line)), ""].join("\n")
        await mkdir(join(directory, file.path, ".."), { recursive: true })
        await writeFile(join(directory, file.path), Buffer.from(kept, "latin1"))
      }
      return directory
    }),
    use,
    (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
  )

/** Every item a parser streams from a file. */
const parsed = <E>(stream: Stream.Stream<LoadItem, E>): Effect.Effect<ReadonlyArray<LoadItem>> =>
  Effect.map(Effect.orDie(Stream.runCollect(stream)), (items) => [...items])

const sfpResolution = (line: string): string => (line.split(",\t")[5] ?? "").trim()

describe("Generator classifies as the parsers do", () => {
  it.effect("CompraNet 'Servicios Relacionados con la OP' and SFP resolutions: generated rows read as parsed rows", () =>
    withSamples(
      [
        {
          path: "procurement/compranet_fixture.csv",
          from: "procurement/compranet_contratos_2013_sample.csv",
          keep: (line) => line.includes(",Servicios Relacionados con la OP,")
        },
        {
          path: "risks/sfp_fixture.csv",
          from: "risks/sfp_proveedores_contratistas_sancionados_2021-01-14_sample.csv",
          // Resolutions that name neither a fine nor a disqualification (the generator once dropped the empty ones).
          keep: (line) => ["", "SANCIONATORIA"].includes(sfpResolution(line))
        }
      ],
      (directory) =>
        Effect.gen(function*() {
          const compranet = yield* parsed(streamCompranet(join(directory, "procurement/compranet_fixture.csv")))
          const parsedTypes = new Set(compranet.flatMap((i) => (i._tag === "Opportunity" ? [i.record.contractingType] : [])))
          assert.deepStrictEqual([...parsedTypes], ["services"])
          const sfp = yield* parsed(streamSfp(join(directory, "risks/sfp_fixture.csv")))
          const parsedSanctions = new Set(sfp.flatMap((i) => (i._tag === "RiskMark" ? [`${i.record.status}|${i.record.statusText}`] : [])))
          assert.isTrue(parsedSanctions.has("sancion_otra|"), [...parsedSanctions].join(", "))

          const profile = yield* Generator.deriveProfileFrom(directory)
          const plan = yield* Generator.makePlan(profile, { seed: 5, scale: 0.001 })
          const opportunities = take(plan, "opportunity", plan.counts.opportunity, Generator.opportunityAt)
          assert.deepStrictEqual(new Set(opportunities.map((o) => o.contractingType)), parsedTypes)
          const awards = take(plan, "award", 200, Generator.awardAt)
          assert.isTrue(awards.every((a) => a.contractingType === "services"))

          const sanctions = take(plan, "risk_mark", plan.counts.risk_mark, Generator.riskMarkAt).filter((r) => r.kind === "sancion")
          assert.isAbove(sanctions.length, 0)
          for (const mark of sanctions) {
            assert.strictEqual(mark.status, sfpStatusOf(mark.statusText), mark.statusText)
            assert.isTrue(parsedSanctions.has(`${mark.status}|${mark.statusText}`), `${mark.status}|${mark.statusText}`)
          }
          assert.deepStrictEqual(new Set(sanctions.map((m) => `${m.status}|${m.statusText}`)), parsedSanctions)
        })
    ), { timeout: 60_000 })

  it.effect("OCDS: the profile counts the procedures the parser reads, and generated procedures read as parsed ones", () =>
    withSamples(
      [
        { path: "procurement/ocds_gacm_releases.json", from: "procurement/ocds_gacm_naicm_releases_sample.json" },
        { path: "procurement/ocds_jalisco_records.json", from: "procurement/ocds_jalisco_record_packages_sample.json" }
      ],
      (directory) =>
        Effect.gen(function*() {
          const procedures = new Map<string, OpportunityRecord>()
          for (const file of ["procurement/ocds_gacm_releases.json", "procurement/ocds_jalisco_records.json"]) {
            for (const item of yield* parsed(streamOcds(join(directory, file)))) {
              // The last release of an ocid is the one a load keeps.
              if (item._tag === "Opportunity") procedures.set(`${file}|${item.record.sourceRecordId}`, item.record)
            }
          }
          const profile = yield* Generator.deriveProfileFrom(directory)
          const counted = profile.procurement.statuses.reduce((sum, s) => sum + s.weight, 0)
          assert.strictEqual(counted, procedures.size)
          const parsedTypes = new Set([...procedures.values()].map((o) => `${o.procedureType}|${o.procedureTypeText}`))
          assert.deepStrictEqual(new Set(profile.procurement.procedureTypes.map((p) => `${p.value.type}|${p.value.text}`)), parsedTypes)
          assert.deepStrictEqual(
            new Set(profile.procurement.statuses.map((s) => s.value.statusText)),
            new Set([...procedures.values()].map((o) => o.statusText))
          )

          const plan = yield* Generator.makePlan(profile, { seed: 9, scale: 0.001 })
          for (const o of take(plan, "opportunity", plan.counts.opportunity, Generator.opportunityAt)) {
            assert.isTrue(parsedTypes.has(`${o.procedureType}|${o.procedureTypeText}`))
            // Awards are generated for awarded procedures; every other one reads as the parser reads it.
            if (o.actionability === "awarded") continue
            const read = ocdsActionability({
              status: o.statusText,
              awarded: 0,
              signedContracts: 0,
              unsuccessful: false,
              tenderStart: o.tenderStartOn,
              tenderEnd: o.tenderEndOn,
              loadDate: plan.retrievedOn
            })
            assert.deepStrictEqual([o.actionability, o.isOpen], [read.actionability, read.isOpen], o.sourceRecordId)
          }
        })
    ), { timeout: 60_000 })
})

const scale = 0.0005

for (const target of TestDatabase.targets()) {
  const Db = TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])
  const Services = WarehouseLayer.layer.pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(Db))

  layer(Services, { timeout: "120 seconds" })(`Generator on ${target.name}`, (it) => {
    it.effect("loads a small corpus through the load path and publishes it", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        const sql = yield* SqlClient.SqlClient
        const snapshotId = yield* corpus.beginSnapshot({ base: "empty" })
        const progress = new Map<RecordKind, Array<{ readonly rows: number; readonly total: number }>>()
        const result = yield* Generator.generate({
          scale,
          seed: 3,
          snapshotId,
          batchSize: 400,
          onProgress: ({ kind, rows, total }) =>
            Effect.sync(() => progress.set(kind, [...(progress.get(kind) ?? []), { rows, total }]))
        })
        const counts = Generator.countsFor(scale)
        assert.deepStrictEqual(result.counts, counts)
        // Progress counts records and ends at the kind's total (it once stopped at half of it).
        for (const kind of Generator.loadOrder) {
          const reported = progress.get(kind) ?? []
          assert.isAtLeast(reported.length, 1, kind)
          assert.deepStrictEqual(reported[reported.length - 1], { rows: counts[kind], total: counts[kind] }, kind)
        }
        for (const load of result.loads) {
          assert.strictEqual(load.report.accepted, counts[load.kind])
          assert.strictEqual(load.report.rejected, 0)
          assert.strictEqual(load.report.inserted, counts[load.kind])
        }
        yield* corpus.publish(snapshotId)
        const count = (table: string) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(`market.${table}`)} WHERE snapshot_id = ${snapshotId}`
            .pipe(Effect.map((rows) => rows[0]?.n ?? -1))
        assert.strictEqual(yield* count("supplier_observations"), counts.supplier_observation)
        assert.strictEqual(yield* count("opportunities"), counts.opportunity)
        assert.strictEqual(yield* count("awards"), counts.award)
        assert.strictEqual(yield* count("risk_marks"), counts.risk_mark)
        assert.strictEqual(yield* count("permits"), counts.permit)
        // Every award names a generated procedure, and publishing counted them per procedure.
        const unlinked = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards a
          WHERE a.snapshot_id = ${snapshotId} AND NOT EXISTS (
            SELECT 1 FROM market.opportunities o WHERE o.snapshot_id = a.snapshot_id AND o.source_slug = a.source_slug
              AND o.source_record_id = a.opportunity_source_record_id)`
        assert.strictEqual(unlinked[0]?.n, 0)
        const counted = yield* sql<{ n: number }>`SELECT coalesce(sum(award_count), 0)::int AS n FROM market.opportunities
          WHERE snapshot_id = ${snapshotId}`
        assert.strictEqual(counted[0]?.n, counts.award)
        const joined = yield* sql<{ n: number }>`SELECT count(DISTINCT a.supplier_rfc)::int AS n FROM market.awards a
          JOIN market.risk_marks r ON r.snapshot_id = a.snapshot_id AND r.subject_rfc = a.supplier_rfc
          JOIN market.supplier_observations s ON s.snapshot_id = a.snapshot_id AND s.rfc = a.supplier_rfc
          WHERE a.snapshot_id = ${snapshotId}`
        assert.isAbove(joined[0]?.n ?? 0, 0)
        // Loading the same seed again rewrites the same rows: nothing new.
        const again = yield* corpus.beginSnapshot({ base: "active" })
        const second = yield* Generator.generate({ scale, seed: 3, snapshotId: again, kinds: ["permit"] })
        assert.strictEqual(second.loads[0]?.report.inserted, 0)
      }))
  })
}
