/**
 * The check from tarballs, step by step: build every publishable package, publish the release with `changeset
 * publish` to a local registry and inspect each tarball it received; then, for each host of `docs/embedding.md`,
 * write its files into a scratch folder outside the repository, run its setup lines (`npm install`, `npx tsc`) and
 * its program (`node …`), and measure what it installed and loaded. `npm run hosts`, `test/Hosts.test.ts` and
 * `bench/hosts.ts` drive these steps.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Hosts from "./Hosts.js"
import * as Registry from "./Registry.js"
import * as Tarballs from "./Tarballs.js"

/** A scratch folder outside the repository for one check: tarballs and hosts. */
export const scratch = (): string => mkdtempSync(join(tmpdir(), "service-hosts-"))

/** The release as published: the registry holding it, its tarballs and what is wrong with each. */
export interface Release {
  readonly registry: Registry.Registry
  readonly packed: ReadonlyArray<Tarballs.Packed>
  readonly problems: ReadonlyMap<string, ReadonlyArray<string>>
}

/**
 * Builds every publishable package, publishes the release with `changeset publish` to a new local registry, and
 * inspects what it received. Close `release.registry` when done.
 */
export const publishRelease = async (folder: string): Promise<Release> => {
  await Tarballs.build()
  const registry = await Registry.start()
  try {
    await Tarballs.publish(registry, folder)
    const packed = Tarballs.fromRegistry(registry, join(folder, "packs"))
    return { registry, packed, problems: new Map(packed.map((p) => [p.name, Tarballs.problems(p, packed)])) }
  } catch (error) {
    await registry.close()
    throw error
  }
}

/** A host installed from the registry and compiled: its setup lines' results and what its node_modules holds. */
export interface Prepared {
  readonly host: Hosts.Host
  readonly setup: ReadonlyArray<Hosts.Ran>
  /** The program lines (`node …`), run by {@link runProgram}. */
  readonly program: ReadonlyArray<string>
  readonly packages: ReadonlyArray<Hosts.Installed>
  readonly bytes: number
}

const isProgram = (line: string) => line.startsWith("node ")

/** Writes a host and runs its setup lines in order, stopping at the first that fails. */
export const prepare = async (spec: Hosts.HostSpec, folder: string, registryUrl: string): Promise<Prepared> => {
  const host = Hosts.write(spec, join(folder, "hosts"), registryUrl)
  const setup: Array<Hosts.Ran> = []
  for (const line of spec.commands.filter((line) => !isProgram(line))) {
    const ran = await Hosts.runLine(line, host.dir, Hosts.hostEnv())
    setup.push(ran)
    if (ran.code !== 0) break
  }
  return {
    host,
    setup,
    program: spec.commands.filter(isProgram),
    packages: Hosts.installed(host.dir),
    bytes: Hosts.bytesUnder(join(host.dir, "node_modules"))
  }
}

/** One run of a host's program: each line's result and the modules the last line loaded. */
export interface ProgramRun {
  readonly ran: ReadonlyArray<Hosts.Ran>
  readonly modules: ReadonlyArray<string>
}

/** Runs a prepared host's program lines with `env` (plus module counting), stopping at the first that fails. */
export const runProgram = async (prepared: Prepared, env: Readonly<Record<string, string>>): Promise<ProgramRun> => {
  const countFile = join(prepared.host.dir, `.modules-${Date.now()}`)
  const ran: Array<Hosts.Ran> = []
  for (const line of prepared.program) {
    rmSync(`${countFile}.esm`, { force: true })
    const result = await Hosts.runLine(line, prepared.host.dir, Hosts.hostEnv({ ...env, ...Hosts.moduleCounting(countFile) }))
    ran.push(result)
    if (result.code !== 0) break
  }
  return { ran, modules: Hosts.modulesLoaded(countFile) }
}

/** The hosts `docs/embedding.md` describes, by name. */
export const guideHosts = (): ReadonlyMap<string, Hosts.HostSpec> => Hosts.hostsOf(readFileSync(Hosts.guide, "utf8"))

/** One host of `docs/embedding.md`; a guide without it is an error. */
export const guideHost = (name: string): Hosts.HostSpec => {
  const spec = guideHosts().get(name)
  if (spec === undefined) throw new Error(`docs/embedding.md describes no host "${name}"`)
  return spec
}

/** The public modules of a release, as a host imports them (`@service/core`, `@service/core/Ids`, …). */
export const publicModules = (release: Release): ReadonlyArray<string> =>
  release.packed.flatMap((p) =>
    p.files
      .filter((file) => /^dist\/[^/]+\.js$/.test(file))
      .map((file) => file.slice("dist/".length, -".js".length))
      .map((module) => (module === "index" ? p.name : `${p.name}/${module}`))
  )

