import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import * as ContractCases from "../src/ContractCases.js"
import { codeRules } from "../src/MarketError.js"
import * as Operations from "../src/Operations.js"

// The repository root, from this file (packages/market-contract/test/).
const root = fileURLToPath(new URL("../../../", import.meta.url))

const cases = Operations.group.cases ?? []

const shown = (rule: string): boolean => cases.some((c) => c.rule === rule) || ContractCases.elsewhere.some((e) => e.rule === rule)

// The numbered rules of spec/market-data.md ("Rules", 1 to 15) and the rows of its limits table that a
// call can show.
const numberedRules = Array.from({ length: 15 }, (_, i) => `rule ${i + 1}`)
const limits = ["limits: page size", "limits: cog_partidas", "limits: group_by", "limits: pagination", "limits: metering"]

describe("the market-data contract cases", () => {
  it("are the group's cases, elsewhere entries and invariant; rule 1 covers every operation that declares query_too_broad", () => {
    const narrowing = Operations.group.operations.filter((op) => op.refuses.includes("query_too_broad")).map((op) => op.name)
    assert.includeMembers(narrowing, ["search_suppliers", "count_suppliers", "search_awards"])
    assert.deepStrictEqual(cases.filter((c) => c.rule === "rule 1").map((c) => c.operation), narrowing)
    assert.strictEqual(Operations.group.elsewhere, ContractCases.elsewhere)
    assert.strictEqual(Operations.group.invariant, ContractCases.invariant)
  })

  it("show every numbered rule and every limit, by a case or by a test of its own", () => {
    const missing = [...numberedRules, ...limits].filter((rule) => !shown(rule))
    assert.deepStrictEqual(missing, [])
  })

  it("provoke every semantic code of the errors table, or name the test that does", () => {
    const provoked = new Set(cases.flatMap((c) => ("refused" in c.expect ? [c.expect.refused] : [])))
    const elsewhere = new Set(ContractCases.elsewhere.map((e) => e.rule.replace(/^errors: /, "")))
    const missing = Object.keys(codeRules).filter((code) => !provoked.has(code) && !elsewhere.has(code))
    assert.deepStrictEqual(missing, [])
  })

  it("call declared operations and expect only refusals the operation declares (or the structural one)", () => {
    const wrong = cases.flatMap((c) => {
      const op = Operations.group.operations.find((candidate) => candidate.name === c.operation)
      if (op === undefined) return [`${c.rule}: no operation ${c.operation}`]
      const given = Object.values(c.given ?? {}).filter((read) => !Operations.group.operations.some((o) => o.name === read.operation))
      const refused = "refused" in c.expect ? c.expect.refused : undefined
      return [
        ...given.map((read) => `${c.rule}: given from unknown ${read.operation}`),
        ...(refused === undefined || refused === Operations.group.refusals.invalidInputCode || op.refuses.includes(refused)
          ? []
          : [`${c.rule}: ${c.operation} does not declare ${refused}`])
      ]
    })
    assert.deepStrictEqual(wrong, [])
  })

  it("name test files that exist and hold the test", () => {
    for (const entry of ContractCases.elsewhere) {
      const path = `${root}${entry.file}`
      assert.isTrue(existsSync(path), `${entry.rule}: ${entry.file} does not exist`)
      assert.include(readFileSync(path, "utf8"), entry.test, `${entry.rule}: ${entry.file} holds no "${entry.test}"`)
    }
  })

  describe("the invariant", () => {
    const envelope = {
      schemaVersion: "market-data/domain/1",
      interpretedRequest: { request: { state: "21" }, normalizations: [] },
      results: [{ record_ref: "r1", record_fingerprint: "f1" }],
      page: { limit: 5, returned: 1, hasMore: false, nextCursor: null },
      coverage: [{}],
      provenance: [{ record_ref: "r1" }],
      diagnostics: { elapsedMs: 1, rowsExamined: 1, truncated: false }
    }

    it("holds for a well-formed envelope", () => {
      assert.deepStrictEqual(ContractCases.invariant("search_suppliers", envelope), [])
    })

    it("finds a provenance entry for another record, a page that miscounts, SQL in the interpreted request", () => {
      assert.strictEqual(ContractCases.invariant("x", { ...envelope, provenance: [{ record_ref: "r2" }] }).length, 1)
      assert.strictEqual(ContractCases.invariant("x", { ...envelope, page: { ...envelope.page, returned: 2 } }).length, 1)
      assert.strictEqual(ContractCases.invariant("x", { ...envelope, page: { ...envelope.page, hasMore: true } }).length, 1)
      const sql = { ...envelope, interpretedRequest: { request: { where: "SELECT * FROM market.supplier_observations" }, normalizations: [] } }
      assert.strictEqual(ContractCases.invariant("x", sql).length, 1)
      assert.strictEqual(ContractCases.invariant("x", { ...envelope, schemaVersion: "2" }).length, 1)
    })
  })
})
