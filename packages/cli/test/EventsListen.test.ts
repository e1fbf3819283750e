import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { createHmac, randomBytes } from "node:crypto"
import * as EventsListen from "../src/EventsListen.js"

const secret = `whsec_${randomBytes(32).toString("base64")}`
const other = `whsec_${randomBytes(32).toString("base64")}`
const now = 1_764_028_800
const body = new TextEncoder().encode(JSON.stringify({ eventId: "evt_1", name: "contact.created", data: { contact_id: "c1" } }))

// Signed the way the service signs (Standard Webhooks 1.0.0), independently of the code under test.
const sign = (key: string, id: string, timestamp: number, bytes: Uint8Array) =>
  `v1,${createHmac("sha256", Buffer.from(key.slice("whsec_".length), "base64")).update(`${id}.${timestamp}.`).update(bytes).digest("base64")}`

const headers = (signature: string, timestamp = now) => ({ id: "evt_1", timestamp: String(timestamp), signature })

describe("EventsListen", () => {
  it("verifies a delivery signed with the Destination's secret, also among several signatures", () => {
    assert.isTrue(Either.isRight(EventsListen.verify(secret, headers(sign(secret, "evt_1", now, body)), body, now)))
    const rotating = `${sign(other, "evt_1", now, body)} ${sign(secret, "evt_1", now, body)}`
    assert.isTrue(Either.isRight(EventsListen.verify(secret, headers(rotating), body, now + 299)))
  })

  it("refuses another secret, a changed body or id, an old or future timestamp, and missing headers", () => {
    const good = sign(secret, "evt_1", now, body)
    const refused = (result: Either.Either<void, string>) => Either.isLeft(result)
    assert.isTrue(refused(EventsListen.verify(other, headers(good), body, now)))
    assert.isTrue(refused(EventsListen.verify(secret, headers(good), new TextEncoder().encode("{}"), now)))
    assert.isTrue(refused(EventsListen.verify(secret, { ...headers(good), id: "evt_2" }, body, now)))
    assert.isTrue(refused(EventsListen.verify(secret, headers(sign(secret, "evt_1", now - 301, body), now - 301), body, now)))
    assert.isTrue(refused(EventsListen.verify(secret, headers(sign(secret, "evt_1", now + 301, body), now + 301), body, now)))
    assert.isTrue(refused(EventsListen.verify(secret, { ...headers(good), signature: undefined }, body, now)))
    assert.isTrue(refused(EventsListen.verify(secret, headers(good.replace("v1,", "v2,")), body, now)))
  })

  it("names the record an event is about from its data, when it can", () => {
    assert.strictEqual(EventsListen.subjectOf("contact.created", { contact_id: "contact_1" }), "contact/contact_1")
    assert.strictEqual(EventsListen.subjectOf("arrival.settled", { arrival_id: "arr_1" }), "arrival/arr_1")
    assert.isUndefined(EventsListen.subjectOf("contacts.unlocked", { collection_id: "col_1" }))
    assert.isUndefined(EventsListen.subjectOf("contact.created", null))
  })

  it("tells a person to start the server with the setting", () => {
    assert.include(EventsListen.privateAddressesHint("http://127.0.0.1:3000"), "SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true")
  })
})
