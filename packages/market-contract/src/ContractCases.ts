/**
 * The market-data contract as runnable cases: each numbered rule, each row of the errors table and each
 * limit written as a call on the demo corpus and what a caller must see. The shared conformance suite runs
 * them on HTTP, MCP and the CLI, on PGlite and PostgreSQL; {@link elsewhere} names the test of each
 * requirement no single call can show, and {@link invariant} is what every envelope must satisfy.
 *
 * @since 0.1.0
 */
import type * as ContractCase from "@service/core/ContractCase"
import * as Predicate from "effect/Predicate"
import { SCHEMA_VERSION } from "./Envelope.js"
import { defaultPageSize, maxPageSize } from "./Limits.js"
import { maxScreenBatch } from "./Risks.js"

// -----------------------------------------------------------------------------
// reading answers
// -----------------------------------------------------------------------------

const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let current = value
  for (const key of path) {
    if (Array.isArray(current) && typeof key === "number") current = current[key]
    else if (Predicate.isRecord(current) && typeof key === "string") current = current[key]
    else return undefined
  }
  return current
}

const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const rows = (body: unknown): ReadonlyArray<unknown> => list(at(body, "results"))

const warningCodes = (value: unknown): ReadonlyArray<unknown> => list(value).map((warning) => at(warning, "code"))

const that = (holds: boolean, violation: string): ReadonlyArray<string> => (holds ? [] : [violation])

const show = (value: unknown): string => JSON.stringify(value)?.slice(0, 300) ?? "undefined"

const warns = (code: string) => (body: unknown): ReadonlyArray<string> =>
  that(warningCodes(at(body, "semanticWarnings")).includes(code), `no ${code} warning: ${show(at(body, "semanticWarnings"))}`)

const every = (body: unknown, holds: (row: unknown) => boolean, what: string): ReadonlyArray<string> =>
  rows(body).flatMap((row, i) => that(holds(row), `row ${i} ${what}: ${show(row)}`))

const nonEmpty = (body: unknown): ReadonlyArray<string> => that(rows(body).length > 0, "no rows, the case needs some")

const blockHas = (field: string, expected: (value: unknown) => boolean, what: string) => (block: unknown): ReadonlyArray<string> =>
  that(expected(at(block, field)), `${field} ${what}: ${show(at(block, field))}`)

const allowedIncludes = (...values: ReadonlyArray<string>) =>
  blockHas("allowed_values", (v) => values.every((value) => list(v).includes(value)), `does not list ${values.join(", ")}`)

const checks = (...all: ReadonlyArray<(body: unknown, given: ContractCase.Given) => ReadonlyArray<string>>) =>
(body: unknown, given: ContractCase.Given): ReadonlyArray<string> => all.flatMap((check) => check(body, given))

/** The `record_ref` of every record row anywhere under `value` (a row is what carries a fingerprint). */
const refsUnder = (value: unknown): ReadonlyArray<string> => {
  if (Array.isArray(value)) return value.flatMap(refsUnder)
  if (!Predicate.isRecord(value)) return []
  const own = typeof value["record_ref"] === "string" && typeof value["record_fingerprint"] === "string" ? [value["record_ref"]] : []
  return [...own, ...Object.values(value).flatMap(refsUnder)]
}

// Words of SQL or of the warehouse's schema that no interpreted request may carry.
const schemaWords = /\b(SELECT|WHERE|JOIN|ORDER BY|tsquery|tsvector|snapshot_id|source_slug|source_record_id)\b|market\.[a-z_]+|::/

/**
 * What every market-data answer satisfies: the envelope's constant version; provenance naming exactly the
 * records the results carry; a page whose counts match its rows; diagnostics; and an interpreted request
 * free of SQL and schema.
 *
 * @since 0.1.0 @category invariants
 */
export const invariant = (operation: string, body: unknown): ReadonlyArray<string> => {
  if (!Predicate.isRecord(body) || !("schemaVersion" in body)) return [] // coverage: not an envelope
  const violations: Array<string> = [...that(body["schemaVersion"] === SCHEMA_VERSION, `schemaVersion ${show(body["schemaVersion"])}`)]
  if (!("provenance" in body)) return violations // the compact discovery document
  const inResults = [...new Set(refsUnder(body["results"]))].sort()
  const inProvenance = [...new Set(list(body["provenance"]).map((entry) => at(entry, "record_ref")))].sort()
  violations.push(...that(show(inResults) === show(inProvenance), `${operation}: provenance ${show(inProvenance)} is not the results' refs ${show(inResults)}`))
  const page = body["page"]
  if (page !== null && Array.isArray(body["results"])) {
    const returned = at(page, "returned")
    const limit = at(page, "limit")
    violations.push(...that(returned === body["results"].length, `page.returned ${show(returned)} is not the ${body["results"].length} rows`))
    violations.push(...that(typeof limit === "number" && typeof returned === "number" && returned <= limit, "more rows than the limit"))
    violations.push(...that((at(page, "hasMore") === true) === (typeof at(page, "nextCursor") === "string"), "hasMore and nextCursor disagree"))
  }
  const elapsed = at(body, "diagnostics", "elapsedMs")
  const examined = at(body, "diagnostics", "rowsExamined")
  violations.push(...that(typeof elapsed === "number" && elapsed >= 0 && typeof examined === "number" && examined >= 0, "diagnostics"))
  violations.push(...that(!schemaWords.test(JSON.stringify(body["interpretedRequest"])), `interpretedRequest shows SQL or schema: ${show(body["interpretedRequest"])}`))
  violations.push(...that(list(body["coverage"]).length > 0, "no coverage declaration"))
  return violations
}

