import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { ContactProvider } from "../src/ContactProvider.js"
import * as SandboxProvider from "../src/SandboxProvider.js"
import { providerContract } from "./support/ProviderContract.js"

providerContract("sandbox", () => SandboxProvider.layer())

const account = (id: string) => ({ record_id: id, name: "Ana Ruiz", company: null, domain: null })
const many = Array.from({ length: 200 }, (_, i) => account(`contact_${i}`))

describe("SandboxProvider", () => {
  it.effect("is deterministic: the same account gives the same outcome in every sandbox; about one in five is not found", () =>
    Effect.gen(function*() {
      const research = (key: string) => Effect.flatMap(ContactProvider, (p) => p.research({ workspaceId: "ws", requestKey: key, accounts: many }))
      const first = yield* research("a").pipe(Effect.provide(SandboxProvider.layer()))
      const second = yield* research("b").pipe(Effect.provide(SandboxProvider.layer()))
      assert.deepStrictEqual(second, first)
      const notFound = first.filter((r) => r.outcome === "not_found").length
      assert.isTrue(notFound > 20 && notFound < 70, `${notFound} of 200 not found`)
      for (const result of first) {
        if (result.outcome === "found") {
          assert.match(result.coordinates.email ?? "", /^[0-9a-f]{12}@sandbox\.invalid$/)
          assert.match(result.coordinates.phone ?? "", /^\+52 55 0100 \d{4}$/)
        }
      }
    }))

  it.effect("fails the accounts it is told to, and keeps the rest", () =>
    Effect.gen(function*() {
      const results = yield* Effect.flatMap(ContactProvider, (p) =>
        p.research({ workspaceId: "ws", requestKey: "k", accounts: [account("c1"), account("c2")] }))
      assert.deepStrictEqual(results.map((r) => [r.record_id, r.outcome === "failed"]), [["c1", true], ["c2", false]])
    }).pipe(Effect.provide(SandboxProvider.layer({ failRecordIds: ["c1"] }))))

  it.effect("unavailable the first n requests (nothing worked, the key not remembered), then answers", () =>
    Effect.gen(function*() {
      const provider = yield* ContactProvider
      const calls = yield* SandboxProvider.SandboxCalls
      const request = { workspaceId: "ws", requestKey: "k", accounts: [account("c1")] }
      const down = yield* Effect.either(provider.research(request))
      assert.isTrue(Either.isLeft(down) && down.left._tag === "ProviderUnavailable")
      assert.deepStrictEqual(yield* calls.worked, [])
      assert.strictEqual((yield* provider.research(request)).length, 1)
      assert.strictEqual((yield* calls.worked).length, 1)
    }).pipe(Effect.provide(SandboxProvider.layer({ unavailableTimes: 1 }))))

  it.effect("a repeated key is answered from memory: worked once, however often asked", () =>
    Effect.gen(function*() {
      const provider = yield* ContactProvider
      const calls = yield* SandboxProvider.SandboxCalls
      const request = { workspaceId: "ws", requestKey: "unlock-1", accounts: [account("c1"), account("c2")] }
      const results = yield* Effect.all([provider.research(request), provider.research(request)])
      assert.deepStrictEqual(results[1], results[0])
      yield* provider.research({ ...request, workspaceId: "other" })
      assert.deepStrictEqual((yield* calls.worked).map((r) => r.workspaceId), ["ws", "other"])
    }).pipe(Effect.provide(SandboxProvider.layer())))

  it.effect("takes the latency it is given (under the TestClock)", () =>
    Effect.gen(function*() {
      const provider = yield* ContactProvider
      const fiber = yield* Effect.fork(provider.research({ workspaceId: "ws", requestKey: "slow", accounts: [account("c1")] }))
      yield* TestClock.adjust("1999 millis")
      assert.isTrue((yield* Fiber.poll(fiber))._tag === "None")
      yield* TestClock.adjust("1 milli")
      assert.strictEqual((yield* Fiber.join(fiber)).length, 1)
    }).pipe(Effect.provide(Layer.fresh(SandboxProvider.layer({ latency: "2 seconds" })))))
})
