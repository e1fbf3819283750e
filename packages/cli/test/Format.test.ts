import { assert, describe, it } from "@effect/vitest"
import { refuse, toBlock } from "@service/market-contract/MarketError"
import * as Failure from "../src/Failure.js"
import * as Format from "../src/Format.js"
import { capabilitiesEnvelope, lastPageEnvelope, rowA, searchEnvelope, supplierEnvelope } from "./Fixtures.js"

const input = { state: "Zacatecas", scian_codes: ["212", "213"], limit: 2 }

describe("Format", () => {
  describe("searchSummary", () => {
    it("prints one line per row with name, place, SCIAN and contact presence, and the ref on its own line", () => {
      const lines = Format.searchSummary(searchEnvelope, input).split("\n")
      assert.strictEqual(lines[0], "2 supplier observations (each a published observation, not a company):")
      assert.strictEqual(
        lines[1],
        "1. MINERA DEL NORTE · Fresnillo, Zacatecas · SCIAN 212221 Minería de oro · contact: phone, email"
      )
      assert.strictEqual(lines[2], `   ref: ${rowA.record_ref}`)
      assert.strictEqual(lines[3], "2. ARENERA · Zacatecas · SCIAN: not published · contact: none published")
    })

    it("shows normalizations and semantic warnings", () => {
      const text = Format.searchSummary(searchEnvelope, input)
      assert.include(text, `~ state: "Zacatecas" read as "32" (state name resolved to its code)`)
      assert.include(text, "! observation_not_company: Each row is one published observation.")
    })

    it("ends with the page line and the command that reads the next page", () => {
      const last = Format.searchSummary(searchEnvelope, input).split("\n").at(-1)
      assert.strictEqual(
        last,
        "shown 2, more: yes — next: service market suppliers search --state Zacatecas --scian-codes 212,213 --limit 2 --cursor CURSOR_NEXT"
      )
    })

    it("says when there is no further page", () => {
      const last = Format.searchSummary(lastPageEnvelope, input).split("\n").at(-1)
      assert.strictEqual(last, "shown 1, more: no")
    })

    it("says when nothing matched", () => {
      const empty = {
        ...lastPageEnvelope,
        interpretedRequest: { request: {}, normalizations: [] },
        results: [],
        page: { limit: 20, returned: 0, hasMore: false, nextCursor: null }
      }
      const text = Format.searchSummary(empty, input)
      assert.strictEqual(text, "No supplier observations matched.\nshown 0, more: no")
    })
  })

  describe("searchCommandLine", () => {
    it("quotes values a shell would split", () => {
      assert.strictEqual(
        Format.searchCommandLine({ query: "it's gold", query_mode: "exact_phrase" }),
        `service market suppliers search --query 'it'\\''s gold' --query-mode exact_phrase`
      )
    })
  })

  it("supplierSummary lists the published fields and the ref", () => {
    const text = Format.supplierSummary(supplierEnvelope)
    const lines = text.split("\n")
    assert.strictEqual(lines[0], "MINERA DEL NORTE (MINERA DEL NORTE SA DE CV)")
    assert.include(text, "rfc: MNO010101AB1")
    assert.include(text, "place: Fresnillo, Zacatecas (state 32, municipality 32010)")
    assert.include(text, "contact: phone, email (2 channels)")
    assert.include(text, `ref: ${rowA.record_ref}`)
  })

  it("capabilitiesSummary lists operations with examples and the largest observed values first", () => {
    const text = Format.capabilitiesSummary(capabilitiesEnvelope)
    assert.include(text, "search_suppliers  POST /suppliers/search  (metered, paginates)")
    assert.include(text, "e.g. service market suppliers search --state Zacatecas")
    assert.include(text, "states: 2 values — Zacatecas (32) 300, Aguascalientes (01) 20")
    assert.include(text, "query modes: auto, exact_phrase, all_terms, any_terms")
  })

  it("json prints the value as indented JSON", () => {
    assert.deepStrictEqual(JSON.parse(Format.json(searchEnvelope)), JSON.parse(JSON.stringify(searchEnvelope)))
  })

  describe("failure", () => {
    it("prints a refusal's semantic_code, why, suggested_correction and recovery.action", () => {
      const refusal = refuse("unknown_facet", "Unknown facet(s): bogus.", "Use states or scian_codes.", {
        field: "facets",
        allowedValues: ["states", "scian_codes"]
      })
      const text = Format.failure(
        Failure.Failure.Refused({ status: 400, requestId: "req_1", block: toBlock(refusal) })
      )
      assert.strictEqual(
        text,
        [
          "error: market-data refused (HTTP 400, request_id req_1)",
          "semantic_code: unknown_facet",
          "why: Unknown facet(s): bogus.",
          "suggested_correction: Use states or scian_codes.",
          "recovery.action: fix_arguments",
          "retryable: false",
          "field: facets",
          "allowed_values: states, scian_codes"
        ].join("\n")
      )
    })

    it("marks a refusal produced before sending", () => {
      const refusal = refuse("invalid_field_value", "Field \"limit\" is not valid.", "Use 1 to 50.")
      const text = Format.failure(Failure.fromRefusal(refusal))
      assert.match(text, /^error: market-data refused before sending/)
      assert.include(text, "semantic_code: invalid_field_value")
    })

    it("prints authentication failures with a hint", () => {
      const text = Format.failure(
        Failure.Failure.Denied({ status: 401, code: "UNAUTHENTICATED", message: "Authentication required.", requestId: "req_2" })
      )
      assert.include(text, "error: UNAUTHENTICATED (HTTP 401, request_id req_2): Authentication required.")
      assert.include(text, "SERVICE_API_KEY")
    })

    it("prints connection failures with the base URL", () => {
      const text = Format.failure(Failure.Failure.Unreachable({ baseUrl: "http://127.0.0.1:9", reason: "connect ECONNREFUSED" }))
      assert.include(text, "error: could not reach http://127.0.0.1:9: connect ECONNREFUSED")
    })
  })

  it("each failure kind has its own exit code", () => {
    const codes = [
      Failure.exitCode(Failure.Failure.Refused({ status: 404, requestId: undefined, block: toBlock(refuse("invalid_record_ref", "w", "s")) })),
      Failure.exitCode(Failure.missingApiKey),
      Failure.exitCode(Failure.Failure.Unreachable({ baseUrl: "u", reason: "r" })),
      Failure.exitCode(Failure.Failure.Unexpected({ message: "m" }))
    ]
    assert.deepStrictEqual(codes, [3, 4, 5, 1])
  })
})
