import { assert, describe, it } from "@effect/vitest"
import * as StorageNotifications from "@service/storage/Notifications"
import { Notifications } from "../src/Notifications.js"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { Unauthenticated } from "../src/AuthError.js"
import type { PresentedCredential } from "../src/Authenticator.js"
import * as CredentialCache from "../src/CredentialCache.js"
import { CredentialId, WorkspaceId, WorkspaceSlug } from "../src/Ids.js"
import { Principal } from "../src/Principal.js"
import { Workspace } from "../src/Workspace.js"

const principal = new Principal({
  workspace: new Workspace({ id: WorkspaceId.make("ws_1"), slug: WorkspaceSlug.make("acme"), name: "Acme", testOf: null }),
  person: Option.none(),
  role: "member",
  scopes: ["market_data:read"],
  credential: { id: CredentialId.make("key_1"), kind: "api_key" }
})
const key = (secret: string, more: Partial<PresentedCredential> = {}): PresentedCredential => ({
  kind: "api_key",
  secret: Redacted.make(secret),
  ...more
})

// A cache over this process's signals only, and a lookup that counts how often it runs.
const setup = (seconds: number) =>
  Effect.gen(function*() {
    const notifications = StorageNotifications.localOnly()
    const cache = yield* CredentialCache.make({ seconds }).pipe(Effect.provideService(Notifications, notifications))
    let lookups = 0
    const lookup = (valid = true, until: Date | null = null) =>
      Effect.suspend(() => {
        lookups++
        return valid ? Effect.as(CredentialCache.validUntil(until), principal) : new Unauthenticated()
      })
    const changed = CredentialCache.signalChanged("test").pipe(Effect.provideService(Notifications, notifications))
    return { cache, lookup, lookups: () => lookups, changed }
  })

describe("CredentialCache", () => {
  it.scoped("a success is held for the bound, keyed by secret, resource and workspace; a failure never is", () =>
    Effect.gen(function*() {
      const { cache, changed, lookup, lookups } = yield* setup(5)
      assert.strictEqual(yield* cache.cached(key("svc_key_a"), lookup()), principal)
      yield* cache.cached(key("svc_key_a"), lookup())
      assert.strictEqual(lookups(), 1, "the second call is a hit")
      yield* cache.cached(key("svc_key_b"), lookup())
      yield* cache.cached(key("svc_key_a", { workspace: "other" }), lookup())
      yield* cache.cached(key("svc_key_a", { resource: "mcp" }), lookup())
      assert.strictEqual(lookups(), 4, "another secret, workspace or resource is another entry")
      for (let i = 0; i < 2; i++) assert.isTrue(Exit.isFailure(yield* Effect.exit(cache.cached(key("svc_key_bad"), lookup(false)))))
      assert.strictEqual(lookups(), 6, "failures are looked up every time")
      yield* TestClock.adjust("6 seconds")
      yield* cache.cached(key("svc_key_a"), lookup())
      assert.strictEqual(lookups(), 7, "past the bound it is looked up again")
      yield* changed
      yield* cache.cached(key("svc_key_a"), lookup())
      assert.strictEqual(lookups(), 8, "a change clears every entry")
    }))

  it.scoped("an entry is not served past the credential's own expiry", () =>
    Effect.gen(function*() {
      const { cache, lookup, lookups } = yield* setup(300)
      yield* cache.cached(key("svc_ses_a", { kind: "session" }), lookup(true, new Date(2_000)))
      yield* TestClock.adjust("1 second")
      yield* cache.cached(key("svc_ses_a", { kind: "session" }), lookup(true, new Date(2_000)))
      assert.strictEqual(lookups(), 1)
      yield* TestClock.adjust("1 second")
      yield* cache.cached(key("svc_ses_a", { kind: "session" }), lookup(true, new Date(2_000)))
      assert.strictEqual(lookups(), 2)
    }))

  it.scoped("a lookup that ran across a change is answered but not held", () =>
    Effect.gen(function*() {
      const { cache, changed, lookups } = yield* setup(300)
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const slow = Effect.zipRight(Deferred.succeed(started, undefined), Effect.as(Deferred.await(release), principal))
      const fiber = yield* Effect.fork(cache.cached(key("svc_key_a"), slow))
      yield* Deferred.await(started)
      yield* changed
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual(yield* Fiber.join(fiber), principal)
      let again = 0
      yield* cache.cached(key("svc_key_a"), Effect.sync(() => again++).pipe(Effect.as(principal)))
      assert.strictEqual(again, 1, "looked up again")
      assert.strictEqual(lookups(), 0)
    }))

  it.scoped("0 seconds holds nothing", () =>
    Effect.gen(function*() {
      const { cache, lookup, lookups } = yield* setup(0)
      yield* cache.cached(key("svc_key_a"), lookup())
      yield* cache.cached(key("svc_key_a"), lookup())
      assert.strictEqual(lookups(), 2)
    }))
})
