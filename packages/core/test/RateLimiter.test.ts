import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { Accounts } from "../src/Accounts.js"
import * as CoreBundle from "../src/CoreBundle.js"
import { WorkspaceSlug } from "../src/Ids.js"
import * as RateLimiter from "../src/RateLimiter.js"

for (const target of TestDatabase.parityTargets()) {
  const Db = TestDatabase.withMigrations(target, CoreBundle.bundle.migrations)
  const Env = CoreBundle.bundle.layer.pipe(Layer.provideMerge(Db))
  // A node's limiter of 3 calls a minute, made after the test set its clock, written only when a test says so.
  const node = RateLimiter.makeSql(3, { flushEvery: "1 hour" })

  /** The window's stored count for a key. */
  const stored = (key: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(
        sql<{ calls: number }>`SELECT calls FROM core.rate_windows WHERE workspace_id = ${key}`,
        (rows) => rows.reduce((sum, row) => sum + row.calls, 0)
      )).pipe(Effect.orDie)

  layer(Env, { timeout: "120 seconds" })(`RateLimiter on ${target.name}`, (it) => {
    it.scoped("allows the limit per minute per workspace, refuses the next with the wait, and opens a new window", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const a = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("rate-a"), name: "A" })
        const b = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("rate-b"), name: "B" })
        yield* TestClock.setTime(Date.UTC(2026, 0, 1, 12, 0, 15))
        const limiter = yield* node
        for (let i = 0; i < 3; i++) yield* limiter.consume(a.id)
        const refused = yield* Effect.either(limiter.consume(a.id))
        assert.isTrue(Either.isLeft(refused))
        if (Either.isLeft(refused)) {
          assert.strictEqual(refused.left.limit, 3)
          assert.strictEqual(refused.left.retryAfterSeconds, 45)
        }
        // Another workspace has its own window.
        yield* limiter.consume(b.id)
        // Counted in memory: nothing is written until the flush, which writes every key in one go.
        assert.strictEqual(yield* stored(a.id), 0)
        yield* limiter.flush
        assert.strictEqual(yield* stored(a.id), 3)
        assert.strictEqual(yield* stored(b.id), 1)
        yield* TestClock.adjust("45 seconds")
        yield* limiter.consume(a.id)
        // The next window's first write deletes the windows before it.
        yield* limiter.flush
        assert.strictEqual(yield* stored(a.id), 1)
        assert.strictEqual(yield* stored(b.id), 0)
      }))

    it.scoped("two nodes share one budget: each learns the other's calls at its next write", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.UTC(2026, 0, 1, 13, 0, 0))
        const key = "shared-key"
        // Two nodes on the same table.
        const one = yield* node
        const two = yield* node
        yield* one.consume(key)
        yield* one.consume(key)
        yield* one.flush
        // Node two has not read the total yet: its call is admitted (the overshoot the bound allows) ...
        yield* two.consume(key)
        yield* two.flush
        assert.strictEqual(yield* stored(key), 3)
        // ... and from its write on it knows the window is full.
        assert.isTrue(Either.isLeft(yield* Effect.either(two.consume(key))))
        // Node one still admits one call of its own (it read 2), then learns the total of 4 and refuses.
        yield* one.consume(key)
        yield* one.flush
        assert.strictEqual(yield* stored(key), 4)
        assert.isTrue(Either.isLeft(yield* Effect.either(one.consume(key))))
      }))
  })
}
