/**
 * Key material for a local runtime. Configured keys (SERVICE_SEALING_KEYS and SERVICE_FINGERPRINT_KEY, both
 * or neither) win; otherwise the runtime generates its own on first start and keeps them in
 * `<SERVICE_DATA_DIR>/keys.json` (mode 0600), so record refs and cursors stay valid across restarts.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import {
  Crypto,
  type CryptoConfig,
  type CryptoConfigInvalid,
  FINGERPRINT_KEY_VARIABLE,
  generateKeyMaterial,
  parseFingerprintKey,
  parseSealingKeys,
  SEALING_KEYS_VARIABLE
} from "./Crypto.js"

/** @since 0.1.0 @category constants */
export const KEY_FILE_NAME = "keys.json"

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

const isAlreadyExists = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EEXIST"

/**
 * Reads the key file of `directory`, creating it on first use.
 *
 * @since 0.1.0 @category constructors
 */
export const loadOrCreate = (
  directory: string,
  options: { readonly createIfMissing?: boolean | undefined } = {}
): Effect.Effect<CryptoConfig, LocalKeysError> =>
  Effect.gen(function*() {
    const path = NodePath.resolve(directory, KEY_FILE_NAME)
    const failed = (what: string) => (cause: unknown) => new LocalKeysError({ path, reason: `cannot ${what}: ${String(cause)}` })
    const exists = yield* Effect.promise(() => NodeFs.access(path).then(() => true, () => false))
    if (!exists && options.createIfMissing === false) {
      return yield* new LocalKeysError({ path, reason: "missing: start the server once to create it, or set SERVICE_SEALING_KEYS and SERVICE_FINGERPRINT_KEY" })
    }
    if (!exists) {
      // Written under a temporary name, then linked: a concurrent first start either publishes its file or
      // finds ours complete, never half written; `link` refuses to replace an existing file.
      const temporary = `${path}.${randomUUID()}.tmp`
      const published = yield* Effect.tryPromise({
        try: async () => {
          await NodeFs.mkdir(NodePath.dirname(path), { recursive: true })
          await NodeFs.writeFile(temporary, JSON.stringify(generateKeyMaterial()), { flag: "wx", mode: 0o600 })
          try {
            await NodeFs.link(temporary, path)
            return true
          } catch (cause) {
            if (isAlreadyExists(cause)) return false
            throw cause
          } finally {
            await NodeFs.rm(temporary, { force: true })
          }
        },
        catch: failed("create")
      })
      if (published) yield* Effect.logInfo(`Generated local sealing and fingerprint keys in ${path}`)
    }
    const info = yield* Effect.tryPromise({ try: () => NodeFs.stat(path), catch: failed("inspect") })
    if ((info.mode & 0o077) !== 0) yield* Effect.logWarning(`${path} is readable by other users; run chmod 600 on it.`)
    const text = yield* Effect.tryPromise({ try: () => NodeFs.readFile(path, "utf8"), catch: failed("read") })
    const content = yield* Schema.decodeUnknown(KeyFile)(text).pipe(
      Effect.mapError(() => new LocalKeysError({ path, reason: "not a valid key file; restore it or remove it to start over" }))
    )
    return yield* Either.all({
      keyring: parseSealingKeys(content.sealingKeys),
      fingerprintKey: parseFingerprintKey(content.fingerprintKey)
    }).pipe(Either.mapLeft((reason) => new LocalKeysError({ path, reason })))
  })

type CryptoLayer = Layer.Layer<Crypto, ConfigError.ConfigError | CryptoConfigInvalid>

/**
 * Crypto from configuration when either key variable is set (then both must be), else from the data folder's
 * key file; `createIfMissing: false` refuses a missing key file instead of generating one (read-only tools).
 *
 * @since 0.1.0 @category layers
 */
export const layerWith = (
  options: { readonly createIfMissing?: boolean | undefined } = {}
): Layer.Layer<Crypto, ConfigError.ConfigError | CryptoConfigInvalid | LocalKeysError> =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const sealing = yield* Config.option(Config.redacted(SEALING_KEYS_VARIABLE))
    const fingerprint = yield* Config.option(Config.redacted(FINGERPRINT_KEY_VARIABLE))
    const fromEnvironment: CryptoLayer = Crypto.layerConfig
    if (Option.isSome(sealing) || Option.isSome(fingerprint)) return fromEnvironment
    const fromFile: CryptoLayer = Crypto.layer(yield* loadOrCreate(yield* dataDirConfig, options))
    return fromFile
  }))

/**
 * {@link layerWith} with the defaults: the key file is generated on first use.
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Crypto, ConfigError.ConfigError | CryptoConfigInvalid | LocalKeysError> = layerWith()
