/**
 * Once per `vitest run`: a folder for the run's prepared test databases (`TestDatabase.prepared`), named in
 * `SERVICE_TEST_SNAPSHOTS` for the test processes, and removed at the end with the run's PostgreSQL templates.
 * A folder already named in `SERVICE_TEST_SNAPSHOTS` (`service-test-snapshots-<epoch>-<anything>`) is kept
 * between runs: quicker iterations, for whoever remembers to empty it when what the snapshots prepare changes.
 *
 * It also builds the runtimes' bundles (scripts/runtimes.mjs) when a source changed, and the demo seed
 * (scripts/demo-seed.mjs) when it is missing or stale, once, before the test files spawn the server, workers, stdio
 * server and CLI from them.
 */
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as NodeOs from "node:os"
import * as DemoSeed from "./scripts/demo-seed.mjs"
import { ensureBuilt } from "./scripts/runtimes.mjs"

export default async function setup() {
  await ensureBuilt()
  if (!DemoSeed.isCurrent()) await DemoSeed.build()
  const given = process.env["SERVICE_TEST_SNAPSHOTS"]
  if (given !== undefined && given.trim() !== "") return
  const folder = await Effect.runPromise(TestDatabase.startRun(NodeOs.tmpdir()))
  process.env["SERVICE_TEST_SNAPSHOTS"] = folder
  return () => Effect.runPromise(TestDatabase.endRun(folder))
}
