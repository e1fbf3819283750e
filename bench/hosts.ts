/**
 * `npx tsx bench/hosts.ts [--runs 5] [--no-build-timing]`: what a host installing the packages gets (decision 0088).
 *
 * 1. The build: `tsc -b tsconfig.build.json --force` over a clean `dist/` of every package (JavaScript,
 *    declarations, maps), then again with nothing changed (the incremental check `npm pack` and the tests pay).
 * 2. The release packed and served from a local registry; the server host, host (a) (the typed client) and host (b)
 *    (the research belt in-process) of docs/embedding.md and the every-module host installed from it and compiled, as `npm run
 *    hosts` does: packages, `node_modules` bytes, copies of effect, modules the program loads (host (a) against the
 *    guide's server host, started).
 * 3. Host (b)'s start: `node dist/main.js` on a new data folder each time (cold: the PGlite template unpacked,
 *    migrations, the demo corpus loaded and published) and on the same folder again (warm), `--runs` times each.
 *
 * Baseline: a bare `node -e 0` spawned the same way, alternated with the runs.
 */
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { join } from "node:path"
import * as Check from "@service/example-hosts/Check"
import * as Hosts from "@service/example-hosts/Hosts"
import * as Tarballs from "@service/example-hosts/Tarballs"
import { stats } from "./Timing.js"

const argument = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  const value = at === -1 ? undefined : Number(process.argv[at + 1])
  return value === undefined || !Number.isFinite(value) ? fallback : value
}
const runs = argument("runs", 5)
const ms = (value: number) => `${Math.round(value).toLocaleString("en-US")} ms`

const timedSpawn = (command: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) => {
  const started = performance.now()
  const result = spawnSync(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
  const millis = performance.now() - started
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`)
  return millis
}

const main = async () => {
  const folder = Check.scratch()
  try {
    if (!process.argv.includes("--no-build-timing")) {
      const tsc = join(Tarballs.root, "node_modules", "typescript", "bin", "tsc")
      for (const workspace of Tarballs.publishable()) rmSync(join(workspace.dir, "dist"), { recursive: true, force: true })
      const clean = timedSpawn(process.execPath, [tsc, "-b", "tsconfig.build.json", "--force"], Tarballs.root, Tarballs.cleanEnv())
      const unchanged = timedSpawn(process.execPath, [tsc, "-b", "tsconfig.build.json"], Tarballs.root, Tarballs.cleanEnv())
      console.log("| build (16 packages) | wall |\n| - | - |")
      console.log(`| \`tsc -b tsconfig.build.json --force\`, no dist/ | ${ms(clean)} |`)
      console.log(`| \`tsc -b tsconfig.build.json\`, nothing changed | ${ms(unchanged)} |\n`)
    }
    const release = await Check.publishRelease(folder)
    const registry = release.registry
    try {
      const prepared = new Map<string, Check.Prepared>()
      for (const name of ["server", "client", "belt"]) {
        const host = await Check.prepare(Check.guideHost(name), folder, registry.url)
        const failure = host.setup.find((ran) => ran.code !== 0)
        if (failure !== undefined) throw new Error(Check.describeFailure(failure))
        prepared.set(name, host)
      }
      const belt = prepared.get("belt")
      if (belt === undefined) throw new Error("no belt host")
      const env = (dataDir: string) => Hosts.hostEnv({ SERVICE_DATA_DIR: dataDir })
      const baseline: Array<number> = []
      const cold: Array<number> = []
      const warm: Array<number> = []
      // One warm-up run so the first measured cold run does not also pay for the file cache.
      timedSpawn(process.execPath, ["dist/main.js"], belt.host.dir, env(join(folder, "warmup")))
      for (let i = 0; i < runs; i++) {
        baseline.push(timedSpawn(process.execPath, ["-e", "0"], belt.host.dir, Hosts.hostEnv()))
        const dataDir = join(folder, `data-${i}`)
        cold.push(timedSpawn(process.execPath, ["dist/main.js"], belt.host.dir, env(dataDir)))
        warm.push(timedSpawn(process.execPath, ["dist/main.js"], belt.host.dir, env(dataDir)))
        process.stderr.write(`run ${i + 1}/${runs}: cold ${ms(cold.at(-1) ?? 0)}, warm ${ms(warm.at(-1) ?? 0)}\n`)
      }
      const base = stats(baseline)
      console.log(`| host (b) start, ${runs} runs | p50 | p95 | p50 / baseline |\n| - | - | - | - |`)
      for (const [label, samples] of [["bare `node -e 0` (baseline)", baseline], ["cold: new data folder", cold], ["warm", warm]] as const) {
        const s = stats(samples)
        console.log(`| ${label} | ${ms(s.p50)} | ${ms(s.p95)} | ${(s.p50 / base.p50).toFixed(1)}x |`)
      }
      // Host (a) calls the server host; the every-module host shows what all sixteen packages weigh.
      const every = await Check.prepare(Check.everyModuleHost(release), folder, registry.url)
      const everyFailure = every.setup.find((ran) => ran.code !== 0)
      if (everyFailure !== undefined) throw new Error(Check.describeFailure(everyFailure))
      const server = prepared.get("server")
      if (server === undefined) throw new Error("no server host")
      const served = await Check.startServer(server, join(folder, "server-data"))
      const weights: Array<string> = [`| server | ${Check.weight(server, undefined)} |`]
      try {
        for (const [name, host] of [...prepared, ["every-module", every] as const]) {
          if (name === "server") continue
          const run = await Check.runProgram(
            host,
            name === "belt"
              ? { SERVICE_DATA_DIR: join(folder, "data-0") }
              : { SERVICE_BASE_URL: served.baseUrl, SERVICE_API_KEY: Check.DEMO_API_KEY, SERVICE_WORKSPACE: "demo" }
          )
          const failure = run.ran.find((ran) => ran.code !== 0)
          if (failure !== undefined) throw new Error(Check.describeFailure(failure))
          weights.push(`| ${name} | ${Check.weight(host, run)} |`)
        }
      } finally {
        await served.stop()
      }
      console.log(`\n| host | weight |\n| - | - |\n${weights.join("\n")}`)
    } finally {
      await registry.close()
    }
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
