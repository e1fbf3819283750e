import * as OpenApi from "@effect/platform/OpenApi"
import { assert, describe, it } from "@effect/vitest"
import * as Operation from "@service/core/Operation"
import * as Refusal from "@service/core/Refusal"
import * as MarketOperations from "@service/market-contract/Operations"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"
import * as Predicate from "effect/Predicate"
import * as GroupApi from "../src/GroupApi.js"
import * as ToyDomain from "./support/ToyDomain.js"

const documentOf = (groups: ReadonlyArray<Operation.Group<unknown>>): Record<string, unknown> =>
  JSON.parse(JSON.stringify(OpenApi.fromApi(GroupApi.make(groups))))

const record = (value: unknown): Record<string, unknown> => (Predicate.isRecord(value) ? value : {})

/** Every value found under `key` anywhere in `value`. */
const collect = (value: unknown, key: string, into: Array<unknown> = []): Array<unknown> => {
  if (Array.isArray(value)) for (const element of value) collect(element, key, into)
  else if (Predicate.isRecord(value)) {
    for (const [k, element] of Object.entries(value)) {
      if (k === key) into.push(element)
      collect(element, key, into)
    }
  }
  return into
}

/**
 * The OpenAPI 3.1 document schema (seriousme's validator, which checks structure strictly but not Schema
 * Objects), then every Schema Object compiled by Ajv's JSON Schema 2020-12 implementation in strict mode
 * (unknown keywords, invalid `$id`s or `$ref`s fail). `strictTypes` stays off: a `$ref` with sibling
 * `minimum`/`maximum` is valid 2020-12 that Ajv's stricter typing rule rejects.
 */
const validate = (document: Record<string, unknown>) =>
  Effect.gen(function*() {
    const result = yield* Effect.promise(() => new Validator().validate(document))
    assert.isTrue(result.valid, JSON.stringify(result.errors))
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allErrors: true, validateFormats: false })
    ajv.addKeyword("components")
    const base = "https://service.test/openapi.json"
    ajv.addSchema({ $id: base, components: document["components"] })
    for (const name of Object.keys(record(record(document["components"])["schemas"]))) {
      assert.isFunction(ajv.getSchema(`${base}#/components/schemas/${name}`), name)
    }
    for (const [i, schema] of collect(document["paths"], "schema").entries()) {
      const inline = { $id: `${base}/inline/${i}`, ...record(schema) }
      const refs = JSON.parse(JSON.stringify(inline).replaceAll('"#/components/', `"${base}#/components/`))
      assert.isFunction(ajv.compile(refs), JSON.stringify(schema))
    }
  })

/** The statuses an operation can answer with, computed from its declaration alone. */
const expectedStatuses = (group: Operation.Group<unknown>, op: Operation.AnyOperation<unknown>): ReadonlyArray<string> => {
  const statuses = new Set<number>([200, 401, 403, 429, ...Refusal.statusesOf(group.refusals, op.refuses)])
  statuses.add(group.refusals.rules[group.refusals.invalidInputCode]?.status ?? 0)
  if (group.http.workspaceScoped) statuses.add(404)
  // A metered operation can find the workspace's credits exhausted; a free one never can.
  if (op.metered) statuses.add(402)
  if (op.http.input.kind === "body") {
    statuses.add(413)
    statuses.add(415)
  }
  return [...statuses].sort((a, b) => a - b).map(String)
}

const operationAt = (document: Record<string, unknown>, group: Operation.Group<unknown>, op: Operation.AnyOperation<unknown>) =>
  record(record(record(document["paths"])[Operation.httpPath(group, op).replace(/:(\w+)/g, "{$1}")])[op.http.method.toLowerCase()])

