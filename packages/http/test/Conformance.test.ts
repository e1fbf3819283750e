import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import { Crypto } from "@service/core/Crypto"
import * as Operation from "@service/core/Operation"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import { createServer } from "node:http"
import * as HttpLayer from "../src/HttpLayer.js"
import * as Curl from "../src/Curl.js"
import * as RawHttp from "./support/RawHttp.js"

class Seeded extends Context.Tag("Seeded")<Seeded, Fixture.Seeded>() {}

/**
 * Every domain of the application over a test database with what its fixtures prepare (the demo corpus, a copy of
 * the run's prepared one), the `demo` workspace and its test workspace seeded by the bundles' fixtures, and the
 * HTTP surface of `groups` on a listening server.
 */
const served = (target: TestDatabase.TestDatabaseTarget, groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>) => {
  const prepared = Layer.effect(Seeded, Fixture.seed(App.app, "demo", groups))
  const server = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpLayer.layer(groups)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const domain = App.app.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, Fixture.appOptions).pipe(
    Layer.provide(Fixture.config)
  )
  return Layer.mergeAll(server, prepared).pipe(Layer.provideMerge(domain), Layer.orDie)
}

/** The HTTP request a user would send for `input`, built from the operation's binding alone (`Curl.request`). */
const requestFor = (
  seat: Fixture.Seat,
  as: Fixture.As,
  group: Operation.Group<unknown>,
  op: Operation.AnyOperation<unknown>,
  input: Readonly<Record<string, unknown>>
): RawHttp.Request => {
  const sent = Curl.request({ baseUrl: "", apiKey: seat.as[as].key, workspace: seat.workspace.slug }, group, op, input)
  return { method: sent.method, path: sent.url, headers: sent.headers, ...(sent.body === undefined ? {} : { body: sent.body }) }
}

const harness = (target: TestDatabase.TestDatabaseTarget) =>
(groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.effect(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const seeded = yield* Seeded
      return {
        forbidden: seeded.forbidden,
        examples: { workspace: seeded.seats.workspace.examples, test_workspace: seeded.seats.test_workspace.examples },
        // What the served document lists, as "METHOD /api/v1/path" with `:param` segments (the host's own routes,
        // such as the `GET /` index, are not operations).
        listed: Effect.gen(function*() {
          const spec = yield* RawHttp.send(port, { method: "GET", path: "/openapi.json" })
          const paths = RawHttp.field(spec.json, "paths")
          return Object.entries(Predicate.isRecord(paths) ? paths : {}).filter(([path]) => path.startsWith("/api/v1/")).flatMap(([path, item]) =>
            Object.keys(Predicate.isRecord(item) ? item : {}).map((method) =>
              `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`
            )
          )
        }),
        call: (groupName, operation, input, where = "workspace", as = "owner") =>
          Effect.gen(function*() {
            const group: Operation.Group<unknown> | undefined = groups.find((candidate) => candidate.name === groupName)
            const op = group?.operations.find((candidate) => candidate.name === operation)
            if (group === undefined || op === undefined) return yield* Effect.dieMessage(`No ${groupName}.${operation}`)
            const answer = yield* RawHttp.send(port, requestFor(seeded.seats[where], as, group, op, input))
            if (answer.status >= 200 && answer.status < 300) return { _tag: "Success", body: answer.json, raw: answer.text } satisfies Conformance.Outcome
            if (answer.status === 403 && RawHttp.field(answer.json, "code") === "FORBIDDEN") {
              const reason = RawHttp.field(answer.json, "reason")
              // A missing scope names the scope to ask for, as RFC 6750 section 3.1 has it.
              if (reason === "missing_scope" && !String(answer.headers["www-authenticate"] ?? "").includes(`error="insufficient_scope"`)) {
                return yield* Effect.dieMessage(`403 missing_scope without an insufficient_scope challenge: ${JSON.stringify(answer.headers)}`)
              }
              return { _tag: "Denied", status: 403, reason, raw: answer.text } satisfies Conformance.Outcome
            }
            const block = RawHttp.field(answer.json, group.refusals.key)
            if (block === undefined) return yield* Effect.dieMessage(`${answer.status} without a block: ${answer.text.slice(0, 500)}`)
            return { _tag: "Refusal", status: answer.status, block, raw: answer.text } satisfies Conformance.Outcome
          })
      }
    })
  ).pipe(Layer.provide(served(target, groups)))

// One database and one listening server per target, serving every group of the application and their refusal
// twins.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "http", groups: App.app.groups, harness: harness(target) })
  })
}
