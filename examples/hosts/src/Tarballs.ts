/**
 * The publishable packages as a registry receives them: built once for the whole workspace (`tsc -b
 * tsconfig.build.json`), published with `changeset publish` to a local registry, unpacked, and inspected for
 * what makes a tarball unusable in a host: exports naming files it lacks, dependencies it imports but does not
 * declare, `effect` as a dependency instead of a peer, internal pins its siblings do not satisfy, no LICENSE.
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { builtinModules } from "node:module"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import * as Schema from "effect/Schema"
import * as Semver from "semver"
import ts from "typescript"
import type * as Registry from "./Registry.js"

/** The repository root. */
export const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The export condition naming a workspace package's TypeScript sources (never what a host resolves). */
export const SOURCE_CONDITION = "@service/source"

/** The packages a host must get as peers: one copy of each, shared with the host's own. */
export const isPeerFamily = (name: string): boolean => name === "effect" || name.startsWith("@effect/")

const Versions = Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))

/** A package.json, as far as these checks read it. */
export const Manifest = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  private: Schema.optional(Schema.Boolean),
  files: Schema.optional(Schema.Array(Schema.String)),
  exports: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  dependencies: Versions,
  peerDependencies: Versions,
  devDependencies: Versions
})

/** @see Manifest */
export type Manifest = typeof Manifest.Type

const readManifest = (file: string): Manifest => Schema.decodeUnknownSync(Schema.parseJson(Manifest))(readFileSync(file, "utf8"))

/** A workspace package that is published. */
export interface Workspace {
  readonly name: string
  readonly dir: string
  readonly manifest: Manifest
}

/** Every publishable workspace package (`packages/*` that are not private), by name. */
export const publishable = (): ReadonlyArray<Workspace> =>
  readdirSync(join(root, "packages"))
    .map((folder) => join(root, "packages", folder))
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => ({ dir, manifest: readManifest(join(dir, "package.json")) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({ name: manifest.name, dir, manifest }))
    .sort((a, b) => a.name.localeCompare(b.name))

/**
 * An environment for npm, node and tsc run on behalf of a host: without what `npm test` or `npm run` put there
 * (`npm_*`, and `NODE_OPTIONS`, which carries this repository's source condition), so nothing of the workspace
 * leaks into the host.
 */
export const cleanEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name.toLowerCase().startsWith("npm_") || name === "NODE_OPTIONS" || name === "INIT_CWD") continue
    env[name] = value
  }
  return { ...env, ...extra }
}

/**
 * Builds every publishable package's dist/ as `npm run build` does (incremental: seconds when nothing changed), with
 * what no source emits any more pruned, so no stale module is packed.
 */
export const build = async (): Promise<void> => {
  for (const args of [[join(root, "node_modules", "typescript", "bin", "tsc"), "-b", "tsconfig.build.json"], [join(root, "scripts", "prune-dist.mjs")]]) {
    // Asynchronous: a clean build takes minutes on a busy machine, and a test worker blocked that long loses its
    // link to the test runner (vitest's 60 s RPC timeout, "Timeout calling onTaskUpdate").
    const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"] })
    const code = await new Promise<number>((resolve, reject) => {
      child.on("error", reject)
      child.on("close", (exit) => resolve(exit ?? 1))
    })
    if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}`)
  }
}

/** One packed tarball. */
export interface Packed {
  readonly name: string
  readonly version: string
  readonly file: string
  /** The tarball's contents, unpacked (`package/` stripped). */
  readonly unpacked: string
  readonly manifest: Manifest
  readonly files: ReadonlyArray<string>
  /** Bytes of the tarball. */
  readonly size: number
  readonly unpackedSize: number
  readonly integrity: string
  readonly shasum: string
}

const listFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)]
  )

/**
 * Publishes the release as a release does, `changeset publish` (which runs `npm publish` in each package: `prepack`
 * builds, then the tarball is packed and uploaded), to `registry` instead of the public registry, and no git tags.
 * Asynchronous on purpose: the registry answers from this process's event loop.
 */
export const publish = async (registry: Registry.Registry, folder: string): Promise<void> => {
  const host = new URL(registry.url)
  const userconfig = join(folder, "publish.npmrc")
  mkdirSync(folder, { recursive: true })
  // npm publish wants a token for the registry it uploads to; this one accepts any.
  writeFileSync(userconfig, `@service:registry=${registry.url}/\n//${host.host}${host.pathname}/:_authToken=check-from-tarballs\n`)
  const child = spawn(process.execPath, [join(root, "node_modules", "@changesets", "cli", "bin.js"), "publish", "--no-git-tag"], {
    cwd: root,
    env: cleanEnv({ npm_config_userconfig: userconfig, "npm_config_@service:registry": `${registry.url}/`, CI: "true" }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
  const code = await new Promise<number>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (exit) => resolve(exit ?? 1))
  })
  if (code !== 0) throw new Error(`changeset publish exited with ${code}:\n${output.slice(-8000)}`)
}

/** What `registry` holds, written to `destination` and unpacked beside it. */
export const fromRegistry = (registry: Registry.Registry, destination: string): ReadonlyArray<Packed> =>
  registry.published().map((published) => {
    const file = join(destination, published.filename)
    const unpacked = join(destination, "unpacked", published.name)
    mkdirSync(unpacked, { recursive: true })
    writeFileSync(file, published.tarball)
    execFileSync("tar", ["-xzf", file, "-C", unpacked, "--strip-components=1"])
    const files = listFiles(unpacked).map((path) => relative(unpacked, path)).sort()
    return {
      name: published.name,
      version: published.version,
      file,
      unpacked,
      manifest: readManifest(join(unpacked, "package.json")),
      files,
      size: published.tarball.length,
      unpackedSize: files.reduce((sum, path) => sum + statSync(join(unpacked, path)).size, 0),
      integrity: published.integrity,
      shasum: published.shasum
    }
  }).sort((a, b) => a.name.localeCompare(b.name))