/** A failed step as a message with its output. */
export const describeFailure = (ran: Hosts.Ran): string =>
  `\`${ran.command}\` exited with ${ran.code} after ${Math.round(ran.millis)} ms\n--- stdout\n${ran.stdout.slice(-6000)}\n--- stderr\n${ran.stderr.slice(-6000)}`

/** What a host weighs: packages installed, bytes of node_modules, copies of effect, modules loaded. */
export const weight = (prepared: Prepared, run: ProgramRun | undefined): string => {
  const service = prepared.packages.filter((p) => p.name.startsWith("@service/")).map((p) => p.name.slice("@service/".length))
  const effects = prepared.packages.filter((p) => p.name === "effect").map((p) => p.version)
  return [
    `${prepared.packages.length} packages (${service.length} of @service: ${service.sort().join(", ")})`,
    `${Tarballs.formatBytes(prepared.bytes)} of node_modules`,
    `effect ${effects.join(", ")} (${effects.length} ${effects.length === 1 ? "copy" : "copies"})`,
    run === undefined ? "" : `${run.modules.length} modules loaded`
  ].filter((part) => part !== "").join("; ")
}

/**
 * A host of every package and every public module, made from the release rather than from the guide: its program
 * imports each module (`@service/core`, `@service/core/Ids`, …) and counts their exports, so a module that fails to
 * load or to type-check (`skipLibCheck: false`, `exactOptionalPropertyTypes`) under a plain install is found.
 */
export const everyModuleHost = (release: Release): Hosts.HostSpec => {
  const specifiers = publicModules(release)
  const main = [
    ...specifiers.map((specifier, i) => `import * as m${i} from "${specifier}"`),
    "",
    `const modules: ReadonlyArray<readonly [string, object]> = [${specifiers.map((specifier, i) => `["${specifier}", m${i}]`).join(", ")}]`,
    "let exported = 0",
    "for (const [, module] of modules) exported += Object.keys(module).length",
    "console.log(`${modules.length} modules, ${exported} exports`)",
    ""
  ].join("\n")
  const manifest = {
    name: "every-module-host",
    private: true,
    type: "module",
    dependencies: Object.fromEntries(release.packed.map((p) => [p.name, `^${p.version}`])),
    devDependencies: { "@types/node": "^20.19.0", typescript: "~5.9.3" }
  }
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2022"],
      module: "nodenext",
      moduleResolution: "nodenext",
      types: ["node"],
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      rootDir: "src",
      outDir: "dist"
    },
    include: ["src"]
  }
  return {
    name: "every-module",
    files: new Map([
      ["package.json", `${JSON.stringify(manifest, null, 2)}\n`],
      ["tsconfig.json", `${JSON.stringify(tsconfig, null, 2)}\n`],
      ["src/main.ts", main]
    ]),
    commands: ["npm install", "npx tsc", "node dist/main.js"]
  }
}

/** The demo owner's API key the server host is started with (`SERVICE_DEMO_API_KEY`). */
export const DEMO_API_KEY = "svc_key_hosts_demo_0123456789abcdef"

/** A server host's program, running. */
export interface Served {
  readonly baseUrl: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

/**
 * Starts the program line of the guide's server host (prepared) on a free loopback port over PGlite in `dataDir`
 * (or whatever `extra` says: `DATABASE_URL`), with the demo key {@link DEMO_API_KEY}, and waits until `/ready` answers 200 (the demo corpus published). No time
 * limit: a busy machine is slow, not wrong; a server that exits fails at once. `stop` sends SIGTERM and waits.
 */
export const startServer = async (
  prepared: Prepared,
  dataDir: string,
  extra: Readonly<Record<string, string>> = {}
): Promise<Served> => {
  const [line] = prepared.program
  if (line === undefined) throw new Error(`host ${prepared.host.spec.name} has no program line`)
  // `exec`, so the signal reaches node rather than the shell.
  const child = spawn("sh", ["-c", `exec ${line}`], {
    cwd: prepared.host.dir,
    env: Hosts.hostEnv({ PORT: "0", HOST: "127.0.0.1", SERVICE_DATA_DIR: dataDir, SERVICE_DEMO_API_KEY: DEMO_API_KEY, ...extra }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const exited = new Promise<number>((resolve) => child.once("exit", (code) => resolve(code ?? 1)))
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM")
    await exited
  }
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const seen = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/i.exec(output)
        if (match?.[1] !== undefined) resolve(match[1])
      }
      child.stdout.on("data", seen)
      child.stderr.on("data", seen)
      void exited.then((code) => reject(new Error(`\`${line}\` exited with ${code} before listening:\n${output}`)))
    })
    for (;;) {
      if (child.exitCode !== null) throw new Error(`\`${line}\` exited with ${child.exitCode}:\n${output}`)
      const ready = await fetch(`${baseUrl}/ready`).then((response) => response.status === 200, () => false)
      if (ready) return { baseUrl, output: () => output, stop }
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  } catch (error) {
    await stop()
    throw error
  }
}
