/**
 * Cryptographic primitives shared by every service package: authenticated
 * sealing of opaque values (record references, cursors, ...), keyed
 * fingerprints for lookups of secrets without storing them, webhook secrets,
 * random tokens and constant-time comparison.
 *
 * Everything is built on Node's `node:crypto`; no third-party crypto code.
 *
 * @since 0.0.0
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto"
import type { KeyObject } from "node:crypto"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"

// -----------------------------------------------------------------------------
// Constants
// -----------------------------------------------------------------------------

// Bumped whenever the binary layout or the AAD construction changes, so old
// values are rejected explicitly instead of failing authentication by accident.
const SEALED_VERSION = 1
const ALGORITHM = "aes-256-gcm"
const SEALING_KEY_LENGTH = 32
// 96-bit IVs are the GCM default; random IVs are safe well beyond our volumes
// (NIST allows 2^32 messages per key with random 96-bit IVs).
const IV_LENGTH = 12
const TAG_LENGTH = 16
const MIN_FINGERPRINT_KEY_LENGTH = 32
const FINGERPRINT_BYTES = 16
const WEBHOOK_SECRET_PREFIX = "whsec_"
const WEBHOOK_SECRET_BYTES = 32
const MIN_TOKEN_BYTES = 16
const MAX_TOKEN_BYTES = 1024
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,16}$/
const MAX_KEY_ID_LENGTH = 16

/**
 * Environment variable holding the sealing keyring (`kid1:base64key,kid2:base64key`).
 *
 * @since 0.0.0
 * @category config
 */
export const SEALING_KEYS_VARIABLE = "SERVICE_SEALING_KEYS"

/**
 * Environment variable holding the base64 fingerprint (HMAC) key.
 *
 * @since 0.0.0
 * @category config
 */
export const FINGERPRINT_KEY_VARIABLE = "SERVICE_FINGERPRINT_KEY"

// -----------------------------------------------------------------------------
// Errors
// -----------------------------------------------------------------------------

/**
 * Why a sealed value was rejected. Deliberately coarse: callers should treat
 * every reason the same way (the value is not ours / not for this purpose).
 *
 * @since 0.0.0
 * @category errors
 */
export type SealedValueInvalidReason = "malformed" | "unsupported_version" | "unknown_key" | "authentication_failed"

/**
 * A sealed value could not be opened: it is malformed, was produced with an
 * unknown key or version, was tampered with, or was sealed for another
 * purpose. The message never contains key material or the input itself.
 *
 * @since 0.0.0
 * @category errors
 */
export class SealedValueInvalid extends Data.TaggedError("SealedValueInvalid")<{
  readonly reason: SealedValueInvalidReason
}> {
  override get message(): string {
    return `Sealed value is invalid (${this.reason})`
  }
}

/**
 * `sealJson` was given a value that has no JSON representation (a `bigint`,
 * a cycle, `undefined`, a function, ...).
 *
 * @since 0.0.0
 * @category errors
 */
export class JsonEncodeError extends Data.TaggedError("JsonEncodeError")<{
  readonly cause?: unknown
}> {
  override get message(): string {
    return "Value cannot be encoded as JSON"
  }
}

/**
 * The configuration handed to {@link Crypto.layer} / {@link make} is unusable
 * (wrong key length, unknown active key id, ...). Messages name key ids and
 * lengths only, never key bytes.
 *
 * @since 0.0.0
 * @category errors
 */
export class CryptoConfigInvalid extends Data.TaggedError("CryptoConfigInvalid")<{
  readonly message: string
}> {}

// -----------------------------------------------------------------------------
// Models
// -----------------------------------------------------------------------------

/**
 * The set of AES-256 sealing keys. `active` seals new values; every listed
 * key can open values, so a retired key stays listed until everything sealed
 * with it has expired or been re-sealed.
 *
 * @since 0.0.0
 * @category models
 */
export interface Keyring {
  /** Id of the key used for new seals; must be present in `keys`. */
  readonly active: string
  /** Key id (`[A-Za-z0-9_-]{1,16}`) to 32-byte AES key. */
  readonly keys: ReadonlyMap<string, Redacted.Redacted<Uint8Array>>
}

/**
 * Everything the Crypto service needs.
 *
 * @since 0.0.0
 * @category models
 */
export interface CryptoConfig {
  readonly keyring: Keyring
  /** HMAC key for fingerprints (>= 32 bytes), distinct from every sealing key. */
  readonly fingerprintKey: Redacted.Redacted<Uint8Array>
}

