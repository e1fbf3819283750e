// The runtimes (`npm start`, `npm run worker`, the stdio MCP server, the `service` CLI) run from JavaScript bundled
// by tsup into build/runtimes/, not from TypeScript through tsx: loading the bundle takes a fraction of the time of
// resolving thousands of modules through loader hooks (decision 0082).
//
// `npm install` builds it (the root `prepare` script runs `node scripts/runtimes.mjs`). A launcher calls `run(name)`,
// which checks the build is current (every bundled workspace file, package.json and package-lock.json unchanged in
// size and modification time, and this script, same Node and build format) and rebuilds it first when it is not, so a developer who
// edits TypeScript just starts again. If the build cannot be made, the entry runs from its sources through tsx.
//
// Every bundled workspace file keeps its own `import.meta.url` (its source file's URL), so data files, migrations and
// templates found relative to a module resolve as they do unbundled; node_modules packages are bundled too (most of the
// start-up time is their module resolution) except those that read files beside themselves or load native code.
import { spawnSync } from "node:child_process"
import * as NodeModule from "node:module"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

// Bump when the way the bundles are built changes, so older builds are rebuilt.
const FORMAT = 2

export const root = fileURLToPath(new URL("..", import.meta.url))
const outRoot = join(root, "build", "runtimes")
const pointerFile = join(outRoot, "current.json")

/** The runtime entries, by the name launchers use. */
export const entries = {
  server: "examples/server/src/main.ts",
  worker: "examples/server/src/worker-main.ts",
  "mcp-stdio": "examples/mcp-stdio/src/main.ts",
  cli: "examples/cli/src/bin.ts"
}

// Read files beside their own modules (PGlite's wasm and data, esbuild's binary) or load optional native code: they
// stay in node_modules and are imported from there. So does oidc-provider, imported on the first OAuth request: a
// server running for days must not depend on a chunk of its build folder, which a later build removes.
const external = ["@electric-sql/pglite", "pg-native", "esbuild", "tsx", "playwright-core", "fsevents", "oidc-provider"]
// Every other import is bundled (tsup's noExternal wins over its external, so the list is excluded here).
const bundled = new RegExp(`^(?!(${external.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")})(/|$))`)

const key = () => `${FORMAT}:${process.version}`

const stamp = (path) => {
  const stat = statSync(path)
  return `${stat.size}:${stat.mtimeMs}`
}

const readPointer = () => {
  try {
    return JSON.parse(readFileSync(pointerFile, "utf8"))
  } catch {
    return undefined
  }
}

/** The current build's folder, or undefined when there is none or any of its inputs changed. */
export const current = () => {
  const pointer = readPointer()
  if (pointer === undefined || pointer.key !== key()) return undefined
  try {
    for (const [path, expected] of Object.entries(pointer.inputs)) if (stamp(join(root, path)) !== expected) return undefined
    const dir = join(outRoot, pointer.dir)
    return existsSync(dir) ? dir : undefined
  } catch {
    return undefined
  }
}

/** Rewrites `import.meta.url` in workspace sources to the source file's own URL. */
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
      if (args.path.includes("/node_modules/")) return undefined
      const source = readFileSync(args.path, "utf8")
      return { contents: source.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)), loader: "ts" }
    })
  }
}

/** The package.json of the workspace package a file belongs to. */
const manifestOf = (file) => {
  for (let dir = dirname(file); dir.startsWith(root) && dir !== root; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return join(dir, "package.json")
  }
  return undefined
}

/**
 * Builds every entry into a new folder under build/runtimes and points current.json at it (written aside and
 * renamed, so a process starting meanwhile reads the old build or the new one, never half of one).
 */
