import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as DemoCorpus from "../src/DemoCorpus.js"
import type { LoadReport } from "../src/Loader.js"
import * as MarketMigrations from "../src/MarketMigrations.js"
import * as WarehouseLayer from "../src/WarehouseLayer.js"
import { type Publication, WarehouseReader } from "../src/WarehouseReader.js"

class Loaded extends Context.Tag("Loaded")<Loaded, {
  readonly publication: Publication
  readonly reports: ReadonlyArray<LoadReport>
}>() {}

for (const target of TestDatabase.targets()) {
  const Env = Layer.effect(Loaded, Effect.orDie(DemoCorpus.loadAndPublish)).pipe(
    Layer.provideMerge(WarehouseLayer.layer),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )

  layer(Env, { timeout: "180 seconds" })(`the demo corpus on ${target.name}`, (it) => {
    it.effect("keeps the cross-source link: GTA140724H10 is an OCDS awardee and on the SAT 69-B list", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const awards = yield* sql<{ source_slug: string }>`SELECT source_slug FROM market.awards WHERE supplier_rfc = 'GTA140724H10'`
        assert.isAbove(awards.length, 0)
        assert.isTrue(awards.every((a) => a.source_slug === "ocds_gacm"))
        const marks = yield* sql<{ kind: string; status: string }>`SELECT kind, status FROM market.risk_marks WHERE subject_rfc = 'GTA140724H10'`
        assert.deepStrictEqual(marks.map((m) => [m.kind, m.status]), [["efos", "definitivo"]])
      }))

    it.effect("loads a published MNX amount as MXN and reports the mapping", () =>
      Effect.gen(function*() {
        const { reports } = yield* Loaded
        const mappings = reports.flatMap((r) => r.currencyMappings)
        assert.deepInclude(mappings, { reported: "MNX", code: "MXN", count: 1 })
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ currency: string; amount: string }>`SELECT currency, amount::text AS amount FROM market.awards WHERE currency_reported = 'MNX'`
        assert.strictEqual(rows.length, 1)
        assert.strictEqual(rows[0]?.currency, "MXN")
        assert.match(rows[0]?.amount ?? "", /^\d+(\.\d+)?$/)
      }))

    it.effect("a 69-B desvirtuado row is a mark with that status, not a conviction", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ n: number; legal_basis: string }>`SELECT count(*)::int AS n, min(legal_basis) AS legal_basis
          FROM market.risk_marks WHERE status = 'desvirtuado' AND kind = 'efos'`
        assert.strictEqual(rows[0]?.n, 176)
        assert.strictEqual(rows[0]?.legal_basis, "art_69b")
        const bis = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.risk_marks WHERE legal_basis = 'art_69b_bis'`
        assert.strictEqual(bis[0]?.n, 2)
      }))

    it.effect("links awards to their procedures and derives load-time actionability", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const linked = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities WHERE award_count > 0`
        assert.isAbove(linked[0]?.n ?? 0, 100)
        // Every award that names its procedure finds it in the same source, and the counts agree.
        const orphans = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.awards a
          WHERE a.opportunity_source_record_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM market.opportunities o WHERE o.snapshot_id = a.snapshot_id AND o.source_slug = a.source_slug
              AND o.source_record_id = a.opportunity_source_record_id)`
        assert.strictEqual(orphans[0]?.n, 0)
        const counted = yield* sql<{ awards: number; total: number }>`SELECT
          (SELECT count(*)::int FROM market.awards WHERE opportunity_source_record_id IS NOT NULL) AS awards,
          (SELECT sum(award_count)::int FROM market.opportunities) AS total`
        assert.strictEqual(counted[0]?.total, counted[0]?.awards)
        const reasons = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.opportunities WHERE actionability_reason = ''`
        assert.strictEqual(reasons[0]?.n, 0)
        const scopes = yield* sql<{ amount_scope: string }>`SELECT DISTINCT amount_scope FROM market.awards`
        assert.deepStrictEqual(scopes.map((s) => s.amount_scope), ["supplier_contract"])
      }))

    it.effect("CompraNet suppliers also named in the SFP sanctions directory (name match)", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ supplier_name_norm: string }>`SELECT DISTINCT a.supplier_name_norm FROM market.awards a
          JOIN market.risk_marks r ON r.kind = 'sancion' AND r.subject_name_norm = a.supplier_name_norm
          WHERE a.source_slug = 'compranet'`
        assert.isAbove(rows.length, 0)
        assert.isTrue(rows.some((r) => r.supplier_name_norm.includes("alvarga")), JSON.stringify(rows))
      }))

    it.effect("publishes coverage for all four evidence categories, each with visible rows", () =>
      Effect.gen(function*() {
        const { publication } = yield* Loaded
        const reader = yield* WarehouseReader
        assert.deepStrictEqual(yield* reader.active, Option.some(publication))
        const visible: Record<string, number> = {}
        for (const row of yield* reader.coverage(publication.snapshotId)) {
          visible[row.evidenceCategory] = (visible[row.evidenceCategory] ?? 0) + row.visibleRows
        }
        for (const category of ["supplier_or_organization_evidence", "government_contracting", "administrative_risk", "authorization_or_permit"]) {
          assert.isAbove(visible[category] ?? 0, 0, category)
        }
        const permits = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ active: number; terminated: number }>`SELECT count(*) FILTER (WHERE is_active_risk)::int AS active,
            count(*) FILTER (WHERE is_terminated)::int AS terminated FROM market.permits`)
        assert.isAbove(permits[0]?.active ?? 0, 0)
        assert.strictEqual(permits[0]?.terminated, 359)
      }))

    it.effect("reads a snapshot's coverage once and holds it (it never changes after publish)", () =>
      Effect.gen(function*() {
        const { publication } = yield* Loaded
        const reader = yield* WarehouseReader
        const sql = yield* SqlClient.SqlClient
        const first = yield* reader.coverage(publication.snapshotId)
        assert.isAbove(first.length, 0)
        // Were it read again, the envelope would now declare nothing.
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM market.coverage WHERE snapshot_id = ${publication.snapshotId}`
          assert.deepStrictEqual(yield* reader.coverage(publication.snapshotId), first)
          return yield* Effect.fail("rolled back")
        })).pipe(Effect.ignore)
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM market.coverage WHERE snapshot_id = ${publication.snapshotId}`
        assert.strictEqual(stored[0]?.n, first.length)
      }))
  })
}
