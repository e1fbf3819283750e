import { describe } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as AccountOperations from "@service/core/AccountOperations"
import type * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import type { Caller } from "@service/core/RequestContext"
import * as MarketOperations from "@service/market-contract/Operations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Routes from "../src/Routes.js"
import * as MarketFixture from "./support/MarketFixture.js"
import * as RawHttp from "./support/RawHttp.js"

/** A query-string value as a user would type it. */
const queryValue = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value)
    ? value.flatMap(queryValue)
    : typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? [String(value)]
    : [JSON.stringify(value)]

/**
 * The HTTP request a user would send for `input`, built from the operation's binding alone: path parameters
 * from the fields they carry, the rest as the JSON body or as query parameters.
 */
const requestFor = (
  group: Operation.Group<unknown>,
  op: Operation.AnyOperation<unknown>,
  input: Readonly<Record<string, unknown>>
): RawHttp.Request => {
  const binding = op.http.input
  const bound = binding.kind === "path" ? binding.params : {}
  const values: Record<string, string> = { workspace: "demo" }
  for (const [param, field] of Object.entries(bound)) values[param] = queryValue(input[field]).join(",")
  const path = Routes.fill(Operation.httpPath(group, op), values)
  const rest = Object.entries(input).filter(([field]) => !Object.values(bound).includes(field))
  const headers = { "x-api-key": MarketFixture.KEY }
  if (binding.kind === "body") {
    return {
      method: op.http.method,
      path,
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify(Object.fromEntries(rest))
    }
  }
  const query = new URLSearchParams()
  for (const [field, value] of rest) for (const item of queryValue(value)) query.append(field, item)
  const search = query.toString()
  return { method: op.http.method, path: search.length > 0 ? `${path}?${search}` : path, headers }
}

const harness = (target: TestDatabase.TestDatabaseTarget) =>
(groups: ReadonlyArray<Operation.Group<MarketOperations.Requirements | Meter.Meter | Caller>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.effect(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const { scan } = yield* MarketFixture.Fixture
      return {
        forbidden: scan,
        // What the served document lists, as "METHOD /api/v1/path" with `:param` segments.
        listed: Effect.gen(function*() {
          const spec = yield* RawHttp.send(port, { method: "GET", path: "/openapi.json" })
          const paths = RawHttp.field(spec.json, "paths")
          return Object.entries(Predicate.isRecord(paths) ? paths : {}).flatMap(([path, item]) =>
            Object.keys(Predicate.isRecord(item) ? item : {}).map((method) =>
              `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`
            )
          )
        }),
        call: (groupName, operation, input) =>
          Effect.gen(function*() {
            const group: Operation.Group<unknown> | undefined = groups.find((candidate) => candidate.name === groupName)
            const op = group?.operations.find((candidate) => candidate.name === operation)
            if (group === undefined || op === undefined) return yield* Effect.dieMessage(`No ${groupName}.${operation}`)
            const answer = yield* RawHttp.send(port, requestFor(group, op, input))
            if (answer.status >= 200 && answer.status < 300) return { _tag: "Success", body: answer.json, raw: answer.text } satisfies Conformance.Outcome
            const block = RawHttp.field(answer.json, group.refusals.key)
            if (block === undefined) return yield* Effect.dieMessage(`${answer.status} without a block: ${answer.text.slice(0, 500)}`)
            return { _tag: "Refusal", status: answer.status, block, raw: answer.text } satisfies Conformance.Outcome
          })
      }
    })
  ).pipe(Layer.provide(MarketFixture.layer(target, groups)))

// One database and one listening server per target, serving the declared groups and their refusal twins.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "http", groups: [MarketOperations.group, AccountOperations.group], harness: harness(target) })
  })
}