/**
 * The Crypto service interface.
 *
 * @since 0.0.0
 * @category models
 */
export interface CryptoService {
  /**
   * Encrypts and authenticates `plaintext` (strings are UTF-8 encoded) under
   * the active key, binding `purpose` as additional authenticated data.
   * Returns unpadded base64url; a fresh random IV makes every call differ.
   */
  readonly seal: (purpose: string, plaintext: Uint8Array | string) => Effect.Effect<string>
  /** `seal` of the JSON encoding of `value`. */
  readonly sealJson: (purpose: string, value: unknown) => Effect.Effect<string, JsonEncodeError>
  /** Reverses `seal` for the same `purpose`, with any key still in the keyring. */
  readonly open: (purpose: string, sealed: string) => Effect.Effect<Uint8Array, SealedValueInvalid>
  /** Reverses `sealJson`; decode the `unknown` result with a Schema. */
  readonly openJson: (purpose: string, sealed: string) => Effect.Effect<unknown, SealedValueInvalid>
  /**
   * Keyed, domain-separated HMAC-SHA256 of `value`, truncated to 128 bits
   * and returned as 32 lowercase hex characters. Deterministic per key.
   */
  readonly fingerprint: (domain: string, value: string) => Effect.Effect<string>
  /** A new `whsec_`-prefixed webhook signing secret (32 random bytes). */
  readonly webhookSecret: () => Effect.Effect<Redacted.Redacted<string>>
  /** Unpadded base64url encoding of `bytes` (default 32, 16..1024) random bytes. */
  readonly randomToken: (bytes?: number) => Effect.Effect<string>
  /** See the module-level {@link constantTimeEqual}. */
  readonly constantTimeEqual: (a: string | Uint8Array, b: string | Uint8Array) => boolean
}

// -----------------------------------------------------------------------------
// Encoding helpers
// -----------------------------------------------------------------------------

const BASE64URL_PATTERN = /^[A-Za-z0-9_-]+$/
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

const toBytes = (input: string | Uint8Array): Uint8Array =>
  typeof input === "string" ? Buffer.from(input, "utf8") : input

// Node's decoders silently skip invalid characters and ignore non-zero
// trailing bits; requiring the canonical re-encoding to match makes exactly
// one string decode to a given byte sequence, so string tampering is caught
// even before authentication.
const decodeBase64Url = (input: string): Option.Option<Buffer> => {
  if (!BASE64URL_PATTERN.test(input) || input.length % 4 === 1) return Option.none()
  const bytes = Buffer.from(input, "base64url")
  return bytes.toString("base64url") === input ? Option.some(bytes) : Option.none()
}

// Standard, padded base64 (what `openssl rand -base64 32` prints).
const decodeBase64 = (input: string): Option.Option<Buffer> => {
  if (input.length === 0 || !BASE64_PATTERN.test(input)) return Option.none()
  const bytes = Buffer.from(input, "base64")
  return bytes.toString("base64") === input ? Option.some(bytes) : Option.none()
}

// -----------------------------------------------------------------------------
// Pure helpers
// -----------------------------------------------------------------------------

// Lazily created so importing the module has no side effects.
let comparisonKey: KeyObject | undefined
const getComparisonKey = (): KeyObject => {
  if (comparisonKey === undefined) comparisonKey = createSecretKey(randomBytes(32))
  return comparisonKey
}

/**
 * Compares two values in time independent of where they differ. Strings are
 * compared as their UTF-8 bytes, so `"a"` equals `Uint8Array.of(0x61)`.
 *
 * Both inputs are first HMAC-SHA256'd under a per-process random key and the
 * equal-length digests compared with `timingSafeEqual`. This avoids the
 * length short-circuit of `timingSafeEqual` (which throws on different
 * lengths) without padding: a length mismatch costs exactly as much as a
 * content mismatch. Hashing time still grows with input length, which only
 * reveals the (already public) lengths, never their contents. Equal digests
 * imply equal inputs barring an HMAC-SHA256 collision.
 *
 * @since 0.0.0
 * @category utils
 */
export const constantTimeEqual = (a: string | Uint8Array, b: string | Uint8Array): boolean => {
  const key = getComparisonKey()
  const digestA = createHmac("sha256", key).update(toBytes(a)).digest()
  const digestB = createHmac("sha256", key).update(toBytes(b)).digest()
  return timingSafeEqual(digestA, digestB)
}

