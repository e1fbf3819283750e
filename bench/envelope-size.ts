/**
 * What an agent reads: the size of a search envelope and of its MCP tool text, per row, on the demo corpus.
 *
 *   npx tsx bench/envelope-size.ts            (in-memory PGlite; loads the demo corpus, about 20 s)
 *
 * Prints the JSON length of one `record_ref`, one `nextCursor`, the whole envelope of a 5-row and a 20-row
 * `search_suppliers`, and the per-row cost, so a change to refs, cursors or row shape can be compared.
 */
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import { withFreshRequest } from "@service/core/RequestContext"
import * as Operations from "@service/market-contract/Operations"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as Database from "@service/storage/Database"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"

const services = App.layer(Database.layerPglite().pipe(Layer.orDie), Crypto.layerTest)

const measure = (limit: number) =>
  Effect.gen(function*() {
    const envelope = yield* Operations.searchSuppliers.run({ state: "Zacatecas", scian_codes: ["212"], limit }).pipe(
      withFreshRequest("mcp")
    )
    const encoded = JSON.stringify(envelope)
    const rows = envelope.results.length
    // The MCP tool text is the envelope plus `shown`, `has_more` and `next_action` (see @service/mcp Toolkit).
    return {
      limit,
      rows,
      recordRef: envelope.results[0]?.record_ref.length ?? 0,
      cursor: envelope.page?.nextCursor?.length ?? 0,
      envelope: encoded.length,
      perRow: rows === 0 ? 0 : Math.round(JSON.stringify(envelope.results).length / rows),
      provenancePerRow: rows === 0 ? 0 : Math.round(JSON.stringify(envelope.provenance).length / rows)
    }
  })

const program = Effect.gen(function*() {
  yield* DemoLoad.ensureLoaded()
  const results = [yield* measure(5), yield* measure(20)]
  console.log("| search_suppliers | rows | record_ref chars | nextCursor chars | envelope chars | result row chars | provenance entry chars |")
  console.log("| - | - | - | - | - | - | - |")
  for (const r of results) {
    console.log(`| limit ${r.limit} | ${r.rows} | ${r.recordRef} | ${r.cursor} | ${r.envelope} | ${r.perRow} | ${r.provenancePerRow} |`)
  }
})

Effect.runPromise(
  program.pipe(Effect.provide(services), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning))
).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
