import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigError from "effect/ConfigError"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import {
  constantTimeEqual,
  Crypto,
  type CryptoService,
  generateKeyMaterial,
  isWebhookSecret,
  make,
  parseSealingKeys,
  SealedValueInvalid,
  type SealedValueInvalidReason
} from "../src/Crypto.js"

// -----------------------------------------------------------------------------
// Fixtures
// -----------------------------------------------------------------------------

const keyBytes = (fill: number): Uint8Array => new Uint8Array(32).fill(fill)
const KEY_A = keyBytes(0xa1)
const KEY_B = keyBytes(0xb2)
const FINGERPRINT_KEY = keyBytes(0xf1)
const OTHER_FINGERPRINT_KEY = keyBytes(0xf2)

// Builds a service from an ordered list of [keyId, key]; the first is active.
const service = (
  keys: ReadonlyArray<readonly [string, Uint8Array]>,
  fingerprintKey: Uint8Array = FINGERPRINT_KEY
): Effect.Effect<CryptoService, unknown> => {
  const first = keys[0]
  if (first === undefined) return Effect.dieMessage("fixture needs at least one key")
  return make({
    keyring: { active: first[0], keys: new Map(keys.map(([id, key]) => [id, Redacted.make(key)])) },
    fingerprintKey: Redacted.make(fingerprintKey)
  })
}

const serviceA = service([["a", KEY_A]])

const decode = (sealed: string): Buffer => Buffer.from(sealed, "base64url")
const encode = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url")
const utf8 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8")

const flipBit = (sealed: string, position: number, bit: number): string => {
  const bytes = decode(sealed)
  const index = position % bytes.length
  bytes.writeUInt8(bytes.readUInt8(index) ^ (1 << bit), index)
  return encode(bytes)
}

// Asserts `open` fails with SealedValueInvalid (optionally a given reason).
const expectInvalid = (
  effect: Effect.Effect<unknown, SealedValueInvalid>,
  reason?: SealedValueInvalidReason
): Effect.Effect<SealedValueInvalid> =>
  effect.pipe(
    Effect.flatMap(() => Effect.dieMessage("expected the sealed value to be rejected")),
    Effect.flip,
    Effect.tap((error) =>
      Effect.sync(() => {
        assert.instanceOf(error, SealedValueInvalid)
        assert.strictEqual(error._tag, "SealedValueInvalid")
        if (reason !== undefined) assert.strictEqual(error.reason, reason)
      })
    )
  )

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

const loadFromConfig = (env: Record<string, string>) =>
  Crypto.pipe(Effect.provide(Crypto.layerConfig), withEnv(env))

// -----------------------------------------------------------------------------
// seal / open
// -----------------------------------------------------------------------------