/**
 * Checks the shape of a webhook secret: `whsec_` followed by canonical,
 * padded standard base64 decoding to 24..64 bytes.
 *
 * @since 0.0.0
 * @category utils
 */
export const isWebhookSecret = (s: string): boolean => {
  if (!s.startsWith(WEBHOOK_SECRET_PREFIX)) return false
  return Option.match(decodeBase64(s.slice(WEBHOOK_SECRET_PREFIX.length)), {
    onNone: () => false,
    onSome: (bytes) => bytes.length >= 24 && bytes.length <= 64
  })
}

/**
 * A new `whsec_`-prefixed webhook signing secret (32 random bytes, standard base64), for code that has no
 * `Crypto` service at hand (tests, a throwaway secret). The service's `webhookSecret` gives the same, redacted.
 *
 * @since 0.1.0 @category secrets
 */
export const generateWebhookSecret = (): string => WEBHOOK_SECRET_PREFIX + randomBytes(WEBHOOK_SECRET_BYTES).toString("base64")

/**
 * Generates fresh key material in the `layerConfig` formats: `sealingKeys`
 * for `SERVICE_SEALING_KEYS` (one random key id with a 32-byte key) and
 * `fingerprintKey` for `SERVICE_FINGERPRINT_KEY` (32 bytes, base64). Meant
 * for an embedded runtime that persists its own keys on first start; treat
 * both strings as secrets.
 *
 * @since 0.0.0
 * @category constructors
 */
export const generateKeyMaterial = (): { readonly sealingKeys: string; readonly fingerprintKey: string } => {
  // 6 random bytes in base64url: 8 characters, always a valid key id, and
  // unique enough that keys generated on different installs never collide.
  const keyId = randomBytes(6).toString("base64url")
  return {
    sealingKeys: `${keyId}:${randomBytes(SEALING_KEY_LENGTH).toString("base64")}`,
    fingerprintKey: randomBytes(MIN_FINGERPRINT_KEY_LENGTH).toString("base64")
  }
}

// -----------------------------------------------------------------------------
// Validation and parsing
// -----------------------------------------------------------------------------

interface ValidatedKeys {
  readonly activeKey: KeyObject
  readonly activeHeader: Buffer
  readonly sealingKeys: ReadonlyMap<string, KeyObject>
  readonly fingerprintKey: KeyObject
}

// version byte, key-id length byte, key-id bytes (ASCII by construction)
const makeHeader = (keyId: string): Buffer =>
  Buffer.concat([Buffer.of(SEALED_VERSION, keyId.length), Buffer.from(keyId, "latin1")])

// The whole header goes into the AAD along with the purpose, so neither the
// version nor the key id can be altered without failing authentication. The
// header is self-delimiting, so appending the purpose is unambiguous.
const additionalData = (header: Uint8Array, purpose: string): Buffer =>
  Buffer.concat([header, Buffer.from(purpose, "utf8")])

const validateConfig = (config: CryptoConfig): Either.Either<ValidatedKeys, string> => {
  const { active, keys } = config.keyring
  if (keys.size === 0) return Either.left("keyring has no keys")
  const sealingKeys = new Map<string, KeyObject>()
  const rawKeys: Array<Uint8Array> = []
  for (const [keyId, redacted] of keys) {
    // Invalid ids are not echoed: a mis-pasted entry could put key bytes there.
    if (!KEY_ID_PATTERN.test(keyId)) return Either.left("key ids must match [A-Za-z0-9_-]{1,16}")
    const bytes = Redacted.value(redacted)
    if (bytes.length !== SEALING_KEY_LENGTH) {
      return Either.left(`sealing key '${keyId}' must be ${SEALING_KEY_LENGTH} bytes, got ${bytes.length}`)
    }
    rawKeys.push(bytes)
    // createSecretKey copies the bytes, so later mutation of the caller's
    // array cannot change the key.
    sealingKeys.set(keyId, createSecretKey(bytes))
  }
  const activeKey = sealingKeys.get(active)
  if (activeKey === undefined) return Either.left(`active key id '${active}' is not in the keyring`)
  const fingerprintBytes = Redacted.value(config.fingerprintKey)
  if (fingerprintBytes.length < MIN_FINGERPRINT_KEY_LENGTH) {
    return Either.left(`fingerprint key must be at least ${MIN_FINGERPRINT_KEY_LENGTH} bytes, got ${fingerprintBytes.length}`)
  }
  // Reusing a sealing key for HMAC would couple two unrelated primitives.
  if (rawKeys.some((key) => Buffer.from(key).equals(Buffer.from(fingerprintBytes)))) {
    return Either.left("fingerprint key must differ from every sealing key")
  }
  return Either.right({
    activeKey,
    activeHeader: makeHeader(active),
    sealingKeys,
    fingerprintKey: createSecretKey(fingerprintBytes)
  })
}

