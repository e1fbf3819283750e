/**
 * `npm run hosts [-- --keep]`: the check CI runs from tarballs, printed as a report. Packs every publishable
 * package, inspects the tarballs, installs the two hosts of docs/embedding.md from a local registry into a scratch
 * folder, type-checks them and runs them with plain node: host (a) against a server started here, host (b) twice on
 * a new data folder (cold, then warm); and a host of every package importing every public module. Prints the tarballs, each host's weight and the programs' output and times.
 * Exits 1 when any step fails. `--keep` leaves the scratch folder (its path is printed).
 */
import * as Effect from "effect/Effect"
import { rmSync } from "node:fs"
import { join } from "node:path"
import * as Check from "./Check.js"
import * as DemoServer from "./DemoServer.js"
import * as Tarballs from "./Tarballs.js"

const log = (line = "") => process.stdout.write(`${line}\n`)
const seconds = (millis: number) => `${(millis / 1000).toFixed(1)} s`

const main = Effect.gen(function*() {
  const folder = Check.scratch()
  let failed = false
  log(`scratch folder: ${folder}`)
  const started = performance.now()
  const release = Check.packRelease(folder)
  log(`\n## Tarballs (built and packed in ${seconds(performance.now() - started)})\n`)
  log(Tarballs.table(release.packed))
  for (const [name, problems] of release.problems) {
    for (const problem of problems) {
      failed = true
      log(`PROBLEM ${name}: ${problem}`)
    }
  }
  const registry = yield* Effect.acquireRelease(Effect.promise(() => Check.serve(release)), (r) => Effect.promise(() => r.close()))
  const { baseUrl } = yield* DemoServer.Running
  const hosts = new Map([...Check.guideHosts(), ["every-module", Check.everyModuleHost(release)]])
  const environments: Record<string, ReadonlyArray<{ readonly label: string; readonly env: Record<string, string> }>> = {
    client: [{ label: "run", env: { SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: DemoServer.API_KEY, SERVICE_WORKSPACE: "demo" } }],
    belt: [
      { label: "cold (new data folder)", env: { SERVICE_DATA_DIR: join(folder, "belt-data") } },
      { label: "warm", env: { SERVICE_DATA_DIR: join(folder, "belt-data") } }
    ]
  }
  for (const [name, spec] of hosts) {
    log(`\n## Host ${name}\n`)
    const prepared = yield* Effect.promise(() => Check.prepare(spec, folder, registry.url))
    for (const ran of prepared.setup) log(`${ran.command}: ${ran.code === 0 ? "ok" : "FAILED"} in ${seconds(ran.millis)}`)
    const setupFailure = prepared.setup.find((ran) => ran.code !== 0)
    if (setupFailure !== undefined) {
      failed = true
      log(Check.describeFailure(setupFailure))
      continue
    }
    let last: Check.ProgramRun | undefined
    for (const { label, env } of environments[name] ?? [{ label: "run", env: {} }]) {
      const run = yield* Effect.promise(() => Check.runProgram(prepared, env))
      last = run
      for (const ran of run.ran) {
        log(`${ran.command} (${label}): ${ran.code === 0 ? "ok" : "FAILED"} in ${seconds(ran.millis)}, ${run.modules.length} modules`)
        if (ran.code !== 0) {
          failed = true
          log(Check.describeFailure(ran))
        } else log(ran.stdout.trimEnd().split("\n").map((line) => `    ${line}`).join("\n"))
      }
    }
    log(`weight: ${Check.weight(prepared, last)}`)
  }
  if (process.argv.includes("--keep")) log(`\nkept ${folder}`)
  else rmSync(folder, { recursive: true, force: true })
  return failed
})

Effect.runPromise(main.pipe(Effect.scoped, Effect.provide(DemoServer.layer))).then(
  (failed) => {
    process.exitCode = failed ? 1 : 0
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
