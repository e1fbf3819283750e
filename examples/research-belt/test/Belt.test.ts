import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import { ResearchBelt } from "@service/market-contract/ResearchBelt"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Belt from "../src/Belt.js"

// The demo corpus is prepared once per test run (`TestDatabase.prepared`); `Belt.run`'s own load finds it published.
for (const target of TestDatabase.targets()) {
  layer(Belt.layer(TestDatabase.prepared(target, DemoSnapshot.over(App.migrations)), Crypto.layerTest), { timeout: "120 seconds" })(`research belt on ${target.name}`, (it) => {
    it.effect("searches and opens the selected observations in one in-process batch", () =>
      Effect.gen(function*() {
        const report = yield* Belt.run(["Zacatecas", "Sonora"], 4)
        assert.strictEqual(report.searched.length, 2)
        const total = report.searched.reduce((sum, s) => sum + s.returned, 0)
        assert.strictEqual(report.entries.length, total)
        assert.isAbove(total, 0)
        for (const entry of report.entries) {
          assert.strictEqual(entry.status, "opened")
          if (entry.status === "opened") {
            assert.strictEqual(entry.observation.internal_provenance.publisher, "INEGI")
            assert.isTrue(["26", "32"].includes(entry.observation.state?.code ?? ""))
            assert.isTrue(entry.observation.scian_code?.startsWith("212") ?? false)
          }
        }
      }))

    it.effect("answers invalid_or_unavailable alike for forged and unknown refs, and refuses batches over 50", () =>
      Effect.gen(function*() {
        const belt = yield* ResearchBelt
        const report = yield* Belt.run(["Zacatecas"], 1)
        const good = report.entries[0]?.record_ref ?? ""
        // Tampered: its last two characters changed, always (a ref ending "AA" given "AA" again was the same ref).
        const tampered = good.slice(0, -2) + (good.endsWith("AA") ? "BB" : "AA")
        const entries = yield* belt.openSuppliers([good, "not-a-ref", tampered, "0123456789abcdef0123456789abcdef"])
        assert.deepStrictEqual(entries.map((e) => e.status), ["opened", "invalid_or_unavailable", "invalid_or_unavailable", "invalid_or_unavailable"])
        const tooMany = yield* Effect.either(belt.openSuppliers(Array.from({ length: 51 }, () => good)))
        assert.isTrue(Either.isLeft(tooMany) && tooMany.left.semanticCode === "batch_too_large")
      }))
  })
}
