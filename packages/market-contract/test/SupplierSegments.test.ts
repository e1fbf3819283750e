import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as CoreMigrations from "@service/core/CoreMigrations"
import * as Leaks from "@service/core/Leaks"
import * as RequestContext from "@service/core/RequestContext"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import type * as Database from "@service/storage/Database"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as MarketLayer from "../src/MarketLayer.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import { forbiddenValues } from "../src/ProjectionAudit.js"
import { countSuppliers } from "../src/SupplierCount.js"
import { compareSegments, CompareSegmentsInput, observedKinds } from "../src/SupplierSegments.js"
import * as Suppliers from "../src/Suppliers.js"

const refusal = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.flip(effect), (r) => r)

const segments = [{ id: "mining", query: "minera" }, { id: "quarry", query: "cantera" }]
const geographies = [{ id: "zac", state: "Zacatecas" }, { id: "son", state: "Sonora" }, { id: "cdmx", state: "CDMX" }]

for (const target of TestDatabase.targets()) {
  const services = (database: Layer.Layer<Database.DatabaseServices>) =>
    Layer.mergeAll(MarketLayer.layer, RequestContext.layerTest).pipe(Layer.provideMerge(Crypto.layerTest), Layer.provideMerge(database))

  layer(services(TestDatabase.withMigrations(target, [CoreMigrations.migrations, MarketMigrations.migrations])))(
    `compare_segments before a publication on ${target.name}`,
    (it) => {
      it.effect("refuses before anything is published", () =>
        Effect.gen(function*() {
          const r = yield* refusal(compareSegments({ segments, geographies, observed_kind: "supplier_observation" }))
          assert.strictEqual(r.semanticCode, "serving_projection_unavailable")
        }))
    }
  )

  layer(services(TestDatabase.prepared(target, DemoSnapshot.market)), { timeout: "180 seconds" })(`compare_segments on ${target.name}`, (it) => {
    it.effect("counts every cell exactly as count_suppliers counts it, and the contact breakdown like for like", () =>
      Effect.gen(function*() {
        const envelope = yield* compareSegments({ segments, geographies, observed_kind: "supplier_observation", contact_breakdown: true })
        assert.strictEqual(envelope.operation, "compare_segments")
        assert.isNull(envelope.page)
        assert.include(envelope.semanticWarnings.map((w) => w.code), "observation_not_company")
        const cells = envelope.results.cells
        assert.deepStrictEqual(
          cells.map((c) => `${c.segment_id}/${c.geography_id}`),
          ["mining/zac", "mining/son", "mining/cdmx", "quarry/zac", "quarry/son", "quarry/cdmx"]
        )
        assert.isTrue(cells.some((c) => c.count > 0))
        for (const cell of cells) {
          const segment = segments.find((s) => s.id === cell.segment_id)
          const expected = yield* countSuppliers({ query: segment?.query ?? "", state: cell.state.code })
          assert.strictEqual(cell.count, expected.results.count, `${cell.segment_id}/${cell.geography_id}`)
          // Like for like: the same observations, those with at least one published channel.
          let withChannel = 0
          let cursor: string | undefined
          do {
            const page = yield* Suppliers.searchSuppliers({
              query: segment?.query ?? "",
              state: cell.state.code,
              limit: 50,
              ...(cursor === undefined ? {} : { cursor })
            })
            withChannel += page.results.filter((row) => row.contact_presence.channel_count > 0).length
            cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
          } while (cursor !== undefined)
          assert.strictEqual(cell.with_contact_channel, withChannel)
        }
        // CDMX is an alias: the interpreted request says what it resolved to.
        assert.isTrue(envelope.interpretedRequest.normalizations.some((n) => n.field === "geographies.cdmx.state"))
        assert.strictEqual(envelope.diagnostics.rowsExamined, cells.reduce((sum, c) => sum + c.count, 0))
        assert.deepStrictEqual(Leaks.find([JSON.stringify(envelope)], yield* forbiddenValues)[0], [], "a response leaked a forbidden value")
      }), 0)

    it.effect("counts opportunities and awards from their own tables; without contact_breakdown no contact count", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        for (const kind of ["opportunity", "award"] as const) {
          const table = kind === "opportunity" ? "market.opportunities" : "market.awards"
          const top = yield* sql<{ state_code: string }>`
            SELECT state_code FROM ${sql.literal(table)} WHERE state_code IS NOT NULL
            GROUP BY state_code ORDER BY count(*) DESC, state_code LIMIT 1`
          const state = top[0]?.state_code ?? "09"
          const envelope = yield* compareSegments({
            segments: [{ id: "services", query: "servicio" }],
            geographies: [{ id: "g", state }],
            observed_kind: kind
          })
          const expected = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM ${sql.literal(table)} o
            WHERE o.snapshot_id = (SELECT id FROM market.snapshots WHERE status = 'active')
              AND o.source_slug IN (SELECT slug FROM market.sources WHERE licensed_for_display)
              AND o.state_code = ${state} AND o.search_tsv @@ plainto_tsquery('market.es', 'servicio')`
          assert.strictEqual(envelope.results.cells[0]?.count, expected[0]?.n ?? -1, kind)
          assert.isUndefined(envelope.results.cells[0]?.with_contact_channel)
          assert.strictEqual(envelope.coverage[0]?.evidenceCategory, "government_contracting")
        }
      }))

    it.effect("refuses observed kinds it cannot count with invalid_observed_kind and the allowed values", () =>
      Effect.gen(function*() {
        for (const observed_kind of ["risk_mark", "permit", "company", ""]) {
          const r = yield* refusal(compareSegments({ segments, geographies, observed_kind }))
          assert.strictEqual(r.semanticCode, "invalid_observed_kind")
          assert.deepStrictEqual(r.allowedValues, observedKinds)
          assert.strictEqual(r.recoveryAction, "fix_arguments")
        }
      }))

    it.effect("refuses contact_breakdown outside suppliers, duplicate ids, unknown states and wordless segments", () =>
      Effect.gen(function*() {
        const breakdown = yield* refusal(compareSegments({ segments, geographies, observed_kind: "award", contact_breakdown: true }))
        assert.strictEqual(breakdown.semanticCode, "invalid_field_value")
        assert.strictEqual(breakdown.field, "contact_breakdown")
        const duplicate = yield* refusal(compareSegments({
          segments: [{ id: "a", query: "minera" }, { id: "a", query: "cantera" }],
          geographies,
          observed_kind: "supplier_observation"
        }))
        assert.strictEqual(duplicate.field, "segments")
        const unknown = yield* refusal(compareSegments({
          segments,
          geographies: [{ id: "x", state: "Narnia" }],
          observed_kind: "supplier_observation"
        }))
        assert.strictEqual(unknown.semanticCode, "unknown_state")
        const wordless = yield* refusal(compareSegments({
          segments: [{ id: "a", query: "de la" }],
          geographies,
          observed_kind: "supplier_observation"
        }))
        assert.strictEqual(wordless.semanticCode, "invalid_field_value")
      }))

    it("bounds segments at 5 and geographies at 10 in the schema (so at most 50 cells), refused before any read", () => {
      const many = (n: number, make: (i: number) => unknown) => Array.from({ length: n }, (_, i) => make(i))
      const decode = Schema.decodeUnknownEither(CompareSegmentsInput)
      const ok = decode({
        segments: many(5, (i) => ({ id: `s${i}`, query: "minera" })),
        geographies: many(10, (i) => ({ id: `g${i}`, state: "Zacatecas" })),
        observed_kind: "supplier_observation"
      })
      assert.isTrue(Either.isRight(ok))
      assert.isTrue(Either.isLeft(decode({
        segments: many(6, (i) => ({ id: `s${i}`, query: "minera" })),
        geographies: [{ id: "g", state: "Zacatecas" }],
        observed_kind: "supplier_observation"
      })))
      assert.isTrue(Either.isLeft(decode({
        segments: [{ id: "s", query: "minera" }],
        geographies: many(11, (i) => ({ id: `g${i}`, state: "Zacatecas" })),
        observed_kind: "supplier_observation"
      })))
      assert.isTrue(Either.isLeft(decode({ segments: [], geographies: [{ id: "g", state: "Zacatecas" }], observed_kind: "award" })))
      assert.isTrue(Either.isLeft(decode({ segments, geographies })), "observed_kind is required")
    })
  })
}