describe("seal / open", () => {
  it.effect.prop(
    "round trips arbitrary strings",
    { text: FastCheck.string({ unit: "binary", maxLength: 200 }), purpose: FastCheck.string({ maxLength: 20 }) },
    ({ purpose, text }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        const sealed = yield* crypto.seal(purpose, text)
        const opened = yield* crypto.open(purpose, sealed)
        assert.strictEqual(utf8(opened), text)
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect.prop(
    "round trips arbitrary bytes",
    { bytes: FastCheck.uint8Array({ maxLength: 600 }) },
    ({ bytes }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        const opened = yield* crypto.open("blob", yield* crypto.seal("blob", bytes))
        assert.deepStrictEqual(opened, Uint8Array.from(bytes))
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("produces unpadded base64url of version | kid length | kid | iv | ciphertext | tag", () =>
    Effect.gen(function*() {
      const crypto = yield* service([["key_1", KEY_A]])
      const sealed = yield* crypto.seal("record_ref", "hello")
      assert.match(sealed, /^[A-Za-z0-9_-]+$/)
      const bytes = decode(sealed)
      assert.strictEqual(bytes[0], 1)
      assert.strictEqual(bytes[1], 5)
      assert.strictEqual(bytes.subarray(2, 7).toString("latin1"), "key_1")
      assert.strictEqual(bytes.length, 1 + 1 + 5 + 12 + 5 + 16)
      // The plaintext must not appear in the output.
      assert.isFalse(bytes.includes(Buffer.from("hello")))
    }))

  it.effect("seals the same plaintext differently every time (fresh IV)", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      // Across several blocks of pre-drawn nonces (256 per draw): no nonce is handed out twice.
      const sealed = yield* Effect.all(Array.from({ length: 700 }, () => crypto.seal("p", "same")))
      assert.strictEqual(new Set(sealed).size, sealed.length)
      const ivs = sealed.map((s) => decode(s).subarray(3, 15).toString("hex"))
      assert.strictEqual(new Set(ivs).size, ivs.length)
      for (const s of sealed) assert.strictEqual(utf8(yield* crypto.open("p", s)), "same")
    }))

  it.effect("binds the purpose: a record_ref cannot be opened as a cursor", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const sealed = yield* crypto.seal("record_ref", "rec_123")
      yield* expectInvalid(crypto.open("cursor", sealed), "authentication_failed")
      yield* expectInvalid(crypto.open("record_ref ", sealed), "authentication_failed")
      yield* expectInvalid(crypto.open("", sealed), "authentication_failed")
      assert.strictEqual(utf8(yield* crypto.open("record_ref", sealed)), "rec_123")
    }))

  it.effect.prop(
    "rejects a single flipped bit anywhere in the decoded bytes",
    {
      plaintext: FastCheck.uint8Array({ maxLength: 64 }),
      position: FastCheck.nat(),
      bit: FastCheck.integer({ min: 0, max: 7 })
    },
    ({ bit, plaintext, position }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        const sealed = yield* crypto.seal("p", plaintext)
        yield* expectInvalid(crypto.open("p", flipBit(sealed, position, bit)))
      }),
    { fastCheck: { numRuns: 300 } }
  )

  it.effect("rejects every single-bit flip and every whole-byte change (exhaustive)", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const sealed = yield* crypto.seal("p", "exhaustive")
      const length = decode(sealed).length
      let checked = 0
      for (let position = 0; position < length; position++) {
        for (let bit = 0; bit < 8; bit++) {
          yield* expectInvalid(crypto.open("p", flipBit(sealed, position, bit)))
          checked++
        }
        const bytes = decode(sealed)
        bytes.writeUInt8(bytes.readUInt8(position) ^ 0xff, position)
        yield* expectInvalid(crypto.open("p", encode(bytes)))
      }
      assert.strictEqual(checked, length * 8)
      // Sanity: the untouched value still opens, so the failures above are real.
      assert.strictEqual(utf8(yield* crypto.open("p", sealed)), "exhaustive")
    }))

  it.effect("rejects every truncation and any extension", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const sealed = yield* crypto.seal("p", "truncate me")
      const bytes = decode(sealed)
      for (let length = 0; length < bytes.length; length++) {
        yield* expectInvalid(crypto.open("p", encode(bytes.subarray(0, length))))
      }
      for (let length = 0; length < sealed.length; length++) {
        yield* expectInvalid(crypto.open("p", sealed.slice(0, length)))
      }
      // Dropping bytes from the front (the header) must fail too.
      for (let start = 1; start < bytes.length; start++) {
        yield* expectInvalid(crypto.open("p", encode(bytes.subarray(start))))
      }
      yield* expectInvalid(crypto.open("p", encode(Buffer.concat([bytes, Buffer.of(0)]))))
    }))

  it.effect("rejects empty, non-base64url and non-canonical input as malformed", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const sealed = yield* crypto.seal("p", "x")
      for (const input of ["", "!", "a", "====", `${sealed}=`, ` ${sealed}`, `${sealed}\n`, sealed.replace(/.$/, "+")]) {
        yield* expectInvalid(crypto.open("p", input), "malformed")
      }
      // A standard-base64 rendering of valid bytes is not accepted either.
      const standard = decode(sealed).toString("base64")
      if (standard !== sealed) yield* expectInvalid(crypto.open("p", standard))
    }))

  it.effect("rejects base64url whose unused trailing bits are set (Node would decode it)", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      let tested = 0
      for (const plaintext of ["", "a", "ab"]) {
        const sealed = yield* crypto.seal("p", plaintext)
        if (sealed.length % 4 === 0) continue
        const last = alphabet.indexOf(sealed.slice(-1))
        // The lowest bit of the last character is always padding here.
        const variant = sealed.slice(0, -1) + alphabet.charAt(last ^ 1)
        assert.deepStrictEqual(decode(variant), decode(sealed))
        yield* expectInvalid(crypto.open("p", variant), "malformed")
        tested++
      }
      assert.isAbove(tested, 0)
    }))

  it.effect("rejects a wrong version byte", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const bytes = decode(yield* crypto.seal("p", "v"))
      for (const version of [0, 2, 255]) {
        bytes[0] = version
        yield* expectInvalid(crypto.open("p", encode(bytes)), "unsupported_version")
      }
    }))

  it.effect("binds the key id: relabelling to another id with the same key bytes fails", () =>
    Effect.gen(function*() {
      const crypto = yield* service([["a", KEY_A], ["b", KEY_A]])
      const bytes = decode(yield* crypto.seal("p", "v"))
      assert.strictEqual(bytes.subarray(2, 3).toString("latin1"), "a")
      bytes[2] = "b".charCodeAt(0)
      yield* expectInvalid(crypto.open("p", encode(bytes)), "authentication_failed")
    }))

  it.effect.prop(
    "rejects foreign values",
    { bytes: FastCheck.uint8Array({ minLength: 1, maxLength: 128 }) },
    ({ bytes }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        yield* expectInvalid(crypto.open("p", encode(bytes)))
        // Even with a well-formed header for a known key, authentication fails.
        const forged = Buffer.concat([Buffer.of(1, 1), Buffer.from("a"), Buffer.alloc(28), bytes])
        yield* expectInvalid(crypto.open("p", encode(forged)), "authentication_failed")
      }),
    { fastCheck: { numRuns: 200 } }
  )

  it.effect("rejects values sealed by a different keyring with the same key id", () =>
    Effect.gen(function*() {
      const ours = yield* serviceA
      const theirs = yield* service([["a", KEY_B]])
      yield* expectInvalid(ours.open("p", yield* theirs.seal("p", "v")), "authentication_failed")
    }))

  it.effect("error messages do not leak key material or the input", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const sealed = yield* crypto.seal("p", "secret plaintext")
      const error = yield* expectInvalid(crypto.open("other", sealed))
      const rendered = `${error.message} ${String(error)} ${JSON.stringify(error)}`
      assert.include(error.message, "authentication_failed")
      for (const needle of [Buffer.from(KEY_A).toString("base64"), Buffer.from(KEY_A).toString("hex"), sealed]) {
        assert.notInclude(rendered, needle)
      }
    }))
})

