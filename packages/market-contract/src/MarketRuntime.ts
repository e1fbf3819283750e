/**
 * What the market bundle adds to the runtimes around its operations: the readiness check (a corpus publication is
 * active, or how far the demo load got), the demo runtimes' background load of the demo corpus, and the
 * conformance fixture (the published demo corpus in every test database, and the values no answer may carry).
 *
 * @since 0.1.0
 */
import type * as Bundle from "@service/core/Bundle"
import * as Corpus from "@service/market-warehouse/Corpus"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { forbiddenValues } from "./ProjectionAudit.js"

/**
 * `/ready` waits for an active corpus publication; while the demo corpus loads, it says how far the load got.
 *
 * @since 0.1.0 @category readiness
 */
export const publication: Bundle.Check<Corpus.Corpus> = {
  name: "publication",
  run: Effect.gen(function*() {
    const active = yield* (yield* Corpus.Corpus).active
    if (Option.isSome(active)) {
      return { ready: true, detail: `${active.value.snapshotId} published at ${active.value.publishedAt.toISOString()}` }
    }
    const progress = yield* Effect.serviceOption(DemoLoad.Progress)
    const loading = Option.isSome(progress) ? yield* Ref.get(progress.value) : Option.none<string>()
    return {
      ready: false,
      detail: Option.getOrElse(loading, () => "no corpus publication is active: load and publish one (service corpus load ... --publish)")
    }
  })
}

/**
 * Loads and publishes the demo corpus when nothing is published (resuming a load a stopped start left).
 *
 * @since 0.1.0 @category demo
 */
export const demoCorpus: Bundle.DemoTask<Effect.Effect.Context<typeof DemoLoad.loadInBackground>> = {
  name: "market.demo-corpus",
  label: "Corpus",
  status: Effect.map(Effect.flatMap(Corpus.Corpus, (corpus) => corpus.active), Option.match({
    onNone: () => "loading the demo corpus in the background: reads answer 503 until /ready says ready",
    onSome: (published) => `${published.snapshotId}, published ${published.publishedAt.toISOString()}`
  })),
  run: DemoLoad.loadInBackground,
  examples: ["capabilities_compact", "search_suppliers", "coverage"]
}

/**
 * The demo corpus, published, in every test database of a conformance run; and every source identity, publisher
 * and contact coordinate it holds as what no answer may carry.
 *
 * @since 0.1.0 @category fixtures
 */
export const fixture = {
  prepare: { key: "demo-corpus", layer: DemoSnapshot.prepare },
  forbidden: forbiddenValues
} satisfies Bundle.Fixture<Effect.Effect.Context<typeof forbiddenValues>>