export const build = async () => {
  const { build: tsup } = await import("tsup")
  const dir = `${Date.now().toString(36)}-${process.pid}`
  const outDir = join(outRoot, dir)
  await tsup({
    config: false,
    silent: true,
    entry: entries,
    outDir,
    format: ["esm"],
    platform: "node",
    target: "node20",
    splitting: true,
    bundle: true,
    dts: false,
    sourcemap: false,
    clean: false,
    treeshake: false,
    keepNames: true,
    metafile: true,
    // Bundle node_modules too, but not the packages that must stay where they are.
    noExternal: [bundled],
    external,
    // Bundled CommonJS packages call require: give the ESM chunks one.
    banner: { js: "import { createRequire as __runtimeRequire } from 'node:module'; const require = __runtimeRequire(import.meta.url);" },
    esbuildPlugins: [keepModuleUrls],
    esbuildOptions: (options) => {
      options.absWorkingDir = root
      // The workspace packages' sources, not their dist/ (see sourceConditions in vitest.shared.ts).
      options.conditions = ["@service/source", "module"]
    }
  })
  const metafile = JSON.parse(readFileSync(join(outDir, "metafile-esm.json"), "utf8"))
  rmSync(join(outDir, "metafile-esm.json"))
  const files = Object.keys(metafile.inputs).map((input) => resolve(root, input)).filter((file) => !file.includes("/node_modules/"))
  const inputs = {}
  // This script too: a change to how the bundles are built rebuilds them.
  const fixed = [join(root, "package-lock.json"), fileURLToPath(import.meta.url)]
  for (const file of new Set([...files, ...files.map(manifestOf).filter((m) => m !== undefined), ...fixed])) {
    inputs[relative(root, file)] = stamp(file)
  }
  const temporary = `${pointerFile}.${process.pid}.tmp`
  writeFileSync(temporary, JSON.stringify({ key: key(), dir, inputs }))
  renameSync(temporary, pointerFile)
  // Older builds go once no process still loads a chunk from them: every chunk is imported within the first seconds
  // of a start (the only later import, oidc-provider's, is external).
  for (const name of readdirSync(outRoot)) {
    const path = join(outRoot, name)
    if (name === dir || name === "current.json" || !statSync(path).isDirectory()) continue
    if (Date.now() - statSync(path).mtimeMs > 10 * 60_000) rmSync(path, { recursive: true, force: true })
  }
  return outDir
}

/** The current build's folder, building it first when it is missing or stale; undefined if it cannot be built. */
export const ensureBuilt = async ({ quiet = false } = {}) => {
  const found = current()
  if (found !== undefined) return found
  if (!quiet) process.stderr.write("Building the runtimes from the TypeScript sources (build/runtimes)...\n")
  // In a process of its own, so the runtime started next carries neither tsup nor esbuild's service process; its
  // output goes to stderr, which keeps the stdio MCP server's stdout for protocol messages.
  // From the repository's root: tsup looks for the entries from the working directory, and a launcher may be started
  // from anywhere (a test's scratch folder).
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url)], { cwd: root, stdio: ["ignore", 2, "pipe"], encoding: "utf8" })
  const dir = result.status === 0 ? current() : undefined
  if (dir === undefined) {
    const lines = (result.stderr ?? "").split("\n").map((line) => line.trim()).filter((line) => line.length > 0)
    const reason = lines.find((line) => /error/i.test(line)) ?? lines.at(-1) ?? `exit code ${result.status}`
    process.stderr.write(`Could not build the runtimes (${reason}): running from the TypeScript sources with tsx.\n`)
    return undefined
  }
  return dir
}

/** Runs an entry: its bundle when it can be built, else its TypeScript source through tsx. */
export const run = async (name) => {
  const dir = process.env["SERVICE_RUN_FROM_SOURCES"] === "1" ? undefined : await ensureBuilt()
  if (dir !== undefined) {
    await import(pathToFileURL(join(dir, `${name}.js`)).href)
    return
  }
  const { register } = await import("tsx/esm/api")
  register()
  // Registered after tsx, so it runs first: the workspace packages resolve to their sources.
  NodeModule.register(new URL("./source-condition.mjs", import.meta.url))
  await import(pathToFileURL(join(root, entries[name])).href)
}

// `node scripts/runtimes.mjs`: build unless current (the `prepare` script); `--force` rebuilds.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now()
  if (process.argv.includes("--force") || current() === undefined) {
    mkdirSync(outRoot, { recursive: true })
    const dir = await build()
    console.log(`runtimes built in ${Date.now() - started} ms: ${relative(root, dir)}`)
  } else {
    console.log("runtimes are current: build/runtimes")
  }
}