describe("key rotation", () => {
  it.effect("opens values under a retired key while it is listed, and not after removal", () =>
    Effect.gen(function*() {
      const before = yield* service([["a", KEY_A]])
      const sealedUnderA = yield* before.seal("p", "old")

      const rotated = yield* service([["b", KEY_B], ["a", KEY_A]])
      assert.strictEqual(utf8(yield* rotated.open("p", sealedUnderA)), "old")
      const sealedUnderB = yield* rotated.seal("p", "new")
      assert.strictEqual(decode(sealedUnderB).subarray(2, 3).toString("latin1"), "b")
      // The pre-rotation keyring does not know b.
      yield* expectInvalid(before.open("p", sealedUnderB), "unknown_key")

      const retired = yield* service([["b", KEY_B]])
      yield* expectInvalid(retired.open("p", sealedUnderA), "unknown_key")
      assert.strictEqual(utf8(yield* retired.open("p", sealedUnderB)), "new")
    }))
})

describe("sealJson / openJson", () => {
  it.effect.prop(
    "round trips JSON values",
    { value: FastCheck.jsonValue() },
    ({ value }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        const opened = yield* crypto.openJson("cursor", yield* crypto.sealJson("cursor", value))
        assert.strictEqual(JSON.stringify(opened), JSON.stringify(value))
      }),
    { fastCheck: { numRuns: 100 } }
  )

  it.effect("result decodes with a Schema; wrong purpose fails", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const Cursor = Schema.Struct({ after: Schema.String, limit: Schema.Number })
      const sealed = yield* crypto.sealJson("cursor", { after: "rec_9", limit: 50 })
      const cursor = yield* Schema.decodeUnknown(Cursor)(yield* crypto.openJson("cursor", sealed))
      assert.deepStrictEqual(cursor, { after: "rec_9", limit: 50 })
      yield* expectInvalid(crypto.openJson("record_ref", sealed), "authentication_failed")
    }))

  it.effect("authentic but non-JSON plaintext is malformed", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      yield* expectInvalid(crypto.openJson("p", yield* crypto.seal("p", "{not json")), "malformed")
      yield* expectInvalid(crypto.openJson("p", yield* crypto.seal("p", Uint8Array.of(0xff, 0xfe))), "malformed")
    }))

  it.effect("values without a JSON encoding fail with JsonEncodeError", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const cyclic: Record<string, unknown> = {}
      cyclic["self"] = cyclic
      for (const value of [undefined, 1n, cyclic, () => 1]) {
        const error = yield* Effect.flip(crypto.sealJson("p", value))
        assert.strictEqual(error._tag, "JsonEncodeError")
      }
    }))
})