/** The package a bare specifier names (`@scope/name/sub` is `@scope/name`), or undefined for a relative one. */
export const packageOf = (specifier: string): string | undefined => {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return undefined
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

const builtins = new Set(builtinModules)

/** The packages a built file imports (static, dynamic and `import("…")` types), from TypeScript's own scanner. */
export const importedPackages = (source: string): ReadonlyArray<string> => {
  const { importedFiles } = ts.preProcessFile(source, true, true)
  return [...new Set(importedFiles.map((file) => packageOf(file.fileName)).filter((name): name is string => name !== undefined))]
    .filter((name) => !builtins.has(name))
}

const exportTargets = (value: unknown, condition?: string): ReadonlyArray<{ readonly condition: string | undefined; readonly target: string }> => {
  if (typeof value === "string") return [{ condition, target: value }]
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, key))
}

const matchesFilesEntry = (entry: string, files: ReadonlyArray<string>): boolean =>
  files.some((file) => file === entry || file.startsWith(`${entry.replace(/\/$/, "")}/`))

/**
 * What is wrong with one tarball, as sentences (empty when nothing is). `siblings` are the other tarballs of the same
 * release: an internal dependency must be a range their version satisfies.
 */
export const problems = (packed: Packed, siblings: ReadonlyArray<Packed>): ReadonlyArray<string> => {
  const { manifest, files } = packed
  const found: Array<string> = []
  const has = (path: string) => files.includes(path.replace(/^\.\//, ""))
  if (!has("LICENSE")) found.push("no LICENSE file")
  for (const entry of manifest.files ?? []) {
    if (!entry.startsWith("!") && !matchesFilesEntry(entry, files)) found.push(`"files" lists ${entry}, which holds nothing`)
  }
  // Exports: every target a host can resolve names a file in the tarball; a pattern's targets exist for every
  // module it can name (each top-level source module has its JavaScript and its declarations).
  const sources = files.filter((path) => /^src\/[^/]+\.ts$/.test(path)).map((path) => path.slice("src/".length, -".ts".length))
  for (const [subpath, value] of Object.entries(manifest.exports ?? {})) {
    for (const { condition, target } of exportTargets(value)) {
      // What a host resolves is built output: only the workspace's own condition may name a TypeScript source.
      if (condition !== SOURCE_CONDITION && subpath !== "./package.json" && !/^\.\/dist\/.*\.(d\.ts|js)$/.test(target)) {
        found.push(`exports["${subpath}"]${condition === undefined ? "" : `[${condition}]`} names ${target}, not built output`)
      }
      const names = target.includes("*") ? sources : [""]
      for (const name of names) {
        const path = target.replace("*", name)
        if (!has(path)) found.push(`exports["${subpath}"]${condition === undefined ? "" : `[${condition}]`} names ${path}, not in the tarball`)
      }
    }
    if (typeof value === "object" && value !== null) {
      const conditions = Object.keys(value)
      if (!conditions.includes("types") || !conditions.includes("default")) found.push(`exports["${subpath}"] lacks "types" or "default"`)
      if (conditions.indexOf("types") > conditions.indexOf("default")) found.push(`exports["${subpath}"] lists "types" after "default"`)
    }
  }
  const dependencies = manifest.dependencies ?? {}
  const peers = manifest.peerDependencies ?? {}
  for (const name of Object.keys(dependencies).filter(isPeerFamily)) found.push(`${name} is a dependency, not a peer dependency`)
  for (const [name, range] of Object.entries({ ...dependencies, ...peers })) {
    const sibling = siblings.find((s) => s.name === name)
    if (name.startsWith("@service/")) {
      if (sibling === undefined) found.push(`depends on ${name}, which this release does not publish`)
      else if (Semver.validRange(range) === null || Semver.valid(range) !== null) found.push(`depends on ${name} at ${range}: not a range`)
      else if (!Semver.satisfies(sibling.version, range)) found.push(`depends on ${name}@${range}, but this release has ${sibling.version}`)
    }
  }
  // What the built code imports is declared: under a strict layout (pnpm, or npm with a conflicting copy) an
  // undeclared package is not there.
  const declared = new Set([packed.name, ...Object.keys(dependencies), ...Object.keys(peers)])
  const undeclared = new Map<string, string>()
  for (const path of files.filter((file) => file.startsWith("dist/") && /\.(js|d\.ts)$/.test(file))) {
    for (const name of importedPackages(readFileSync(join(packed.unpacked, path), "utf8"))) {
      if (!declared.has(name) && !undeclared.has(name)) undeclared.set(name, path)
    }
  }
  for (const [name, path] of undeclared) found.push(`${path} imports ${name}, which is not a dependency or peer dependency`)
  return found
}

/** Bytes as "1.2 MB". */
export const formatBytes = (bytes: number): string =>
  bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${(bytes / 1_000).toFixed(1)} kB`

/** The tarballs as a table: package, version, files, packed and unpacked size, dependencies and peers. */
export const table = (packed: ReadonlyArray<Packed>): string => {
  const rows = packed.map((p) => [
    p.name,
    p.version,
    String(p.files.length),
    formatBytes(p.size),
    formatBytes(p.unpackedSize),
    Object.keys(p.manifest.dependencies ?? {}).join(" ") || "-",
    Object.keys(p.manifest.peerDependencies ?? {}).join(" ") || "-"
  ])
  return [
    "| package | version | files | packed | unpacked | dependencies | peer dependencies |",
    "| - | - | - | - | - | - | - |",
    ...rows.map((row) => `| ${row.join(" | ")} |`)
  ].join("\n")
}
