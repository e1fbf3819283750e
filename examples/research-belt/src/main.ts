/**
 * `npm run belt`: one research run in-process, printed as a table.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Database from "@service/storage/Database"
import * as LocalKeys from "@service/core/LocalKeys"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Belt from "./Belt.js"

const program = Effect.gen(function*() {
  const report = yield* Belt.run()
  yield* Console.log(report.question)
  for (const s of report.searched) yield* Console.log(`  searched ${s.state}: ${s.returned} rows (corpus ${s.snapshot})`)
  yield* Console.log("")
  for (const entry of report.entries) {
    if (entry.status === "opened") {
      const o = entry.observation
      yield* Console.log(
        `  ${o.name.padEnd(48).slice(0, 48)} ${(o.state?.name ?? "-").padEnd(12)} ${o.scian_code ?? "------"}  ` +
          `${o.internal_provenance.publisher} ${o.internal_provenance.source_record_id}`
      )
    } else {
      yield* Console.log(`  (invalid or unavailable)`)
    }
  }
})

program.pipe(Effect.provide(Belt.layer(Database.layerFromConfig, LocalKeys.layer)), NodeRuntime.runMain)