// -----------------------------------------------------------------------------
// fingerprint
// -----------------------------------------------------------------------------

describe("fingerprint", () => {
  it.effect("is deterministic per key and 32 lowercase hex characters", () =>
    Effect.gen(function*() {
      const one = yield* serviceA
      // A separately built instance with the same fingerprint key but other sealing keys.
      const two = yield* service([["z", KEY_B]])
      const fp = yield* one.fingerprint("api_key", "sk_live_123")
      assert.match(fp, /^[0-9a-f]{32}$/)
      assert.strictEqual(yield* one.fingerprint("api_key", "sk_live_123"), fp)
      assert.strictEqual(yield* two.fingerprint("api_key", "sk_live_123"), fp)
      assert.notStrictEqual(yield* one.fingerprint("api_key", "sk_live_124"), fp)
    }))

  it.effect("differs across domains, without concatenation ambiguity", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      assert.notStrictEqual(yield* crypto.fingerprint("api_key", "v"), yield* crypto.fingerprint("email", "v"))
      assert.notStrictEqual(yield* crypto.fingerprint("ab", "c"), yield* crypto.fingerprint("a", "bc"))
      assert.notStrictEqual(yield* crypto.fingerprint("", "abc"), yield* crypto.fingerprint("abc", ""))
    }))

  it.effect("differs across fingerprint keys and is not keyed by the sealing key", () =>
    Effect.gen(function*() {
      const one = yield* service([["a", KEY_A]], FINGERPRINT_KEY)
      const other = yield* service([["a", KEY_A]], OTHER_FINGERPRINT_KEY)
      assert.notStrictEqual(yield* one.fingerprint("d", "v"), yield* other.fingerprint("d", "v"))
    }))

  it.effect.prop(
    "distinct values give distinct fingerprints",
    { values: FastCheck.uniqueArray(FastCheck.string({ unit: "binary" }), { minLength: 2, maxLength: 20 }) },
    ({ values }) =>
      Effect.gen(function*() {
        const crypto = yield* serviceA
        const fps = yield* Effect.forEach(values, (v) => crypto.fingerprint("d", v))
        assert.strictEqual(new Set(fps).size, values.length)
      }),
    { fastCheck: { numRuns: 50 } }
  )

  it.effect("layerTest keys are fixed: fingerprints agree across separate builds", () =>
    Effect.gen(function*() {
      const build = Effect.flatMap(Crypto, (c) => c.fingerprint("d", "v")).pipe(Effect.provide(Crypto.layerTest))
      assert.strictEqual(yield* build, yield* build)
      const other = yield* serviceA
      assert.notStrictEqual(yield* build, yield* other.fingerprint("d", "v"))
    }))
})

// -----------------------------------------------------------------------------
// secrets, tokens, comparison
// -----------------------------------------------------------------------------

describe("webhookSecret / isWebhookSecret", () => {
  it.effect("generates redacted whsec_ secrets of 32 random bytes", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const secret = yield* crypto.webhookSecret()
      assert.isTrue(Redacted.isRedacted(secret))
      assert.notInclude(String(secret), "whsec_")
      const value = Redacted.value(secret)
      assert.match(value, /^whsec_[A-Za-z0-9+/]{43}=$/)
      assert.strictEqual(Buffer.from(value.slice(6), "base64").length, 32)
      assert.isTrue(isWebhookSecret(value))
      assert.notStrictEqual(Redacted.value(yield* crypto.webhookSecret()), value)
    }))

  it("isWebhookSecret accepts whsec_ + base64 of 24..64 bytes only", () => {
    const b64 = (n: number) => Buffer.alloc(n, 7).toString("base64")
    const cases: ReadonlyArray<readonly [string, boolean]> = [
      [`whsec_${b64(24)}`, true],
      [`whsec_${b64(32)}`, true],
      [`whsec_${b64(64)}`, true],
      [`whsec_${b64(23)}`, false],
      [`whsec_${b64(65)}`, false],
      ["whsec_", false],
      [b64(32), false],
      [`WHSEC_${b64(32)}`, false],
      [`whsec_${Buffer.alloc(32, 7).toString("base64url")}`, false],
      [`whsec_${b64(32).replace(/=$/, "")}`, false],
      [`whsec_${b64(32)} `, false],
      [`whsec_!${b64(32).slice(1)}`, false]
    ]
    for (const [input, expected] of cases) assert.strictEqual(isWebhookSecret(input), expected, input)
  })
})

