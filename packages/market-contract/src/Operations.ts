/**
 * The market-data operations, each declared once. Transports iterate {@link all}.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import { excerpt } from "@service/core/Refusal"
import { RequestContext } from "@service/core/RequestContext"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import {
  CapabilitiesInput,
  CompactCapabilities,
  CoverageResponse,
  NoInput,
  OPENAPI_URL,
  type OperationCapability
} from "./Capabilities.js"
import * as ContractCases from "./ContractCases.js"
import { type CorpusBasis, QueryMode, SCHEMA_VERSION } from "./Envelope.js"
import { type Facet, facets as allFacets, MarketData, type ObservedValue } from "./MarketData.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { readScopes } from "./internal/fields.js"
import { type MarketDataRefusal, refuse } from "./MarketError.js"
import { aggregateAwards } from "./AwardAggregates.js"
import { getSupplierHistory, searchAwards } from "./Awards.js"
import { screenRisks, searchRisks } from "./Risks.js"
import { getOpportunity, searchOpportunities } from "./Opportunities.js"
import { searchPermits } from "./Permits.js"
import { compareSegmentsOperation } from "./SupplierSegments.js"
import {
  countSuppliers as countSuppliers_,
  CountSuppliersEnvelope,
  CountSuppliersInput,
  CountSuppliersModelInput
} from "./SupplierCount.js"
import {
  getSupplier as getSupplier_,
  GetSupplierInput,
  searchSuppliers as searchSuppliers_,
  SearchSuppliersInput,
  SearchSuppliersModelInput
} from "./Suppliers.js"
import { kit } from "./MarketKit.js"
import * as MarketSummaries from "./MarketSummaries.js"

/** What running an operation needs. @since 0.1.0 @category models */
export type Requirements = MarketData | RequestContext

/** Scopes that satisfy every market-data read (OR-listed). @since 0.1.0 @category constants */
export { readScopes }

/** @since 0.1.0 @category operations */
export const searchSuppliers = kit.make({
  name: "search_suppliers",
  title: "Search supplier observations",
  description:
    "Find published observations of organizations and establishments by words, state, SCIAN activity or RFC. Each row is one observation, not a consolidated company.",
  http: { method: "POST", path: "/suppliers/search", input: { kind: "body" } },
  cli: { words: ["suppliers", "search"], summary: MarketSummaries.searchSuppliers },
  input: SearchSuppliersInput,
  modelInput: SearchSuppliersModelInput,
  output: MarketSummaries.SearchSuppliersEnvelope,
  refuses: ["query_too_broad", "query_not_selective", "unknown_state", "invalid_field_value", "unknown_filter_value", "invalid_cursor", "cursor_stale", "serving_projection_unavailable", "serving_projection_stale"],
  paginates: true,
  capability: {
    question: "Which establishments or organizations were published as active in a state, activity or under a name?",
    requires: "At least one of query, state, municipality, scian_codes, rfc. A query alone must be selective.",
    example: { state: "Zacatecas", scian_codes: ["212"], limit: 5 }
  },
  run: searchSuppliers_
})

/** @since 0.1.0 @category operations */
export const countSuppliers = kit.make({
  name: "count_suppliers",
  title: "Count supplier observations",
  description:
    "The exact number of published supplier observations matching the same narrowing as search_suppliers. Counts observations, not companies; never an estimate.",
  http: { method: "POST", path: "/suppliers/count", input: { kind: "body" } },
  cli: { words: ["suppliers", "count"] },
  input: CountSuppliersInput,
  modelInput: CountSuppliersModelInput,
  output: CountSuppliersEnvelope,
  refuses: ["query_too_broad", "query_not_selective", "unknown_state", "invalid_field_value", "unknown_filter_value", "market_data_timeout", "serving_projection_unavailable", "serving_projection_stale"],
  capability: {
    question: "How many published observations of organizations or establishments match a state, activity, name or RFC?",
    requires: "At least one of query, state, municipality, scian_codes, rfc (a query alone must be selective). Exact, or refused with market_data_timeout.",
    example: { state: "Zacatecas", scian_codes: ["212"] }
  },
  run: countSuppliers_
})

