/**
 * The market-data operations, each declared once. Transports iterate {@link all}.
 *
 * @since 0.1.0
 */
import type { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  CapabilitiesInput,
  CapabilitiesResult,
  type CompactCapabilities,
  OPENAPI_URL,
  type OperationCapability
} from "./Capabilities.js"
import { type CorpusBasis, Envelope, QueryMode, SCHEMA_VERSION } from "./Envelope.js"
import { type Facet, facets as allFacets, MarketData, type ObservedValue } from "./MarketData.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import * as Operation from "./Operation.js"
import {
  GetSupplierInput,
  SearchSuppliersInput,
  SearchSuppliersModelInput,
  SupplierRow
} from "./Suppliers.js"

/** What running an operation needs. @since 0.1.0 @category models */
export type Requirements = MarketData | RequestContext

/** Scopes that satisfy every market-data read (OR-listed). @since 0.1.0 @category constants */
export const readScopes = ["market_data:read", "context:read"] as const

/** @since 0.1.0 @category operations */
export const searchSuppliers = Operation.make({
  name: "search_suppliers",
  title: "Search supplier observations",
  description:
    "Find published observations of organizations and establishments by words, state, SCIAN activity or RFC. Each row is one observation, not a consolidated company.",
  method: "POST",
  path: "/suppliers/search",
  http: { kind: "body" },
  input: SearchSuppliersInput,
  modelInput: SearchSuppliersModelInput,
  output: Envelope(Schema.Array(SupplierRow)).annotations({ identifier: "SearchSuppliersEnvelope" }),
  refuses: ["query_too_broad", "query_not_selective", "unknown_state", "invalid_field_value", "unknown_filter_value", "invalid_cursor", "cursor_stale", "serving_projection_unavailable", "serving_projection_stale"],
  metered: true,
  paginates: true,
  capability: {
    question: "Which establishments or organizations were published as active in a state, activity or under a name?",
    requires: "At least one of query, state, scian_codes, rfc. A query alone must be selective.",
    example: { state: "Zacatecas", scian_codes: ["212"], limit: 5 }
  },
  run: (input) => Effect.flatMap(MarketData, (market) => market.searchSuppliers(input))
})

/** @since 0.1.0 @category operations */
export const getSupplier = Operation.make({
  name: "get_supplier",
  title: "Get one supplier observation",
  description: "Read one supplier observation by the record_ref copied from a search row.",
  method: "GET",
  path: "/suppliers/~ref/:recordRef",
  http: { kind: "path", param: "recordRef", field: "record_ref" },
  input: GetSupplierInput,
  modelInput: GetSupplierInput,
  output: Envelope(SupplierRow).annotations({ identifier: "GetSupplierEnvelope" }),
  refuses: ["invalid_record_ref", "serving_projection_unavailable", "serving_projection_stale"],
  metered: true,
  paginates: false,
  capability: {
    question: "What exactly was published about this supplier observation?",
    requires: "record_ref copied verbatim from a search row of a recent response (a record_fingerprint is refused).",
    example: { record_ref: "<record_ref from a search_suppliers row>" }
  },
  run: (input) => Effect.flatMap(MarketData, (market) => market.getSupplier(input))
})

const parseFacets = (raw: string | undefined): Effect.Effect<ReadonlyArray<Facet>, MarketDataRefusal> => {
  if (raw === undefined) return Effect.succeed(allFacets)
  const requested = raw.split(",").map((f) => f.trim()).filter((f) => f.length > 0)
  const unknown = requested.filter((f) => !allFacets.some((known) => known === f))
  if (unknown.length > 0 || requested.length === 0) {
    return Effect.fail(
      refuse(
        "unknown_facet",
        requested.length === 0 ? "facets is empty." : `Unknown facet(s): ${unknown.join(", ")}.`,
        `Use a comma-separated list of: ${allFacets.join(", ")}; or omit facets for all.`,
        { field: "facets", allowedValues: allFacets }
      )
    )
  }
  return Effect.succeed(allFacets.filter((f) => requested.includes(f)))
}

const cliExample = (op: { readonly name: string; readonly capability: Operation.CapabilityText }): string => {
  const words: Record<string, string> = {
    market_capabilities: "service market capabilities",
    search_suppliers: "service market suppliers search",
    get_supplier: "service market suppliers get"
  }
  const base = words[op.name] ?? `service market ${op.name}`
  const args = Object.entries(op.capability.example).map(([key, value]) =>
    key === "record_ref"
      ? "<record-ref>"
      : `--${key.replaceAll("_", "-")} ${Array.isArray(value) ? value.join(",") : String(value)}`
  )
  return [base, ...args].join(" ")
}

const describe = (op: Operation.AnyOperation<Requirements>): OperationCapability => ({
  operation: op.name,
  question: op.capability.question,
  requires: op.capability.requires,
  refuses: op.refuses,
  method: op.method,
  path: op.path,
  metered: op.metered,
  paginates: op.paginates,
  mcpTool: Operation.toolName("service", op.name),
  example: { input: op.capability.example, cli: cliExample(op) }
})

/** @since 0.1.0 @category operations */
export const marketCapabilities = Operation.make({
  name: "market_capabilities",
  title: "Market-data capabilities",
  description:
    "Free discovery: every operation with its question, requirements, refusals and a runnable example, plus the filter values the published corpus holds.",
  method: "GET",
  path: "/capabilities",
  http: { kind: "query" },
  input: CapabilitiesInput,
  modelInput: CapabilitiesInput,
  output: Envelope(CapabilitiesResult).annotations({ identifier: "CapabilitiesEnvelope" }),
  refuses: ["unknown_facet", "serving_projection_unavailable", "serving_projection_stale"],
  metered: false,
  paginates: false,
  capability: {
    question: "What can I ask the market-data layer, and which values does its corpus hold?",
    requires: "Nothing; facets optionally restricts the corpus dimensions computed.",
    example: { facets: "states" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      const requested = yield* parseFacets(input.facets)
      const market = yield* MarketData
      const { publication, values } = yield* market.observedValues(requested)
      const basis = market.corpusBasis(publication)
      const observed: Record<string, { values: ReadonlyArray<ObservedValue>; corpusBasis: CorpusBasis }> = {}
      for (const facet of requested) {
        const list = values[facet]
        if (list !== undefined) observed[facet] = { values: list, corpusBasis: basis }
      }
      return yield* market.envelope({
        operation: "market_capabilities",
        publication,
        startedAt,
        request: { facets: requested },
        results: {
          operations: all.map(describe),
          observedValues: observed,
          queryModes: QueryMode.literals,
          limits: { defaultPageSize: 20, maxPageSize: 50 },
          openapiUrl: OPENAPI_URL
        }
      })
    })
})

/**
 * Every declared operation, in the order capabilities lists them.
 *
 * @since 0.1.0 @category operations
 */
export const all: ReadonlyArray<Operation.AnyOperation<Requirements>> = [marketCapabilities, searchSuppliers, getSupplier]

/**
 * The compact discovery document: operations and routes only, no corpus reads beyond the basis.
 *
 * @since 0.1.0 @category discovery
 */
export const compactCapabilities: Effect.Effect<CompactCapabilities, never, MarketData> = Effect.gen(function*() {
  const market = yield* MarketData
  const coverage = yield* Effect.option(market.coverage)
  return {
    schemaVersion: SCHEMA_VERSION,
    operations: all.map((op) => ({ operation: op.name, method: op.method, path: op.path })),
    corpusBasis: coverage._tag === "None" ? null : market.corpusBasis(coverage.value.publication),
    openapiUrl: OPENAPI_URL
  }
})