describe("the OpenAPI document derived from groups", () => {
  const market = documentOf([MarketOperations.group])

  it.effect("validates as OpenAPI 3.1, Schema Objects included, for one group, another, and both", () =>
    Effect.gen(function*() {
      yield* validate(market)
      yield* validate(documentOf([ToyDomain.group]))
      yield* validate(documentOf([MarketOperations.group, ToyDomain.group, ToyDomain.openGroup]))
    }))

  it("lists every HTTP operation, and only those, with the statuses it can answer", () => {
    for (const group of [MarketOperations.group, ToyDomain.group]) {
      const document = group === ToyDomain.group ? documentOf([group]) : market
      const listed = Object.entries(record(document["paths"])).flatMap(([path, item]) =>
        Object.keys(record(item)).map((method) => `${method.toUpperCase()} ${path}`)
      )
      const served = Operation.servedOn(group, "http")
      // Every operation, and for the toy its deprecated `things` paths too (the old name of `items`).
      const canonical = served.map((op) => `${op.http.method} ${Operation.httpPath(group, op).replace(/:(\w+)/g, "{$1}")}`)
      const deprecated = group === ToyDomain.group
        ? canonical.filter((line) => line.includes("/items")).map((line) => line.replace("/items", "/things"))
        : []
      assert.deepStrictEqual(listed.sort(), [...canonical, ...deprecated].sort())
      for (const op of served) {
        const operation = operationAt(document, group, op)
        assert.deepStrictEqual(Object.keys(record(operation["responses"])).sort(), expectedStatuses(group, op), op.name)
        assert.strictEqual(operation["summary"], op.title)
        assert.strictEqual(operation["description"], op.description)
      }
    }
  })

  it("documents query inputs as parameters, path inputs as path parameters, bodies as JSON", () => {
    const capabilities = operationAt(market, MarketOperations.group, MarketOperations.marketCapabilities)
    const parameters = collect(capabilities["parameters"], "name")
    assert.deepStrictEqual(parameters, ["workspace", "facets"])
    const getSupplier = operationAt(market, MarketOperations.group, MarketOperations.getSupplier)
    assert.deepStrictEqual(
      (Array.isArray(getSupplier["parameters"]) ? getSupplier["parameters"] : []).map((p) => [record(p)["name"], record(p)["in"]]),
      [["workspace", "path"], ["recordRef", "path"]]
    )
    const search = operationAt(market, MarketOperations.group, MarketOperations.searchSuppliers)
    assert.deepStrictEqual(collect(search["requestBody"], "$ref"), ["#/components/schemas/SearchSuppliersInput"])
    assert.match(String(record(search["requestBody"])["description"]), /262144 bytes/)
  })

  it("names refusals per codec and status, documents the 401 and 429 headers, and declares servers", () => {
    const schemas = record(record(market["components"])["schemas"])
    for (const status of [400, 404, 409, 503]) assert.property(schemas, `MarketDataRefusal${status}`)
    assert.notProperty(schemas, "HttpApiDecodeError")
    const search = record(operationAt(market, MarketOperations.group, MarketOperations.searchSuppliers)["responses"])
    assert.deepStrictEqual(collect(search["400"], "$ref"), ["#/components/schemas/MarketDataRefusal400"])
    assert.match(String(record(search["400"])["description"]), /query_too_broad/)
    assert.property(record(record(search["401"])["headers"]), "WWW-Authenticate")
    assert.property(record(record(search["429"])["headers"]), "Retry-After")
    const getSupplier = record(operationAt(market, MarketOperations.group, MarketOperations.getSupplier)["responses"])
    assert.sameMembers(collect(getSupplier["404"], "$ref"), [
      "#/components/schemas/MarketDataRefusal404",
      "#/components/schemas/WorkspaceNotFound"
    ])
    assert.deepStrictEqual(market["servers"], [{ url: "/", description: "This host" }])
  })

  it("carries no titles generated from refinements and no repeated marker ids", () => {
    const titles = collect({ ...market, info: {} }, "title").filter((t): t is string => typeof t === "string")
    assert.deepStrictEqual(titles.filter((t) => /^[a-z]/.test(t)), [])
    assert.deepStrictEqual(collect(market, "$id"), [])
    assert.notInclude(JSON.stringify(market), "maxLength(")
  })
})