/** @since 0.1.0 @category operations */
export const getSupplier = kit.make({
  name: "get_supplier",
  title: "Get one supplier observation",
  description: "Read one supplier observation by the record_ref copied from a search row.",
  http: { method: "GET", path: "/suppliers/~ref/:recordRef", input: { kind: "path", params: { recordRef: "record_ref" } } },
  cli: { words: ["suppliers", "get"], positional: "record_ref", summary: MarketSummaries.getSupplier },
  input: GetSupplierInput,
  output: MarketSummaries.GetSupplierEnvelope,
  refuses: ["invalid_record_ref", "serving_projection_unavailable", "serving_projection_stale"],
  capability: {
    question: "What exactly was published about this supplier observation?",
    requires: "record_ref copied verbatim from a search row of a recent response (a record_fingerprint is refused).",
    example: { record_ref: "<record_ref from a search_suppliers row>" },
    exampleFrom: { operation: "search_suppliers", path: ["results", 0, "record_ref"], field: "record_ref" }
  },
  run: getSupplier_
})

const parseFacets = (raw: string | undefined): Effect.Effect<ReadonlyArray<Facet>, MarketDataRefusal> => {
  if (raw === undefined) return Effect.succeed(allFacets)
  const requested = raw.split(",").map((f) => f.trim()).filter((f) => f.length > 0)
  const unknown = requested.filter((f) => !allFacets.some((known) => known === f))
  if (unknown.length > 0 || requested.length === 0) {
    return Effect.fail(
      refuse(
        "unknown_facet",
        requested.length === 0 ? "facets is empty." : `Unknown facet(s): ${excerpt(unknown.join(", "))}.`,
        `Use a comma-separated list of: ${allFacets.join(", ")}; or omit facets for all.`,
        { field: "facets", allowedValues: allFacets }
      )
    )
  }
  return Effect.succeed(allFacets.filter((f) => requested.includes(f)))
}

const describe = (prefix: string) => (op: Operation.AnyOperation<Requirements>): OperationCapability => ({
  operation: op.name,
  question: op.capability.question,
  requires: op.capability.requires,
  refuses: op.refuses,
  method: op.http.method,
  path: op.http.path,
  metered: op.metered,
  paginates: op.paginates,
  mcpTool: Operation.toolName(prefix, group.mcp.namespace, op.name),
  example: { input: op.capability.example, cli: Operation.cliExample(prefix, group, op) }
})

// Discovery lists the operations it is one of: typed accessors break the cycle between their types.
function groupOperations(): ReadonlyArray<Operation.AnyOperation<Requirements>> {
  return group.operations
}
function contractOperations(): ReadonlyArray<Operation.AnyOperation<Requirements>> {
  return operations
}

/** @since 0.1.0 @category operations */
export const marketCapabilities = kit.make({
  name: "market_capabilities",
  title: "Market-data capabilities",
  description:
    "Free discovery: every operation with its question, requirements, refusals and a runnable example, plus the filter values the published corpus holds.",
  http: { method: "GET", path: "/capabilities", input: { kind: "query" } },
  cli: { words: ["capabilities"], summary: MarketSummaries.capabilities },
  input: CapabilitiesInput,
  output: MarketSummaries.CapabilitiesEnvelope,
  refuses: ["unknown_facet", "serving_projection_unavailable", "serving_projection_stale"],
  metered: false,
  capability: {
    question: "What can I ask the market-data layer, and which values does its corpus hold?",
    requires: "Nothing; facets optionally restricts the corpus dimensions computed.",
    example: { facets: "states" }
  },
  run: (input) =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      const prefix = yield* Operation.SurfacePrefix
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
          operations: groupOperations().filter((op) => op.surfaces.mcp).map(describe(prefix)),
          observedValues: observed,
          queryModes: QueryMode.literals,
          limits: { defaultPageSize, maxPageSize },
          openapiUrl: OPENAPI_URL
        }
      })
    })
})

