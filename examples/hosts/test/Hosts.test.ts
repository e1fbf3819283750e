/**
 * The check from tarballs (decision 0088): the release published with `changeset publish` to a local registry and
 * every tarball it received inspected; the two hosts of docs/embedding.md written from its blocks into scratch
 * folders outside the repository, installed from that registry with `npm install`, type-checked (`strict`,
 * `nodenext`, `skipLibCheck: false`) and run with plain `node`, exactly as the guide prints their command lines:
 * a server (`@service/server`'s Main over `@service/app`; on a PostgreSQL database of its own when `DATABASE_URL` is
 * set), (a) the typed client against that server, (b) the
 * research belt in-process on embedded PGlite, bringing `effect` at the lowest supported version; and a host of every
 * package importing every public module. Each host's install size and module count are printed; the belt's cold and
 * warm start times too (measured, not asserted).
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import pg from "pg"
import * as Semver from "semver"
import * as Context from "effect/Context"
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Check from "../src/Check.js"
import type * as Hosts from "../src/Hosts.js"
import type * as Registry from "../src/Registry.js"
import * as Tarballs from "../src/Tarballs.js"

class Packed extends Context.Tag("Packed")<Packed, {
  readonly folder: string
  readonly release: Check.Release
  readonly registry: Registry.Registry
}>() {}

// Built, published (changeset publish) and served once for the file; the scratch folder goes with it.
const PackedLive = Layer.scoped(
  Packed,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const folder = Check.scratch()
      // A release that fails (a build error) leaves no scratch folder behind either.
      const release = await Check.publishRelease(folder).catch((error: unknown) => {
        rmSync(folder, { recursive: true, force: true })
        throw error
      })
      return { folder, release, registry: release.registry }
    }),
    ({ folder, registry }) => Effect.promise(() => registry.close().finally(() => rmSync(folder, { recursive: true, force: true })))
  )
)

class ServerHost extends Context.Tag("ServerHost")<ServerHost, {
  readonly host: Check.Prepared
  /** The guide's server running, once its setup succeeded. */
  readonly served: Check.Served | undefined
  readonly database: "PGlite" | "PostgreSQL" | "none"
}>() {}

// With DATABASE_URL (the PostgreSQL leg), the server host runs on a database of its own there, created and dropped
// here: its installed `pg` and migrations against a real server. Otherwise on PGlite.
const serverDatabase = Effect.gen(function*() {
  const admin = yield* Config.option(Config.redacted("DATABASE_URL"))
  if (Option.isNone(admin)) return {}
  const name = `hosts_${randomBytes(6).toString("hex")}`
  const run = (sql: string) =>
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: Redacted.value(admin.value) })
      await client.connect()
      try {
        await client.query(sql)
      } finally {
        await client.end()
      }
    })
  yield* Effect.acquireRelease(run(`CREATE DATABASE ${name}`), () => run(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  const url = new URL(Redacted.value(admin.value))
  url.pathname = `/${name}`
  return { DATABASE_URL: url.href }
})

// The guide's server host installed, compiled and started once; host (a) calls it.
const ServerHostLive = Layer.scoped(
  ServerHost,
  Effect.gen(function*() {
    const { folder, registry } = yield* Packed
    const host = yield* Effect.promise(() => Check.prepare(Check.guideHost("server"), folder, registry.url))
    if (host.setup.some((ran) => ran.code !== 0)) return { host, served: undefined, database: "none" }
    const database = yield* serverDatabase.pipe(Effect.orDie)
    const served = yield* Effect.acquireRelease(
      Effect.promise(() => Check.startServer(host, join(folder, "server-data"), database)),
      (running) => Effect.promise(() => running.stop())
    )
    return { host, served, database: "DATABASE_URL" in database ? "PostgreSQL" : "PGlite" }
  })
).pipe(Layer.provideMerge(PackedLive))

const succeeded = (ran: Hosts.Ran) => assert.strictEqual(ran.code, 0, Check.describeFailure(ran))

const prepared = (name: string, spec: Parameters<typeof Check.prepare>[0]) =>
  Effect.gen(function*() {
    const { folder, registry } = yield* Packed
    const host = yield* Effect.promise(() => Check.prepare(spec, folder, registry.url))
    assert.isAtLeast(host.setup.length, 2, `${name}: the guide's setup lines (npm install, npx tsc)`)
    for (const ran of host.setup) succeeded(ran)
    assert.isAtLeast(host.program.length, 1, `${name}: a program line`)
    return host
  })

// The only copy of effect is the one the host asked for (or npm chose for it): never one per package.
const oneEffect = (host: Check.Prepared, version?: string) => {
  const copies = host.packages.filter((p) => p.name === "effect")
  assert.strictEqual(copies.length, 1, `copies of effect: ${copies.map((c) => `${c.version} at ${c.path}`).join(", ")}`)
  if (version !== undefined) assert.strictEqual(copies[0]?.version, version)
  // Each @service package came from this release's tarballs, installed once.
  const service = host.packages.filter((p) => p.name.startsWith("@service/"))
  assert.strictEqual(new Set(service.map((p) => p.name)).size, service.length, "one copy of each @service package")
}