// -----------------------------------------------------------------------------
// inputs on the demo corpus
// -----------------------------------------------------------------------------

const zacatecasMining = { state: "Zacatecas", scian_codes: ["212"] }
const mxnContracts = { currency: "MXN", amount_scope: "supplier_contract" }
const awardYears = { ...mxnContracts, from_date: "2014-01-01", to_date: "2014-12-31" }
const earlierYear = { from_date: "2013-01-01", to_date: "2013-12-31" }
const unlisted = ["AAA010101AAA", "BBB020202BB1"]
const listedRfc = "GTA140724H10"
const awardedRfc = "CFE370814QI0"
// Well-formed company RFCs (three letters, a date YYMMDD, three characters) the corpus does not list.
const rfcs = (n: number): ReadonlyArray<string> =>
  Array.from({ length: n }, (_, i) => `XAX${String(i).padStart(2, "0")}0101AB${i % 10}`)

const cogGroups = {
  operation: "aggregate_awards",
  input: { ...mxnContracts, group_by: ["cog_partida"], limit: 5 },
  path: ["results"]
}

// The busiest published COG partida (the groups hold a null one for awards published without a code).
const busiestCog = (given: ContractCase.Given): string =>
  String(list(given["groups"]).map((group) => at(group, "cogPartida")).find((code) => typeof code === "string"))
const segment = (id: string) => ({ id, query: "minera" })
const geography = (id: string, state: string) => ({ id, state })
const tenStates = [
  "Zacatecas", "Sonora", "Chihuahua", "Coahuila", "Durango", "Jalisco", "Puebla", "Oaxaca", "Yucatán", "Sinaloa"
].map((state, i) => geography(`g${i}`, state))

// The last page of the Zacatecas mining walk, in the pagination cases.
const lastPage = 20

const numberAt = (given: ContractCase.Given, name: string): number => {
  const value = given[name]
  return typeof value === "number" ? value : Number.NaN
}

/**
 * The cases of a market group's operations, by rule. The cases of rule 1 are read from the operations themselves:
 * one per operation that declares `query_too_broad`.
 *
 * @since 0.1.0 @category cases
 */
