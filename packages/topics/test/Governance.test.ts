import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Governance from "../src/Governance.js"

type Expected = Governance.TopicStatus | "deleted" | "illegal" | "authority"

// Every (trigger, from) pair of the state table, for a caller without and with owner/admin authority.
const expected: Record<Governance.Trigger, Record<Governance.TopicStatus, readonly [Expected, Expected]>> = {
  propose: {
    draft: ["proposed", "proposed"],
    proposed: ["illegal", "illegal"],
    reviewed: ["illegal", "illegal"],
    archived: ["illegal", "illegal"]
  },
  approve: {
    draft: ["authority", "reviewed"],
    proposed: ["authority", "reviewed"],
    reviewed: ["authority", "reviewed"],
    archived: ["illegal", "illegal"]
  },
  reject: {
    draft: ["illegal", "illegal"],
    proposed: ["authority", "draft"],
    reviewed: ["illegal", "illegal"],
    archived: ["illegal", "illegal"]
  },
  archive: {
    draft: ["archived", "archived"],
    proposed: ["archived", "archived"],
    reviewed: ["authority", "archived"],
    archived: ["illegal", "illegal"]
  },
  edit: {
    draft: ["draft", "draft"],
    proposed: ["proposed", "proposed"],
    reviewed: ["authority", "reviewed"],
    archived: ["illegal", "illegal"]
  },
  merge: {
    draft: ["authority", "draft"],
    proposed: ["authority", "proposed"],
    reviewed: ["authority", "reviewed"],
    archived: ["illegal", "illegal"]
  },
  delete: {
    draft: ["deleted", "deleted"],
    proposed: ["deleted", "deleted"],
    reviewed: ["authority", "deleted"],
    archived: ["deleted", "deleted"]
  }
}

const outcome = (result: Either.Either<Governance.TopicStatus | "deleted", Governance.TransitionRefused>): Expected =>
  Either.match(result, { onLeft: (refused) => refused.reason, onRight: (to) => to })

describe("the state table", () => {
  for (const trigger of Governance.Trigger.literals) {
    for (const from of Governance.TopicStatus.literals) {
      it(`${trigger} from ${from}`, () => {
        const [member, owner] = expected[trigger][from]
        assert.strictEqual(outcome(Governance.transition(from, trigger, false)), member, "without authority")
        assert.strictEqual(outcome(Governance.transition(from, trigger, true)), owner, "with authority")
      })
    }
  }

  it("a refusal names the statuses the trigger accepts", () => {
    const refused = Governance.transition("archived", "approve", true)
    assert.isTrue(Either.isLeft(refused) && refused.left.accepted.join() === "draft,proposed,reviewed")
  })

  it("a topic starts as a draft unless created proposed; trust follows status, archived reads as draft", () => {
    assert.strictEqual(Governance.initialStatus(undefined), "draft")
    assert.strictEqual(Governance.initialStatus("proposed"), "proposed")
    assert.deepStrictEqual(Governance.TopicStatus.literals.map(Governance.trustOf), ["draft", "proposed", "reviewed", "draft"])
    assert.deepStrictEqual(Governance.statusesAtLeast("reviewed"), ["reviewed"])
    assert.deepStrictEqual(Governance.statusesAtLeast("proposed"), ["proposed", "reviewed"])
    assert.deepStrictEqual(Governance.statusesAtLeast("draft"), ["draft", "proposed", "reviewed"])
  })

  it("MCP and the research belt act as agents; HTTP and the CLI as people", () => {
    assert.deepStrictEqual((["http", "cli", "mcp", "belt"] as const).map(Governance.viaOf), ["human", "human", "agent", "agent"])
  })
})

describe("tag names", () => {
  const decode = Schema.decodeUnknownEither(Governance.TagName)
  it("normalize: trimmed, lower-cased, whitespace runs to one dash", () => {
    assert.strictEqual(Governance.normalizeTag("  Release   Notes\t2026 "), "release-notes-2026")
    assert.deepStrictEqual(decode("Logística Norte"), Either.right("logística-norte"))
    assert.deepStrictEqual(decode("v1.2_beta"), Either.right("v1.2_beta"))
  })
  it("refuse other characters, an empty name and more than 50 characters", () => {
    for (const bad of ["", "   ", "-lead", "a/b", "a,b", "x".repeat(51), "#tag"]) {
      assert.isTrue(Either.isLeft(decode(bad)), bad)
    }
    assert.isTrue(Either.isRight(decode("x".repeat(50))))
  })
  it("a list drops repeats after normalizing", () => {
    const tags = Schema.decodeUnknownSync(Governance.TagList)(["Ops", "ops", " OPS ", "infra"])
    assert.deepStrictEqual(Governance.uniqueTags(tags), ["ops", "infra"])
    const patched = Governance.applyPatch({ title: "t", body: "", tags: [], patterns: [] }, { tags })
    assert.deepStrictEqual(patched.tags, ["ops", "infra"])
  })
})

describe("suggested-edit patches", () => {
  const decode = Schema.decodeUnknownEither(Governance.Patch, { onExcessProperty: "error" })
  const content: Governance.Content = { title: "T", body: "B", tags: ["a"], patterns: ["src/**"] }

  it("a merge patch replaces the members present; null empties a list", () => {
    const patch = Schema.decodeUnknownSync(Governance.Patch)({ body: "B2", tags: ["X y"], patterns: null })
    assert.deepStrictEqual(Governance.patchedFields(patch), ["body", "tags", "patterns"])
    assert.deepStrictEqual(Governance.applyPatch(content, patch), { title: "T", body: "B2", tags: ["x-y"], patterns: [] })
  })

  it("refuses an empty patch, unknown members and a null title", () => {
    assert.isTrue(Either.isLeft(decode({})))
    assert.isTrue(Either.isLeft(decode({ status: "reviewed" })))
    assert.isTrue(Either.isLeft(decode({ title: null })))
    assert.isTrue(Either.isLeft(decode({ tags: ["bad/tag"] })))
  })

  it("conflicts only on the patched fields that changed since the base", () => {
    const patch = Schema.decodeUnknownSync(Governance.Patch)({ title: "New" })
    const base = Governance.baseOf(content, patch)
    assert.deepStrictEqual(base, { title: "T" })
    assert.deepStrictEqual(Governance.conflicts({ ...content, body: "changed" }, base), [])
    assert.deepStrictEqual(Governance.conflicts({ ...content, title: "Other" }, base), ["title"])
    const listBase = Governance.baseOf(content, Schema.decodeUnknownSync(Governance.Patch)({ tags: ["b"] }))
    assert.deepStrictEqual(Governance.conflicts({ ...content, tags: ["a", "c"] }, listBase), ["tags"])
    assert.deepStrictEqual(Governance.conflicts(content, listBase), [])
  })
})
