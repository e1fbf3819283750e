import { assert, describe, it } from "@effect/vitest"
import * as Catalog from "../src/Catalog.js"

describe("the event catalog", () => {
  it("has the spec's fourteen events, the CRM's five, the breaker's two and the saved searches' alert, each delivered by webhook", () => {
    assert.strictEqual(Catalog.events.length, 22)
    assert.strictEqual(new Set(Catalog.names).size, 22)
    assert.deepStrictEqual(Catalog.names.slice(14), [
      "pipeline.created",
      "pipeline.updated",
      "collection.created",
      "collection.updated",
      "collection.deleted",
      "destination.paused",
      "destination.resumed",
      "search.matched"
    ])
    for (const name of ["contact.created", "contact.updated", "opportunity.moved"]) assert.isTrue(Catalog.isCatalogType(name), name)
    assert.isFalse(Catalog.isCatalogType("contact.deleted"))
    assert.isTrue(Catalog.events.every((e) => e.delivery.length === 1 && e.delivery[0] === "webhook"))
    assert.deepStrictEqual([...Catalog.appliedTypes], ["contact.created", "contact.updated"])
  })

  it("the door takes every catalog event but the ones the service records itself", () => {
    assert.deepStrictEqual(Catalog.names.filter((name) => !Catalog.isIntakeType(name)), [
      "pipeline.created",
      "pipeline.updated",
      "collection.created",
      "collection.updated",
      "collection.deleted",
      "destination.paused",
      "destination.resumed",
      "search.matched"
    ])
    assert.isTrue(Catalog.isCatalogType("destination.paused"))
    assert.isFalse(Catalog.isIntakeType("contact.deleted"))
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
