import { assert, describe, it } from "@effect/vitest"
import * as Crypto from "../src/Crypto.js"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Keys from "../src/LocalKeys.js"

const temporaryDirectory = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "mcp-keys-"))),
  (directory) => Effect.promise(() => NodeFs.rm(directory, { recursive: true, force: true }))
)

const withEnvironment = (entries: ReadonlyArray<readonly [string, string]>) =>
  Layer.setConfigProvider(ConfigProvider.fromMap(new Map(entries)))

const sealOpen = Effect.gen(function*() {
  const crypto = yield* Crypto.Crypto
  return yield* crypto.open("test", yield* crypto.seal("test", "hello"))
})

describe("LocalKeys", () => {
  it.scoped("generates keys.json once (mode 0600) in a nested folder and reuses it", () =>
    Effect.gen(function*() {
      const directory = NodePath.join(yield* temporaryDirectory, "nested", "data")
      const first = yield* Keys.loadOrCreate(directory)
      const file = NodePath.join(directory, Keys.KEY_FILE_NAME)
      const written = yield* Effect.promise(() => NodeFs.readFile(file, "utf8"))
      const mode = yield* Effect.promise(() => NodeFs.stat(file)).pipe(Effect.map((info) => info.mode & 0o777))
      assert.strictEqual(mode, 0o600)
      const second = yield* Keys.loadOrCreate(directory)
      assert.strictEqual(second.keyring.active, first.keyring.active)
      assert.strictEqual(yield* Effect.promise(() => NodeFs.readFile(file, "utf8")), written)
      // The temporary file used for the atomic publish is gone.
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(directory)), [Keys.KEY_FILE_NAME])
    }))

  it.scoped("first starts racing on one folder agree on one key file", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const configs = yield* Effect.all(Array.from({ length: 4 }, () => Keys.loadOrCreate(directory)), { concurrency: "unbounded" })
      assert.deepStrictEqual(new Set(configs.map((config) => config.keyring.active)).size, 1)
    }))

  it.scoped("uses the key file when the environment has no keys", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const opened = yield* sealOpen.pipe(
        Effect.provide(Keys.layer.pipe(Layer.provide(withEnvironment([["SERVICE_DATA_DIR", directory]]))))
      )
      assert.strictEqual(new TextDecoder().decode(opened), "hello")
      yield* Effect.promise(() => NodeFs.access(NodePath.join(directory, Keys.KEY_FILE_NAME)))
    }))

  it.scoped("prefers the environment and writes no file then", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const material = Crypto.generateKeyMaterial()
      const environment = withEnvironment([
        ["SERVICE_DATA_DIR", directory],
        [Crypto.SEALING_KEYS_VARIABLE, material.sealingKeys],
        [Crypto.FINGERPRINT_KEY_VARIABLE, material.fingerprintKey]
      ])
      yield* sealOpen.pipe(Effect.provide(Keys.layer.pipe(Layer.provide(environment))))
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(directory)), [])
    }))

  it.scoped("refuses half a configuration", () =>
    Effect.gen(function*() {
      const directory = yield* temporaryDirectory
      const environment = withEnvironment([
        ["SERVICE_DATA_DIR", directory],
        [Crypto.SEALING_KEYS_VARIABLE, Crypto.generateKeyMaterial().sealingKeys]
      ])
      const exit = yield* Effect.exit(
        sealOpen.pipe(Effect.provide(Keys.layer.pipe(Layer.provide(environment))))
      )
      assert.isTrue(Exit.isFailure(exit))
    }))
})
