import { assert, describe, it } from "@effect/vitest"
import { codec, refuse, toBlock } from "@service/market-contract/MarketError"
import * as MarketOperations from "@service/market-contract/Operations"
import * as MarketSummaries from "@service/market-contract/MarketSummaries"
import * as Operation from "@service/core/Operation"
import * as Option from "effect/Option"
import * as Failure from "../src/Failure.js"
import * as Format from "../src/Format.js"
import * as Remote from "../src/Remote.js"
import { capabilitiesEnvelope, lastPageEnvelope, rowA, searchEnvelope, supplierEnvelope } from "./Fixtures.js"

const input = { state: "Zacatecas", scian_codes: ["212", "213"], limit: 2 }
// A stand-in for the command tree's command line, so these tests stay about formatting.
const context: Format.SummaryContext = {
  input,
  commandLine: (next) =>
    ["service market suppliers search", ...Object.entries(next).map(([k, v]) => `--${k.replaceAll("_", "-")} ${String(v)}`)].join(" ")
}

describe("Format", () => {
  describe("searchSummary", () => {
    it("prints one line per row with name, place, SCIAN and contact presence, and the ref on its own line", () => {
      const lines = MarketSummaries.searchSummary(searchEnvelope, context).split("\n")
      assert.strictEqual(lines[0], "2 supplier observations (each a published observation, not a company):")
      assert.strictEqual(
        lines[1],
        "1. MINERA DEL NORTE · Fresnillo, Zacatecas · SCIAN 212221 Minería de oro · contact: phone, email"
      )
      assert.strictEqual(lines[2], `   ref: ${rowA.record_ref}`)
      assert.strictEqual(lines[3], "2. ARENERA · Zacatecas · SCIAN: not published · contact: none published")
    })

    it("shows normalizations and semantic warnings", () => {
      const text = MarketSummaries.searchSummary(searchEnvelope, context)
      assert.include(text, `~ state: "Zacatecas" read as "32" (state name resolved to its code)`)
      assert.include(text, "! observation_not_company: Each row is one published observation.")
    })

    it("ends with the page line and the command that reads the next page: the same input with the cursor", () => {
      const last = MarketSummaries.searchSummary(searchEnvelope, context).split("\n").at(-1)
      assert.strictEqual(
        last,
        "shown 2, more: yes — next: service market suppliers search --state Zacatecas --scian-codes 212,213 --limit 2 --cursor CURSOR_NEXT"
      )
    })

    it("says when there is no further page", () => {
      const last = MarketSummaries.searchSummary(lastPageEnvelope, context).split("\n").at(-1)
      assert.strictEqual(last, "shown 1, more: no")
    })

    it("says when nothing matched", () => {
      const empty = {
        ...lastPageEnvelope,
        interpretedRequest: { request: {}, normalizations: [] },
        results: [],
        page: { limit: 20, returned: 0, hasMore: false, nextCursor: null }
      }
      assert.strictEqual(MarketSummaries.searchSummary(empty, context), "No supplier observations matched.\nshown 0, more: no")
    })
  })

  it("shellQuote quotes values a shell would split", () => {
    assert.strictEqual(Format.shellQuote("Zacatecas"), "Zacatecas")
    assert.strictEqual(Format.shellQuote("it's gold"), `'it'\\''s gold'`)
  })

  it("supplierSummary lists the published fields and the ref", () => {
    const text = MarketSummaries.supplierSummary(supplierEnvelope)
    const lines = text.split("\n")
    assert.strictEqual(lines[0], "MINERA DEL NORTE (MINERA DEL NORTE SA DE CV)")
    assert.include(text, "rfc: MNO010101AB1")
    assert.include(text, "place: Fresnillo, Zacatecas (state 32, municipality 32010)")
    assert.include(text, "contact: phone, email (2 channels)")
    assert.include(text, `ref: ${rowA.record_ref}`)
  })

  it("capabilitiesSummary lists operations with examples and the largest observed values first", () => {
    const text = MarketSummaries.capabilitiesSummary(capabilitiesEnvelope)
    assert.include(text, "search_suppliers  POST /suppliers/search  (metered, paginates)")
    assert.include(text, "e.g. service market suppliers search --state Zacatecas")
    assert.include(text, "states: 2 values — Zacatecas (32) 300, Aguascalientes (01) 20")
    assert.include(text, "query modes: auto, exact_phrase, all_terms, any_terms")
  })

  describe("summary", () => {

    it("uses the operation's own summary for the wire output it recognises", () => {
      const text = Format.summary(MarketOperations.getSupplier.cli.summary, JSON.parse(JSON.stringify(supplierEnvelope)), context)
      assert.strictEqual(text, MarketSummaries.supplierSummary(supplierEnvelope))
    })

    it("falls back to the generic summary for an operation without one, or an output its summary does not decode", () => {
      const output = { total: 3, items: [{ id: "a", tags: ["x", "y"] }, { id: "b", tags: [] }], page: { hasMore: false } }
      const expected = ["total: 3", "", "2 items:", "id  tags", "a   x, y", "b", "", "page.hasMore: false"].join("\n")
      assert.strictEqual(Format.summary(undefined, output, context), expected)
      assert.strictEqual(Format.summary(MarketOperations.getSupplier.cli.summary, output, context), expected)
    })

    it("the generic summary shows null as a dash, scalar lists inline, nested lists as tables cut at 20, and no {…}", () => {
      const text = Format.describe({
        name: null,
        codes: ["1", "2"],
        owner: { person: { id: "p1", name: "Ana" } },
        rows: Array.from({ length: 25 }, (_, i) => ({ i, nested: { deep: { deeper: { deepest: i } } } }))
      })
      assert.include(text, "25 rows:")
      assert.include(text, "name: —")
      assert.include(text, "codes: 1, 2")
      assert.include(text, "owner.person.name: Ana")
      assert.notInclude(text, "{…}")
    })

    it("a list of one names one row in the singular", () => {
      for (const [field, one] of [["deliveries", "1 delivery:"], ["contacts", "1 contact:"], ["matches", "1 match:"], ["topic_tags", "1 topic tag:"]] as const) {
        assert.include(Format.describe({ [field]: [{ id: "x_1" }] }), one)
      }
      assert.include(Format.describe({ deliveries: [{ id: "x_1" }, { id: "x_2" }] }), "2 deliveries:")
    })

    it("a single record is its key facts; a nested list of objects is a small table", () => {
      const text = Format.describe({ id: "pip_1", name: "Sales", stages: [{ id: "stg_1", name: "New", position: 0 }] })
      assert.strictEqual(text, ["id: pip_1", "name: Sales", "stages (1):", "  id     name  position", "  stg_1  New   0"].join("\n"))
    })

    it("a summary that does not decode the output gives none", () => {
      const own = Operation.summaryOf(MarketOperations.getSupplier.output, MarketSummaries.supplierSummary)
      assert.isTrue(Option.isNone(own({ unexpected: true }, context)))
    })
  })

  it("json prints the value as indented JSON", () => {
    assert.deepStrictEqual(JSON.parse(Format.json(searchEnvelope)), JSON.parse(JSON.stringify(searchEnvelope)))
  })

  describe("failure", () => {
    const block = toBlock(refuse("unknown_facet", "Unknown facet(s): bogus.", "Use states or scian_codes.", {
      field: "facets",
      allowedValues: ["states", "scian_codes"]
    }))
    const body = { statusCode: 400, code: "VALIDATION_FAILED", message: "Unknown facet(s): bogus.", request_id: "req_1", market_data: block }
    const refused = Failure.Failure.Refused({ status: 400, requestId: "req_1", key: "market_data", block, body })

    it("prints a refusal's block by its wire names, whatever the domain", () => {
      assert.strictEqual(
        Format.failure(refused),
        [
          "error: market-data refused (HTTP 400, request_id req_1)",
          "semantic_code: unknown_facet",
          "why: Unknown facet(s): bogus.",
          "suggested_correction: Use states or scian_codes.",
          "retryable: false",
          "recovery.action: fix_arguments",
          "field: facets",
          "allowed_values: states, scian_codes"
        ].join("\n")
      )
    })

    it("with --json, prints the wire error body", () => {
      assert.deepStrictEqual(JSON.parse(Format.failureJson(refused)), body)
    })

    it("marks a refusal produced before sending, whose JSON body has the server's shape without status and request id", () => {
      const local = Remote.refusal(codec, { field: "limit", why: "Field \"limit\" is not valid.", suggestedCorrection: "Use 1 to 50." })
      assert.match(Format.failure(local), /^error: market-data refused before sending/)
      assert.include(Format.failure(local), "semantic_code: invalid_field_value")
      const json: unknown = JSON.parse(Format.failureJson(local))
      assert.deepInclude(json, { code: "VALIDATION_FAILED", market_data: local._tag === "Refused" ? local.block : {} })
      assert.notProperty(json, "statusCode")
    })

    it("prints authentication failures with a hint", () => {
      const text = Format.failure(
        Failure.Failure.Denied({ status: 401, code: "UNAUTHENTICATED", message: "Authentication required.", requestId: "req_2", body: undefined })
      )
      assert.include(text, "error: UNAUTHENTICATED (HTTP 401, request_id req_2): Authentication required.")
      assert.include(text, "SERVICE_API_KEY")
    })

    it("prints why access was refused and the scope that was missing, by their wire names", () => {
      const text = Format.failure(
        Failure.Failure.Denied({
          status: 403,
          code: "FORBIDDEN",
          message: "This action needs the scope commercial:activate.",
          requestId: "req_3",
          body: { code: "FORBIDDEN", message: "This action needs the scope commercial:activate.", reason: "missing_scope", required_scopes: ["commercial:activate"] }
        })
      )
      assert.include(text, "\nreason: missing_scope\nrequired_scopes: commercial:activate\n")
      assert.notInclude(text, "code: FORBIDDEN")
    })

    it("prints connection failures with the base URL, and as JSON with a local code", () => {
      const failure = Failure.Failure.Unreachable({ baseUrl: "http://127.0.0.1:9", reason: "connect ECONNREFUSED" })
      assert.include(Format.failure(failure), "error: could not reach http://127.0.0.1:9: connect ECONNREFUSED")
      assert.deepInclude(JSON.parse(Format.failureJson(failure)), { code: "UNREACHABLE" })
    })
  })

  it("each failure kind has its own exit code", () => {
    const codes = [
      Failure.exitCode(Failure.Failure.Refused({ status: 404, requestId: undefined, key: "k", block: {}, body: {} })),
      Failure.exitCode(Failure.missingApiKey),
      Failure.exitCode(Failure.Failure.Unreachable({ baseUrl: "u", reason: "r" })),
      Failure.exitCode(Failure.unexpected("m")),
      Failure.exitCode(Failure.usage("m"))
    ]
    assert.deepStrictEqual(codes, [3, 4, 5, 1, 2])
  })
})
