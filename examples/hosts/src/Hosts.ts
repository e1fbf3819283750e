/**
 * Host applications made from `docs/embedding.md`: each fenced block whose info string names a file (```` ```ts
 * belt/src/main.ts ````) is written to that path under a scratch folder outside the repository, and each `sh` block
 * naming a host (```` ```sh belt ````) is the command lines run there, one by one, exactly as printed. The scratch
 * folder gets one more file of its own, `.npmrc`, pointing the `@service` scope at the local registry.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, sep } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { cleanEnv, root } from "./Tarballs.js"

/** The guide the host programs come from. */
export const guide = join(root, "docs", "embedding.md")

/** A fenced block of the guide: its language and the file or host its info string names. */
export interface Block {
  readonly language: string
  readonly target: string
  readonly text: string
}

/** Every fenced block whose info string has a second word (the file it is, or the host its commands run in). */
export const blocks = (markdown: string): ReadonlyArray<Block> => {
  const found: Array<Block> = []
  const fence = /^```(\S+)[ \t]+(\S+)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm
  for (const match of markdown.matchAll(fence)) {
    const [, language, target, text] = match
    if (language !== undefined && target !== undefined && text !== undefined) found.push({ language, target, text })
  }
  return found
}

/** One host of the guide: its files (path under the host folder to content) and its command lines. */
export interface HostSpec {
  readonly name: string
  readonly files: ReadonlyMap<string, string>
  readonly commands: ReadonlyArray<string>
}

/** The hosts the guide describes, by the first folder of each file block's path. */
export const hostsOf = (markdown: string): ReadonlyMap<string, HostSpec> => {
  const hosts = new Map<string, { files: Map<string, string>; commands: Array<string> }>()
  const host = (name: string) => {
    const existing = hosts.get(name)
    if (existing !== undefined) return existing
    const commands: Array<string> = []
    const made = { files: new Map<string, string>(), commands }
    hosts.set(name, made)
    return made
  }
  for (const block of blocks(markdown)) {
    if (block.language === "sh") {
      host(block.target).commands.push(...block.text.split("\n").map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#")))
    } else {
      const [name, ...rest] = block.target.split("/")
      if (name === undefined || rest.length === 0) continue
      host(name).files.set(rest.join("/"), block.text)
    }
  }
  return new Map([...hosts].map(([name, spec]) => [name, { name, ...spec }]))
}

/** A finished command: its exit code, output and wall time. */
export interface Ran {
  readonly command: string
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly millis: number
}

/** Runs one command line through `sh` in `cwd` with `env` (no time limit: a busy machine is slow, not wrong). */
export const runLine = (command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ command, code: code ?? 1, stdout, stderr, millis: performance.now() - started }))
  })

/** A host written to its scratch folder. */
export interface Host {
  readonly spec: HostSpec
  readonly dir: string
}

/** Writes a host's files and an `.npmrc` sending the `@service` scope to `registryUrl`. */
export const write = (spec: HostSpec, parent: string, registryUrl: string): Host => {
  const dir = join(parent, spec.name)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  for (const [path, text] of spec.files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  writeFileSync(join(dir, ".npmrc"), `@service:registry=${registryUrl}/\nfund=false\naudit=false\nupdate-notifier=false\n`)
  return { spec, dir }
}

// Settings of the service a host's program would read: a host gets only those its caller gives (the PostgreSQL leg's
// DATABASE_URL must not send the belt into the admin database).
const serviceSetting = /^(DATABASE_|SERVICE_|OTEL_)|^(PORT|HOST)$/

/** The environment a host's commands run in: none of this repository's npm, Node or service settings, plus `extra`. */
export const hostEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => {
  const env = cleanEnv()
  for (const name of Object.keys(env)) if (serviceSetting.test(name)) delete env[name]
  return { ...env, ...extra }
}

/** An installed package under a `node_modules` tree. */
export interface Installed {
  readonly name: string
  readonly version: string
  readonly path: string
}

const readPackage = Schema.decodeUnknownOption(Schema.parseJson(Schema.Struct({ name: Schema.String, version: Schema.String })))

/** Every package under `dir/node_modules`, nested copies included. */
export const installed = (dir: string): ReadonlyArray<Installed> => {
  const found: Array<Installed> = []
  const visit = (modules: string) => {
    if (!existsSync(modules)) return
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue
      const path = join(modules, entry.name)
      if (entry.name.startsWith("@") && entry.isDirectory()) {
        for (const scoped of readdirSync(path, { withFileTypes: true })) visitPackage(join(path, scoped.name))
      } else if (entry.isDirectory()) {
        visitPackage(path)
      }
    }
  }
  const visitPackage = (path: string) => {
    const manifest = join(path, "package.json")
    if (!existsSync(manifest)) return
    // A folder whose package.json names no package and version (a nested type-only folder) is not one.
    Option.map(readPackage(readFileSync(manifest, "utf8")), ({ name, version }) => found.push({ name, version, path }))
    visit(join(path, "node_modules"))
  }
  visit(join(dir, "node_modules"))
  return found
}

/** Bytes of every file under `dir` (apparent size). */
export const bytesUnder = (dir: string): number => {
  if (!existsSync(dir)) return 0
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += bytesUnder(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}

const counter = fileURLToPath(new URL("./module-count.mjs", import.meta.url))

/**
 * `NODE_OPTIONS` and the file for counting the modules a run loads (ES modules through a load hook, CommonJS from
 * the require cache at exit); read them with {@link modulesLoaded}.
 */
export const moduleCounting = (file: string): Record<string, string> => ({
  NODE_OPTIONS: `--import=${pathToFileURL(counter).href}`,
  SERVICE_MODULE_COUNT_FILE: file
})

/** The distinct module files a counted run loaded (the counter's own excluded). */
export const modulesLoaded = (file: string): ReadonlyArray<string> => {
  const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter((line) => line !== "") : [])
  const esm = read(`${file}.esm`).filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url))
  const cjs = read(`${file}.cjs`)
  const own = dirname(counter) + sep
  return [...new Set([...esm, ...cjs])].filter((path) => !path.startsWith(own))
}
