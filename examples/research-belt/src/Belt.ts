/**
 * An in-process research run: search the market through the declared operations, select observations, and
 * open them in one belt batch through the belt's own projection. No HTTP, MCP or CLI involved.
 *
 * @since 0.1.0
 */
import * as App from "@service/app/App"
import type { Crypto } from "@service/core/Crypto"
import { withFreshRequest } from "@service/core/RequestContext"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import * as Operations from "@service/market-contract/Operations"
import * as Projection from "@service/market-contract/Projection"
import { type BeltEntry, ResearchBelt } from "@service/market-contract/ResearchBelt"
import * as ResearchBeltLayer from "@service/market-contract/ResearchBelt"
import type * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @since 0.1.0 @category models */
export interface ResearchReport {
  readonly question: string
  readonly searched: ReadonlyArray<{ readonly state: string; readonly returned: number; readonly snapshot: string }>
  readonly entries: ReadonlyArray<BeltEntry>
}

/**
 * The belt's layers over a database and a Crypto layer: the application (`App.layer`) and the belt projection.
 *
 * @since 0.1.0 @category layers
 */
export const layer = <E1, E2>(
  database: Layer.Layer<Database.DatabaseServices, E1>,
  crypto: Layer.Layer<Crypto, E2>
) =>
  ResearchBeltLayer.layer.pipe(
    Layer.provideMerge(Projection.layerResearchBelt),
    Layer.provideMerge(App.layer(database, crypto))
  )

/**
 * Mining observations in three northern states, opened in one batch.
 *
 * @since 0.1.0 @category programs
 */
export const run = (states: ReadonlyArray<string> = ["Zacatecas", "Sonora", "Chihuahua"], perState = 5) =>
  Effect.gen(function*() {
    yield* DemoCorpus.ensureLoaded
    const searched: Array<{ state: string; returned: number; snapshot: string }> = []
    const refs: Array<string> = []
    for (const state of states) {
      const envelope = yield* Operations.searchSuppliers.run({ state, scian_codes: ["212"], limit: perState }).pipe(
        withFreshRequest("belt")
      )
      searched.push({ state, returned: envelope.results.length, snapshot: envelope.corpusBasis.snapshotId })
      refs.push(...envelope.results.map((row) => row.record_ref))
    }
    const belt = yield* ResearchBelt
    const entries = yield* belt.openSuppliers(refs)
    return {
      // SCIAN 212 is "Minería de minerales metálicos y no metálicos, excepto petróleo y gas".
      question: `Mining observations, metallic and non-metallic minerals except oil and gas (SCIAN 212), in ${states.join(", ")}`,
      searched,
      entries
    } satisfies ResearchReport
  })
