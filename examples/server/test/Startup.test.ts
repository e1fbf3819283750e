import * as HttpServer from "@effect/platform/HttpServer"
import { assert, describe, it, layer } from "@effect/vitest"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs/promises"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as App from "@service/app/App"
import * as DemoLoad from "@service/market-warehouse/DemoLoad"
import * as Server from "@service/server/Server"
import { type Child, spawnChild } from "./support/Processes.js"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"

// Hang guards only: every step waits for a line the server prints, never for a fixed time.
const hangGuard = 10 * 60_000

/** `npm start`'s program as a child process, with its output collected line by line; stopped with SIGTERM. */
const running = (env: Readonly<Record<string, string>>) => spawnChild("server", "bin/server.mjs", env)

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "server-startup-"))),
  (directory) => Effect.promise(() => NodeFs.rm(directory, { recursive: true, force: true }))
)

const listeningPort = (server: Child) =>
  Effect.promise(() => server.waitFor(/Listening on http:\/\/127\.0\.0\.1:(\d+)/)).pipe(Effect.map((match) => Number(match[1])))

const bannerKey = (server: Child) =>
  Effect.promise(() => server.waitFor(/API key\s+(svc_key_\S+)\n\s+\(([^)]*)\)/)).pipe(
    Effect.map((match) => ({ key: match[1] ?? "", note: match[2] ?? "" }))
  )

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: await response.text(), keepAlive: response.headers.get("keep-alive") }
  })

/** Only what the process wrote on stderr that is not blank. */
const stderrLines = (server: Child) => server.stderr.split("\n").filter((line) => line.trim().length > 0)

// In-process and listening: /ready is 503 naming the publication until the demo corpus is published, then 200.
const services = App.layer(TestDatabase.pglite.layer, Crypto.layerTest)
const Env = Server.layer(App.app, { port: 0, host: "127.0.0.1" }).pipe(Layer.provideMerge(services))

layer(Env, { timeout: "180 seconds", excludeTestServices: true })("probes", (it) => {
  it.effect("GET /health is 200; GET /ready is 503 naming the publication until one is active, then 200", () =>
    Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const address = server.address
      if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
      const base = `http://127.0.0.1:${address.port}`

      const health = yield* get(`${base}/health`)
      assert.strictEqual(health.status, 200)
      assert.deepStrictEqual(JSON.parse(health.body), { status: "ok" })

      const before = yield* get(`${base}/ready`)
      assert.strictEqual(before.status, 503)
      const notReady = JSON.parse(before.body)
      assert.strictEqual(notReady.ready, false)
      assert.deepStrictEqual(notReady.not_ready, ["publication"])
      assert.isTrue(notReady.checks.database.ready)
      assert.isTrue(notReady.checks.migrations.ready)

      const loaded = yield* DemoLoad.ensureLoaded()
      assert.isTrue(Option.isSome(loaded))
      const after = yield* get(`${base}/ready`)
      assert.strictEqual(after.status, 200, after.body)
      assert.deepStrictEqual(JSON.parse(after.body).not_ready, [])
    }))
})

