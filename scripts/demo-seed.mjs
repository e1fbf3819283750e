// The demo seed: an embedded data folder with the migrations applied and the demo corpus published, made once by
// `npm install` (the root `prepare` script, after the runtimes) in build/demo-seed, so a cold `npm start` on an empty
// data folder copies it instead of loading and publishing 22 files (decision 0082).
//
// It is made by running the built server itself on a staging folder until /ready answers, so it holds exactly what a
// first start would have written. Its keys.json (sealing and fingerprint keys, generated then) is copied with it: the
// stored fingerprints are keyed by it, so every data folder seeded from this checkout shares those keys. The demo key
// and password files are not kept: each seeded folder mints its own on its first start. The seed is only planted when
// nothing says otherwise: no DATABASE_URL, no configured keys (SERVICE_SEALING_KEYS, SERVICE_FINGERPRINT_KEY), an
// empty or missing data folder, SERVICE_DEMO_SEED not "0", the seed made by the installed PGlite from the same demo
// files. Migrations added since the seed was made are applied on start, as on any existing folder.
import { spawn } from "node:child_process"
import { cpSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const seedDir = join(root, "build", "demo-seed")
const seedFile = join(seedDir, "seed.json")
const dataFiles = join(root, "packages", "market-warehouse", "data")

// As @service/storage reads it: its package.json is not exported, so from beside its entry (dist/index.cjs).
const pgliteVersion = () => {
  const entry = createRequire(join(root, "packages", "storage", "package.json")).resolve("@electric-sql/pglite")
  return JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")).version
}

const listFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)]
  )

/** What the seed depends on: the PGlite version (its on-disk format) and the demo data files. */
const key = () => ({
  pglite: pgliteVersion(),
  files: Object.fromEntries(listFiles(dataFiles).sort().map((file) => {
    const stat = statSync(file)
    return [relative(root, file), `${stat.size}:${stat.mtimeMs}`]
  }))
})

/** True when build/demo-seed was made from what is installed now. */
export const isCurrent = () => {
  try {
    return JSON.stringify(JSON.parse(readFileSync(seedFile, "utf8"))) === JSON.stringify(key()) && existsSync(join(seedDir, "pglite", "PG_VERSION"))
  } catch {
    return false
  }
}

const waitForExit = (child) => new Promise((resolve) => child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code)))

/** Makes build/demo-seed by running the built server on a staging folder until the demo corpus is published. */
export const build = async () => {
  const staging = `${seedDir}.staging-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  const made = key()
  const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", SERVICE_DATA_DIR: staging, SERVICE_DEMO_SEED: "0", DATABASE_URL: "" }
  for (const name of ["DATABASE_READ_URL", "SERVICE_SEALING_KEYS", "SERVICE_FINGERPRINT_KEY", "SERVICE_DEMO_API_KEY", "SERVICE_DEMO_PASSWORD", "OTEL_EXPORTER_OTLP_ENDPOINT"]) {
    delete env[name]
  }
  const child = spawn(process.execPath, [join(root, "examples", "server", "bin", "server.mjs")], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const port = await new Promise((resolve, reject) => {
    const seen = (chunk) => {
      output += chunk
      const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
      if (match !== null) resolve(Number(match[1]))
    }
    child.stdout.on("data", seen)
    child.stderr.on("data", seen)
    child.once("exit", (code) => reject(new Error(`the server exited with ${code} before listening:\n${output}`)))
  })
  try {
    // Ready once the demo corpus is published; no time limit (a busy machine is slow, not wrong).
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${output}`)
      const ready = await fetch(`http://127.0.0.1:${port}/ready`).then((response) => response.status === 200, () => false)
      if (ready) break
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    child.kill("SIGTERM")
  }
  const code = await waitForExit(child)
  if (code !== 0) {
    rmSync(staging, { recursive: true, force: true })
    throw new Error(`the server exited with ${code} when stopped:\n${output}`)
  }
  for (const name of ["demo-api-key", "demo-password", "pglite.lock"]) rmSync(join(staging, name), { force: true })
  writeFileSync(join(staging, "seed.json"), JSON.stringify(made))
  rmSync(seedDir, { recursive: true, force: true })
  renameSync(staging, seedDir)
}

const blank = (value) => value === undefined || value.trim() === ""

/**
 * Copies the seed into the data folder of a server about to start, when it applies (see above); returns the folder
 * it seeded, or undefined. Anything unexpected leaves the folder as it was: the start then loads the corpus itself.
 */
export const plant = (env) => {
  if (env["SERVICE_DEMO_SEED"] === "0" || !blank(env["DATABASE_URL"])) return undefined
  if (!blank(env["SERVICE_SEALING_KEYS"]) || !blank(env["SERVICE_FINGERPRINT_KEY"])) return undefined
  const dataDir = resolve(blank(env["SERVICE_DATA_DIR"]) ? ".data" : env["SERVICE_DATA_DIR"].trim())
  if (existsSync(join(dataDir, "pglite")) || existsSync(join(dataDir, "keys.json")) || !isCurrent()) return undefined
  const staging = join(dataDir, `pglite.seeding-${process.pid}`)
  try {
    mkdirSync(dataDir, { recursive: true })
    cpSync(join(seedDir, "pglite"), staging, { recursive: true })
    // The keys first (linked, so a concurrent start never sees half a file), then the cluster renamed into place.
    const keys = join(dataDir, `keys.json.${process.pid}.tmp`)
    writeFileSync(keys, readFileSync(join(seedDir, "keys.json")), { mode: 0o600 })
    try {
      linkSync(keys, join(dataDir, "keys.json"))
    } finally {
      rmSync(keys, { force: true })
    }
    renameSync(staging, join(dataDir, "pglite"))
    return dataDir
  } catch {
    rmSync(staging, { recursive: true, force: true })
    return undefined
  }
}

// `node scripts/demo-seed.mjs`: make the seed unless current (the `prepare` script). A failure is reported and
// leaves no seed; npm install goes on, and the first start loads the demo corpus itself.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (isCurrent()) {
    console.log("demo seed is current: build/demo-seed")
  } else {
    const started = Date.now()
    try {
      await build()
      console.log(`demo seed made in ${Date.now() - started} ms: build/demo-seed (demo corpus published)`)
    } catch (cause) {
      console.warn(`Could not make the demo seed (${cause instanceof Error ? cause.message : String(cause)}); a first start loads the demo corpus itself.`)
    }
  }
}