describe("docs/embedding.md", () => {
  it("describes the server, host (a) and host (b): package.json, tsconfig.json, src/main.ts and their command lines", () => {
    const hosts = Check.guideHosts()
    assert.deepStrictEqual([...hosts.keys()].sort(), ["belt", "client", "server"])
    for (const host of hosts.values()) {
      assert.deepStrictEqual([...host.files.keys()].sort(), ["package.json", "src/main.ts", "tsconfig.json"])
      assert.deepStrictEqual(host.commands, ["npm install", "npx tsc", "node dist/main.js"])
    }
  })
})

describe("pending changesets", () => {
  it("name only packages that are published (a private one makes changeset version refuse the whole release)", () => {
    const names = new Set(Tarballs.publishable().map((w) => w.name))
    const folder = join(Tarballs.root, ".changeset")
    for (const file of readdirSync(folder).filter((f) => f.endsWith(".md") && f !== "README.md")) {
      const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(folder, file), "utf8"))?.[1] ?? ""
      for (const line of front.split("\n").filter((l) => l.trim() !== "")) {
        const name = /^"?([^":]+)"?\s*:/.exec(line.trim())?.[1]
        assert.isTrue(name !== undefined && names.has(name), `.changeset/${file} names ${name ?? line}, which is not published`)
      }
    }
  })
  it("changeset version releases them: every published package moves to one version, internal ranges follow", () => {
    // On a copy of the manifests and changesets, as a clean clone has them; nothing here is touched.
    const copy = mkdtempSync(join(tmpdir(), "service-changesets-"))
    try {
      const manifests = ["package.json", ...["packages", "examples"].flatMap((parent) =>
        readdirSync(join(Tarballs.root, parent)).map((folder) => join(parent, folder, "package.json"))
      )].filter((path) => existsSync(join(Tarballs.root, path)))
      for (const path of manifests) cpSync(join(Tarballs.root, path), join(copy, path))
      cpSync(join(Tarballs.root, ".changeset"), join(copy, ".changeset"), { recursive: true })
      const pending = readdirSync(join(copy, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md")
      const before = Tarballs.publishable().map((w) => w.manifest.version)
      execFileSync(process.execPath, [join(Tarballs.root, "node_modules", "@changesets", "cli", "bin.js"), "version"], {
        cwd: copy,
        env: Tarballs.cleanEnv(),
        stdio: "pipe"
      })
      const after = Tarballs.publishable().map((w) => Schema.decodeUnknownSync(Schema.parseJson(Tarballs.Manifest))(
        readFileSync(join(copy, "packages", w.dir.split("/").at(-1) ?? "", "package.json"), "utf8")
      ))
      const versions = new Set(after.map((m) => m.version))
      assert.strictEqual(versions.size, 1, `one version for every package: ${[...versions].join(", ")}`)
      const [version] = versions
      if (pending.length > 0) assert.isTrue(Semver.gt(version ?? "0.0.0", before[0] ?? "0.0.0"), `${pending.length} changesets released ${version}`)
      for (const manifest of after) {
        for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
          if (name.startsWith("@service/")) assert.isTrue(Semver.satisfies(version ?? "", range), `${manifest.name} needs ${name}@${range}`)
        }
      }
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })
})