export const casesFor = (
  operations: ReadonlyArray<{ readonly name: string; readonly paginates: boolean; readonly refuses: ReadonlyArray<string> }>
): ReadonlyArray<ContractCase.Case> => [
  // Rule 1: every operation that narrows (it declares query_too_broad), called without a narrowing dimension.
  ...operations.filter((op) => op.refuses.includes("query_too_broad")).map(
    (op): ContractCase.Case => ({
      rule: "rule 1",
      title: "no narrowing dimension is query_too_broad",
      operation: op.name,
      input: op.paginates ? { limit: 5 } : {},
      expect: { refused: "query_too_broad" }
    })
  ),
  // Rule 2: a text query alone must be selective; with a structured filter it is answered.
  {
    rule: "rule 2",
    title: "a common word alone is query_not_selective",
    operation: "search_suppliers",
    input: { query: "minera" },
    expect: { refused: "query_not_selective", check: blockHas("recovery", (r) => at(r, "action") === "narrow_query", "is not narrow_query") }
  },
  { rule: "rule 2", title: "a common word alone is query_not_selective", operation: "count_suppliers", input: { query: "minera" }, expect: { refused: "query_not_selective" } },
  { rule: "rule 2", title: "a common word alone is query_not_selective", operation: "search_opportunities", input: { query: "mantenimiento" }, expect: { refused: "query_not_selective" } },
  {
    rule: "rule 2",
    title: "the same word with a state is answered",
    operation: "search_suppliers",
    input: { query: "minera", state: "Zacatecas", limit: 5 },
    expect: { answered: checks(nonEmpty, warns("observation_not_company")) }
  },
  {
    rule: "rule 2",
    title: "a selective text query alone (one observation's name) is answered",
    operation: "search_suppliers",
    given: { name: { operation: "search_suppliers", input: { ...zacatecasMining, limit: 1 }, path: ["results", 0, "name"] } },
    input: (given) => ({ query: String(given["name"]), query_mode: "exact_phrase", limit: 5 }),
    expect: {
      answered: checks(nonEmpty, (body, given) =>
        every(body, (row) => [at(row, "name"), at(row, "legal_name")].some((n) => String(n).includes(String(given["name"]))), "does not carry the name"))
    }
  },
  // Rule 3: count is exact.
  {
    rule: "rule 3",
    title: "the count equals the rows a complete walk of two pages returns",
    operation: "search_suppliers",
    given: {
      count: { operation: "count_suppliers", input: zacatecasMining, path: ["results", "count"] },
      cursor: { operation: "search_suppliers", input: { ...zacatecasMining, limit: maxPageSize }, path: ["page", "nextCursor"] }
    },
    input: (given) => ({ ...zacatecasMining, limit: maxPageSize, cursor: given["cursor"] }),
    expect: {
      answered: (body, given) => [
        ...that(at(body, "page", "hasMore") === false, "the walk needs more than two pages; pick a narrower case"),
        ...that(maxPageSize + rows(body).length === numberAt(given, "count"), `${maxPageSize} + ${rows(body).length} rows against a count of ${show(given["count"])}`)
      ]
    }
  },
  {
    rule: "rule 3",
    title: "a count says it counts observations",
    operation: "count_suppliers",
    input: zacatecasMining,
    expect: { answered: checks(warns("observation_not_company"), (body) => that(typeof at(body, "results", "count") === "number", "no count")) }
  },
  // Rule 4: compare_segments limits, observed kinds, contact breakdown, observation counts.
  {
    rule: "rule 4",
    title: "five segments by ten states (50 cells) are answered, segments first, with a like-for-like contact count",
    operation: "compare_segments",
    input: {
      segments: ["a", "b", "c", "d", "e"].map(segment),
      geographies: tenStates,
      observed_kind: "supplier_observation",
      contact_breakdown: true
    },
    expect: {
      answered: checks(warns("observation_not_company"), (body) => {
        const cells = list(at(body, "results", "cells"))
        return [
          ...that(cells.length === 50, `${cells.length} cells`),
          ...cells.flatMap((cell, i) => {
            const count = at(cell, "count")
            const withContact = at(cell, "with_contact_channel")
            return that(typeof count === "number" && typeof withContact === "number" && withContact <= count, `cell ${i}: ${show(cell)}`)
          })
        ]
      })
    }
  },
  {
    rule: "rule 4",
    title: "six segments are refused",
    operation: "compare_segments",
    input: { segments: ["a", "b", "c", "d", "e", "f"].map(segment), geographies: [geography("z", "Zacatecas")], observed_kind: "supplier_observation" },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "rule 4",
    title: "eleven states are refused",
    operation: "compare_segments",
    input: { segments: [segment("a")], geographies: [...tenStates, geography("g10", "Tabasco")], observed_kind: "supplier_observation" },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "rule 4",
    title: "an observed kind that is not a countable record kind is invalid_observed_kind with the allowed kinds",
    operation: "compare_segments",
    input: { segments: [segment("a")], geographies: [geography("z", "Zacatecas")], observed_kind: "company" },
    expect: { refused: "invalid_observed_kind", check: allowedIncludes("supplier_observation", "opportunity", "award") }
  },
  {
    rule: "rule 4",
    title: "without contact_breakdown no contact count is given",
    operation: "compare_segments",
    input: { segments: [segment("a")], geographies: [geography("z", "Zacatecas")], observed_kind: "supplier_observation" },
    expect: { answered: (body) => list(at(body, "results", "cells")).flatMap((cell) => that(at(cell, "with_contact_channel") === undefined, "a contact count")) }
  },
  // Rule 5: the history names every other (currency, amount_scope) pair.
  {
    rule: "rule 5",
    title: "get_supplier_history lists the other pairs, never the requested one",
    operation: "get_supplier_history",
    input: { supplier_rfc: awardedRfc, ...mxnContracts },
    expect: {
      answered: (body) => {
        const others = list(at(body, "results", "other_pairs"))
        return [
          ...that(Array.isArray(at(body, "results", "other_pairs")), "no other_pairs"),
          ...others.flatMap((pair) =>
            that(!(at(pair, "currency") === "MXN" && at(pair, "amount_scope") === "supplier_contract"), `the requested pair is listed: ${show(pair)}`)
          )
        ]
      }
    }
  },
  // Rule 6: amounts never summed across currencies or scopes.
  {
    rule: "rule 6",
    title: "aggregate_awards needs a currency (amounts are never summed across currencies)",
    operation: "aggregate_awards",
    input: { amount_scope: "supplier_contract", group_by: ["award_year"] },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "rule 6",
    title: "every history award is in the requested currency and scope",
    operation: "get_supplier_history",
    input: { supplier_rfc: awardedRfc, ...mxnContracts },
    expect: {
      answered: (body) =>
        list(at(body, "results", "awards")).flatMap((award, i) =>
          that(at(award, "currency") === "MXN" && at(award, "amount_scope") === "supplier_contract", `award ${i}: ${show(award)}`)
        )
    }
  },
  // Rule 7: cog_partidas shape is checked before any read; overlap match.
  {
    rule: "rule 7",
    title: "a cog_partidas item that is not five digits is invalid_field_value",
    operation: "search_awards",
    input: { supplier_rfc: awardedRfc, cog_partidas: ["2110"] },
    expect: { refused: "invalid_field_value", check: blockHas("field", (f) => String(f).startsWith("cog_partidas"), "is not cog_partidas") }
  },
  {
    rule: "rule 7",
    title: "a contract matches on any one of its codes",
    operation: "search_awards",
    given: { groups: cogGroups },
    input: (given) => ({ cog_partidas: [busiestCog(given), "99999"], limit: 20 }),
    expect: {
      answered: checks(nonEmpty, (body, given) =>
        rows(body).flatMap((row, i) =>
          that(list(at(row, "cogPartidas")).some((c) => c === busiestCog(given) || c === "99999"), `row ${i} has ${show(at(row, "cogPartidas"))}, not ${busiestCog(given)}`)
        ))
    }
  },
  {
    rule: "limits: cog_partidas",
    title: "21 codes are refused",
    operation: "search_awards",
    input: { cog_partidas: Array.from({ length: 21 }, (_, i) => String(21101 + i)) },
    expect: { refused: "invalid_field_value" }
  },
  { rule: "limits: cog_partidas", title: "an empty list is refused", operation: "search_awards", input: { cog_partidas: [] }, expect: { refused: "invalid_field_value" } },
  // Rule 8: grouping by COG unnests and always warns.
  ...(["cog_partida", "cog_capitulo"] as const).flatMap((dimension): ReadonlyArray<ContractCase.Case> => [
    {
      rule: "rule 8",
      title: `grouping by ${dimension} warns that totals may exceed the corpus`,
      operation: "aggregate_awards",
      input: { ...awardYears, group_by: [dimension] },
      expect: { answered: checks(nonEmpty, warns("cog_partida_totals_may_exceed_corpus")) }
    },
    {
      rule: "rule 8",
      title: `grouping by ${dimension} composes with compare_period and still warns`,
      operation: "aggregate_awards",
      input: { ...awardYears, group_by: [dimension], compare_period: earlierYear },
      expect: { answered: checks(nonEmpty, warns("cog_partida_totals_may_exceed_corpus")) }
    }
  ]),
  // Rule 9: compare_period in the same statement, ordered by period B; cursors do not cross modes.
  {
    rule: "rule 9",
    title: "each group carries both periods and their difference, ranked by period B",
    operation: "aggregate_awards",
    input: { ...awardYears, group_by: ["procedure_type"], compare_period: earlierYear },
    expect: {
      answered: checks(nonEmpty, (body) => {
        const groups = rows(body)
        const totals = groups.map((group) => Number(at(group, "periodB", "totalAmount")))
        return [
          ...groups.flatMap((group, i) => {
            const pct = at(group, "deltaPct")
            const a = Number(at(group, "periodA", "totalAmount"))
            return [
              ...that(typeof at(group, "deltaAmount") === "string", `group ${i} has no deltaAmount`),
              ...that(a === 0 ? pct === null : typeof pct === "number" && Number.isFinite(pct), `group ${i}: deltaPct ${show(pct)} with period A ${a}`)
            ]
          }),
          ...that(totals.every((total, i) => i === 0 || (totals[i - 1] ?? 0) >= total), `not ranked by period B: ${show(totals)}`)
        ]
      })
    }
  },
  {
    rule: "rule 9",
    title: "a cursor issued without compare_period is invalid_cursor with one",
    operation: "aggregate_awards",
    given: { cursor: { operation: "aggregate_awards", input: { ...awardYears, group_by: ["buyer_name"], limit: 1 }, path: ["page", "nextCursor"] } },
    input: (given) => ({ ...awardYears, group_by: ["buyer_name"], limit: 1, compare_period: earlierYear, cursor: given["cursor"] }),
    expect: { refused: "invalid_cursor", check: blockHas("recovery", (r) => at(r, "action") === "restart_without_cursor", "is not restart_without_cursor") }
  },
  {
    rule: "rule 9",
    title: "a cursor issued with compare_period is invalid_cursor without it",
    operation: "aggregate_awards",
    given: {
      cursor: {
        operation: "aggregate_awards",
        input: { ...awardYears, group_by: ["buyer_name"], limit: 1, compare_period: earlierYear },
        path: ["page", "nextCursor"]
      }
    },
    input: (given) => ({ ...awardYears, group_by: ["buyer_name"], limit: 1, cursor: given["cursor"] }),
    expect: { refused: "invalid_cursor" }
  },
  {
    rule: "rule 9",
    title: "compare_period needs both dates (the CLI's two flags: both or neither)",
    operation: "aggregate_awards",
    input: { ...awardYears, group_by: ["award_year"], compare_period: { from_date: "2013-01-01" } },
    expect: { refused: "invalid_field_value" }
  },
  // Rule 10: screen_risks batch and warning levels.
  {
    rule: "rule 10",
    title: `${maxScreenBatch + 1} RFCs are batch_too_large, never truncated`,
    operation: "screen_risks",
    input: { rfcs: rfcs(maxScreenBatch + 1) },
    expect: { refused: "batch_too_large", check: blockHas("recovery", (r) => at(r, "action") === "fix_arguments", "is not fix_arguments") }
  },
  {
    rule: "rule 10",
    title: `${maxScreenBatch} RFCs give ${maxScreenBatch} entries in request order`,
    operation: "screen_risks",
    input: { rfcs: rfcs(maxScreenBatch) },
    expect: { answered: (body) => that(show(rows(body).map((entry) => at(entry, "rfc"))) === show(rfcs(maxScreenBatch)), "entries are not the RFCs in order") }
  },
  {
    rule: "rule 10",
    title: "a zero-mark entry carries zero_results_with_coverage; the envelope does not while another RFC has marks",
    operation: "screen_risks",
    input: { rfcs: [unlisted[0], listedRfc] },
    expect: {
      answered: (body) => {
        const [zero, marked] = rows(body)
        return [
          ...that(at(zero, "mark_count") === 0 && warningCodes(at(zero, "warnings")).includes("zero_results_with_coverage"), `zero entry: ${show(zero)}`),
          ...that(Number(at(marked, "mark_count")) > 0 && !warningCodes(at(marked, "warnings")).includes("zero_results_with_coverage"), `marked entry: ${show(marked)}`),
          ...that(!warningCodes(at(body, "semanticWarnings")).includes("zero_results_with_coverage"), "the envelope repeats the warning"),
          ...warns("listing_not_conviction")(body)
        ]
      }
    }
  },
  {
    rule: "rule 10",
    title: "the envelope repeats the warning only when the whole batch has zero marks",
    operation: "screen_risks",
    input: { rfcs: unlisted },
    expect: { answered: checks(warns("zero_results_with_coverage"), (body) => every(body, (entry) => at(entry, "mark_count") === 0, "has marks")) }
  },
  // Rule 11: deadlines and amounts.
  ...(["deadline_before", "deadline_after", "closes_before", "tender_end_after"] as const).map((field): ContractCase.Case => ({
    rule: "rule 11",
    title: `${field} is deadline_not_available`,
    operation: "search_opportunities",
    input: { buyer: "API-Veracruz", [field]: "2025-01-01" },
    expect: { refused: "deadline_not_available" }
  })),
  ...([{ min_amount: "1000" }, { max_amount: "5000", currency: "MXN" }, { min_amount: "1", amount_scope: "supplier_contract" }] as const).map(
    (amounts): ContractCase.Case => ({
      rule: "rule 11",
      title: `${Object.keys(amounts).join(" and ")} without both currency and amount_scope is amount_requires_currency_and_scope`,
      operation: "search_awards",
      input: { supplier_rfc: awardedRfc, ...amounts },
      expect: { refused: "amount_requires_currency_and_scope" }
    })
  ),
  {
    rule: "rule 11",
    title: "an amount filter with currency and scope is answered, every amount in range",
    operation: "search_awards",
    input: { supplier_rfc: awardedRfc, ...mxnContracts, min_amount: "1000", limit: 20 },
    expect: { answered: checks(warns("award_not_payment"), (body) => every(body, (row) => Number(at(row, "amount")) >= 1000 && at(row, "currency") === "MXN", "is out of range")) }
  },
  // Rule 12: query modes.
  {
    rule: "rule 12",
    title: "an explicit query_mode is reported in query_interpretation",
    operation: "search_suppliers",
    input: { query: "minera", state: "Zacatecas", query_mode: "all_terms", limit: 5 },
    expect: { answered: (body) => that(at(body, "interpretedRequest", "query_interpretation", "requested_mode") === "all_terms", "requested_mode is not all_terms") }
  },
  {
    rule: "rule 12",
    title: "a query_mode outside the closed set is invalid_field_value with the allowed modes",
    operation: "search_awards",
    input: { query: "medicamentos", supplier_rfc: awardedRfc, query_mode: "fuzzy" },
    expect: { refused: "invalid_field_value", check: allowedIncludes("auto", "exact_phrase", "all_terms", "any_terms") }
  },
  {
    rule: "rule 12",
    title: "an explicit query_mode with strategy hybrid is refused",
    operation: "search_opportunities",
    input: { query: "mantenimiento", buyer: "API-Veracruz", query_mode: "any_terms", strategy: "hybrid" },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "rule 12",
    title: "hybrid retrieval answers a misspelled word; every row says how actionable it is",
    operation: "search_opportunities",
    input: { query: "mantenimento", buyer: "API-Veracruz", strategy: "hybrid", limit: 5 },
    expect: {
      answered: checks(nonEmpty, (body) =>
        every(body, (row) => typeof at(row, "actionability") === "string" && typeof at(row, "actionability_reason") === "string" && typeof at(row, "is_open") === "boolean", "lacks actionability"))
    }
  },
  // Rule 13: source_slugs only on the canonical HTTP route.
  {
    rule: "rule 13",
    title: "source_slugs is accepted on the canonical HTTP route (an unknown slug is unknown_filter_value)",
    operation: "search_suppliers",
    surfaces: ["http"],
    input: { state: "Zacatecas", source_slugs: ["no-such-source"] },
    expect: { refused: "unknown_filter_value" }
  },
  {
    rule: "rule 13",
    title: "source_slugs is not offered on model-facing surfaces",
    operation: "search_suppliers",
    surfaces: ["mcp", "cli"],
    input: { state: "Zacatecas", source_slugs: ["no-such-source"] },
    expect: { refused: "invalid_field_value" }
  },
  // Rule 15: capabilities.
  {
    rule: "rule 15",
    title: "capabilities describe all thirteen operations, stamp every value list with the corpus basis and point to /openapi.json",
    operation: "market_capabilities",
    input: {},
    expect: {
      answered: (body) => {
        const operations = list(at(body, "results", "operations"))
        const observed = at(body, "results", "observedValues")
        const lists = Predicate.isRecord(observed) ? Object.entries(observed) : []
        return [
          ...that(operations.length === 13, `${operations.length} operations`),
          ...operations.flatMap((op) =>
            ["question", "requires", "method", "path"].flatMap((field) => that(typeof at(op, field) === "string", `${show(at(op, "operation"))} has no ${field}`))
              .concat(that(Array.isArray(at(op, "refuses")) && Predicate.isRecord(at(op, "example", "input")), `${show(at(op, "operation"))} lacks refuses or example`))
          ),
          ...that(["states", "scian_codes", "procedure_types"].every((facet) => lists.some(([name]) => name === facet)), `facets: ${show(lists.map(([name]) => name))}`),
          ...lists.flatMap(([name, values]) => that(at(values, "corpusBasis", "snapshotId") === at(body, "corpusBasis", "snapshotId"), `${name} is not stamped`)),
          ...that(at(body, "results", "openapiUrl") === "/openapi.json", "openapiUrl")
        ]
      }
    }
  },
  {
    rule: "rule 15",
    title: "the compact capabilities point to /openapi.json too",
    operation: "capabilities_compact",
    input: {},
    expect: { answered: (body) => that(at(body, "openapiUrl") === "/openapi.json" && list(at(body, "operations")).length === 13, show(body)) }
  },
  // Errors table: each code a call can provoke.
  { rule: "errors: unknown_state", title: "a place that is no state", operation: "search_suppliers", input: { state: "Atlantis" }, expect: { refused: "unknown_state" } },
  {
    rule: "errors: unknown_state",
    title: "compare_segments names the unknown state too",
    operation: "compare_segments",
    input: { segments: [segment("a")], geographies: [geography("x", "Atlantis")], observed_kind: "supplier_observation" },
    expect: { refused: "unknown_state" }
  },
  {
    rule: "errors: invalid_mark_kind",
    title: "a mark kind outside the closed set, with the allowed kinds",
    operation: "search_risks",
    input: { rfc: listedRfc, mark_kinds: ["felony"] },
    expect: { refused: "invalid_mark_kind", check: allowedIncludes("efos", "sancion") }
  },
  {
    rule: "errors: unknown_filter_value",
    title: "a municipality the catalog does not hold",
    operation: "search_suppliers",
    input: { state: "Zacatecas", municipality: "Springfield" },
    expect: { refused: "unknown_filter_value" }
  },
  {
    rule: "errors: unknown_filter_value",
    title: "a procedure type the corpus does not hold, with the allowed values",
    operation: "search_opportunities",
    input: { buyer: "API-Veracruz", procedure_type: "subasta inversa galáctica" },
    expect: { refused: "unknown_filter_value" }
  },
  { rule: "errors: unknown_facet", title: "a facet that is no corpus dimension", operation: "market_capabilities", input: { facets: "states,colours" }, expect: { refused: "unknown_facet" } },
  {
    rule: "errors: invalid_cursor",
    title: "a cursor resumed with other filters",
    operation: "search_suppliers",
    given: { cursor: { operation: "search_suppliers", input: { state: "Zacatecas", limit: 1 }, path: ["page", "nextCursor"] } },
    input: (given) => ({ state: "Sonora", limit: 1, cursor: given["cursor"] }),
    expect: { refused: "invalid_cursor" }
  },
  {
    rule: "errors: invalid_cursor",
    title: "a cursor of one operation resumed by another",
    operation: "search_awards",
    given: { cursor: { operation: "search_suppliers", input: { state: "Zacatecas", limit: 1 }, path: ["page", "nextCursor"] } },
    input: (given) => ({ supplier_rfc: awardedRfc, cursor: given["cursor"] }),
    expect: { refused: "invalid_cursor" }
  },
  {
    rule: "errors: invalid_record_ref",
    title: "a string the layer never issued",
    operation: "get_supplier",
    input: { record_ref: "not-a-record-ref" },
    expect: { refused: "invalid_record_ref" }
  },
  {
    rule: "errors: invalid_record_ref",
    title: "a supplier's record_ref given to get_opportunity",
    operation: "get_opportunity",
    given: { ref: { operation: "search_suppliers", input: { ...zacatecasMining, limit: 1 }, path: ["results", 0, "record_ref"] } },
    input: (given) => ({ record_ref: given["ref"] }),
    expect: { refused: "invalid_record_ref" }
  },
  {
    rule: "errors: invalid_field_value",
    title: "a structural refusal carries the closed set, invalid_field_value and fix_arguments",
    operation: "search_suppliers",
    input: { state: "Zacatecas", query: "minera", query_mode: "loose" },
    expect: {
      refused: "invalid_field_value",
      check: checks(allowedIncludes("exact_phrase"), blockHas("recovery", (r) => at(r, "action") === "fix_arguments", "is not fix_arguments"))
    }
  },
  // Limits.
  {
    rule: "limits: page size",
    title: `search pages default to ${defaultPageSize} rows`,
    operation: "search_suppliers",
    input: { state: "Zacatecas" },
    expect: { answered: (body) => that(at(body, "page", "limit") === defaultPageSize && rows(body).length === defaultPageSize, show(at(body, "page"))) }
  },
  {
    rule: "limits: page size",
    title: `a search page above ${maxPageSize} rows is refused`,
    operation: "search_permits",
    input: { holder_name: "Bimbo", limit: maxPageSize + 1 },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "limits: page size",
    title: "aggregate pages default to 50 groups",
    operation: "aggregate_awards",
    input: { ...mxnContracts, group_by: ["buyer_name"] },
    expect: { answered: (body) => that(at(body, "page", "limit") === 50, show(at(body, "page"))) }
  },
  {
    rule: "limits: page size",
    title: "an aggregate page above 200 groups is refused",
    operation: "aggregate_awards",
    input: { ...mxnContracts, group_by: ["buyer_name"], limit: 201 },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "limits: group_by",
    title: "four dimensions are refused",
    operation: "aggregate_awards",
    input: { ...mxnContracts, group_by: ["buyer_name", "award_year", "procedure_type", "supplier_size"] },
    expect: { refused: "invalid_field_value" }
  },
  {
    rule: "limits: group_by",
    title: "supplier_name is refused with the allowed dimensions",
    operation: "aggregate_awards",
    input: { ...mxnContracts, group_by: ["supplier_name"] },
    expect: { refused: "invalid_field_value", check: allowedIncludes("supplier_rfc", "buyer_name", "cog_partida") }
  },
  {
    rule: "limits: pagination",
    title: "hasMore comes from reading one row more: a last page exactly as long as the limit has none",
    operation: "search_suppliers",
    given: {
      count: { operation: "count_suppliers", input: zacatecasMining, path: ["results", "count"] },
      cursor: {
        operation: "search_suppliers",
        input: (given) => ({ ...zacatecasMining, limit: numberAt(given, "count") - lastPage }),
        path: ["page", "nextCursor"]
      }
    },
    input: (given) => ({ ...zacatecasMining, limit: lastPage, cursor: given["cursor"] }),
    expect: { answered: (body) => that(rows(body).length === lastPage && at(body, "page", "hasMore") === false, show(at(body, "page"))) }
  },
  {
    rule: "limits: pagination",
    title: "a page one row short of the rest has more",
    operation: "search_suppliers",
    given: {
      count: { operation: "count_suppliers", input: zacatecasMining, path: ["results", "count"] },
      cursor: {
        operation: "search_suppliers",
        input: (given) => ({ ...zacatecasMining, limit: numberAt(given, "count") - lastPage }),
        path: ["page", "nextCursor"]
      }
    },
    input: (given) => ({ ...zacatecasMining, limit: lastPage - 1, cursor: given["cursor"] }),
    expect: { answered: (body) => that(rows(body).length === lastPage - 1 && at(body, "page", "hasMore") === true, show(at(body, "page"))) }
  },
  // Fields named per resource.
  {
    rule: "fields: award row",
    title: "cogPartidas (an array, empty when none was published), supplier_rfc and supplier_name",
    operation: "search_awards",
    input: { supplier_rfc: awardedRfc, limit: 20 },
    expect: {
      answered: checks(nonEmpty, (body) =>
        every(body, (row) =>
          Array.isArray(at(row, "cogPartidas")) && list(at(row, "cogPartidas")).every((code) => typeof code === "string" && /^\d{5}$/.test(code)) &&
          at(row, "supplier_rfc") === awardedRfc && typeof at(row, "supplier_name") === "string", "lacks a named field"))
    }
  },
  {
    rule: "fields: permit row",
    title: "the publisher's fields as printed",
    operation: "search_permits",
    input: { holder_name: "Bimbo", limit: 5 },
    expect: {
      answered: checks(nonEmpty, (body) =>
        every(body, (row) =>
          ["holder_rfc", "holder_name", "is_active_risk", "status_text", "is_expansion", "investment_mdd", "capacity_mw", "estimated_generation"]
            .every((field) => Predicate.isRecord(row) && field in row), "lacks a named field"))
    }
  },
  // Record kinds say what they are.
  {
    rule: "envelope: record kinds",
    title: "a permit is not live verification",
    operation: "search_permits",
    input: { holder_name: "Bimbo", limit: 5 },
    expect: { answered: checks(nonEmpty, warns("permit_as_granted")) }
  },
  {
    rule: "envelope: record kinds",
    title: "a name match returns candidates",
    operation: "search_risks",
    input: { entity_name: "Humberto Reyes Baez", limit: 5 },
    expect: { answered: checks(warns("approximate_name_match"), warns("listing_not_conviction")) }
  },
  {
    rule: "envelope: record kinds",
    title: "a municipality spelled loosely is resolved and reported in normalizations",
    operation: "count_suppliers",
    input: { state: "Zacatecas", municipality: "fresnilo" },
    expect: {
      answered: (body) =>
        that(list(at(body, "interpretedRequest", "normalizations")).some((n) => at(n, "field") === "municipality" && at(n, "to") === "Fresnillo"), show(at(body, "interpretedRequest")))
    }
  },
  {
    rule: "envelope: risk in plain sight",
    title: "a row with a listed RFC carries its risk summary",
    operation: "search_awards",
    input: { supplier_rfc: listedRfc, limit: 5 },
    expect: { answered: (body) => every(body, (row) => Number(at(row, "risk", "mark_count")) > 0, "has no risk summary") }
  },
  {
    rule: "envelope: get_opportunity",
    title: "include_awards nests the awards and counts them",
    operation: "get_opportunity",
    given: { ref: { operation: "search_opportunities", input: { query: "mantenimiento", buyer: "API-Veracruz", limit: 1 }, path: ["results", 0, "record_ref"] } },
    input: (given) => ({ record_ref: given["ref"], include_awards: true }),
    expect: { answered: (body) => that(list(at(body, "results", "awards")).length === at(body, "results", "award_count"), show(at(body, "results"))) }
  }
]