/**
 * The compact discovery document: operations and routes only, no corpus reads beyond the basis.
 *
 * @since 0.1.0 @category operations
 */
export const compactCapabilities = kit.make({
  name: "capabilities_compact",
  title: "Compact discovery",
  description: "Operations and routes only, with the corpus basis when a publication is active. Free.",
  http: { method: "GET", path: "/capabilities/compact", input: { kind: "query" } },
  cli: { words: ["capabilities", "compact"] },
  surfaces: { mcp: false, cli: false },
  input: NoInput,
  output: CompactCapabilities,
  refuses: [],
  metered: false,
  capability: { question: "Which operations exist and where?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const market = yield* MarketData
      const coverage = yield* Effect.option(market.coverage)
      return {
        schemaVersion: SCHEMA_VERSION,
        operations: contractOperations().map((op) => ({ operation: op.name, method: op.http.method, path: op.http.path })),
        corpusBasis: coverage._tag === "None" ? null : market.corpusBasis(coverage.value.publication),
        openapiUrl: OPENAPI_URL
      }
    })
})

/**
 * The coverage block of the active publication, standalone.
 *
 * @since 0.1.0 @category operations
 */
export const coverage = kit.make({
  name: "coverage",
  title: "Coverage of the active publication",
  description: "The coverage block of the active publication, standalone: per evidence category, what is licensed and visible.",
  http: { method: "GET", path: "/coverage", input: { kind: "query" } },
  cli: { words: ["coverage"] },
  surfaces: { mcp: false, cli: false },
  input: NoInput,
  output: CoverageResponse,
  refuses: ["serving_projection_unavailable", "serving_projection_stale"],
  metered: false,
  capability: { question: "What does the active publication cover?", requires: "Nothing.", example: {} },
  run: () =>
    Effect.gen(function*() {
      const market = yield* MarketData
      const { requestId } = yield* RequestContext
      const { coverage, publication } = yield* market.coverage
      return { requestId, coverage, corpusBasis: market.corpusBasis(publication) }
    })
})

/**
 * The operations of the market-data contract, in the spec's order: the order capabilities, the 404 body, the tool
 * list and the command tree show them.
 *
 * @since 0.1.0 @category operations
 */
export const operations = [
  marketCapabilities,
  searchSuppliers,
  getSupplier,
  countSuppliers,
  compareSegmentsOperation,
  searchOpportunities,
  getOpportunity,
  searchAwards,
  getSupplierHistory,
  aggregateAwards,
  searchRisks,
  screenRisks,
  searchPermits
] as const

/**
 * The market-data group: every declaration, HTTP and discovery routes included.
 *
 * @since 0.1.0 @category groups
 */
export const group = kit.typedGroup<Requirements>()({
  name: "marketData",
  title: "Market data",
  description:
    "Read-only Mexican commercial intelligence behind a semantic contract. Every success is an envelope declaring coverage and corpus basis.",
  operations: [...operations, compactCapabilities, coverage],
  http: { prefix: "/workspaces/:workspace/market-data", workspaceScoped: true, discovery: "market_capabilities" },
  mcp: { namespace: "market" },
  cli: {
    word: "market",
    description: "Read-only market data behind a semantic contract.",
    // The envelope's rows are its results; its echo of the request and schema name add nothing to a summary.
    table: { rows: "results", omit: ["schemaVersion", "operation", "interpretedRequest.request"] }
  },
  cases: ContractCases.casesFor([...operations, compactCapabilities, coverage]),
  elsewhere: ContractCases.elsewhere,
  invariant: ContractCases.invariant
})

/**
 * Every operation served to callers (the compatibility name of {@link operations}).
 *
 * @since 0.1.0 @category operations
 */
export const all = operations
