/**
 * Key material for a local runtime. Configured keys (SERVICE_SEALING_KEYS, SERVICE_FINGERPRINT_KEY) win;
 * otherwise the runtime generates its own on first start and keeps them in `<data dir>/keys.json` (mode 0600),
 * so record refs and cursors stay valid across restarts.
 *
 * @since 0.1.0
 */
import { Crypto, type CryptoConfigInvalid, generateKeyMaterial, parseFingerprintKey, parseSealingKeys } from "./Crypto.js"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/** @since 0.1.0 @category errors */
export class LocalKeysError extends Data.TaggedError("LocalKeysError")<{ readonly path: string; readonly reason: string }> {
  override get message(): string {
    return `Key file ${this.path}: ${this.reason}`
  }
}

/**
 * The local data folder (`SERVICE_DATA_DIR`, default `.data`), where an embedded runtime keeps its database and keys.
 *
 * @since 0.1.0 @category config
 */
export const dataDirConfig: Config.Config<string> = Config.string("SERVICE_DATA_DIR").pipe(
  Config.map((dir) => dir.trim()),
  Config.option,
  Config.map(Option.filter((dir) => dir.length > 0)),
  Config.map(Option.getOrElse(() => ".data"))
)

const KeyFile = Schema.parseJson(Schema.Struct({ sealingKeys: Schema.String, fingerprintKey: Schema.String }))

const readOrCreate = (path: string) =>
  Effect.gen(function*() {
    const existing = yield* Effect.tryPromise(() => NodeFs.readFile(path, "utf8")).pipe(Effect.option)
    if (Option.isSome(existing)) {
      return yield* Schema.decodeUnknown(KeyFile)(existing.value).pipe(
        Effect.mapError(() => new LocalKeysError({ path, reason: "not a valid key file; restore it or remove it to start over" }))
      )
    }
    const material = generateKeyMaterial()
    yield* Effect.tryPromise({
      try: async () => {
        await NodeFs.mkdir(NodePath.dirname(path), { recursive: true })
        // "wx" refuses to overwrite a file another process wrote meanwhile.
        await NodeFs.writeFile(path, JSON.stringify(material, null, 2), { mode: 0o600, flag: "wx" })
      },
      catch: (cause) => new LocalKeysError({ path, reason: `cannot write: ${String(cause)}` })
    })
    yield* Effect.logInfo(`Generated local sealing and fingerprint keys in ${path}`)
    return material
  })

/**
 * Crypto from configuration when SERVICE_SEALING_KEYS is set, else from the data folder's key file.
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Crypto, ConfigError.ConfigError | CryptoConfigInvalid | LocalKeysError> = Layer
  .unwrapEffect(Effect.gen(function*() {
    const configured = yield* Config.option(Config.redacted("SERVICE_SEALING_KEYS"))
    if (Option.isSome(configured)) return Crypto.layerConfig.pipe(Layer.mapError((e): ConfigError.ConfigError | CryptoConfigInvalid => e))
    const dir = yield* dataDirConfig
    const path = NodePath.resolve(dir, "keys.json")
    const material = yield* readOrCreate(path)
    const keyring = parseSealingKeys(material.sealingKeys)
    const fingerprintKey = parseFingerprintKey(material.fingerprintKey)
    if (Either.isLeft(keyring)) return yield* new LocalKeysError({ path, reason: keyring.left })
    if (Either.isLeft(fingerprintKey)) return yield* new LocalKeysError({ path, reason: fingerprintKey.left })
    return Crypto.layer({ keyring: keyring.right, fingerprintKey: fingerprintKey.right })
  }))
