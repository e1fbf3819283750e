/**
 * The server and workers as real processes on a fresh PostgreSQL database of their own (tests that kill or scale
 * them): a child process with its output collected, the server and worker programs started on it, and the
 * database with the environment the processes share with the test's own in-process services.
 */
import * as App from "@service/app/App"
import { Crypto, generateKeyMaterial, parseFingerprintKey, parseSealingKeys } from "@service/core/Crypto"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type ChildProcess, spawn } from "node:child_process"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

// Read as the storage package reads it; blank means unset.
export const adminUrl = Effect.runSync(Config.string("DATABASE_URL").pipe(Config.withDefault(""))).trim()
export const hangGuard = 15 * 60_000
const packageDirectory = fileURLToPath(new URL("../..", import.meta.url))
export const DEMO_KEY = "svc_key_door_scale_out_0123456789abcdef"

/** A child process (the server or a worker) with its output collected. */
export class Child {
  readonly child: ChildProcess
  stdout = ""
  stderr = ""
  readonly exited: Promise<number | null>
  private readonly waiters: Array<() => void> = []

  constructor(readonly label: string, entry: string, env: Readonly<Record<string, string>>) {
    const inherited = { ...process.env }
    for (const name of ["DATABASE_URL", "DATABASE_READ_URL", "SERVICE_DEMO_API_KEY", "OTEL_EXPORTER_OTLP_ENDPOINT", "PORT", "HOST"]) {
      delete inherited[name]
    }
    // The runtimes start from their bundles (bin/*.mjs, see scripts/runtimes.mjs); a test's own TypeScript entry
    // runs through tsx, with the workspace packages resolved to their sources (the `@service/source` condition).
    this.child = spawn(process.execPath, entry.endsWith(".ts") ? ["--conditions=@service/source", "--import", "tsx", entry] : [entry], {
      cwd: packageDirectory,
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    this.child.stdout?.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString("utf8")
      this.notify()
    })
    this.child.stderr?.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString("utf8")
      this.notify()
    })
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code) => {
        resolve(code)
        this.notify()
      })
    )
  }

  private notify() {
    for (const waiter of this.waiters.splice(0)) waiter()
  }

  waitFor(pattern: RegExp): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(this.stdout)
        if (match !== null) return resolve(match)
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          return reject(new Error(`${this.label} exited before printing ${pattern}:\n${this.stdout}\n${this.stderr}`))
        }
        this.waiters.push(check)
      }
      check()
    })
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal)
    await this.exited
  }
}

export const spawnChild = (label: string, entry: string, env: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(Effect.sync(() => new Child(label, entry, env)), (child) => Effect.promise(() => child.stop()))

/** The server (`npm start`'s program) listening on a free port, once its banner says the API is served. */
export const startServer = (label: string, env: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const server = yield* spawnChild(label, "bin/server.mjs", { ...env, PORT: "0", HOST: "127.0.0.1" })
    const match = yield* Effect.promise(() => server.waitFor(/Listening on http:\/\/127\.0\.0\.1:(\d+)/))
    yield* Effect.promise(() => server.waitFor(/API key\s+svc_key_/))
    return { server, port: Number(match[1]) }
  })

export const startWorker = (label: string, env: Readonly<Record<string, string>>, entry = "bin/worker.mjs") =>
  Effect.gen(function*() {
    // A short idle wait: a worker that found nothing due looks again soon, so the test waits less between bursts.
    const worker = yield* spawnChild(label, entry, {
      ...env,
      SERVICE_WORKER_NAME: label,
      SERVICE_WORKER_REPORT_EVERY: "2 seconds",
      SERVICE_WORKER_IDLE: "200 millis"
    })
    yield* Effect.promise(() => worker.waitFor(/is running /))
    return worker
  })

/**
 * A fresh database for one test, dropped (with its connections) afterwards, the env of the processes on it (with
 * `extraEnv`, e.g. a short lease), and the test's own services on it with the same keys (and `appOptions`).
 *
 * It is a copy of the run's prepared demo corpus (`TestDatabase.prepared`): a server finding nothing published
 * loads the demo corpus in the background, and these tests are about the door, not that load (`Startup.test.ts`
 * covers it). The copy's rows were written under the test keys, not the processes' keys; no step here reads
 * them.
 */
export const freshDatabase = (extraEnv: Readonly<Record<string, string>>, appOptions?: App.Options) => Effect.gen(function*() {
  const database = yield* Layer.build(
    TestDatabase.prepared(TestDatabase.postgres(Redacted.make(adminUrl)), DemoSnapshot.over(App.migrations))
  )
  const sql = yield* Effect.provide(SqlClient.SqlClient, database)
  const [current] = yield* sql`SELECT current_database() AS name`.pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.Tuple(Schema.Struct({ name: Schema.String }))))
  )
  const url = new URL(adminUrl)
  url.pathname = `/${current.name}`
  const dataDir = yield* Effect.acquireRelease(
    Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "door-scale-out-"))),
    (directory) => Effect.promise(() => NodeFs.rm(directory, { recursive: true, force: true }))
  )
  const keys = generateKeyMaterial()
  const env: Record<string, string> = {
    DATABASE_URL: url.toString(),
    SERVICE_DATA_DIR: dataDir,
    SERVICE_DEMO_API_KEY: DEMO_KEY,
    SERVICE_SEALING_KEYS: keys.sealingKeys,
    SERVICE_FINGERPRINT_KEY: keys.fingerprintKey,
    ...extraEnv
  }
  // The test's own view of the same database, with the same keys: for the Source and for reading Arrivals back.
  const crypto = Layer.unwrapEffect(
    Either.all({ keyring: parseSealingKeys(keys.sealingKeys), fingerprintKey: parseFingerprintKey(keys.fingerprintKey) }).pipe(
      Effect.mapError((reason) => new Error(reason)),
      Effect.map(Crypto.layer)
    )
  )
  const services = yield* Layer.build(App.layer(Layer.succeedContext(database), crypto, appOptions).pipe(Layer.orDie))
  return { env, services }
}).pipe(Effect.orDie)
