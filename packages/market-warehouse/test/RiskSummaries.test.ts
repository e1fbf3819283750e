import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { Corpus, SourceDefinition } from "../src/Corpus.js"
import { RiskStatus } from "../src/internal/records.js"
import * as MarketMigrations from "../src/MarketMigrations.js"
import { exonerationStatuses, isActiveStatus } from "../src/RiskStatus.js"
import * as WarehouseLayer from "../src/WarehouseLayer.js"

const sources = [
  { slug: "test_sat", licensedForDisplay: true },
  { slug: "test_sfp", licensedForDisplay: true },
  { slug: "test_private", licensedForDisplay: false }
].map(({ licensedForDisplay, slug }) =>
  new SourceDefinition({
    slug,
    label: slug,
    publisher: `Publisher of ${slug}`,
    licence: "test",
    licensedForDisplay,
    evidenceCategory: "administrative_risk"
  })
)

interface Mark {
  readonly source: string
  readonly id: string
  readonly kind: "efos" | "sancion"
  readonly rfc: string | null
  readonly status: typeof RiskStatus.Type
}

const insertMarks = (snapshotId: string, marks: ReadonlyArray<Mark>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO market.risk_marks ${
      sql.insert(marks.map((m) => ({
        snapshot_id: snapshotId,
        source_slug: m.source,
        source_record_id: m.id,
        retrieved_on: "2026-01-31",
        fingerprint: `fp_${m.id}`,
        kind: m.kind,
        legal_basis: m.kind === "efos" ? "art_69b" : "sfp_directory",
        subject_rfc: m.rfc,
        subject_name: `Party ${m.id}`,
        subject_name_norm: `party ${m.id}`,
        status: m.status,
        status_text: m.status
      })))
    }`)

const Summary = Schema.Struct({
  rfc: Schema.String,
  mark_count: Schema.Number,
  kinds: Schema.Array(Schema.String),
  any_active: Schema.Boolean,
  has_exoneration: Schema.Boolean
})

const summaries = (snapshotId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT rfc, mark_count, kinds, any_active, has_exoneration FROM market.risk_summaries
      WHERE snapshot_id = ${snapshotId} ORDER BY rfc`.pipe(Effect.flatMap(Schema.decodeUnknown(Schema.Array(Summary)))))

for (const target of TestDatabase.targets()) {
  const Env = WarehouseLayer.layer.pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations]))
  )

  layer(Env, { timeout: "120 seconds" })(`risk summaries on ${target.name}`, (it) => {
    it("one definition of an exoneration: every listed status is active exactly when it is not one", () => {
      for (const status of RiskStatus.literals) {
        assert.strictEqual(isActiveStatus(status), !exonerationStatuses.some((e) => e === status), status)
      }
      assert.deepStrictEqual([...exonerationStatuses].sort(), ["desvirtuado", "sentencia_favorable"])
    })

    it.effect("publish summarizes each RFC's displayable marks; republishing a copy recomputes them", () =>
      Effect.gen(function*() {
        const corpus = yield* Corpus
        yield* Effect.forEach(sources, corpus.registerSource, { discard: true })
        const first = yield* corpus.beginSnapshot({ base: "empty" })
        yield* insertMarks(first, [
          // Listed, then the presumption refuted: in force and exonerated at once.
          { source: "test_sat", id: "a1", kind: "efos", rfc: "AAA010101AAA", status: "definitivo" },
          { source: "test_sat", id: "a2", kind: "efos", rfc: "AAA010101AAA", status: "desvirtuado" },
          // Two kinds; the mark of the source not licensed for display does not count.
          { source: "test_sfp", id: "b1", kind: "sancion", rfc: "BBB010101BBB", status: "sancion_multa" },
          { source: "test_sat", id: "b2", kind: "efos", rfc: "BBB010101BBB", status: "presunto" },
          { source: "test_private", id: "b3", kind: "efos", rfc: "BBB010101BBB", status: "definitivo" },
          { source: "test_sat", id: "c1", kind: "efos", rfc: "CCC010101CCC", status: "sentencia_favorable" },
          // Only an unlicensed mark, and a mark without an RFC: no summary.
          { source: "test_private", id: "d1", kind: "sancion", rfc: "DDD010101DDD", status: "sancion_otra" },
          { source: "test_sfp", id: "e1", kind: "sancion", rfc: null, status: "sancion_inhabilitacion" }
        ])
        yield* corpus.publish(first)
        assert.deepStrictEqual(yield* summaries(first), [
          { rfc: "AAA010101AAA", mark_count: 2, kinds: ["efos"], any_active: true, has_exoneration: true },
          { rfc: "BBB010101BBB", mark_count: 2, kinds: ["efos", "sancion"], any_active: true, has_exoneration: false },
          { rfc: "CCC010101CCC", mark_count: 1, kinds: ["efos"], any_active: false, has_exoneration: true }
        ])

        // A copy of the active publication starts without summaries; its publish computes them from its own marks.
        const second = yield* corpus.beginSnapshot()
        assert.deepStrictEqual(yield* summaries(second), [])
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM market.risk_marks WHERE snapshot_id = ${second} AND source_record_id = 'a2'`
        yield* insertMarks(second, [
          { source: "test_sfp", id: "c2", kind: "sancion", rfc: "CCC010101CCC", status: "sancion_inhabilitacion" },
          { source: "test_sat", id: "f1", kind: "efos", rfc: "FFF010101FFF", status: "presunto" }
        ])
        yield* corpus.publish(second)
        assert.deepStrictEqual(yield* summaries(second), [
          { rfc: "AAA010101AAA", mark_count: 1, kinds: ["efos"], any_active: true, has_exoneration: false },
          { rfc: "BBB010101BBB", mark_count: 2, kinds: ["efos", "sancion"], any_active: true, has_exoneration: false },
          { rfc: "CCC010101CCC", mark_count: 2, kinds: ["efos", "sancion"], any_active: true, has_exoneration: true },
          { rfc: "FFF010101FFF", mark_count: 1, kinds: ["efos"], any_active: true, has_exoneration: false }
        ])
        // The retired publication's summaries go with its rows.
        assert.deepStrictEqual(yield* summaries(first), [])
      }))
  })
}
