/**
 * `service topics-index` against the example server over a temporary git repository: the file index loaded
 * from a checkout, `anchor_validation` on a topic written through the derived commands, and the CI drift
 * check's exit codes. In-process (`InProcess.run`, the binary's tree and exit codes), on the first database
 * target only: the commands are the CLI's; the database behaviour is covered by the topics tests.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as InProcess from "@service/cli/InProcess"
import * as Operators from "@service/cli/Operators"
import { Crypto } from "@service/core/Crypto"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

const API_KEY = "svc_key_topics_index_0123456789abcdef"

class Target extends Context.Tag("Target")<Target, { readonly baseUrl: string; readonly repo: string }>() {}

/** A git repository on `main` with three files in one commit; removed with the scope. */
const repository = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "topics-index-"))
    git(dir, "init", "-q", "-b", "main")
    write(dir, "src/auth/session.ts", "export const session = 1\n")
    write(dir, "src/auth/token.ts", "export const token = 1\n")
    write(dir, "docs/auth.md", "# Auth\n")
    commit(dir, "first")
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

// A developer's global git settings (signing, hooks) must not reach the test repository.
const git = (dir: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-C", dir, "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", ...args], {
    encoding: "utf8",
    env: { PATH: process.env["PATH"] ?? "", HOME: dir, GIT_CONFIG_NOSYSTEM: "1" }
  })

const write = (dir: string, path: string, text: string) => {
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  writeFileSync(join(dir, path), text)
}

const commit = (dir: string, message: string) => {
  git(dir, "add", "-A")
  git(dir, "commit", "-q", "-m", message)
}

const target = Layer.scoped(
  Target,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${address.port}`, repo: yield* repository }
  })
)

const prepared = Layer.effectDiscard(ensureDemo(Option.some(Redacted.make(API_KEY))).pipe(Effect.orDie))

// The application's groups and operator commands, as the binary builds them (`topics-index` calls the API only).
const options = {
  groups: App.app.groups,
  operators: Operators.commands({
    groups: App.app.operators,
    operations: App.app.groups,
    services: App.app.operatorServices
  })
}

const service = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* Target
    return yield* InProcess.run(["--base-url", baseUrl, "--api-key", API_KEY, ...args], options).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    )
  })

const Written = Schema.parseJson(Schema.Struct({
  id: Schema.String,
  anchor_validation: Schema.optional(Schema.Struct({
    patterns: Schema.Array(Schema.Struct({ pattern: Schema.String, status: Schema.String, samples: Schema.Array(Schema.String) }))
  }))
}))

const Drift = Schema.parseJson(Schema.Struct({
  changed_files: Schema.Number,
  topics: Schema.Array(Schema.Struct({ id: Schema.String, paths: Schema.Array(Schema.String) }))
}))

const Audit = Schema.parseJson(Schema.Struct({
  drifted: Schema.Array(Schema.Struct({ id: Schema.String, files: Schema.Array(Schema.Struct({ path: Schema.String, change: Schema.String })) }))
}))

const [database] = TestDatabase.targets()

if (database !== undefined) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(database.layer, Crypto.layerTest)),
    Layer.provideMerge(NodeHttpClient.layerUndici)
  )

  layer(Env, { timeout: "180 seconds", excludeTestServices: true })(`service topics-index on ${database.name}`, (it) => {
    it.effect("loads the index from a checkout, validates patterns against it, and fails CI when anchored files change", () =>
      Effect.gen(function*() {
        const { repo } = yield* Target
        const unlinked = yield* service(["topics-index", "load", "--repo", repo])
        assert.strictEqual(unlinked.code, 2, unlinked.stderr)
        assert.include(unlinked.stderr, "no linked repository")

        const linked = yield* service(["topics", "repository", "link", "--name", "acme/api", "--default-branch", "main"])
        assert.strictEqual(linked.code, 0, linked.stderr)
        const loaded = yield* service(["topics-index", "load", "--repo", repo])
        assert.strictEqual(loaded.code, 0, loaded.stderr)
        assert.match(loaded.stdout, /^loaded 3 files of acme\/api main at [0-9a-f]{12}; 0 reviewed topics drifted/)

        const created = yield* service([
          "topics",
          "create",
          "--input-json",
          JSON.stringify({ title: "Sessions", patterns: ["src/auth/*.ts", "lib/**"] }),
          "--json"
        ])
        assert.strictEqual(created.code, 0, created.stderr)
        const topic = Schema.decodeUnknownSync(Written)(created.stdout)
        assert.deepStrictEqual(topic.anchor_validation?.patterns.map((p) => [p.pattern, p.status, p.samples]), [
          ["src/auth/*.ts", "ok", ["src/auth/session.ts", "src/auth/token.ts"]],
          ["lib/**", "zero", []]
        ])
        const approved = yield* service(["topics", "approve", topic.id])
        assert.strictEqual(approved.code, 0, approved.stderr)

        // A change on HEAD to a file the topic anchors: the drift check lists it and exits 1.
        write(repo, "src/auth/session.ts", "export const session = 2\n")
        write(repo, "README.md", "hello\n")
        commit(repo, "second")
        const drift = yield* service(["topics-index", "drift", "--repo", repo, "--base", "HEAD~1", "--json"])
        assert.strictEqual(drift.code, 1, drift.stderr)
        assert.deepStrictEqual(Schema.decodeUnknownSync(Drift)(drift.stdout), {
          changed_files: 2,
          topics: [{ id: topic.id, paths: ["src/auth/session.ts"] }]
        })
        const text = yield* service(["topics-index", "drift", "--repo", repo, "--base", "HEAD~1"])
        assert.strictEqual(text.code, 1)
        assert.include(text.stdout, `1 topic anchors files changed since HEAD~1:\n  ${topic.id}  reviewed  Sessions\n      src/auth/session.ts`)
        const clean = yield* service(["topics-index", "drift", "--repo", repo, "--base", "HEAD"])
        assert.strictEqual(clean.code, 0, clean.stderr)
        assert.include(clean.stdout, "0 files changed since HEAD; no topic anchors them")

        // Loading the new index: the reviewed topic has drifted since its approval.
        const reloaded = yield* service(["topics-index", "load", "--repo", repo])
        assert.strictEqual(reloaded.code, 0, reloaded.stderr)
        assert.match(reloaded.stdout, /^loaded 4 files .*; 1 reviewed topic drifted since approval$/)
        const audit = yield* service(["topics", "audit", "--json"])
        assert.strictEqual(audit.code, 0, audit.stderr)
        assert.deepStrictEqual(
          Schema.decodeUnknownSync(Audit)(audit.stdout).drifted.map((t) => [t.id, t.files.map((f) => [f.path, f.change])]),
          [[topic.id, [["src/auth/session.ts", "changed"]]]]
        )
        const bad = yield* service(["topics-index", "drift", "--repo", repo, "--base", "no-such-ref"])
        assert.strictEqual(bad.code, 2)
      }))
  })
}
