import { assert, describe, it } from "@effect/vitest"
import { generateWebhookSecret } from "@service/core/Crypto"
import * as Option from "effect/Option"
import { Webhook } from "standardwebhooks"
import {
  decodeBase64,
  isValidSecret,
  secretKey,
  sign,
  signAll,
  signatureEntries
} from "../src/WebhookSignature.js"

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

// The two official vectors of the Standard Webhooks reference libraries (JavaScript and Rust test suites).
const vectors = [
  {
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    timestamp: 1614265330,
    payload: "{\"test\": 2432232314}",
    signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
  },
  {
    secret: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
    id: "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
    timestamp: 1649367553,
    payload: "{\"email\":\"test@example.com\",\"username\":\"test_user\"}",
    signature: "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
  }
]

// The reference package checks the timestamp against the wall clock: sign with a current one.
const nowSeconds = () => Math.floor(Date.now() / 1000)

const referenceVerifies = (secret: string, id: string, timestamp: number, body: string, signature: string): boolean => {
  try {
    new Webhook(secret).verify(body, {
      "webhook-id": id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature
    })
    return true
  } catch {
    return false
  }
}

describe("WebhookSignature", () => {
  it("reproduces the official vectors", () => {
    for (const vector of vectors) {
      assert.strictEqual(
        sign({ secret: vector.secret, id: vector.id, timestamp: vector.timestamp, body: utf8(vector.payload) }),
        vector.signature
      )
    }
  })

  it("signs what the reference package verifies, for a fresh secret and a body that is not ASCII", () => {
    const secret = generateWebhookSecret()
    const body = "{\"name\":\"Zoë Ångström\"}"
    const timestamp = nowSeconds()
    const signature = sign({ secret, id: "msg_utf8", timestamp, body: utf8(body) })
    assert.isTrue(referenceVerifies(secret, "msg_utf8", timestamp, body, signature))
    assert.isFalse(referenceVerifies(generateWebhookSecret(), "msg_utf8", timestamp, body, signature))
  })

  it("signAll gives one v1 entry per secret, in order, each verifiable on its own (renewal overlap)", () => {
    const previous = generateWebhookSecret()
    const current = generateWebhookSecret()
    const body = "{\"eventId\":\"evt_1\"}"
    const timestamp = nowSeconds()
    const header = signAll({ secrets: [current, previous], id: "evt_1", timestamp, body: utf8(body) })
    const entries = header.split(" ")
    assert.strictEqual(entries.length, 2)
    assert.deepStrictEqual(entries, [
      sign({ secret: current, id: "evt_1", timestamp, body: utf8(body) }),
      sign({ secret: previous, id: "evt_1", timestamp, body: utf8(body) })
    ])
    assert.isTrue(referenceVerifies(current, "evt_1", timestamp, body, header))
    assert.isTrue(referenceVerifies(previous, "evt_1", timestamp, body, header))
    assert.isFalse(referenceVerifies(generateWebhookSecret(), "evt_1", timestamp, body, header))
    assert.strictEqual(signAll({ secrets: [current], id: "evt_1", timestamp, body: utf8(body) }), entries[0])
  })

  it("throws when asked to sign with an undecodable secret (a programming defect)", () => {
    assert.throws(() => sign({ secret: "whsec_not base64!", id: "m", timestamp: 1, body: utf8("") }))
  })

  it("reads only canonical, padded, standard base64", () => {
    assert.deepStrictEqual(Option.map(decodeBase64("AQID"), (bytes) => [...bytes]), Option.some([1, 2, 3]))
    for (const bad of ["", "AQI", "AQ-_", "AQ==\n", "AR==", "A Q=="]) {
      assert.isTrue(Option.isNone(decodeBase64(bad)), JSON.stringify(bad))
    }
    assert.isTrue(Option.isSome(secretKey("whsec_AQID")))
    assert.isTrue(Option.isSome(secretKey("AQID")))
    assert.isTrue(Option.isNone(secretKey("whsec_AQ-_")))
  })

  it("splits a webhook-signature list into its well-formed entries", () => {
    assert.deepStrictEqual(signatureEntries("v1,abc v1a,def junk"), Option.some([["v1", "abc"], ["v1a", "def"]]))
    assert.isTrue(Option.isNone(signatureEntries(" ,abc")))
  })

  it("accepts as a secret whsec_ + padded standard base64 of 24 to 64 bytes only", () => {
    const secretOf = (bytes: number) => `whsec_${Buffer.alloc(bytes, 0xfb).toString("base64")}`
    assert.isTrue(isValidSecret(secretOf(24)))
    assert.isTrue(isValidSecret(secretOf(64)))
    assert.isTrue(isValidSecret(generateWebhookSecret()))
    assert.isFalse(isValidSecret(secretOf(23)))
    assert.isFalse(isValidSecret(secretOf(65)))
    assert.isFalse(isValidSecret(secretOf(32).slice("whsec_".length)))
    assert.isFalse(isValidSecret(secretOf(32).replace(/=+$/, "")))
    assert.isFalse(isValidSecret(`whsec_${Buffer.alloc(32, 0xfb).toString("base64url")}`))
  })
})
