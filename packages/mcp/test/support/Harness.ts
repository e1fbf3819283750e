/**
 * The conformance harness for MCP: the groups given (declared and twins) served by the web handler over
 * a test database with the demo corpus, and an official client doing the connecting, in process.
 */
import * as Conformance from "@service/conformance"
import type * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import type { Caller } from "@service/core/RequestContext"
import type * as Operations from "@service/market-contract/Operations"
import { forbiddenValues } from "@service/market-contract/ProjectionAudit"
import type * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as McpHandler from "../../src/McpHandler.js"
import { connect, type Generation } from "./Clients.js"
import { acquireWebHandler, layerFor, principalWith } from "./Fixture.js"

// Fields the MCP result adds beside an envelope; the suite compares the envelope itself.
const toolOnly = new Set(["shown", "has_more", "next_action"])

export const harness = (target: TestDatabase.TestDatabaseTarget, generation: Generation) =>
(groups: ReadonlyArray<Operation.Group<Operations.Requirements | Meter.Meter | Caller>>): Layer.Layer<Conformance.HarnessService> =>
  Layer.scoped(
    Conformance.HarnessService,
    Effect.gen(function*() {
      const web = yield* acquireWebHandler(McpHandler.makeWebHandler({ name: "service-conformance", version: "0.0.0", groups }))
      const client = yield* connect(generation, web, yield* principalWith(["market_data:read"]))
      const forbidden = yield* forbiddenValues
      return {
        forbidden,
        listed: client.list.pipe(Effect.map((tools) => tools.map((tool) => tool.name))),
        call: (groupName, operation, input) =>
          Effect.gen(function*() {
            const group = groups.find((candidate) => candidate.name === groupName)
            if (group === undefined) return yield* Effect.dieMessage(`No group ${groupName}`)
            const result = yield* client.call(Operation.toolName("service", group.mcp.namespace, operation), input)
            const raw = JSON.stringify(result)
            const structured = result.structuredContent
            if (!Predicate.isRecord(structured)) return yield* Effect.dieMessage(`No structured content: ${JSON.stringify(result)}`)
            if (result.isError) {
              const block = structured[group.refusals.key]
              if (block === undefined) return yield* Effect.dieMessage(`An error without a ${group.refusals.key} block: ${JSON.stringify(structured)}`)
              return { _tag: "Refusal", status: undefined, block, raw } satisfies Conformance.Outcome
            }
            const body = Object.fromEntries(Object.entries(structured).filter(([key]) => !toolOnly.has(key)))
            return { _tag: "Success", body, raw } satisfies Conformance.Outcome
          })
      }
    })
  ).pipe(Layer.provide(layerFor(target)))