/**
 * Parses the `SERVICE_SEALING_KEYS` format: comma-separated `kid:base64key`
 * entries (standard padded base64 of 32 bytes); the first entry is active.
 * Error messages name entry positions and key ids, never key material.
 *
 * @since 0.0.0
 * @category parsing
 */
export const parseSealingKeys = (input: string): Either.Either<Keyring, string> => {
  const entries = input.split(",").map((entry) => entry.trim())
  const keys = new Map<string, Redacted.Redacted<Uint8Array>>()
  let active: string | undefined
  for (const [index, entry] of entries.entries()) {
    const position = index + 1
    if (entry.length === 0) return Either.left(`entry ${position} is empty; expected kid:base64key[,kid:base64key...]`)
    const separator = entry.indexOf(":")
    if (separator === -1) return Either.left(`entry ${position} is not of the form kid:base64key`)
    const keyId = entry.slice(0, separator)
    if (!KEY_ID_PATTERN.test(keyId)) {
      return Either.left(`entry ${position} has an invalid key id; key ids must match [A-Za-z0-9_-]{1,16}`)
    }
    if (keys.has(keyId)) return Either.left(`key id '${keyId}' is listed more than once`)
    const decoded = decodeBase64(entry.slice(separator + 1))
    if (Option.isNone(decoded)) return Either.left(`key '${keyId}' is not valid padded base64`)
    if (decoded.value.length !== SEALING_KEY_LENGTH) {
      return Either.left(`key '${keyId}' must decode to ${SEALING_KEY_LENGTH} bytes, got ${decoded.value.length}`)
    }
    keys.set(keyId, Redacted.make(Uint8Array.from(decoded.value)))
    if (active === undefined) active = keyId
  }
  if (active === undefined) return Either.left("no keys given")
  return Either.right({ active, keys })
}

/**
 * Parses the `SERVICE_FINGERPRINT_KEY` format: standard padded base64 of at
 * least 32 bytes.
 *
 * @since 0.0.0
 * @category parsing
 */
export const parseFingerprintKey = (input: string): Either.Either<Redacted.Redacted<Uint8Array>, string> => {
  const decoded = decodeBase64(input.trim())
  if (Option.isNone(decoded)) return Either.left("fingerprint key is not valid padded base64")
  if (decoded.value.length < MIN_FINGERPRINT_KEY_LENGTH) {
    return Either.left(
      `fingerprint key must decode to at least ${MIN_FINGERPRINT_KEY_LENGTH} bytes, got ${decoded.value.length}`
    )
  }
  return Either.right(Redacted.make(Uint8Array.from(decoded.value)))
}

const invalidCombination = (message: string): ConfigError.ConfigError =>
  ConfigError.InvalidData([], `${SEALING_KEYS_VARIABLE} / ${FINGERPRINT_KEY_VARIABLE}: ${message}`)

/**
 * `CryptoConfig` read from `SERVICE_SEALING_KEYS` and
 * `SERVICE_FINGERPRINT_KEY` (both `Config.redacted`). Format problems are
 * `ConfigError.InvalidData` errors naming the variable.
 *
 * @since 0.0.0
 * @category config
 */
export const cryptoConfig: Config.Config<CryptoConfig> = Config.all({
  keyring: Config.redacted(SEALING_KEYS_VARIABLE).pipe(
    Config.mapOrFail((value) =>
      Either.mapLeft(
        parseSealingKeys(Redacted.value(value)),
        // mapOrFail does not prefix the variable name itself, so name it here.
        (message) => ConfigError.InvalidData([SEALING_KEYS_VARIABLE], message)
      )
    )
  ),
  fingerprintKey: Config.redacted(FINGERPRINT_KEY_VARIABLE).pipe(
    Config.mapOrFail((value) =>
      Either.mapLeft(
        parseFingerprintKey(Redacted.value(value)),
        (message) => ConfigError.InvalidData([FINGERPRINT_KEY_VARIABLE], message)
      )
    )
  )
}).pipe(
  // Cross-field checks (e.g. fingerprint key reused as a sealing key).
  Config.mapOrFail((config) =>
    Either.match(validateConfig(config), {
      onLeft: (message) => Either.left(invalidCombination(message)),
      onRight: () => Either.right(config)
    })
  )
)

