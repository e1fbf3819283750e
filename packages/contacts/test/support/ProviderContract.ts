/**
 * The contract every ContactProvider adapter must meet (see `ContactProvider.ts`), as tests: run it against an
 * adapter's layer. `fresh` gives a new adapter (with no memory of earlier keys) for each test.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { type Account, ContactProvider, Result } from "../../src/ContactProvider.js"

const accounts: ReadonlyArray<Account> = Array.from({ length: 12 }, (_, i) => ({
  record_id: `contact_${i}`,
  name: `Persona ${i}`,
  company: "Constructora Norte",
  domain: "constructoranorte.mx"
}))

export const providerContract = (name: string, fresh: () => Layer.Layer<ContactProvider>) =>
  describe(`the ContactProvider contract: ${name}`, () => {
    it.effect("one well-formed result per account asked, none missing, none extra", () =>
      Effect.gen(function*() {
        const provider = yield* ContactProvider
        const results = yield* provider.research({ workspaceId: "ws_1", requestKey: "key-1", accounts })
        for (const result of results) Schema.decodeUnknownSync(Result)(result)
        assert.deepStrictEqual(results.map((r) => r.record_id).sort(), accounts.map((a) => a.record_id).sort())
      }).pipe(Effect.provide(fresh())))

    it.effect("coordinates only for found accounts, each with an email or a phone", () =>
      Effect.gen(function*() {
        const results = yield* (yield* ContactProvider).research({ workspaceId: "ws_1", requestKey: "key-2", accounts })
        for (const result of results) {
          if (result.outcome === "found") assert.isTrue(result.coordinates.email !== null || result.coordinates.phone !== null)
          else assert.notProperty(result, "coordinates")
        }
      }).pipe(Effect.provide(fresh())))

    it.effect("the same request key answers the same results", () =>
      Effect.gen(function*() {
        const provider = yield* ContactProvider
        const first = yield* provider.research({ workspaceId: "ws_1", requestKey: "key-3", accounts })
        const again = yield* provider.research({ workspaceId: "ws_1", requestKey: "key-3", accounts })
        assert.deepStrictEqual(again, first)
      }).pipe(Effect.provide(fresh())))

    it.effect("an empty request answers no results", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* (yield* ContactProvider).research({ workspaceId: "ws_1", requestKey: "key-4", accounts: [] }), [])
      }).pipe(Effect.provide(fresh())))
  })
