/**
 * Envelopes and rows shared by the CLI tests, typed by the operations' own output schemas.
 */
import * as ApiError from "@service/http/ApiError"
import { codec, refuse } from "@service/market-contract/MarketError"
import type { SupplierRow } from "@service/market-contract/Suppliers"
import * as Schema from "effect/Schema"
import type * as MarketSummaries from "@service/market-contract/MarketSummaries"

const corpusBasis = {
  snapshotId: "snap_test",
  publishedAt: "2026-01-01T00:00:00.000Z",
  contractVersion: 1,
  freshUntil: null
}

const coverage = [{
  evidenceCategory: "supplier_or_organization_evidence" as const,
  evidenceCategoryLabel: "Published observation of an organization or establishment",
  licensedForDisplay: true,
  visibleRows: 2014,
  sourceCount: 3,
  freshness: { newestRetrieval: "2019-05-25", oldestRetrieval: "2018-11-27", publishedAt: "2026-01-01T00:00:00.000Z" }
}]

export const rowA: SupplierRow = {
  evidence_category: "supplier_or_organization_evidence",
  evidence_category_label: "Published observation of an organization or establishment",
  record_ref: "REF_A_0123456789abcdefghijklmnopqrstuvwxyz",
  record_fingerprint: "00112233445566778899aabbccddeeff",
  name: "MINERA DEL NORTE",
  legal_name: "MINERA DEL NORTE SA DE CV",
  rfc: "MNO010101AB1",
  risk: { mark_count: 0, kinds: [], any_active: false, has_exoneration: false },
  scian: { code: "212221", title: "Minería de oro" },
  state: { code: "32", name: "Zacatecas" },
  municipality: { code: "32010", name: "Fresnillo" },
  employment_band: "51 a 100 personas",
  establishment_type: "Fijo",
  incorporated_on: "2010-07",
  contact_presence: { has_phone: true, has_email: true, has_website: false, channel_count: 2 }
}

export const rowB: SupplierRow = {
  ...rowA,
  record_ref: "REF_B_zyxwvutsrqponmlkjihgfedcba9876543210",
  record_fingerprint: "ffeeddccbbaa99887766554433221100",
  name: "ARENERA",
  legal_name: null,
  rfc: null,
  risk: null,
  scian: null,
  municipality: null,
  contact_presence: { has_phone: false, has_email: false, has_website: false, channel_count: 0 }
}

const common = {
  schemaVersion: "market-data/domain/1" as const,
  requestId: "req_test",
  coverage,
  corpusBasis,
  provenance: [],
  diagnostics: { elapsedMs: 3, rowsExamined: 2, truncated: false }
}

export const searchEnvelope: MarketSummaries.SearchSuppliersEnvelope = {
  ...common,
  operation: "search_suppliers",
  interpretedRequest: {
    request: { state: "32", scian_codes: ["212"], limit: 2 },
    normalizations: [{ field: "state", from: "Zacatecas", to: "32", reason: "state name resolved to its code" }]
  },
  results: [rowA, rowB],
  page: { limit: 2, returned: 2, hasMore: true, nextCursor: "CURSOR_NEXT" },
  semanticWarnings: [{ code: "observation_not_company", message: "Each row is one published observation." }]
}

export const lastPageEnvelope: MarketSummaries.SearchSuppliersEnvelope = {
  ...searchEnvelope,
  results: [rowA],
  page: { limit: 2, returned: 1, hasMore: false, nextCursor: null },
  semanticWarnings: []
}

export const supplierEnvelope: MarketSummaries.SupplierEnvelope = {
  ...common,
  operation: "get_supplier",
  interpretedRequest: { request: {}, normalizations: [] },
  results: rowA,
  page: null,
  semanticWarnings: []
}

export const capabilitiesEnvelope: MarketSummaries.CapabilitiesEnvelope = {
  ...common,
  operation: "market_capabilities",
  interpretedRequest: { request: { facets: ["states"] }, normalizations: [] },
  results: {
    operations: [{
      operation: "search_suppliers",
      question: "Which establishments were published?",
      requires: "At least one of query, state, scian_codes, rfc.",
      refuses: ["query_too_broad"],
      method: "POST",
      path: "/suppliers/search",
      metered: true,
      paginates: true,
      mcpTool: "service_market_search_suppliers",
      example: { input: { state: "Zacatecas" }, cli: "service market suppliers search --state Zacatecas" }
    }],
    observedValues: {
      states: {
        values: [
          { value: "01", label: "Aguascalientes", visibleRows: 20 },
          { value: "32", label: "Zacatecas", visibleRows: 300 }
        ],
        corpusBasis
      }
    },
    queryModes: ["auto", "exact_phrase", "all_terms", "any_terms"],
    limits: { defaultPageSize: 20, maxPageSize: 50 },
    openapiUrl: "/openapi.json"
  },
  page: null,
  semanticWarnings: []
}

const describedRef = codec.describe(
  refuse(
    "invalid_record_ref",
    "This record_ref was not issued by the market-data layer, or it was altered.",
    "Copy record_ref verbatim from a search row of a recent response, or search again."
  )
)

/** The wire body of an invalid_record_ref refusal (404), built by the server's own mapping. */
export const invalidRecordRefBody: Readonly<Record<string, unknown>> = describedRef === undefined
  ? {}
  : ApiError.refusalBody(codec, describedRef, "req_refused")

/** The wire body of a 401. */
export const unauthorizedBody: unknown = Schema.encodeSync(ApiError.Unauthorized)(
  new ApiError.Unauthorized({ statusCode: 401, code: "UNAUTHENTICATED", message: "Authentication required.", request_id: "req_denied" })
)