// -----------------------------------------------------------------------------
// Service implementation
// -----------------------------------------------------------------------------

interface SealedParts {
  readonly header: Buffer
  readonly keyId: string
  readonly iv: Buffer
  readonly ciphertext: Buffer
  readonly tag: Buffer
}

const invalid = (reason: SealedValueInvalidReason) => new SealedValueInvalid({ reason })

// Layout: version (1) | key-id length (1) | key id | IV (12) | ciphertext | tag (16)
const parseSealed = (bytes: Buffer): Either.Either<SealedParts, SealedValueInvalid> => {
  if (bytes.length === 0) return Either.left(invalid("malformed"))
  if (bytes.readUInt8(0) !== SEALED_VERSION) return Either.left(invalid("unsupported_version"))
  if (bytes.length < 2) return Either.left(invalid("malformed"))
  const keyIdLength = bytes.readUInt8(1)
  if (keyIdLength < 1 || keyIdLength > MAX_KEY_ID_LENGTH) return Either.left(invalid("malformed"))
  const headerLength = 2 + keyIdLength
  if (bytes.length < headerLength + IV_LENGTH + TAG_LENGTH) return Either.left(invalid("malformed"))
  const keyId = bytes.subarray(2, headerLength).toString("latin1")
  if (!KEY_ID_PATTERN.test(keyId)) return Either.left(invalid("malformed"))
  const ivEnd = headerLength + IV_LENGTH
  const tagStart = bytes.length - TAG_LENGTH
  return Either.right({
    header: bytes.subarray(0, headerLength),
    keyId,
    iv: bytes.subarray(headerLength, ivEnd),
    ciphertext: bytes.subarray(ivEnd, tagStart),
    tag: bytes.subarray(tagStart)
  })
}

// Nonces are full 96-bit random values, drawn from the system in blocks of 256 rather than one call per seal: a
// page of 20 records made 21 calls into the system's random source (decision 0083). Each slice is handed out once.
const NONCES_PER_DRAW = 256
const makeNonces = () => {
  let block = randomBytes(IV_LENGTH * NONCES_PER_DRAW)
  let next = 0
  return (): Buffer => {
    if (next === NONCES_PER_DRAW) {
      block = randomBytes(IV_LENGTH * NONCES_PER_DRAW)
      next = 0
    }
    const nonce = block.subarray(next * IV_LENGTH, (next + 1) * IV_LENGTH)
    next++
    return nonce
  }
}