describe("randomToken", () => {
  it.effect("is url-safe, sized by bytes, and unique", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      const token = yield* crypto.randomToken()
      assert.match(token, /^[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(Buffer.from(token, "base64url").length, 32)
      assert.match(yield* crypto.randomToken(16), /^[A-Za-z0-9_-]{22}$/)
      const many = yield* Effect.all(Array.from({ length: 50 }, () => crypto.randomToken()))
      assert.strictEqual(new Set(many).size, 50)
    }))

  it.effect("refuses weak or absurd sizes as a defect", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      for (const bytes of [0, 8, 15, 1.5, 4096]) {
        const exit = yield* Effect.exit(crypto.randomToken(bytes))
        assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause), String(bytes))
      }
    }))
})

describe("constantTimeEqual", () => {
  it("truth table", () => {
    const cases: ReadonlyArray<readonly [string | Uint8Array, string | Uint8Array, boolean]> = [
      ["", "", true],
      ["a", "a", true],
      ["secret", "secret", true],
      ["a", "b", false],
      ["a", "ab", false],
      ["ab", "a", false],
      ["", "a", false],
      ["abc", "abd", false],
      ["é", "é", true],
      ["é", "e\u0301", false],
      ["a", Uint8Array.of(0x61), true],
      [Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3), true],
      [Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 4), false],
      [Uint8Array.of(1, 2, 3), Uint8Array.of(1, 2, 3, 0), false],
      [new Uint8Array(0), "", true]
    ]
    for (const [a, b, expected] of cases) {
      assert.strictEqual(constantTimeEqual(a, b), expected, `${String(a)} vs ${String(b)}`)
      assert.strictEqual(constantTimeEqual(b, a), expected, `${String(b)} vs ${String(a)}`)
    }
  })

  it.prop(
    "agrees with === on strings",
    { a: FastCheck.string({ maxLength: 8 }), b: FastCheck.string({ maxLength: 8 }) },
    ({ a, b }) => {
      assert.strictEqual(constantTimeEqual(a, b), a === b)
      assert.isTrue(constantTimeEqual(a, a))
    }
  )

  it.effect("is exposed on the service too", () =>
    Effect.gen(function*() {
      const crypto = yield* serviceA
      assert.isTrue(crypto.constantTimeEqual("x", "x"))
      assert.isFalse(crypto.constantTimeEqual("x", "y"))
    }))
})

// -----------------------------------------------------------------------------
// layers and configuration
// -----------------------------------------------------------------------------

