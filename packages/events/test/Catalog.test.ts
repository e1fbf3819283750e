import { assert, describe, it } from "@effect/vitest"
import * as Catalog from "../src/Catalog.js"

describe("the event catalog", () => {
  it("has fourteen events with the names the spec fixes, each delivered by webhook", () => {
    assert.strictEqual(Catalog.events.length, 14)
    assert.strictEqual(new Set(Catalog.names).size, 14)
    for (const name of ["contact.created", "contact.updated", "opportunity.moved"]) assert.isTrue(Catalog.isCatalogType(name), name)
    assert.isFalse(Catalog.isCatalogType("contact.deleted"))
    assert.isTrue(Catalog.events.every((e) => e.delivery.length === 1 && e.delivery[0] === "webhook"))
    assert.deepStrictEqual([...Catalog.appliedTypes], ["contact.created", "contact.updated"])
  })

  it("lists JSON Schemas whose payloads never name an email or a phone", () => {
    for (const event of Catalog.events) {
      const listed = Catalog.listing(event)
      const text = JSON.stringify(listed.payloadSchema).toLowerCase()
      assert.notMatch(text, /email|phone/, event.name)
      assert.strictEqual(JSON.stringify(listed.inputSchema).includes("subject"), true)
    }
  })
})
