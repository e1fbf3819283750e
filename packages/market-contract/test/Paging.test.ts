import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { openRecordRef, sealRecordRef } from "../src/internal/refs.js"
import type { MarketDataRefusal } from "../src/MarketError.js"
import * as Paging from "../src/Paging.js"

const Row = Schema.Struct({ id: Schema.String, score: Schema.Number, name: Schema.String })
const decodeRows = Schema.decodeUnknown(Schema.Array(Row))

const request: Paging.PageRequest = { operation: "test_op", snapshotId: "snap_a", filterDigest: "filters_a" }

const code = <A, R>(effect: Effect.Effect<A, MarketDataRefusal, R>) =>
  Effect.map(Effect.flip(effect), (refusal) => refusal.semanticCode)

for (const target of TestDatabase.targets()) {
  layer(Layer.merge(TestDatabase.withMigrations(target, []), Crypto.layerTest), { timeout: "120 seconds" })(
    `Paging on ${target.name}`,
    (it) => {
      it.effect("walks every row exactly once in key order, with mixed directions and ties, limit + 1 deciding hasMore", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`CREATE TEMP TABLE paging_rows (id bigint PRIMARY KEY, score float8 NOT NULL, name text NOT NULL)`
          // 23 rows with many ties on score and on name, so the id key must break them.
          for (let i = 1; i <= 23; i++) {
            yield* sql`INSERT INTO paging_rows VALUES (${i}, ${(i * 7) % 4 / 3}, ${`n${i % 3}`})`
          }
          // Qualified names: a bare `id` in ORDER BY would name the text output column, not the bigint.
          const orders: ReadonlyArray<ReadonlyArray<Paging.Key>> = [
            [
              { expression: sql`paging_rows.score`, direction: "desc", type: "float8" },
              { expression: sql`paging_rows.id`, direction: "asc", type: "bigint" }
            ],
            [
              { expression: sql`paging_rows.name`, direction: "asc", type: "text" },
              { expression: sql`paging_rows.id`, direction: "asc", type: "bigint" }
            ],
            [
              { expression: sql`paging_rows.name`, direction: "desc", type: "text" },
              { expression: sql`paging_rows.score`, direction: "asc", type: "float8" },
              { expression: sql`paging_rows.id`, direction: "desc", type: "bigint" }
            ]
          ]
          for (const keys of orders) {
            const all = yield* sql`SELECT id::text AS id, score, name FROM paging_rows ORDER BY ${Paging.orderBy(sql, keys)}`
              .pipe(Effect.flatMap(decodeRows))
            const walked: Array<string> = []
            let cursor: string | undefined
            let pages = 0
            for (;;) {
              const position = yield* Paging.resume(cursor, request)
              const fetched = yield* sql`
                SELECT id::text AS id, score, name FROM paging_rows
                WHERE ${sql.and([sql`TRUE`, ...Paging.after(sql, keys, position)])}
                ORDER BY ${Paging.orderBy(sql, keys)} LIMIT ${5 + 1}`.pipe(Effect.flatMap(decodeRows))
              const { page, rows } = yield* Paging.finish(fetched, {
                limit: 5,
                request,
                positionOf: (row) => keys.map((key) => (key.type === "bigint" ? row.id : key.type === "float8" ? row.score : row.name))
              })
              pages += 1
              walked.push(...rows.map((r) => r.id))
              assert.strictEqual(page.returned, rows.length)
              if (!page.hasMore) {
                assert.isNull(page.nextCursor)
                break
              }
              assert.isString(page.nextCursor)
              cursor = page.nextCursor ?? undefined
            }
            assert.deepStrictEqual(walked, all.map((r) => r.id), `order ${orders.indexOf(keys)}`)
            // 23 rows in pages of 5: the fifth page holds 3 and says there is no more.
            assert.strictEqual(pages, 5)
          }
        }))

      it.effect("a full last page reports hasMore false: the extra row decides, not returned === limit", () =>
        Effect.gen(function*() {
          const exact = yield* Paging.finish([1, 2, 3], { limit: 3, request, positionOf: (n) => [n] })
          assert.isFalse(exact.page.hasMore)
          assert.isNull(exact.page.nextCursor)
          const more = yield* Paging.finish([1, 2, 3, 4], { limit: 3, request, positionOf: (n) => [n] })
          assert.deepStrictEqual(more.rows, [1, 2, 3])
          assert.isTrue(more.page.hasMore)
          const resumed = yield* Paging.resume(more.page.nextCursor ?? undefined, request)
          assert.deepStrictEqual(Option.getOrNull(resumed), [3])
        }))

      it.effect("refuses a cursor from other filters or another operation (invalid_cursor), another snapshot (cursor_stale), or altered", () =>
        Effect.gen(function*() {
          const cursor = yield* Paging.seal(request, ["x", 1])
          assert.strictEqual(yield* code(Paging.resume(cursor, { ...request, filterDigest: "filters_b" })), "invalid_cursor")
          assert.strictEqual(yield* code(Paging.resume(cursor, { ...request, operation: "other_op" })), "invalid_cursor")
          assert.strictEqual(yield* code(Paging.resume(cursor, { ...request, snapshotId: "snap_b" })), "cursor_stale")
          const altered = `${cursor.slice(0, 20)}${cursor[20] === "A" ? "B" : "A"}${cursor.slice(21)}`
          assert.strictEqual(yield* code(Paging.resume(altered, request)), "invalid_cursor")
          assert.strictEqual(yield* code(Paging.resume("not a cursor", request)), "invalid_cursor")
          const ref = yield* sealRecordRef({ kind: "supplier", id: "7", fingerprint: "0123456789abcdef0123456789abcdef" })
          assert.strictEqual(yield* code(Paging.resume(ref, request)), "invalid_cursor")
        }))

      it.effect("record refs are short, open only for their own kind, and carry id and fingerprint", () =>
        Effect.gen(function*() {
          const payload = { kind: "award", id: "1234567890", fingerprint: "0123456789abcdef0123456789abcdef" } as const
          const ref = yield* sealRecordRef(payload)
          assert.isAtMost(ref.length, 100)
          assert.notStrictEqual(ref, yield* sealRecordRef(payload))
          assert.deepStrictEqual(yield* openRecordRef(ref, "award"), payload)
          const other = yield* Effect.flip(openRecordRef(ref, "supplier"))
          assert.strictEqual(other.semanticCode, "invalid_record_ref")
          assert.include(other.why, "award")
          const cursor = yield* Paging.seal(request, [1])
          assert.strictEqual(yield* code(openRecordRef(cursor, "award")), "invalid_record_ref")
        }))
    }
  )
}