describe("layers", () => {
  it.effect("layerConfig parses generated key material and works end to end", () =>
    Effect.gen(function*() {
      const material = generateKeyMaterial()
      assert.match(material.sealingKeys, /^[A-Za-z0-9_-]{8}:[A-Za-z0-9+/]{43}=$/)
      assert.match(material.fingerprintKey, /^[A-Za-z0-9+/]{43}=$/)
      assert.notStrictEqual(generateKeyMaterial().sealingKeys, material.sealingKeys)

      const env = { SERVICE_SEALING_KEYS: material.sealingKeys, SERVICE_FINGERPRINT_KEY: material.fingerprintKey }
      const crypto = yield* loadFromConfig(env)
      const sealed = yield* crypto.seal("p", "configured")
      assert.strictEqual(utf8(yield* crypto.open("p", sealed)), "configured")

      // Rotation through configuration: new key first, old key still listed.
      const next = generateKeyMaterial()
      const rotated = yield* loadFromConfig({
        ...env,
        SERVICE_SEALING_KEYS: ` ${next.sealingKeys} , ${material.sealingKeys} `
      })
      assert.strictEqual(utf8(yield* rotated.open("p", sealed)), "configured")
      const newKeyId = next.sealingKeys.split(":")[0] ?? ""
      assert.strictEqual(decode(yield* rotated.seal("p", "x")).subarray(2, 2 + newKeyId.length).toString(), newKeyId)
      assert.strictEqual(yield* rotated.fingerprint("d", "v"), yield* crypto.fingerprint("d", "v"))
    }))

  it.effect("layerConfig rejects malformed configuration with a ConfigError", () =>
    Effect.gen(function*() {
      const good = generateKeyMaterial()
      const goodKey = good.sealingKeys.split(":")[1] ?? ""
      const shortKey = Buffer.alloc(16, 1).toString("base64")
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "SERVICE_SEALING_KEYS"],
        [{ SERVICE_SEALING_KEYS: good.sealingKeys }, "SERVICE_FINGERPRINT_KEY"],
        [{ SERVICE_SEALING_KEYS: "", SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "empty"],
        [{ SERVICE_SEALING_KEYS: goodKey, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "kid:base64key"],
        [{ SERVICE_SEALING_KEYS: `bad kid!:${goodKey}`, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "key id"],
        [{ SERVICE_SEALING_KEYS: `k:${shortKey}`, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "32 bytes"],
        [{ SERVICE_SEALING_KEYS: `k:not*base64`, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "base64"],
        [{ SERVICE_SEALING_KEYS: `k:${goodKey},k:${goodKey}`, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "more than once"],
        [{ SERVICE_SEALING_KEYS: `${good.sealingKeys},`, SERVICE_FINGERPRINT_KEY: good.fingerprintKey }, "entry 2"],
        [{ SERVICE_SEALING_KEYS: good.sealingKeys, SERVICE_FINGERPRINT_KEY: shortKey }, "at least 32 bytes"],
        [{ SERVICE_SEALING_KEYS: good.sealingKeys, SERVICE_FINGERPRINT_KEY: "%%%" }, "base64"],
        [{ SERVICE_SEALING_KEYS: good.sealingKeys, SERVICE_FINGERPRINT_KEY: goodKey }, "differ"]
      ]
      for (const [env, expected] of cases) {
        const error = yield* Effect.flip(loadFromConfig(env))
        assert.isTrue(ConfigError.isConfigError(error))
        const rendered = String(error)
        assert.include(rendered, expected, rendered)
        // Never echo key material back.
        assert.notInclude(rendered, goodKey)
        assert.notInclude(rendered, good.fingerprintKey)
      }
    }))

  it.effect("Crypto.layer rejects unusable keyrings", () =>
    Effect.gen(function*() {
      const redact = (k: Uint8Array) => Redacted.make(k)
      const cases = [
        { keyring: { active: "x", keys: new Map([["a", redact(KEY_A)]]) }, fingerprintKey: redact(FINGERPRINT_KEY) },
        { keyring: { active: "a", keys: new Map([["a", redact(new Uint8Array(16))]]) }, fingerprintKey: redact(FINGERPRINT_KEY) },
        { keyring: { active: "a", keys: new Map([["a", redact(KEY_A)]]) }, fingerprintKey: redact(new Uint8Array(31)) },
        { keyring: { active: "a", keys: new Map([["a", redact(KEY_A)]]) }, fingerprintKey: redact(KEY_A) },
        { keyring: { active: "a b", keys: new Map([["a b", redact(KEY_A)]]) }, fingerprintKey: redact(FINGERPRINT_KEY) },
        { keyring: { active: "a", keys: new Map<string, Redacted.Redacted<Uint8Array>>() }, fingerprintKey: redact(FINGERPRINT_KEY) }
      ]
      for (const config of cases) {
        const error = yield* Effect.flip(Layer.build(Crypto.layer(config)).pipe(Effect.scoped))
        assert.strictEqual(error._tag, "CryptoConfigInvalid")
      }
      // And accepts a good one.
      const crypto = yield* Effect.provide(
        Crypto,
        Crypto.layer({ keyring: { active: "a", keys: new Map([["a", redact(KEY_A)]]) }, fingerprintKey: redact(FINGERPRINT_KEY) })
      )
      assert.strictEqual(utf8(yield* crypto.open("p", yield* crypto.seal("p", "ok"))), "ok")
    }))

  it("parseSealingKeys keeps order: the first key is active", () => {
    const one = generateKeyMaterial().sealingKeys
    const two = generateKeyMaterial().sealingKeys
    const parsed = parseSealingKeys(`${two},${one}`)
    assert.isTrue(Either.isRight(parsed))
    if (Either.isRight(parsed)) {
      assert.strictEqual(parsed.right.active, two.split(":")[0])
      assert.strictEqual(parsed.right.keys.size, 2)
    }
  })
})
