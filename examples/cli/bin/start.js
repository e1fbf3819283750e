// A fast start for a binary written in TypeScript, with no build step for the user: the workspace's own
// TypeScript is bundled once by esbuild into node_modules/.cache/service-bin, and loaded from there while
// none of its inputs changed; every package from node_modules stays external and loads natively.
//
// Why: registering tsx makes every module resolution and load (thousands, most of them Effect's) pass
// through loader hooks on another thread, which doubled the start time. The bundle needs no hooks at all.
//
// The bundle is rebuilt when any input it was built from (each bundled file and the package.json of its
// package) changed size or modification time, or when Node or esbuild changed. Each file's `import.meta.url`
// is written as its own source URL, so data files and `createRequire` resolve as they do unbundled.
// Anything unexpected returns undefined and the caller falls back to tsx.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"

// Bump when the way the bundle is built changes, so older caches are rebuilt.
const FORMAT = 1

const stamp = (path) => {
  const stat = statSync(path)
  return `${stat.size}:${stat.mtimeMs}`
}

/** The package.json of the package a file belongs to. */
const manifestOf = (file) => {
  let dir = dirname(file)
  for (;;) {
    try {
      statSync(join(dir, "package.json"))
      return join(dir, "package.json")
    } catch {
      const parent = dirname(dir)
      if (parent === dir) return undefined
      dir = parent
    }
  }
}

const isFresh = (manifestFile, key) => {
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"))
    if (manifest.key !== key) return false
    return Object.entries(manifest.inputs).every(([path, expected]) => stamp(path) === expected)
  } catch {
    return false
  }
}

/** Rewrites `import.meta.url` to the file's own URL, so paths computed from it still point at the sources. */
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

/** Workspace packages (`@service/*`) are bundled; every other bare import stays external. */
const externalPackages = {
  name: "external-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@service/") ? undefined : { path: args.path, external: true }))
  }
}

/**
 * The path of an up-to-date bundle of `entry`, building it if needed; undefined if it cannot be built.
 *
 * @param {string} entry absolute path of the TypeScript entry point
 * @param {string} cacheDir where the bundle and its manifest live
 */
export const bundled = async (entry, cacheDir) => {
  try {
    const out = join(cacheDir, "bin.mjs")
    const manifestFile = join(cacheDir, "manifest.json")
    // Its version from its manifest: importing esbuild starts its service process, which a fresh start skips.
    const esbuildVersion = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("esbuild/package.json"), "utf8")).version
    const key = `${FORMAT}:${process.version}:${esbuildVersion}:${entry}`
    if (isFresh(manifestFile, key)) return out
    const esbuild = await import("esbuild")
    const workingDir = dirname(entry)
    const result = await esbuild.build({
      absWorkingDir: workingDir,
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: out,
      write: false,
      metafile: true,
      keepNames: true,
      logLevel: "silent",
      plugins: [externalPackages, keepModuleUrls]
    })
    const files = Object.keys(result.metafile.inputs).map((input) => resolve(workingDir, input))
    const inputs = {}
    for (const file of new Set([...files, ...files.map(manifestOf).filter((m) => m !== undefined)])) inputs[file] = stamp(file)
    mkdirSync(cacheDir, { recursive: true })
    // Written aside and renamed, so a concurrent start never reads half a file.
    const suffix = `${process.pid}.${Date.now()}`
    const output = result.outputFiles.find((file) => file.path === out) ?? result.outputFiles[0]
    writeFileSync(`${out}.${suffix}`, output.contents)
    renameSync(`${out}.${suffix}`, out)
    writeFileSync(`${manifestFile}.${suffix}`, JSON.stringify({ key, inputs }))
    renameSync(`${manifestFile}.${suffix}`, manifestFile)
    return out
  } catch {
    return undefined
  }
}
