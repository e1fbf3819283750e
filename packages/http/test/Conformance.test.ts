import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Operation from "@service/core/Operation"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import * as HttpLayer from "../src/HttpLayer.js"
import * as Routes from "../src/Routes.js"
import * as RawHttp from "./support/RawHttp.js"

/** The `demo` workspace's key: its owner's, with every scope the served groups accept. */
const KEY = "svc_key_test_conformance_0123456789abcdef"

class Scan extends Context.Tag("Scan")<Scan, ReadonlyArray<string>>() {}

/**
 * Every domain (`App.layer`) over a test database with the demo corpus (a copy of the run's prepared one), the
 * `demo` workspace with its owner, the records the examples name and the key; and the HTTP surface of `groups` on a
 * listening server.
 */
const served = (target: TestDatabase.TestDatabaseTarget, groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>) => {
  const prepared = Layer.effect(
    Scan,
    Effect.gen(function*() {
      const accounts = yield* Accounts.Accounts
      const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("demo"), name: "demo" })
      const owner = yield* Fixture.seed(workspace)
      yield* accounts.issueCredential({
        workspaceId: workspace.id,
        kind: "api_key",
        label: "conformance",
        personId: owner.id,
        scopes: Fixture.scopesOf(groups),
        secret: Redacted.make(KEY)
      })
      return yield* forbiddenValues
    }).pipe(Effect.orDie)
  )
  const server = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpLayer.layer(groups)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const domain = App.layer(TestDatabase.prepared(target, DemoSnapshot.over(App.migrations)), Crypto.layerTest, Fixture.appOptions)
  return Layer.mergeAll(server, prepared).pipe(Layer.provideMerge(domain), Layer.orDie)
}

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
  const bound = Operation.pathFields(binding)
  const values: Record<string, string> = { workspace: "demo" }
  for (const [param, field] of Object.entries(bound)) values[param] = queryValue(input[field]).join(",")
  const path = Routes.fill(Operation.httpPath(group, op), values)
  const rest = Object.entries(input).filter(([field]) => !Object.values(bound).includes(field))
  const headers = { "x-api-key": KEY }
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
(groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.effect(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const forbidden = yield* Scan
      return {
        forbidden,
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
  ).pipe(Layer.provide(served(target, groups)))

// One database and one listening server per target, serving the application's groups (`App.groups` but
// the bundles the suite does not run yet, `Fixture.pending`) and their refusal twins.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "http", groups: Fixture.groups, harness: harness(target) })
  })
}
