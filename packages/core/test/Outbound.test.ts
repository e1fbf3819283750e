import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { WorkspaceId, WorkspaceSlug } from "../src/Ids.js"
import * as Outbound from "../src/Outbound.js"
import { Workspace } from "../src/Workspace.js"

const real = new Workspace({ id: WorkspaceId.make("ws_real"), slug: WorkspaceSlug.make("real"), name: "Real" })
const test = new Workspace({ id: WorkspaceId.make("ws_test"), slug: WorkspaceSlug.make("real-test"), name: "Test", testOf: real.id })
const message = { to: "ana@acme.mx", subject: "Hola", text: "Hola Ana" }

describe("Outbound", () => {
  it.effect("a test workspace never reaches the mail or provider adapter; a real one does", () =>
    Effect.gen(function*() {
      const reached: Array<string> = []
      const layer = Outbound.layer({
        mailer: { send: (workspace) => Effect.sync(() => reached.push(`mail:${workspace.slug}`)).pipe(Effect.as(Outbound.done("msg_1"))) },
        providers: { call: (workspace) => Effect.sync(() => reached.push(`provider:${workspace.slug}`)).pipe(Effect.as(Outbound.done<unknown>({ ok: true }))) }
      })
      const run = Effect.gen(function*() {
        const mailer = yield* Outbound.Mailer
        const providers = yield* Outbound.Providers
        return [
          yield* mailer.send(test, message),
          yield* providers.call(test, { provider: "acme", operation: "unlock", payload: {} }),
          yield* mailer.send(real, message),
          yield* providers.call(real, { provider: "acme", operation: "unlock", payload: {} })
        ]
      })
      const outcomes = yield* Effect.provide(run, layer)
      assert.deepStrictEqual(outcomes.map((o) => o._tag), ["Suppressed", "Suppressed", "Done", "Done"])
      assert.deepStrictEqual(reached, ["mail:real", "provider:real"])
    }))

  it.effect("without an adapter a real send fails NotConfigured and a test workspace's is still suppressed", () =>
    Effect.gen(function*() {
      const mailer = yield* Outbound.Mailer
      const failed = yield* Effect.flip(mailer.send(real, message))
      assert.strictEqual(failed._tag, "NotConfigured")
      assert.strictEqual((yield* mailer.send(test, message))._tag, "Suppressed")
      const providers = yield* Outbound.Providers
      assert.strictEqual((yield* Effect.flip(providers.call(real, { provider: "acme", operation: "x", payload: null })))._tag, "NotConfigured")
    }).pipe(Effect.provide(Outbound.layerNotConfigured)))
})