layer(ServerHostLive, { timeout: Duration.infinity, excludeTestServices: true })("from the packed tarballs", (it) => {
  it.effect("changeset publish uploads every publishable package, as a tarball a host can use", () =>
    Effect.gen(function*() {
      const { release } = yield* Packed
      console.log(`\n${Tarballs.table(release.packed)}\n`)
      assert.deepStrictEqual(release.packed.map((p) => p.name), Tarballs.publishable().map((w) => w.name))
      for (const [name, problems] of release.problems) assert.deepStrictEqual(problems, [], name)
      // One release: every package at one version.
      assert.strictEqual(new Set(release.packed.map((p) => p.version)).size, 1)
      // The embedded database's template ships for the exact PGlite the package pins.
      const storage = release.packed.find((p) => p.name === "@service/storage")
      const pglite = storage?.manifest.dependencies?.["@electric-sql/pglite"] ?? ""
      assert.match(pglite, /^\d+\.\d+\.\d+$/, "PGlite pinned to one version")
      assert.include(storage?.files ?? [], `template/pglite-${pglite}.tar.br`)
    }))

  it.effect("the server host: @service/server and @service/app from the registry serve the API (npm start in a host)", () =>
    Effect.gen(function*() {
      const { host, served, database } = yield* ServerHost
      for (const ran of host.setup) succeeded(ran)
      oneEffect(host)
      assert.isDefined(served, "listening and /ready")
      // Its first start made its database (on PGlite from the bundled template) and bootstrapped the demo workspace.
      const output = served?.output() ?? ""
      if (database === "PGlite") assert.include(output, "from the bundled template")
      else assert.match(output, /database: PostgreSQL/)
      assert.include(output, "workspace   demo")
      console.log(`server host on ${database}: ${Check.weight(host, undefined)}`)
    }))

  it.effect("host (a): the typed client, installed from the registry, calls a running server", () =>
    Effect.gen(function*() {
      const { registry } = yield* Packed
      const { served } = yield* ServerHost
      assert.isDefined(served, "the server host (its setup failed: see that test)")
      const host = yield* prepared("client", Check.guideHost("client"))
      oneEffect(host)
      const run = yield* Effect.promise(() =>
        Check.runProgram(host, { SERVICE_BASE_URL: served?.baseUrl ?? "", SERVICE_API_KEY: Check.DEMO_API_KEY, SERVICE_WORKSPACE: "demo" })
      )
      for (const ran of run.ran) succeeded(ran)
      const output = run.ran.at(-1)?.stdout ?? ""
      console.log(`host (a): ${Check.weight(host, run)}\n${output}`)
      assert.match(output, /^first page: 5 rows of corpus \S+/m)
      const all = Number(/^all pages: (\d+) rows$/m.exec(output)?.[1] ?? "0")
      assert.isAbove(all, 5, "`.all` reads past the first page")
      assert.match(output, /^refused: invalid_record_ref \(search_again\): /m)
      // The @service packages came from the local registry, found by their ranges.
      assert.include(registry.requests, "GET /@service/client")
      assert.include(registry.requests, "GET /@service/core")
    }))

  it.effect("host (b): the research belt in-process on embedded PGlite, with the host's own effect 3.22.2", () =>
    Effect.gen(function*() {
      const { folder } = yield* Packed
      const host = yield* prepared("belt", Check.guideHost("belt"))
      oneEffect(host, "3.22.2")
      const env = { SERVICE_DATA_DIR: join(folder, "belt-data") }
      const cold = yield* Effect.promise(() => Check.runProgram(host, env))
      for (const ran of cold.ran) succeeded(ran)
      const warm = yield* Effect.promise(() => Check.runProgram(host, env))
      for (const ran of warm.ran) succeeded(ran)
      const [first, second] = [cold.ran.at(-1), warm.ran.at(-1)]
      console.log(
        `host (b): ${Check.weight(host, warm)}; cold start ${Math.round(first?.millis ?? 0)} ms, warm ${Math.round(second?.millis ?? 0)} ms\n${first?.stdout ?? ""}`
      )
      for (const output of [first?.stdout ?? "", second?.stdout ?? ""]) {
        for (const state of ["Zacatecas", "Sonora", "Chihuahua"]) assert.match(output, new RegExp(`^${state}: 5 rows of corpus \\S+`, "m"))
        assert.match(output, /^opened 15 of 15$/m)
      }
      // The first start unpacked the bundled template (the installed PGlite is the one it was made with).
      assert.include(first?.stdout ?? "", "from the bundled template")
      assert.notInclude(first?.stdout ?? "", "initdb")
    }))

  it.effect("every public module of every package loads and type-checks in a host", () =>
    Effect.gen(function*() {
      const { release } = yield* Packed
      const host = yield* prepared("every-module", Check.everyModuleHost(release))
      oneEffect(host)
      const run = yield* Effect.promise(() => Check.runProgram(host, {}))
      for (const ran of run.ran) succeeded(ran)
      const modules = Check.publicModules(release)
      assert.match(run.ran.at(-1)?.stdout ?? "", new RegExp(`^${modules.length} modules, \\d+ exports$`, "m"))
      console.log(`every module: ${Check.weight(host, run)}`)
    }))

  it.effect("a host on an effect below the supported range is refused by npm (ERESOLVE), not given a second copy", () =>
    Effect.gen(function*() {
      const { folder, registry, release } = yield* Packed
      const core = `^${release.packed.find((p) => p.name === "@service/core")?.version ?? "0.0.0"}`
      const manifest = { name: "old-effect-host", private: true, type: "module", dependencies: { "@service/core": core, effect: "3.21.0" } }
      const spec: Hosts.HostSpec = {
        name: "old-effect",
        files: new Map([["package.json", JSON.stringify(manifest)]]),
        commands: ["npm install"]
      }
      const host = yield* Effect.promise(() => Check.prepare(spec, folder, registry.url))
      const [install] = host.setup
      assert.notStrictEqual(install?.code, 0, "npm install should refuse")
      assert.include(install?.stderr ?? "", "ERESOLVE")
      assert.match(install?.stderr ?? "", /peer effect@"\^3\.22\.2"/)
      assert.deepStrictEqual(host.packages.filter((p) => p.name === "effect"), [])
    }))
})
