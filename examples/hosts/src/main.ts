/**
 * `npm run hosts [-- --keep]`: the check CI runs from tarballs, printed as a report. Publishes the release with
 * `changeset publish` to a local registry, inspects the tarballs, installs the two hosts of docs/embedding.md from a local registry into a scratch
 * folder, type-checks them and runs them with plain node: the server host (started, until /ready), host (a) against
 * it, host (b) twice on a new data folder (cold, then warm); then a host of every package importing every public
 * module. Prints the tarballs, each host's weight and the programs' output and times.
 * Exits 1 when any step fails. `--keep` leaves the scratch folder (its path is printed).
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import * as Check from "./Check.js"
import type * as Hosts from "./Hosts.js"
import * as Tarballs from "./Tarballs.js"

const log = (line = "") => process.stdout.write(`${line}\n`)
const seconds = (millis: number) => `${(millis / 1000).toFixed(1)} s`

const main = async (): Promise<boolean> => {
  const folder = Check.scratch()
  let failed = false
  log(`scratch folder: ${folder}`)
  const started = performance.now()
  const release = await Check.publishRelease(folder)
  log(`\n## Tarballs (built and published with changeset publish in ${seconds(performance.now() - started)})\n`)
  log(Tarballs.table(release.packed))
  for (const [name, problems] of release.problems) {
    for (const problem of problems) {
      failed = true
      log(`PROBLEM ${name}: ${problem}`)
    }
  }
  const registry = release.registry
  let served: Check.Served | undefined
  try {
    const hosts: ReadonlyArray<Hosts.HostSpec> = [...["server", "client", "belt"].map(Check.guideHost), Check.everyModuleHost(release)]
    for (const spec of hosts) {
      log(`\n## Host ${spec.name}\n`)
      const prepared = await Check.prepare(spec, folder, registry.url)
      for (const ran of prepared.setup) log(`${ran.command}: ${ran.code === 0 ? "ok" : "FAILED"} in ${seconds(ran.millis)}`)
      const setupFailure = prepared.setup.find((ran) => ran.code !== 0)
      if (setupFailure !== undefined) {
        failed = true
        log(Check.describeFailure(setupFailure))
        continue
      }
      if (spec.name === "server") {
        const serverStarted = performance.now()
        served = await Check.startServer(prepared, join(folder, "server-data"))
        log(`${prepared.program.join(" ")}: ready at ${served.baseUrl} in ${seconds(performance.now() - serverStarted)}`)
        log(`weight: ${Check.weight(prepared, undefined)}`)
        continue
      }
      const environments: ReadonlyArray<{ readonly label: string; readonly env: Record<string, string> }> = spec.name === "client"
        ? [{ label: "run", env: { SERVICE_BASE_URL: served?.baseUrl ?? "", SERVICE_API_KEY: Check.DEMO_API_KEY, SERVICE_WORKSPACE: "demo" } }]
        : spec.name === "belt"
        ? [
          { label: "cold (new data folder)", env: { SERVICE_DATA_DIR: join(folder, "belt-data") } },
          { label: "warm", env: { SERVICE_DATA_DIR: join(folder, "belt-data") } }
        ]
        : [{ label: "run", env: {} }]
      let last: Check.ProgramRun | undefined
      for (const { label, env } of environments) {
        const run = await Check.runProgram(prepared, env)
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
  } finally {
    await served?.stop()
    await registry.close()
  }
  if (process.argv.includes("--keep")) log(`\nkept ${folder}`)
  else rmSync(folder, { recursive: true, force: true })
  return failed
}

main().then(
  (failed) => {
    process.exitCode = failed ? 1 : 0
  },
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
