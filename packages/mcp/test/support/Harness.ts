/**
 * The conformance harness for MCP: the groups given (declared and twins) served by the web handler over
 * every domain of the application (`App.layer`) on a test database with the demo corpus (a copy of the run's
 * prepared one), and an official client doing the connecting, in process, as the owner of a workspace with the
 * records the examples name and every scope the groups accept.
 */
import * as App from "@service/app/App"
import * as Conformance from "@service/conformance"
import * as Fixture from "@service/conformance/Fixture"
import { Crypto } from "@service/core/Crypto"
import * as Operation from "@service/core/Operation"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as McpHandler from "../../src/McpHandler.js"
import * as Toolkit from "../../src/Toolkit.js"
import { connect, type Generation } from "./Clients.js"
import { acquireWebHandler } from "./Fixture.js"

// Fields the MCP result adds beside an envelope; the suite compares the envelope itself.
const toolOnly = new Set(["shown", "has_more", "next_action"])

export const harness = (target: TestDatabase.TestDatabaseTarget, generation: Generation) =>
(groups: ReadonlyArray<Operation.Group<Fixture.Requirements>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.scoped(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const web = yield* acquireWebHandler(McpHandler.makeWebHandler({ name: "service-conformance", version: "0.0.0", groups }))
      const seeded = yield* Fixture.seed(App.app, "mcp-conformance", groups)
      const connectAll = (seat: Fixture.Seat) =>
        Effect.all({
          owner: connect(generation, web, seat.as.owner.caller),
          reader: connect(generation, web, seat.as.reader.caller),
          member: connect(generation, web, seat.as.member.caller),
          faceless: connect(generation, web, seat.as.faceless.caller)
        })
      const clients = {
        workspace: yield* connectAll(seeded.seats.workspace),
        test_workspace: yield* connectAll(seeded.seats.test_workspace)
      }
      return {
        forbidden: seeded.forbidden,
        examples: { workspace: seeded.seats.workspace.examples, test_workspace: seeded.seats.test_workspace.examples },
        listed: clients.workspace.owner.list.pipe(Effect.map((tools) => tools.map((tool) => tool.name))),
        call: (groupName, operation, input, where = "workspace", as = "owner") =>
          Effect.gen(function*() {
            const group = groups.find((candidate) => candidate.name === groupName)
            if (group === undefined) return yield* Effect.dieMessage(`No group ${groupName}`)
            const result = yield* clients[where][as].call(Operation.toolName("service", group.mcp.namespace, operation), input)
            const raw = JSON.stringify(result)
            // The answer is the JSON of the one text block (decision 0074).
            const structured = result.text
            if (!Predicate.isRecord(structured)) return yield* Effect.dieMessage(`No JSON text: ${JSON.stringify(result)}`)
            if (result.isError && structured["code"] === "FORBIDDEN") {
              return { _tag: "Denied", status: undefined, reason: structured["reason"], raw } satisfies Conformance.Outcome
            }
            if (result.isError) {
              const block = structured[group.refusals.key]
              if (block === undefined) return yield* Effect.dieMessage(`An error without a ${group.refusals.key} block: ${JSON.stringify(structured)}`)
              return { _tag: "Refusal", status: undefined, block, raw } satisfies Conformance.Outcome
            }
            // Only an envelope (`page`, `results`) gets the tool fields; other outputs may declare the same names.
            const envelope = Option.isSome(Toolkit.toolFields(structured))
            const body = envelope ? Object.fromEntries(Object.entries(structured).filter(([key]) => !toolOnly.has(key))) : structured
            return { _tag: "Success", body, raw } satisfies Conformance.Outcome
          })
      }
    })
  ).pipe(
    Layer.provideMerge(App.app.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, Fixture.appOptions).pipe(Layer.provide(Fixture.config))),
    Layer.orDie
  )