/** A text to match as it is. */
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe("npm start", () => {
  it.scoped("answers /health, serves, then /ready once the corpus is published; one data folder, one process, one demo key", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      // Not seeded from build/demo-seed: this start loads the demo corpus itself, as on a checkout without a seed.
      const env = { SERVICE_DATA_DIR: dataDir, PORT: "0", SERVICE_DEMO_SEED: "0" }

      const first = yield* running(env)
      const port = yield* listeningPort(first)
      const health = yield* get(`http://127.0.0.1:${port}/health`)
      assert.strictEqual(health.status, 200)
      // The listener outlasts its clients' idle connections (65 s, not Node's 5 s; decision 0029).
      assert.strictEqual(health.keepAlive, "timeout=65")
      const { key, note } = yield* bannerKey(first)
      assert.include(note, "new")
      // The demo person: the banner says where to sign in and where the password is kept.
      const passwordFile = NodePath.join(dataDir, "demo-password")
      yield* Effect.promise(() =>
        first.waitFor(new RegExp(literally(`Sign in     owner@demo.example at http://127.0.0.1:${port}/sign-in (password in ${passwordFile}, mode 0600: new)`)))
      )
      yield* Effect.promise(() => first.waitFor(/Published the demo corpus \S+ after \d+ ms: (\d+) supplier observations/))
      const ready = yield* get(`http://127.0.0.1:${port}/ready`)
      assert.strictEqual(ready.status, 200, ready.body)

      // A second process on the same folder is refused with one line naming the first, and no stack trace.
      const second = yield* running(env)
      const code = yield* Effect.promise(() => second.exited)
      assert.strictEqual(code, 1)
      const lines = stderrLines(second)
      assert.strictEqual(lines.length, 1, second.stderr)
      assert.include(lines[0], `is in use by process ${first.child.pid}`)
      assert.notMatch(second.stderr, /^\s+at /m)

      // The key is kept owner-only in the data folder and the next start reuses it.
      yield* Effect.promise(() => first.stop())
      const keyFile = NodePath.join(dataDir, "demo-api-key")
      const stat = yield* Effect.promise(() => NodeFs.stat(keyFile))
      assert.strictEqual(stat.mode & 0o777, 0o600)
      assert.strictEqual((yield* Effect.promise(() => NodeFs.readFile(keyFile, "utf8"))).trim(), key)

      const third = yield* running(env)
      const thirdPort = yield* listeningPort(third)
      const again = yield* bannerKey(third)
      assert.strictEqual(again.key, key)
      assert.include(again.note, "reused")
      const capabilities = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${thirdPort}/api/v1/workspaces/demo/market-data/capabilities/compact`, { headers: { "x-api-key": key } })
      )
      assert.strictEqual(capabilities.status, 200)
      // The kept password signs the demo person in, on this start as on the first.
      assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(passwordFile))).mode & 0o777, 0o600)
      const password = (yield* Effect.promise(() => NodeFs.readFile(passwordFile, "utf8"))).trim()
      const signIn = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${thirdPort}/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "owner@demo.example", password })
        })
      )
      assert.strictEqual(signIn.status, 200)

      // The official clients of both generations, 200 connect-call-close cycles each against this listener: no
      // connection is closed under them (decision 0029's keep-alive, on `npm start`'s own listener).
      const mcpUrl = new URL(`http://127.0.0.1:${thirdPort}/mcp`)
      const headers = { "x-api-key": key }
      const failures: Array<string> = []
      yield* Effect.promise(async () => {
        for (let i = 0; i < 200; i++) {
          for (const generation of ["1.x", "2.x"] as const) {
            try {
              const client = generation === "1.x" ? new ClientV1({ name: "cycles", version: "0.0.0" }) : new ClientV2({ name: "cycles", version: "0.0.0" })
              const transport = generation === "1.x"
                ? new TransportV1(mcpUrl, { requestInit: { headers } })
                : new TransportV2(mcpUrl, { requestInit: { headers } })
              await client.connect(transport)
              const result = await client.callTool({ name: "service_market_capabilities", arguments: {} })
              if ("isError" in result && result.isError === true) failures.push(`${generation} ${i}: tool error`)
              await client.close()
            } catch (error) {
              failures.push(`${generation} ${i}: ${String(error).slice(0, 200)}`)
            }
          }
        }
      })
      assert.deepStrictEqual(failures, [])
    }), { timeout: hangGuard })

  it.scoped("an empty data folder is seeded from build/demo-seed: the demo corpus is published when the API is served", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      const server = yield* running({ SERVICE_DATA_DIR: dataDir, PORT: "0" })
      yield* Effect.promise(() => server.waitFor(new RegExp(`Seeded ${literally(dataDir)} from build/demo-seed`)))
      const port = yield* listeningPort(server)
      const { key, note } = yield* bannerKey(server)
      // The seed keeps no demo key: this folder's own is minted on its first start.
      assert.include(note, "new")
      const ready = yield* get(`http://127.0.0.1:${port}/ready`)
      assert.strictEqual(ready.status, 200, ready.body)
      const search = yield* Effect.promise(async () => {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/workspaces/demo/market-data/suppliers/search`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ state: "Puebla", limit: 1 })
        })
        return { status: response.status, body: await response.text() }
      })
      assert.strictEqual(search.status, 200, search.body)
      assert.notMatch(server.stdout, /Loading the demo corpus/)
      // The keys that keyed the seed's fingerprints came with it, owner-only.
      assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(NodePath.join(dataDir, "keys.json")))).mode & 0o777, 0o600)
    }), { timeout: hangGuard })

  it.scoped("a port in use is one line on stderr with the fix, no stack trace", () =>
    Effect.gen(function*() {
      const dataDir = yield* temporaryDirectory
      const taken = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<NodeNet.Server>((resolve) => {
            const server = NodeNet.createServer()
            server.listen(0, "127.0.0.1", () => resolve(server))
          })
        ),
        (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const address = taken.address()
      if (address === null || typeof address === "string") return yield* Effect.dieMessage("expected a TCP address")
      const server = yield* running({ SERVICE_DATA_DIR: dataDir, PORT: String(address.port) })
      assert.strictEqual(yield* Effect.promise(() => server.exited), 1)
      const lines = stderrLines(server)
      assert.strictEqual(lines.length, 1, server.stderr)
      assert.include(lines[0], `Port ${address.port} on 127.0.0.1 is already in use`)
      assert.include(lines[0], "PORT")
      assert.notMatch(server.stderr, /^\s+at /m)
    }), { timeout: hangGuard })
})
