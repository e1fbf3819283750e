import { assert, describe, it } from "@effect/vitest"
import { vi } from "vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { DoorCode } from "../src/DoorRefusal.js"
import { generateWebhookSecret as generateSecret } from "@service/core/Crypto"
import { isValidSecret, sign, verify } from "../src/StandardWebhooks.js"
import { readJson } from "./support/data.js"

// Wraps the real `timingSafeEqual` so a test can see the comparison go through it; behaviour is unchanged.
vi.mock("node:crypto", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:crypto")>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})
const { timingSafeEqual } = await import("node:crypto")

// -----------------------------------------------------------------------------
// Vectors
// -----------------------------------------------------------------------------

const Vector = Schema.Struct({
  name: Schema.String,
  secret: Schema.String,
  other_secret: Schema.optional(Schema.String),
  payload: Schema.String,
  now: Schema.Number,
  headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  expected: Schema.Literal("valid", "invalid"),
  reason: Schema.optional(DoorCode)
})
const Vectors = Schema.Struct({ cases: Schema.Array(Vector) })

const { cases: vectors } = Schema.decodeUnknownSync(Vectors)(readJson("standard-webhooks-vectors.json"))

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

const codeOf = (result: ReturnType<typeof verify>): string =>
  Either.match(result, { onLeft: (refusal) => refusal.code, onRight: () => "valid" })

// The rotation vector signs with two secrets.
const rotation = vectors.find((vector) => vector.other_secret !== undefined)

describe("StandardWebhooks", () => {
  describe("vectors (standard-webhooks-vectors.json)", () => {
    it("holds the 30 recorded cases", () => {
      assert.strictEqual(vectors.length, 30)
    })

    for (const vector of vectors) {
      it(vector.name, () => {
        const result = verify({
          secrets: [vector.secret],
          headers: vector.headers,
          body: utf8(vector.payload),
          now: vector.now
        })
        if (vector.expected === "valid") {
          assert.deepStrictEqual(
            result,
            Either.right({
              id: vector.headers["webhook-id"] ?? "",
              timestamp: Number(vector.headers["webhook-timestamp"])
            })
          )
        } else {
          assert.strictEqual(codeOf(result), vector.reason)
        }
      })
    }
  })

  describe("rotation", () => {
    it("accepts the rotation header with either secret alone or both", () => {
      if (rotation === undefined || rotation.other_secret === undefined) return assert.fail("rotation vector missing")
      const check = (secrets: ReadonlyArray<string>) =>
        codeOf(verify({ secrets, headers: rotation.headers, body: utf8(rotation.payload), now: rotation.now }))
      assert.strictEqual(check([rotation.secret]), "valid")
      assert.strictEqual(check([rotation.other_secret]), "valid")
      assert.strictEqual(check([rotation.other_secret, rotation.secret]), "valid")
    })

    it("accepts a header signed with the old secret only while the old secret is still listed", () => {
      const previous = generateSecret()
      const current = generateSecret()
      const body = utf8('{"a":1}')
      const headers = {
        "webhook-id": "msg_rot",
        "webhook-timestamp": "1700000000",
        "webhook-signature": sign({ secret: previous, id: "msg_rot", timestamp: 1700000000, body })
      }
      assert.strictEqual(codeOf(verify({ secrets: [current, previous], headers, body, now: 1700000000 })), "valid")
      assert.strictEqual(codeOf(verify({ secrets: [current], headers, body, now: 1700000000 })), "invalid_signature")
    })

    it("refuses when no secret is given (an unknown Source looks like a bad signature)", () => {
      const vector = vectors[0]
      if (vector === undefined) return assert.fail("no vectors")
      const result = verify({ secrets: [], headers: vector.headers, body: utf8(vector.payload), now: vector.now })
      assert.strictEqual(codeOf(result), "invalid_signature")
    })
  })

  describe("sign", () => {
    it("reproduces the signatures of the valid single-secret vectors", () => {
      for (const vector of vectors) {
        const signature = vector.headers["webhook-signature"]
        if (vector.expected !== "valid" || signature === undefined || signature.includes(" ")) continue
        const signed = sign({
          secret: vector.secret,
          id: vector.headers["webhook-id"] ?? "",
          timestamp: Number(vector.headers["webhook-timestamp"]),
          body: utf8(vector.payload)
        })
        assert.strictEqual(signed, signature, vector.name)
      }
    })

    it("round-trips with verify over raw bytes that are not UTF-8", () => {
      const secret = generateSecret()
      const body = new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0x80])
      const signature = sign({ secret, id: "msg_bytes", timestamp: 1700000000, body })
      assert.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/)
      const headers = { "webhook-id": "msg_bytes", "webhook-timestamp": "1700000000", "webhook-signature": signature }
      assert.deepStrictEqual(
        verify({ secrets: [secret], headers, body, now: 1700000100 }),
        Either.right({ id: "msg_bytes", timestamp: 1700000000 })
      )
      const altered = Uint8Array.from(body, (byte, index) => (index === 4 ? 0x81 : byte))
      assert.strictEqual(
        codeOf(verify({ secrets: [secret], headers, body: altered, now: 1700000100 })),
        "invalid_signature"
      )
    })

    it("throws on an undecodable secret (a programming defect)", () => {
      assert.throws(() => sign({ secret: "whsec_not base64!", id: "m", timestamp: 1, body: utf8("") }))
    })
  })

  describe("headers", () => {
    const vector = vectors[0]
    const body = utf8(vector?.payload ?? "")
    const now = vector?.now ?? 0
    const secrets = [vector?.secret ?? ""]
    const id = vector?.headers["webhook-id"] ?? ""
    const timestamp = vector?.headers["webhook-timestamp"] ?? ""
    const signature = vector?.headers["webhook-signature"] ?? ""

    it("reads header names case-insensitively", () => {
      const headers = { "Webhook-Id": id, "WEBHOOK-TIMESTAMP": timestamp, "webhook-Signature": signature }
      assert.strictEqual(codeOf(verify({ secrets, headers, body, now })), "valid")
    })

    it("ignores headers whose value is undefined and refuses a name given twice with different values", () => {
      const base = { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature }
      assert.strictEqual(codeOf(verify({ secrets, headers: { ...base, "Webhook-Id": undefined }, body, now })), "valid")
      assert.strictEqual(
        codeOf(verify({ secrets, headers: { ...base, "Webhook-Id": "msg_other" }, body, now })),
        "webhook_headers"
      )
    })

    it("refuses an empty webhook-id or one with whitespace", () => {
      for (const badId of ["", "msg with space", "msg\tx"]) {
        const headers = { "webhook-id": badId, "webhook-timestamp": timestamp, "webhook-signature": signature }
        assert.strictEqual(codeOf(verify({ secrets, headers, body, now })), "webhook_headers", JSON.stringify(badId))
      }
    })

    it("refuses a signature header with no version,signature entry as malformed", () => {
      for (const bad of ["", " ", "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", ",abc"]) {
        const headers = { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": bad }
        assert.strictEqual(codeOf(verify({ secrets, headers, body, now })), "webhook_headers", JSON.stringify(bad))
      }
    })

    it("refuses fractional, signed and spaced timestamps", () => {
      for (const bad of ["1614265330.9", "+1614265330", " 1614265330", ""]) {
        const headers = { "webhook-id": id, "webhook-timestamp": bad, "webhook-signature": signature }
        assert.strictEqual(codeOf(verify({ secrets, headers, body, now })), "webhook_headers", JSON.stringify(bad))
      }
    })

    it("checks the timestamp before the signature", () => {
      const headers = { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": "v1,garbage" }
      assert.strictEqual(codeOf(verify({ secrets, headers, body, now: now + 1000 })), "stale_timestamp")
    })

    it("honours a custom tolerance", () => {
      const headers = { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature }
      assert.strictEqual(codeOf(verify({ secrets, headers, body, now: now + 60, toleranceSeconds: 60 })), "valid")
      assert.strictEqual(
        codeOf(verify({ secrets, headers, body, now: now + 61, toleranceSeconds: 60 })),
        "stale_timestamp"
      )
    })
  })

  describe("constant-time comparison", () => {
    const vector = vectors[0]
    const body = utf8(vector?.payload ?? "")
    const now = vector?.now ?? 0
    const secrets = [vector?.secret ?? ""]
    const headersWith = (signature: string) => ({
      "webhook-id": vector?.headers["webhook-id"] ?? "",
      "webhook-timestamp": vector?.headers["webhook-timestamp"] ?? "",
      "webhook-signature": signature
    })

    it("compares equal-length decoded signatures with timingSafeEqual", () => {
      vi.mocked(timingSafeEqual).mockClear()
      const wrong = `v1,${Buffer.alloc(32, 7).toString("base64")}`
      assert.strictEqual(codeOf(verify({ secrets, headers: headersWith(wrong), body, now })), "invalid_signature")
      assert.strictEqual(vi.mocked(timingSafeEqual).mock.calls.length, 1)
      const [left, right] = vi.mocked(timingSafeEqual).mock.calls[0] ?? []
      assert.strictEqual(left?.byteLength, 32)
      assert.strictEqual(right?.byteLength, 32)
    })

    it("compares every entry against every secret, with no early exit", () => {
      vi.mocked(timingSafeEqual).mockClear()
      const right = vector?.headers["webhook-signature"] ?? ""
      const decoy = `v1,${Buffer.alloc(32, 1).toString("base64")}`
      const other = generateSecret()
      assert.strictEqual(
        codeOf(verify({ secrets: [...secrets, other], headers: headersWith(`${right} ${decoy}`), body, now })),
        "valid"
      )
      assert.strictEqual(vi.mocked(timingSafeEqual).mock.calls.length, 4)
    })

    it("treats wrong-length, non-base64, URL-safe and non-canonical signatures as non-matching without throwing", () => {
      const right = (vector?.headers["webhook-signature"] ?? "").slice(3)
      const candidates = [
        `v1,${Buffer.alloc(31, 7).toString("base64")}`,
        `v1,${Buffer.alloc(33, 7).toString("base64")}`,
        "v1,!!!!",
        `v1,${right.replaceAll("+", "-").replaceAll("/", "_")}`,
        `v1,${right.replace("=", "")}`,
        // Same bytes as the valid signature but with non-zero padding bits in the last character.
        `v1,${right.slice(0, 42)}${String.fromCharCode(right.charCodeAt(42) + 1)}=`
      ]
      for (const candidate of candidates) {
        assert.strictEqual(
          codeOf(verify({ secrets, headers: headersWith(candidate), body, now })),
          "invalid_signature",
          candidate
        )
      }
    })
  })

  describe("secrets", () => {
    it("treats an undecodable secret as a non-matching key instead of failing", () => {
      // A vector whose secret uses + or /, so its URL-safe spelling differs.
      const vector = vectors.find((candidate) => candidate.expected === "valid" && /[+/]/.test(candidate.secret))
      if (vector === undefined) return assert.fail("no vector with + or / in its secret")
      const input = { headers: vector.headers, body: utf8(vector.payload), now: vector.now }
      const urlSafe = vector.secret.replaceAll("+", "-").replaceAll("/", "_")
      assert.strictEqual(codeOf(verify({ ...input, secrets: ["whsec_not base64!", urlSafe] })), "invalid_signature")
      assert.strictEqual(codeOf(verify({ ...input, secrets: ["whsec_not base64!", vector.secret] })), "valid")
    })

    it("accepts whsec_ + padded standard base64 of 24 to 64 bytes only", () => {
      const secretOf = (bytes: number, fill = 0xab) => `whsec_${Buffer.alloc(bytes, fill).toString("base64")}`
      assert.isTrue(isValidSecret(secretOf(24)))
      assert.isTrue(isValidSecret(secretOf(32)))
      assert.isTrue(isValidSecret(secretOf(64)))
      assert.isFalse(isValidSecret(secretOf(23)))
      assert.isFalse(isValidSecret(secretOf(65)))
      assert.isFalse(isValidSecret(secretOf(32).slice("whsec_".length)))
      assert.isFalse(isValidSecret(secretOf(32).replace(/=+$/, "")))
      assert.isFalse(isValidSecret(`whsec_${Buffer.alloc(32, 0xfb).toString("base64url")}`))
      assert.isFalse(isValidSecret(`${secretOf(32)} `))
      assert.isFalse(isValidSecret("whsec_"))
    })

    it("generates valid, distinct 32-byte secrets", () => {
      const first = generateSecret()
      const second = generateSecret()
      assert.isTrue(isValidSecret(first))
      assert.notStrictEqual(first, second)
      assert.strictEqual(Buffer.from(first.slice("whsec_".length), "base64").length, 32)
    })
  })
})
