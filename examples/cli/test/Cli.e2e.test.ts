/**
 * The `service` binary as a user runs it: `node bin/service.js ...` in its own process (TypeScript loaded by
 * tsx, no build), against the real HTTP server listening on a free port over a migrated test database with the
 * demo corpus published.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { assert, layer } from "@effect/vitest"
import { Crypto } from "@service/core/Crypto"
import * as AppLayer from "@service/example-server/AppLayer"
import { ensureDemo } from "@service/example-server/Bootstrap"
import * as Server from "@service/example-server/Server"
import * as DemoCorpus from "@service/market-contract/DemoCorpus"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

const API_KEY = "svc_key_cli_e2e_0123456789abcdef"
const binPath = fileURLToPath(new URL("../bin/service.js", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** Exit codes documented in packages/cli/README.md. */
const EXIT = { ok: 0, refused: 3, denied: 4, unreachable: 5 } as const

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs the binary with an explicit environment, so nothing from the test runner's environment (such as a
 * developer's SERVICE_API_KEY) leaks in.
 */
const service = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Effect.Effect<Run> =>
  Effect.async<Run>((resume) => {
    const child = execFile(
      process.execPath,
      [binPath, ...args],
      { cwd: packageDir, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
        resume(Effect.succeed({ code, stdout, stderr }))
      }
    )
    return Effect.sync(() => void child.kill())
  })

/** The base URL of the server under test, and the key of workspace `demo`. */
class Target extends Context.Tag("Target")<Target, { readonly baseUrl: string }>() {}

const target = Layer.effect(
  Target,
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}` }
  })
)

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* DemoCorpus.loadAndPublish
    yield* ensureDemo(Option.some(Redacted.make(API_KEY)))
  }).pipe(Effect.orDie)
)

const connection = (baseUrl: string, key: string = API_KEY) => ["--base-url", baseUrl, "--api-key", key]

const parseJson = (text: string): unknown => JSON.parse(text)

/** Reads `results` of an envelope printed by `--json` without trusting its shape. */
const resultsOf = (envelope: unknown): ReadonlyArray<Record<string, unknown>> => {
  if (typeof envelope !== "object" || envelope === null || !("results" in envelope)) return []
  const results: unknown = envelope.results
  return Array.isArray(results)
    ? results.filter((row): row is Record<string, unknown> => typeof row === "object" && row !== null)
    : []
}

for (const database of TestDatabase.targets()) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(AppLayer.make(database.layer, Crypto.layerTest))
  )

  layer(Env, { timeout: "180 seconds", excludeTestServices: true })(`service binary against the server on ${database.name}`, (it) => {
    it.effect("search --json prints the full envelope with rows", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const run = yield* service([
          ...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--json"
        ])
        assert.strictEqual(run.code, EXIT.ok, run.stderr)
        const envelope = parseJson(run.stdout)
        assert.propertyVal(envelope, "schemaVersion", "market-data/domain/1")
        assert.propertyVal(envelope, "operation", "search_suppliers")
        assert.isAbove(resultsOf(envelope).length, 0)
      }))

    it.effect("search prints a compact summary that names a row, with settings from the environment", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const json = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "3", "--json"])
        const first = resultsOf(parseJson(json.stdout))[0]
        const name = first === undefined ? undefined : first["name"]
        assert.isString(name)
        const run = yield* service(
          ["market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "3"],
          { SERVICE_BASE_URL: baseUrl, SERVICE_API_KEY: API_KEY, SERVICE_WORKSPACE: "demo" }
        )
        assert.strictEqual(run.code, EXIT.ok, run.stderr)
        assert.include(run.stdout, `1. ${String(name)}`)
        assert.match(run.stdout, /shown 3, more: yes — next: service market suppliers search .*--cursor \S+/)
      }))

    it.effect("get works with a ref copied from a search", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const search = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--scian-codes", "212", "--limit", "1", "--json"])
        const row = resultsOf(parseJson(search.stdout))[0]
        const ref = row === undefined ? undefined : row["record_ref"]
        assert.isString(ref)
        const json = yield* service([...connection(baseUrl), "market", "suppliers", "get", String(ref), "--json"])
        assert.strictEqual(json.code, EXIT.ok, json.stderr)
        const envelope = parseJson(json.stdout)
        assert.propertyVal(envelope, "operation", "get_supplier")
        const summary = yield* service([...connection(baseUrl), "market", "suppliers", "get", String(ref)])
        assert.strictEqual(summary.code, EXIT.ok, summary.stderr)
        assert.include(summary.stdout, String(row?.["name"]))
        // A record_ref is fresh per response; the fingerprint is what stays equal.
        assert.include(summary.stdout, `fingerprint: ${String(row?.["record_fingerprint"])}`)
      }))

    it.effect("a tampered ref exits with the refusal code and prints invalid_record_ref", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const search = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", "Zacatecas", "--limit", "1", "--json"])
        const row = resultsOf(parseJson(search.stdout))[0]
        const ref = String(row?.["record_ref"])
        const tampered = `${ref.slice(0, -4)}${ref.endsWith("AAAA") ? "BBBB" : "AAAA"}`
        const run = yield* service([...connection(baseUrl), "market", "suppliers", "get", tampered])
        assert.strictEqual(run.code, EXIT.refused, run.stderr)
        assert.include(run.stderr, "semantic_code: invalid_record_ref")
        assert.include(run.stderr, "recovery.action:")
        assert.strictEqual(run.stdout, "")
      }))

    it.effect("a bad API key exits with the authentication code", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const run = yield* service([...connection(baseUrl, "svc_key_wrong_0123456789abcdef"), "market", "capabilities"])
        assert.strictEqual(run.code, EXIT.denied, run.stderr)
        assert.include(run.stderr, "HTTP 401")
      }))

    it.effect("capabilities prints the operations, as summary and as JSON", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const summary = yield* service([...connection(baseUrl), "market", "capabilities", "--facets", "states"])
        assert.strictEqual(summary.code, EXIT.ok, summary.stderr)
        assert.include(summary.stdout, "search_suppliers  POST /suppliers/search")
        assert.include(summary.stdout, "states:")
        const json = yield* service([...connection(baseUrl), "market", "capabilities", "--json"])
        assert.strictEqual(json.code, EXIT.ok, json.stderr)
        assert.propertyVal(parseJson(json.stdout), "schemaVersion", "market-data/domain/1")
      }))

    it.effect("prints no source identity or contact coordinate, as summary or as JSON", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Target
        const scan = yield* forbiddenValues
        const outputs: Array<string> = []
        for (const state of ["CDMX", "Zacatecas", "Sonora"]) {
          for (const format of [["--json"], []]) {
            const run = yield* service([...connection(baseUrl), "market", "suppliers", "search", "--state", state, "--limit", "50", ...format])
            assert.strictEqual(run.code, EXIT.ok, run.stderr)
            outputs.push(run.stdout, run.stderr)
          }
        }
        const capabilities = yield* service([...connection(baseUrl), "market", "capabilities", "--json"])
        outputs.push(capabilities.stdout)
        assert.isAbove(scan.length, 100)
        for (const output of outputs) for (const needle of scan) assert.notInclude(output, needle)
      }))

    it.effect("a server that is not listening exits with the connection code", () =>
      Effect.gen(function*() {
        const run = yield* service([...connection("http://127.0.0.1:9"), "market", "capabilities"])
        assert.strictEqual(run.code, EXIT.unreachable, run.stderr)
        assert.include(run.stderr, "could not reach http://127.0.0.1:9")
      }))
  })
}
