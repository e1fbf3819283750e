/**
 * `--all` and `--format csv` as a user runs them: every page read by following the next cursor, rows printed as
 * they come (a table, CSV under one header, or one JSON object per line), progress on stderr, and a refused
 * page ending the run with its reason after the rows already printed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Effect from "effect/Effect"
import { ExitCode } from "../src/Failure.js"
import { runFake, type Reply, type Sent } from "./support/Run.js"

const groups = App.app.groups
const env = { SERVICE_API_KEY: "k" }

const contact = (n: number, name = `Person ${n}`) => ({
  id: `contact_${String(n).padStart(24, "0")}`,
  workspace_id: "ws_f86013989e74d2105810fc2c",
  name,
  email: `p${n}@example.com`,
  phone: null,
  role: null,
  website: null,
  company_id: null,
  source_id: null,
  created_at: "2026-01-01T00:00:00.000000Z",
  updated_at: "2026-01-01T00:00:00.000000Z",
  erased_at: null,
  company: null
})

/** Three pages of contacts: 2, 2 and 1 rows; the third page can be a refusal instead. */
const pages = (third: "rows" | "refused") => (sent: Sent): Reply => {
  const cursor = new URL(sent.url).searchParams.get("cursor")
  if (cursor === null) return { status: 200, body: { contacts: [contact(1, "Ana, \"la jefa\""), contact(2)], next_cursor: "c2" } }
  if (cursor === "c2") return { status: 200, body: { contacts: [contact(3), contact(4)], next_cursor: "c3" } }
  return third === "rows"
    ? { status: 200, body: { contacts: [contact(5)], next_cursor: null } }
    : {
      status: 400,
      body: {
        statusCode: 400,
        code: "VALIDATION_FAILED",
        message: "bad cursor",
        crm: { code: "invalid_field_value", why: "The cursor was not written by this service.", suggested_correction: "Leave cursor out.", field: "cursor" }
      }
    }
}

describe("--all", () => {
  it.effect("text: follows next_cursor, one header, every row as it comes, progress on stderr", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "contacts", "list", "--limit", "2", "--all"], { groups, env, reply: pages("rows") })
      assert.strictEqual(run.code, ExitCode.ok, run.stderr)
      assert.deepStrictEqual(run.sent.map((s) => new URL(s.url).searchParams.get("cursor")), [null, "c2", "c3"])
      const lines = run.stdout.split("\n")
      assert.strictEqual(lines.filter((line) => line.startsWith("id ")).length, 1, run.stdout)
      for (const n of [1, 2, 3, 4, 5]) assert.include(run.stdout, `contact_${String(n).padStart(24, "0")}`)
      assert.include(run.stderr, "page 1, 2 rows…")
      assert.include(run.stderr, "page 3, 5 rows (last page)")
    }))

  it.effect("json: one JSON object per row per line", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "contacts", "list", "--all", "--json"], { groups, env, reply: pages("rows") })
      assert.strictEqual(run.code, ExitCode.ok, run.stderr)
      const rows = run.stdout.split("\n").map((line) => JSON.parse(line))
      assert.deepStrictEqual(rows.map((row) => row.id), [1, 2, 3, 4, 5].map((n) => `contact_${String(n).padStart(24, "0")}`))
    }))

  it.effect("a refused page stops the run with its reason and suggestion, after the rows already printed", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "contacts", "list", "--all"], { groups, env, reply: pages("refused") })
      assert.strictEqual(run.code, ExitCode.refused)
      assert.include(run.stdout, "contact_000000000000000000000004")
      assert.include(run.stderr, "The cursor was not written by this service.")
      assert.include(run.stderr, "Leave cursor out.")
    }))

  it.effect("offset paging: follows has_more with the offset past the rows read", () =>
    Effect.gen(function*() {
      const tag = (n: number) => ({ name: `tag-${n}`, description: null, topic_count: n })
      const reply = (sent: Sent): Reply => {
        const offset = Number(new URL(sent.url).searchParams.get("offset") ?? "0")
        const all = [1, 2, 3, 4, 5].map(tag)
        const page = all.slice(offset, offset + 2)
        return { status: 200, body: { tags: page, total: all.length, has_more: offset + page.length < all.length } }
      }
      const run = yield* runFake(["tags", "list", "--limit", "2", "--all", "--json"], { groups, env, reply })
      assert.strictEqual(run.code, ExitCode.ok, run.stderr)
      assert.deepStrictEqual(run.sent.map((s) => new URL(s.url).searchParams.get("offset")), [null, "2", "4"])
      assert.deepStrictEqual(run.stdout.split("\n").map((line) => JSON.parse(line).name), [1, 2, 3, 4, 5].map((n) => `tag-${n}`))
      assert.include(run.stderr, "page 3, 5 rows (last page)")
      // One page in text names the next page's command and the --all one.
      const one = yield* runFake(["tags", "list", "--limit", "2"], { groups, env, reply })
      assert.include(one.stdout, "next page: service tags list --limit 2 --offset 2", one.stdout)
      assert.include(one.stdout, "every page: service tags list --limit 2 --all")
    }))

  it.effect("only commands whose input pages take --all", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "pipelines", "list", "--all"], { groups, env })
      assert.strictEqual(run.code, ExitCode.usage)
      assert.include(run.stderr, "unknown flag '--all'")
    }))
})

describe("--format csv", () => {
  it.effect("a header from the table's columns, quoted fields, and every page with --all", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "contacts", "list", "--all", "--format", "csv"], { groups, env, reply: pages("rows") })
      assert.strictEqual(run.code, ExitCode.ok, run.stderr)
      const lines = run.stdout.split("\n")
      assert.strictEqual(lines.length, 6)
      assert.match(lines[0] ?? "", /^id,.*name.*email/)
      assert.include(lines[1] ?? "", `"Ana, ""la jefa"""`)
    }))

  it.effect("one page: header and rows", () =>
    Effect.gen(function*() {
      const run = yield* runFake(["crm", "contacts", "list", "--format", "csv"], { groups, env, reply: pages("rows") })
      assert.strictEqual(run.code, ExitCode.ok, run.stderr)
      assert.strictEqual(run.stdout.split("\n").length, 3)
    }))
})