/**
 * Requirements no single call on a served corpus can show, and where each is shown.
 *
 * @since 0.1.0 @category cases
 */
export const elsewhere: ReadonlyArray<ContractCase.Elsewhere> = [
  {
    rule: "rule 3",
    reason: "a statement timeout needs a slow statement and a short timeout",
    file: "packages/market-contract/test/StatementTimeout.test.ts",
    test: "market_data_timeout"
  },
  {
    rule: "rule 14",
    reason: "a wrong verb and an unknown path are HTTP requests, not operation calls",
    file: "packages/http/test/HttpLayer.test.ts",
    test: "405"
  },
  {
    rule: "errors: cursor_stale",
    reason: "the corpus must be republished between two pages",
    file: "packages/market-contract/test/MarketData.test.ts",
    test: "cursor_stale"
  },
  {
    rule: "errors: market_data_timeout",
    reason: "a statement timeout needs a slow statement and a short timeout",
    file: "packages/market-contract/test/StatementTimeout.test.ts",
    test: "market_data_timeout"
  },
  {
    rule: "errors: market_data_unavailable",
    reason: "the store must go down under a running service",
    file: "packages/market-contract/test/ReadReplica.test.ts",
    test: "market_data_unavailable"
  },
  {
    rule: "errors: serving_projection_unavailable",
    reason: "no publication may be active",
    file: "packages/market-contract/test/MarketData.test.ts",
    test: "serving_projection_unavailable"
  },
  {
    rule: "errors: serving_projection_stale",
    reason: "the publication must be past its freshness bound",
    file: "packages/market-contract/test/MarketLayer.test.ts",
    test: "serving_projection_stale"
  },
  {
    rule: "limits: metering",
    reason: "credits are per workspace and the suite shares one",
    file: "packages/http/test/HttpLayer.test.ts",
    test: "credits_exhausted"
  }
]
