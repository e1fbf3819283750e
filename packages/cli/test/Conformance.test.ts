import { assert, describe, it } from "@effect/vitest"
import * as Conformance from "@service/conformance"
import * as App from "@service/app/App"
import * as Operation from "@service/core/Operation"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Predicate from "effect/Predicate"
import * as Tabular from "../src/Tabular.js"
import { harness, texts } from "./support/Harness.js"

/**
 * Values a user must find in the text of an answer: a record's id, or the first row's first column of the generic
 * table (an operation's own summary chooses its own columns).
 */
const keyValues = (body: unknown, table: Operation.CliTable | undefined, own: boolean): ReadonlyArray<string> => {
  if (Predicate.isRecord(body) && Predicate.isString(body["id"])) return [body["id"]]
  if (own) return []
  const rows = Tabular.rowsOf(body, table)?.rows ?? []
  const [first] = rows
  const [column] = Tabular.columnsOf(rows, table)
  return first === undefined || column === undefined ? [] : [Tabular.cellText(Tabular.at(first, column.path)).slice(0, 30)]
}

// The shared conformance suite over the CLI: every group of the application and their twins served over HTTP,
// and every call made through the command line the way a user makes it (`--json`), as on HTTP and MCP.
for (const target of TestDatabase.targets()) {
  describe(target.name, () => {
    Conformance.suite({ surface: "cli", groups: App.app.groups, harness: harness(target) })

    // Every operation's capability example as text: a summary (a table for rows, key facts for a record), never the
    // old outline's `{…}` placeholder, and holding the answer's key values.
    it("every operation's text summary shows its key values and no {…} placeholder", () => {
      const examples = texts.filter((entry) => !entry.leaf.group.name.endsWith("Conformance"))
      const names = new Set(examples.map((entry) => `${entry.leaf.group.name}.${entry.leaf.operation.name}`))
      for (const group of App.app.groups) {
        for (const op of Operation.servedOn(group, "cli")) assert.isTrue(names.has(`${group.name}.${op.name}`), `${op.name} never answered`)
      }
      const bad: Array<string> = []
      for (const { body, leaf, text } of examples) {
        const name = leaf.words.join(" ")
        if (text.includes("{…}") || text.includes("[object Object]")) bad.push(`${name}: a placeholder in\n${text}`)
        for (const value of keyValues(body, leaf.operation.cli.table ?? leaf.group.cli.table, leaf.operation.cli.summary !== undefined)) {
          if (!text.includes(value)) bad.push(`${name}: ${value} missing from\n${text}`)
        }
      }
      assert.isAbove(examples.filter((entry) => entry.throughCli).length, 30)
      assert.deepStrictEqual(bad, [])
    })
  })
}