const makeService = (keys: ValidatedKeys): CryptoService => {
  const nonce = makeNonces()
  const seal = (purpose: string, plaintext: Uint8Array | string): Effect.Effect<string> =>
    Effect.sync(() => {
      const iv = nonce()
      const cipher = createCipheriv(ALGORITHM, keys.activeKey, iv, { authTagLength: TAG_LENGTH })
      cipher.setAAD(additionalData(keys.activeHeader, purpose))
      const ciphertext = Buffer.concat([cipher.update(toBytes(plaintext)), cipher.final()])
      return Buffer.concat([keys.activeHeader, iv, ciphertext, cipher.getAuthTag()]).toString("base64url")
    })

  const open = (purpose: string, sealed: string): Effect.Effect<Uint8Array, SealedValueInvalid> =>
    Effect.gen(function*() {
      const bytes = yield* Option.match(decodeBase64Url(sealed), {
        onNone: () => Effect.fail(invalid("malformed")),
        onSome: Effect.succeed
      })
      const parts = yield* parseSealed(bytes)
      const key = keys.sealingKeys.get(parts.keyId)
      if (key === undefined) return yield* Effect.fail(invalid("unknown_key"))
      return yield* Effect.try({
        try: () => {
          const decipher = createDecipheriv(ALGORITHM, key, parts.iv, { authTagLength: TAG_LENGTH })
          decipher.setAAD(additionalData(parts.header, purpose))
          decipher.setAuthTag(parts.tag)
          const plaintext = Buffer.concat([decipher.update(parts.ciphertext), decipher.final()])
          // Copy out of Node's pooled buffer into a plain, exclusively owned array.
          return Uint8Array.from(plaintext)
        },
        // Node's error says nothing useful beyond "unable to authenticate".
        catch: () => invalid("authentication_failed")
      })
    })

  const sealJson = (purpose: string, value: unknown): Effect.Effect<string, JsonEncodeError> =>
    Effect.try({
      try: () => JSON.stringify(value),
      catch: (cause) => new JsonEncodeError({ cause })
    }).pipe(
      Effect.flatMap((json: string | undefined) =>
        // JSON.stringify returns undefined (despite its type) for undefined,
        // functions and symbols.
        typeof json === "string" ? seal(purpose, json) : Effect.fail(new JsonEncodeError({}))
      )
    )

  const decodeJson = Schema.decodeUnknown(Schema.parseJson())
  const utf8 = new TextDecoder("utf-8", { fatal: true })

  const openJson = (purpose: string, sealed: string): Effect.Effect<unknown, SealedValueInvalid> =>
    open(purpose, sealed).pipe(
      Effect.flatMap((bytes) =>
        Effect.try({ try: () => utf8.decode(bytes), catch: () => invalid("malformed") })
      ),
      // Authentic but not JSON: it was sealed with `seal`, not `sealJson`.
      Effect.flatMap((text) => Effect.mapError(decodeJson(text), () => invalid("malformed")))
    )

  const fingerprint = (domain: string, value: string): Effect.Effect<string> =>
    Effect.sync(() => {
      // Length-prefixing the domain keeps ("ab", "c") and ("a", "bc") apart.
      const domainBytes = Buffer.from(domain, "utf8")
      const length = Buffer.alloc(4)
      length.writeUInt32BE(domainBytes.length)
      return createHmac("sha256", keys.fingerprintKey)
        .update(length)
        .update(domainBytes)
        .update(Buffer.from(value, "utf8"))
        .digest()
        .subarray(0, FINGERPRINT_BYTES)
        .toString("hex")
    })

  const webhookSecret = (): Effect.Effect<Redacted.Redacted<string>> => Effect.sync(() => Redacted.make(generateWebhookSecret()))

  const randomToken = (bytes: number = 32): Effect.Effect<string> =>
    // Below 16 bytes a token is guessable; an out-of-range size is a
    // programming error, hence a defect rather than a typed failure.
    Number.isInteger(bytes) && bytes >= MIN_TOKEN_BYTES && bytes <= MAX_TOKEN_BYTES
      ? Effect.sync(() => randomBytes(bytes).toString("base64url"))
      : Effect.dieMessage(`randomToken: bytes must be an integer in ${MIN_TOKEN_BYTES}..${MAX_TOKEN_BYTES}`)

  return { seal, sealJson, open, openJson, fingerprint, webhookSecret, randomToken, constantTimeEqual }
}

/**
 * Builds the service from explicit configuration, validating key ids, key
 * lengths, the active key and the separation of the fingerprint key.
 *
 * @since 0.0.0
 * @category constructors
 */
export const make = (config: CryptoConfig): Effect.Effect<CryptoService, CryptoConfigInvalid> =>
  Either.match(validateConfig(config), {
    onLeft: (message) => Effect.fail(new CryptoConfigInvalid({ message })),
    onRight: (keys) => Effect.succeed(makeService(keys))
  })

// Fixed, publicly known keys: deterministic fingerprints in tests, never
// acceptable in production.
const testConfig: CryptoConfig = {
  keyring: {
    active: "test",
    keys: new Map([["test", Redacted.make(new Uint8Array(SEALING_KEY_LENGTH).fill(0x42))]])
  },
  fingerprintKey: Redacted.make(new Uint8Array(MIN_FINGERPRINT_KEY_LENGTH).fill(0x24))
}

/**
 * Sealing, fingerprints, secrets and tokens.
 *
 * @since 0.0.0
 * @category tags
 */
export class Crypto extends Context.Tag("@service/core/Crypto")<Crypto, CryptoService>() {
  /** Service from explicit configuration; fails if the keys are unusable. */
  static readonly layer = (config: CryptoConfig): Layer.Layer<Crypto, CryptoConfigInvalid> =>
    Layer.effect(Crypto, make(config))

  /** Service from `SERVICE_SEALING_KEYS` / `SERVICE_FINGERPRINT_KEY` via `Config`. */
  static readonly layerConfig: Layer.Layer<Crypto, ConfigError.ConfigError> = Layer.effect(
    Crypto,
    Effect.flatMap(
      cryptoConfig,
      // cryptoConfig already validated; mapping keeps the error channel honest.
      (config) => Effect.mapError(make(config), (error) => invalidCombination(error.message))
    )
  )

  /** Service with fixed, well-known test keys. Never use outside tests. */
  static readonly layerTest: Layer.Layer<Crypto> = Layer.effect(Crypto, make(testConfig)).pipe(Layer.orDie)
}
