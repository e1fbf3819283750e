import { assert, layer } from "@effect/vitest"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { Accounts } from "../src/Accounts.js"
import * as CoreBundle from "../src/CoreBundle.js"
import { WorkspaceSlug } from "../src/Ids.js"
import * as RateLimiter from "../src/RateLimiter.js"

for (const target of TestDatabase.targets()) {
  const Db = TestDatabase.withMigrations(target, CoreBundle.bundle.migrations)
  const Env = Layer.effect(RateLimiter.RateLimiter, RateLimiter.makeSql(3)).pipe(
    Layer.provideMerge(CoreBundle.bundle.layer),
    Layer.provideMerge(Db)
  )

  layer(Env, { timeout: "120 seconds" })(`RateLimiter on ${target.name}`, (it) => {
    it.effect("allows the limit per minute per workspace, refuses the next with the wait, and opens a new window", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const a = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("rate-a"), name: "A" })
        const b = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("rate-b"), name: "B" })
        const limiter = yield* RateLimiter.RateLimiter
        yield* TestClock.setTime(Date.UTC(2026, 0, 1, 12, 0, 15))
        for (let i = 0; i < 3; i++) yield* limiter.consume(a.id)
        const refused = yield* Effect.either(limiter.consume(a.id))
        assert.isTrue(Either.isLeft(refused))
        if (Either.isLeft(refused)) {
          assert.strictEqual(refused.left.limit, 3)
          assert.strictEqual(refused.left.retryAfterSeconds, 45)
        }
        // Another workspace has its own window.
        yield* limiter.consume(b.id)
        yield* TestClock.adjust("45 seconds")
        yield* limiter.consume(a.id)
      }))
  })
}
