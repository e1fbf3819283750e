import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { CredentialId, PersonId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { Person, Principal, type Role, type Scope } from "@service/core/Principal"
import * as RateLimiter from "@service/core/RateLimiter"
import { RequestId } from "@service/core/RequestContext"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as TagOperations from "../src/TagOperations.js"
import * as Ops from "../src/TopicOperations.js"
import * as Topics from "../src/Topics.js"
import * as TopicsMigrations from "../src/TopicsMigrations.js"

type Entrypoint = "http" | "mcp" | "cli"

interface Cast {
  readonly owner: Principal
  readonly admin: Principal
  readonly member: Principal
  readonly faceless: Principal
}

const principal = (workspace: Principal["workspace"], role: Role, person: string | null, scopes: ReadonlyArray<Scope> = ["topics:write"]) =>
  new Principal({
    workspace,
    person: person === null ? Option.none() : Option.some(new Person({ id: PersonId.make(person), displayName: person })),
    role,
    scopes,
    credential: { id: CredentialId.make(`cred_${role}_${person ?? "faceless"}`), kind: person === null ? "api_key" : "bearer" }
  })

const cast = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`topics-${Math.random().toString(36).slice(2, 10)}`)
  const workspace = yield* accounts.createWorkspace({ slug, name: slug })
  const cast: Cast = {
    owner: principal(workspace, "owner", "person_owner"),
    admin: principal(workspace, "admin", "person_admin"),
    member: principal(workspace, "member", "person_member"),
    faceless: principal(workspace, "owner", null)
  }
  return cast
}).pipe(Effect.orDie)

/** Runs an operation the way every transport does; model-facing input unless the entrypoint is HTTP. */
const call = <R>(op: Operation.AnyOperation<R>, who: Principal, input: unknown, entrypoint: Entrypoint = "cli") =>
  Operation.execute(op, {
    principal: who,
    entrypoint,
    requestId: RequestId.make("req_topics_test_0001"),
    input,
    canonical: entrypoint === "http"
  })

const decodeTopic = Schema.decodeUnknownSync(Topics.TopicView)
const decodeEdit = Schema.decodeUnknownSync(Topics.EditView)
const decodeTag = Schema.decodeUnknownSync(Topics.TagView)
const decodePage = Schema.decodeUnknownSync(Schema.Struct({ topics: Schema.Array(Topics.TopicView), total: Schema.Number, has_more: Schema.Boolean }))
const decodeHits = Schema.decodeUnknownSync(Schema.Struct({ topics: Schema.Array(Schema.Struct({ id: Schema.String, score: Schema.Number })) }))
const decodeTagPage = Schema.decodeUnknownSync(Schema.Struct({ tags: Schema.Array(Topics.TagView), total: Schema.Number, has_more: Schema.Boolean }))

const create = (who: Principal, input: Record<string, unknown>, entrypoint: Entrypoint = "cli") =>
  Effect.map(call(Ops.topicsCreate, who, input, entrypoint), decodeTopic)

/** The code of a refusal, or `forbidden:<reason>` for the platform's 403. */
const refusalOf = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.flip(effect), (failure): string => {
    if (failure instanceof Operation.Refused) return failure.described.code
    if (typeof failure === "object" && failure !== null && "_tag" in failure && failure._tag === "Forbidden" && "reason" in failure) {
      return `forbidden:${String(failure.reason)}`
    }
    return `unexpected:${String(failure)}`
  })

const DAY = 86_400_000

// The test clock runs on across the tests of a block: times are read relative to a test's start.
const since = Effect.map(Clock.currentTimeMillis, (t0) => (ms: number) => new Date(t0 + ms).toISOString())

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Topics.layer, Accounts.layerSql, Meter.layerMemory({ monthlyAllowance: 1_000 }), RateLimiter.layerUnlimited).pipe(
    Layer.provideMerge(EventLedger.layer),
    Layer.provideMerge(
      TestDatabase.withMigrations(target, [CoreMigrations.migrations, EventsMigrations.migrations, TopicsMigrations.migrations])
    ),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`topics on ${target.name}`, (it) => {
    it.effect("a topic starts as a draft and every read carries trust, classification and governance", () =>
      Effect.gen(function*() {
        const { member } = yield* cast
        const created = yield* create(member, { title: "Release checklist", body: "Tag, build, publish.", tags: ["Release Notes"] })
        assert.strictEqual(created.status, "draft")
        assert.strictEqual(created.trust, "draft")
        assert.deepStrictEqual(created.classification, { status: "draft" })
        assert.deepStrictEqual(created.governance, { authoritative: false, approved_by: null, approved_at: null, review_due_at: null, stale: false, drifted: false })
        assert.deepStrictEqual(created.tags, ["release-notes"])
        assert.strictEqual(created.created_by, "person_member")
        const read = decodeTopic(yield* call(Ops.topicsRead, member, { topic: created.id }, "mcp"))
        assert.deepStrictEqual(read, created)
        assert.strictEqual(yield* refusalOf(call(Ops.topicsRead, member, { topic: "tpc_000000000000000000000000" })), "topic_not_found")
        // Created proposed: put up for review at once. Reviewed is reached only through approval.
        assert.strictEqual((yield* create(member, { title: "Proposed", status: "proposed" })).trust, "proposed")
        assert.strictEqual(yield* refusalOf(create(member, { title: "Sneaky", status: "reviewed" })), "invalid_field_value")
      }))

    it.effect("propose, approve, reject and archive follow the table and reach the workspace ledger", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const ledger = yield* EventLedger.EventLedger
        const at = yield* since
        const a = yield* create(member, { title: "A" })
        const proposed = decodeTopic(yield* call(Ops.topicsPropose, member, { topic: a.id }, "mcp"))
        assert.strictEqual(proposed.status, "proposed")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsPropose, member, { topic: a.id })), "invalid_transition")
        const rejected = decodeTopic(yield* call(Ops.topicsReject, owner, { topic: a.id }))
        assert.strictEqual(rejected.status, "draft")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsReject, owner, { topic: a.id })), "invalid_transition")
        yield* TestClock.adjust("1 second")
        const approved = decodeTopic(yield* call(Ops.topicsApprove, owner, { topic: a.id }, "http"))
        assert.deepStrictEqual([approved.status, approved.trust, approved.governance.authoritative], ["reviewed", "reviewed", true])
        assert.strictEqual(approved.governance.approved_by, "person_owner")
        assert.strictEqual(approved.governance.approved_at, at(1000))
        const archived = decodeTopic(yield* call(Ops.topicsArchive, owner, { topic: a.id }))
        assert.deepStrictEqual([archived.status, archived.trust, archived.classification.status], ["archived", "draft", "archived"])
        assert.strictEqual(yield* refusalOf(call(Ops.topicsApprove, owner, { topic: a.id })), "invalid_transition")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsArchive, owner, { topic: a.id })), "invalid_transition")
        const entries = yield* ledger.read({ workspaceId: owner.workspace.id, limit: 100, subject: `topic/${a.id}` })
        assert.deepStrictEqual(
          entries.map((e) => [e.name, Schema.decodeUnknownSync(Schema.Struct({ status: Schema.String, actor: Schema.String, topic_id: Schema.String }))(e.payload)]),
          [
            ["topic.proposed", { status: "proposed", actor: "agent", topic_id: a.id }],
            ["topic.approved", { status: "reviewed", actor: "human", topic_id: a.id }],
            ["topic.archived", { status: "archived", actor: "human", topic_id: a.id }]
          ]
        )
        // Created proposed is a proposal too.
        const b = yield* create(member, { title: "B", status: "proposed" })
        const proposals = yield* ledger.read({ workspaceId: owner.workspace.id, limit: 100, subject: `topic/${b.id}` })
        assert.deepStrictEqual(proposals.map((e) => e.name), ["topic.proposed"])
      }))

    it.effect("approve, reject, merge and close need an owner or admin person: members and faceless keys get 403 and nothing changes", () =>
      Effect.gen(function*() {
        const { owner, admin, member, faceless } = yield* cast
        const topic = yield* create(member, { title: "Guarded", status: "proposed" })
        const edit = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "Fix", patch: { body: "new" } }))
        for (const who of [member, faceless]) {
          const reason = who === member ? "forbidden:role_required" : "forbidden:person_required"
          for (const surface of ["http", "mcp", "cli"] as const) {
            assert.strictEqual(yield* refusalOf(call(Ops.topicsApprove, who, { topic: topic.id }, surface)), reason)
          }
          assert.strictEqual(yield* refusalOf(call(Ops.topicsReject, who, { topic: topic.id })), reason)
          assert.strictEqual(yield* refusalOf(call(Ops.topicsEditMerge, who, { topic: topic.id, edit_id: edit.id })), reason)
          assert.strictEqual(yield* refusalOf(call(Ops.topicsEditReject, who, { topic: topic.id, edit_id: edit.id })), reason)
          assert.strictEqual(yield* refusalOf(call(TagOperations.tagsUpdate, who, { tag: "x", name: "y" })), reason)
          assert.strictEqual(yield* refusalOf(call(TagOperations.tagsDelete, who, { tag: "x" })), reason)
        }
        const still = decodeTopic(yield* call(Ops.topicsRead, owner, { topic: topic.id }))
        assert.deepStrictEqual([still.status, still.body, still.version], ["proposed", "", 1])
        const edits = Schema.decodeUnknownSync(Schema.Struct({ suggested_edits: Schema.Array(Topics.EditView) }))(
          yield* call(Ops.topicsEditsList, owner, { topic: topic.id })
        )
        assert.deepStrictEqual(edits.suggested_edits.map((e) => e.status), ["open"])
        // Without the write scope nothing but reads: a context:read connector reads and is refused writes.
        const reader = principal(owner.workspace, "owner", "person_owner", ["context:read"])
        assert.strictEqual(decodeTopic(yield* call(Ops.topicsRead, reader, { topic: topic.id })).id, topic.id)
        assert.strictEqual(yield* refusalOf(call(Ops.topicsApprove, reader, { topic: topic.id })), "forbidden:missing_scope")
        // An admin person may, on any surface (here an OAuth/MCP token the admin authorized).
        assert.strictEqual(decodeTopic(yield* call(Ops.topicsApprove, admin, { topic: topic.id }, "mcp")).governance.approved_by, "person_admin")
      }))

    it.effect("reviewed knowledge changes directly only for an owner or admin; archive and delete likewise", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const at = yield* since
        const topic = yield* create(member, { title: "Known", body: "v1" })
        const draftEdit = decodeTopic(yield* call(Ops.topicsUpdate, member, { topic: topic.id, body: "v2", tags: ["a"] }))
        assert.deepStrictEqual([draftEdit.body, draftEdit.version, draftEdit.tags], ["v2", 2, ["a"]])
        assert.strictEqual(yield* refusalOf(call(Ops.topicsUpdate, member, { topic: topic.id })), "invalid_field_value")
        yield* call(Ops.topicsApprove, owner, { topic: topic.id })
        assert.strictEqual(yield* refusalOf(call(Ops.topicsUpdate, member, { topic: topic.id, body: "v3" })), "reviewed_needs_suggested_edit")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsArchive, member, { topic: topic.id })), "reviewed_needs_owner")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsDelete, member, { topic: topic.id })), "reviewed_needs_owner")
        yield* TestClock.adjust("1 hour")
        const ownerEdit = decodeTopic(yield* call(Ops.topicsUpdate, owner, { topic: topic.id, body: "v3" }))
        assert.deepStrictEqual([ownerEdit.status, ownerEdit.body, ownerEdit.governance.approved_at], ["reviewed", "v3", at(3_600_000)])
        yield* call(Ops.topicsDelete, owner, { topic: topic.id })
        assert.strictEqual(yield* refusalOf(call(Ops.topicsRead, owner, { topic: topic.id })), "topic_not_found")
        // A draft anyone with the scope may archive or delete.
        const draft = yield* create(member, { title: "Scratch" })
        assert.strictEqual(decodeTopic(yield* call(Ops.topicsArchive, member, { topic: draft.id })).status, "archived")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsUpdate, member, { topic: draft.id, body: "x" })), "invalid_transition")
        yield* call(Ops.topicsDelete, member, { topic: draft.id })
      }))

    it.effect("suggested edits: merge records approved_via, a conflicting merge changes nothing, closed edits stay closed", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const at = yield* since
        const topic = yield* create(member, { title: "Deploys", body: "Run deploy.sh", tags: ["ops"], patterns: ["deploy/**"] })
        yield* call(Ops.topicsApprove, owner, { topic: topic.id })
        // An agent suggests; the owner merges through MCP: approved_via agent.
        const byAgent = decodeEdit(yield* call(Ops.topicsEditOpen, member, {
          topic: topic.id,
          summary: "Mention the canary",
          patch: { body: "Run deploy.sh --canary", tags: ["Ops", "Canary"] }
        }, "mcp"))
        assert.deepStrictEqual([byAgent.status, byAgent.opened_via, byAgent.base_version, byAgent.opened_by], ["open", "agent", 1, "person_member"])
        assert.deepStrictEqual(byAgent.patch, { body: "Run deploy.sh --canary", tags: ["ops", "canary"] })
        yield* TestClock.adjust("1 minute")
        const merged = Schema.decodeUnknownSync(Schema.Struct({ suggested_edit: Topics.EditView, topic: Topics.TopicView }))(
          yield* call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: byAgent.id }, "mcp")
        )
        assert.deepStrictEqual([merged.suggested_edit.status, merged.suggested_edit.approved_via, merged.suggested_edit.decided_by], [
          "merged",
          "agent",
          "person_owner"
        ])
        assert.deepStrictEqual([merged.topic.body, merged.topic.tags, merged.topic.version, merged.topic.status], [
          "Run deploy.sh --canary",
          ["ops", "canary"],
          2,
          "reviewed"
        ])
        assert.strictEqual(merged.topic.governance.approved_at, at(60_000))
        assert.strictEqual(yield* refusalOf(call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: byAgent.id })), "suggested_edit_not_open")

        // Two edits on the title: the first merged (through the CLI: human), the second now conflicts.
        const first = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "Rename", patch: { title: "Deploying" } }))
        const second = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "Rename too", patch: { title: "Shipping" } }))
        const onBody = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "Body", patch: { patterns: null } }))
        const human = Schema.decodeUnknownSync(Schema.Struct({ suggested_edit: Topics.EditView, topic: Topics.TopicView }))(
          yield* call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: first.id }, "cli")
        )
        assert.strictEqual(human.suggested_edit.approved_via, "human")
        const before = decodeTopic(yield* call(Ops.topicsRead, owner, { topic: topic.id }))
        const conflict = yield* Effect.flip(call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: second.id }))
        assert.isTrue(conflict instanceof Operation.Refused)
        if (conflict instanceof Operation.Refused) {
          assert.strictEqual(conflict.described.code, "suggested_edit_conflict")
          assert.strictEqual(conflict.described.status, 409)
          assert.deepStrictEqual(conflict.described.block["conflicting_fields"], ["title"])
        }
        assert.deepStrictEqual(decodeTopic(yield* call(Ops.topicsRead, owner, { topic: topic.id })), before)
        // An edit of other fields still merges cleanly after the title changed.
        const patterns = Schema.decodeUnknownSync(Schema.Struct({ topic: Topics.TopicView }))(
          yield* call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: onBody.id })
        )
        assert.deepStrictEqual([patterns.topic.title, patterns.topic.patterns], ["Deploying", []])
        // The conflicting one is closed instead.
        const closed = decodeEdit(yield* call(Ops.topicsEditReject, owner, { topic: topic.id, edit_id: second.id }))
        assert.deepStrictEqual([closed.status, closed.approved_via], ["closed", null])
        assert.strictEqual(yield* refusalOf(call(Ops.topicsEditReject, owner, { topic: topic.id, edit_id: second.id })), "suggested_edit_not_open")
        const list = Schema.decodeUnknownSync(Schema.Struct({ suggested_edits: Schema.Array(Topics.EditView) }))(
          yield* call(Ops.topicsEditsList, owner, { topic: topic.id, status: "merged" })
        )
        assert.strictEqual(list.suggested_edits.length, 3)
        // Patches are validated: unknown members and empty patches are refused.
        assert.strictEqual(yield* refusalOf(call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "x", patch: { status: "reviewed" } })), "invalid_field_value")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "x", patch: {} })), "invalid_field_value")
        assert.strictEqual(
          yield* refusalOf(call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: "edit_000000000000000000000000" })),
          "suggested_edit_not_found"
        )
      }))

    it.effect("tags: normalized, registered on topic writes, listed most used first, created idempotently", () =>
      Effect.gen(function*() {
        const { member } = yield* cast
        yield* create(member, { title: "One", tags: ["  Data  Science ", "ops"] })
        yield* create(member, { title: "Two", tags: ["ops"] })
        yield* create(member, { title: "Three", tags: ["OPS", "infra"] })
        const page = decodeTagPage(yield* call(TagOperations.tagsList, member, { limit: 2 }))
        assert.deepStrictEqual(page.tags.map((t) => [t.name, t.topic_count]), [["ops", 3], ["data-science", 1]])
        assert.deepStrictEqual([page.total, page.has_more], [3, true])
        const rest = decodeTagPage(yield* call(TagOperations.tagsList, member, { limit: "2", offset: "2" }, "http"))
        assert.deepStrictEqual([rest.tags.map((t) => t.name), rest.has_more], [["infra"], false])
        const described = decodeTag(yield* call(TagOperations.tagsCreate, member, { name: "Ops", description: "Operations" }))
        assert.deepStrictEqual(described, { name: "ops", description: "Operations", topic_count: 3 })
        // Again without a description keeps it; with one replaces it.
        assert.strictEqual(decodeTag(yield* call(TagOperations.tagsCreate, member, { name: "ops" })).description, "Operations")
        assert.strictEqual(decodeTag(yield* call(TagOperations.tagsCreate, member, { name: "ops", description: "Ops team" })).description, "Ops team")
        assert.deepStrictEqual(decodeTag(yield* call(TagOperations.tagsCreate, member, { name: "Empty Tag" })), {
          name: "empty-tag",
          description: null,
          topic_count: 0
        })
        assert.strictEqual(yield* refusalOf(call(TagOperations.tagsCreate, member, { name: "bad/tag" })), "invalid_field_value")
      }))

    it.effect("tag rename rewrites every topic in one transaction; delete detaches everywhere", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const a = yield* create(member, { title: "A", tags: ["legacy", "keep"] })
        const b = yield* create(member, { title: "B", tags: ["legacy", "modern"] })
        const c = yield* create(member, { title: "C", tags: ["other"] })
        const renamed = decodeTag(yield* call(TagOperations.tagsUpdate, owner, { tag: "Legacy", name: "Modern", description: "Current" }))
        assert.deepStrictEqual(renamed, { name: "modern", description: "Current", topic_count: 2 })
        const read = (id: string) => Effect.map(call(Ops.topicsRead, owner, { topic: id }), decodeTopic)
        assert.deepStrictEqual((yield* read(a.id)).tags, ["modern", "keep"])
        // B carried both: one "modern", no repeat.
        assert.deepStrictEqual(((yield* read(b.id)).tags), ["modern"])
        assert.deepStrictEqual((yield* read(c.id)).tags, ["other"])
        assert.strictEqual((yield* read(a.id)).version, 2)
        assert.strictEqual(yield* refusalOf(call(TagOperations.tagsUpdate, owner, { tag: "legacy", name: "x" })), "tag_not_found")

        const deleted = yield* call(TagOperations.tagsDelete, owner, { tag: "modern" })
        assert.deepStrictEqual(deleted, { name: "modern", deleted: true, detached: 2 })
        assert.deepStrictEqual((yield* read(a.id)).tags, ["keep"])
        assert.deepStrictEqual((yield* read(b.id)).tags, [])
        const names = decodeTagPage(yield* call(TagOperations.tagsList, owner, {})).tags.map((t) => t.name)
        assert.isFalse(names.includes("modern"))
        assert.strictEqual(yield* refusalOf(call(TagOperations.tagsDelete, owner, { tag: "modern" })), "tag_not_found")
      }))

    it.effect("a rename that fails midway leaves every topic and the registry as they were", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const sql = yield* SqlClient.SqlClient
        // Fails the update of one topic only, as a crash in the middle of the rewrite would.
        yield* sql`CREATE OR REPLACE FUNCTION topics.test_fail_boom() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.title = 'boom' AND NEW.tags IS DISTINCT FROM OLD.tags THEN RAISE EXCEPTION 'boom'; END IF;
            RETURN NEW;
          END $$`.pipe(Effect.orDie)
        yield* sql`CREATE TRIGGER test_fail_boom BEFORE UPDATE ON topics.topics FOR EACH ROW EXECUTE FUNCTION topics.test_fail_boom()`.pipe(
          Effect.orDie
        )
        const first = yield* create(member, { title: "fine one", tags: ["fragile"] })
        yield* create(member, { title: "boom", tags: ["fragile"] })
        const last = yield* create(member, { title: "fine two", tags: ["fragile", "x"] })
        const exit = yield* Effect.exit(call(TagOperations.tagsUpdate, owner, { tag: "fragile", name: "sturdy" }))
        assert.isTrue(Exit.isFailure(exit))
        yield* sql`DROP TRIGGER test_fail_boom ON topics.topics`.pipe(Effect.orDie)
        const read = (id: string) => Effect.map(call(Ops.topicsRead, owner, { topic: id }), decodeTopic)
        assert.deepStrictEqual([(yield* read(first.id)).tags, (yield* read(first.id)).version], [["fragile"], 1])
        assert.deepStrictEqual((yield* read(last.id)).tags, ["fragile", "x"])
        const names = decodeTagPage(yield* call(TagOperations.tagsList, owner, {})).tags.map((t) => [t.name, t.topic_count])
        assert.deepStrictEqual(names.find(([name]) => name === "fragile"), ["fragile", 3])
        assert.isUndefined(names.find(([name]) => name === "sturdy"))
      }))

    it.effect("relations: agents add, people delete; the graph shows live topics and their edges", () =>
      Effect.gen(function*() {
        const { owner, member, faceless } = yield* cast
        const a = yield* create(member, { title: "API v2" })
        const b = yield* create(member, { title: "API v1" })
        const c = yield* create(member, { title: "Gone" })
        const decodeRelation = Schema.decodeUnknownSync(Topics.RelationView)
        // A faceless OAuth/MCP principal with topics:write may add relations.
        const supersedes = decodeRelation(yield* call(Ops.topicsRelationAdd, faceless, { topic: a.id, to_topic: b.id, type: "supersedes" }, "mcp"))
        assert.deepStrictEqual([supersedes.from_topic, supersedes.to_topic, supersedes.type], [a.id, b.id, "supersedes"])
        const again = decodeRelation(yield* call(Ops.topicsRelationAdd, faceless, { topic: a.id, to_topic: b.id, type: "supersedes" }, "mcp"))
        assert.strictEqual(again.id, supersedes.id)
        const toGone = decodeRelation(yield* call(Ops.topicsRelationAdd, member, { topic: c.id, to_topic: a.id, type: "related_to" }))
        assert.strictEqual(yield* refusalOf(call(Ops.topicsRelationAdd, member, { topic: a.id, to_topic: a.id, type: "related_to" })), "invalid_field_value")
        assert.strictEqual(yield* refusalOf(call(Ops.topicsRelationAdd, member, { topic: a.id, to_topic: b.id, type: "likes" })), "invalid_field_value")
        assert.strictEqual(
          yield* refusalOf(call(Ops.topicsRelationAdd, member, { topic: a.id, to_topic: "tpc_000000000000000000000000", type: "related_to" })),
          "topic_not_found"
        )
        const listed = Schema.decodeUnknownSync(Schema.Struct({ relations: Schema.Array(Topics.RelationView) }))(
          yield* call(Ops.topicsRelationsList, member, { topic: a.id })
        )
        assert.deepStrictEqual(listed.relations.map((r) => r.id).sort(), [supersedes.id, toGone.id].sort())
        yield* call(Ops.topicsArchive, member, { topic: c.id })
        const graph = Schema.decodeUnknownSync(Topics.Graph)(yield* call(Ops.topicsGraph, member, {}))
        assert.deepStrictEqual(graph.nodes.map((n) => n.id).sort(), [a.id, b.id].sort())
        assert.deepStrictEqual(graph.edges, [{ id: supersedes.id, from: a.id, to: b.id, type: "supersedes" }])
        // Deleting stays with people.
        assert.strictEqual(
          yield* refusalOf(call(Ops.topicsRelationDelete, faceless, { topic: a.id, relation_id: supersedes.id })),
          "forbidden:person_required"
        )
        assert.deepStrictEqual(yield* call(Ops.topicsRelationDelete, member, { topic: a.id, relation_id: supersedes.id }, "http"), {
          id: supersedes.id,
          deleted: true
        })
        assert.strictEqual(
          yield* refusalOf(call(Ops.topicsRelationDelete, owner, { topic: a.id, relation_id: supersedes.id })),
          "relation_not_found"
        )
      }))

    it.effect("search ranks by relevance weighted by trust, filters by tags, staleness and min_trust, never returns archived", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const at = yield* since
        const text = { body: "How we rotate the signing keys of the payment gateway." }
        const draft = yield* create(member, { title: "Key rotation", ...text, tags: ["security"] })
        const proposed = yield* create(member, { title: "Key rotation", ...text, tags: ["payments"], status: "proposed" })
        const stale = yield* create(member, { title: "Key rotation", ...text, tags: ["security"], review_interval_days: 30 })
        yield* call(Ops.topicsApprove, owner, { topic: stale.id })
        yield* TestClock.adjust(31 * DAY)
        const fresh = yield* create(member, { title: "Key rotation", ...text, tags: ["payments"], review_interval_days: 30 })
        yield* call(Ops.topicsApprove, owner, { topic: fresh.id })
        const archived = yield* create(member, { title: "Key rotation", ...text })
        yield* call(Ops.topicsArchive, member, { topic: archived.id })
        yield* create(member, { title: "Lunch menu", body: "Tacos on Friday." })

        const search = (input: Record<string, unknown>, entrypoint: Entrypoint = "mcp") =>
          Effect.map(call(Ops.topicsSearch, member, input, entrypoint), (out) => decodeHits(out).topics.map((t) => t.id))
        assert.deepStrictEqual(yield* search({ query: "rotate signing keys" }), [fresh.id, stale.id, proposed.id, draft.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", tags: ["Security"] }), [stale.id, draft.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", min_trust: "proposed" }), [fresh.id, stale.id, proposed.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", min_trust: "reviewed" }), [fresh.id, stale.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", stale: true }), [stale.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", stale: false }), [fresh.id, proposed.id, draft.id])
        assert.deepStrictEqual(yield* search({ query: "rotation", limit: 1 }), [fresh.id])
        // Over HTTP the query string carries text: tags comma-separated, stale and limit as words.
        assert.deepStrictEqual(yield* search({ query: "rotation", tags: "payments,nothing", stale: "false", limit: "5" }, "http"), [
          fresh.id,
          proposed.id
        ])
        assert.deepStrictEqual(yield* search({ query: "zebra" }), [])
        // A query with no words matches nothing rather than failing.
        assert.deepStrictEqual(yield* search({ query: "!!! ?" }), [])
        assert.isFalse((yield* search({ query: "rotation", limit: 200 })).includes(archived.id))
        const staleRead = decodeTopic(yield* call(Ops.topicsRead, member, { topic: stale.id }))
        assert.isTrue(staleRead.governance.stale)
        assert.strictEqual(staleRead.governance.review_due_at, at(30 * DAY))
      }))

    it.effect("a search matching more than the window ranks the most recently updated matches and says it is incomplete", () =>
      Effect.gen(function*() {
        const { member, owner } = yield* cast
        const sql = yield* SqlClient.SqlClient
        const workspaceId = owner.workspace.id
        // window + 5 drafts older than the test clock that mention "ledger" once, written in bulk: the window is what
        // is tested here.
        const extra = Topics.searchWindow + 5
        yield* sql`INSERT INTO topics.topics (id, workspace_id, title, body, status, version, created_at, updated_at)
          SELECT 'topic_bulk_' || lpad(g::text, 6, '0'), ${workspaceId}, 'Note ' || g, 'A ledger entry.', 'draft', 1,
            timestamptz '1960-01-01' + g * interval '1 minute', timestamptz '1960-01-01' + g * interval '1 minute'
          FROM generate_series(1, ${extra}) g`.pipe(Effect.orDie)
        // The oldest topic is the best match (ledger in the title, twice): outside the window, it is not ranked.
        yield* sql`UPDATE topics.topics SET title = 'Ledger ledger', updated_at = timestamptz '1959-01-01'
          WHERE id = 'topic_bulk_000001'`.pipe(Effect.orDie)
        const newest = yield* create(member, { title: "Ledger", body: "The ledger, newest." })
        const decode = Schema.decodeUnknownSync(Schema.Struct({
          topics: Schema.Array(Schema.Struct({ id: Schema.String })),
          ranked: Schema.Number,
          complete: Schema.Boolean
        }))
        const wide = decode(yield* call(Ops.topicsSearch, member, { query: "ledger", limit: 200 }, "mcp"))
        assert.strictEqual(wide.ranked, Topics.searchWindow)
        assert.isFalse(wide.complete)
        assert.strictEqual(wide.topics[0]?.id, newest.id)
        assert.isFalse(wide.topics.some((t) => t.id === "topic_bulk_000001"))
        // Narrowed under the window, every match is ranked and the best one leads.
        const narrow = decode(yield* call(Ops.topicsSearch, member, { query: "ledger", min_trust: "proposed" }, "mcp"))
        assert.deepStrictEqual(narrow, { topics: [], ranked: 0, complete: true })
        yield* sql`DELETE FROM topics.topics WHERE id LIKE 'topic_bulk_%' AND id <> 'topic_bulk_000001'`.pipe(Effect.orDie)
        const all = decode(yield* call(Ops.topicsSearch, member, { query: "ledger" }, "mcp"))
        assert.deepStrictEqual(all.topics.map((t) => t.id), ["topic_bulk_000001", newest.id])
        assert.strictEqual(all.ranked, 2)
        assert.isTrue(all.complete)
      }))

    it.effect("the list ranks fresh reviewed knowledge first, pages, filters, and shows archived only when asked", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const draft = yield* create(member, { title: "Draft", tags: ["x"] })
        yield* TestClock.adjust("1 second")
        const proposed = yield* create(member, { title: "Proposed", status: "proposed", tags: ["y"] })
        yield* TestClock.adjust("1 second")
        const stale = yield* create(member, { title: "Stale", review_interval_days: 1 })
        yield* call(Ops.topicsApprove, owner, { topic: stale.id })
        yield* TestClock.adjust(2 * DAY)
        const fresh = yield* create(member, { title: "Fresh" })
        yield* call(Ops.topicsApprove, owner, { topic: fresh.id })
        const newerDraft = yield* create(member, { title: "Newer draft", tags: ["x"] })
        const gone = yield* create(member, { title: "Archived" })
        yield* call(Ops.topicsArchive, member, { topic: gone.id })

        const list = (input: Record<string, unknown>, entrypoint: Entrypoint = "cli") =>
          Effect.map(call(Ops.topicsList, member, input, entrypoint), decodePage)
        const all = yield* list({})
        assert.deepStrictEqual(all.topics.map((t) => t.id), [fresh.id, stale.id, proposed.id, newerDraft.id, draft.id])
        assert.deepStrictEqual([all.total, all.has_more], [5, false])
        const page = yield* list({ limit: "2", offset: "1" }, "http")
        assert.deepStrictEqual([page.topics.map((t) => t.id), page.total, page.has_more], [[stale.id, proposed.id], 5, true])
        assert.deepStrictEqual((yield* list({ tags: "x,y" }, "http")).topics.map((t) => t.id), [proposed.id, newerDraft.id, draft.id])
        assert.deepStrictEqual((yield* list({ status: "archived" })).topics.map((t) => t.id), [gone.id])
        assert.deepStrictEqual((yield* list({ min_trust: "reviewed" })).topics.map((t) => t.id), [fresh.id, stale.id])
        assert.deepStrictEqual((yield* list({ status: "draft" })).total, 2)
        assert.strictEqual(yield* refusalOf(list({ limit: 0 })), "invalid_field_value")
      }))

    it.effect("a review interval makes reviewed knowledge stale after it; re-approval restarts the clock", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const at = yield* since
        const topic = yield* create(member, { title: "Quarterly numbers", review_interval_days: 90 })
        assert.strictEqual(topic.governance.review_due_at, null)
        yield* TestClock.adjust(10 * DAY)
        const approved = decodeTopic(yield* call(Ops.topicsApprove, owner, { topic: topic.id }))
        assert.strictEqual(approved.governance.review_due_at, at(100 * DAY))
        assert.isFalse(approved.governance.stale)
        yield* TestClock.adjust(91 * DAY)
        const due = decodeTopic(yield* call(Ops.topicsRead, member, { topic: topic.id }))
        assert.isTrue(due.governance.stale)
        assert.strictEqual(due.governance.review_due_at, at(100 * DAY))
        assert.strictEqual(due.trust, "reviewed")
        const again = decodeTopic(yield* call(Ops.topicsApprove, owner, { topic: topic.id }))
        assert.deepStrictEqual([again.governance.stale, again.governance.review_due_at], [false, at(191 * DAY)])
        // Clearing the interval: never due.
        const cleared = decodeTopic(yield* call(Ops.topicsUpdate, owner, { topic: topic.id, review_interval_days: null }))
        assert.deepStrictEqual([cleared.review_interval_days, cleared.governance.review_due_at], [null, null])
      }))

    it.effect("share links: the token is shown once, only its hash is stored, and revoking closes the page", () =>
      Effect.gen(function*() {
        const { member } = yield* cast
        const topics = yield* Topics.Topics
        const sql = yield* SqlClient.SqlClient
        const topic = yield* create(member, { title: "Public FAQ", body: "Answers." })
        const link = Schema.decodeUnknownSync(Topics.ShareLink)(yield* call(Ops.topicsShare, member, { topic: topic.id }))
        assert.match(link.token, /^shr_[A-Za-z0-9_-]{32}$/)
        assert.strictEqual(link.path, `/api/v1/s/${link.token}`)
        const stored = yield* sql<{ token_hash: string }>`SELECT token_hash FROM topics.shares WHERE topic_id = ${topic.id}`.pipe(Effect.orDie)
        assert.deepStrictEqual(stored.map((row) => row.token_hash), [Topics.hashToken(link.token)])
        const dump = yield* sql<{ row: string }>`SELECT row_to_json(s)::text AS row FROM topics.shares s`.pipe(Effect.orDie)
        assert.isFalse(dump.some((row) => row.row.includes(link.token)))
        const shown = yield* topics.sharedTopic(link.token)
        assert.strictEqual(Option.getOrThrow(shown).title, "Public FAQ")
        assert.isTrue(Option.isNone(yield* topics.sharedTopic("shr_nope")))
        // Sharing again replaces the link.
        const second = Schema.decodeUnknownSync(Topics.ShareLink)(yield* call(Ops.topicsShare, member, { topic: topic.id }))
        assert.isTrue(Option.isNone(yield* topics.sharedTopic(link.token)))
        assert.isTrue(Option.isSome(yield* topics.sharedTopic(second.token)))
        assert.deepStrictEqual(yield* call(Ops.topicsUnshare, member, { topic: topic.id }), { topic_id: topic.id, revoked: true })
        assert.isTrue(Option.isNone(yield* topics.sharedTopic(second.token)))
        assert.strictEqual(yield* refusalOf(call(Ops.topicsUnshare, member, { topic: topic.id })), "share_not_found")
        // An archived topic is not shown publicly.
        const third = Schema.decodeUnknownSync(Topics.ShareLink)(yield* call(Ops.topicsShare, member, { topic: topic.id }))
        yield* call(Ops.topicsArchive, member, { topic: topic.id })
        assert.isTrue(Option.isNone(yield* topics.sharedTopic(third.token)))
      }))

    it.effect("the timeline records every change, newest first, with who acted, and pages", () =>
      Effect.gen(function*() {
        const { owner, member } = yield* cast
        const topic = yield* create(member, { title: "Timeline", tags: ["t"] })
        const other = yield* create(member, { title: "Other" })
        yield* call(Ops.topicsUpdate, member, { topic: topic.id, body: "more" })
        yield* call(Ops.topicsPropose, member, { topic: topic.id }, "mcp")
        yield* call(Ops.topicsApprove, owner, { topic: topic.id })
        const edit = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "s", patch: { body: "b" } }, "mcp"))
        yield* call(Ops.topicsEditMerge, owner, { topic: topic.id, edit_id: edit.id })
        const closing = decodeEdit(yield* call(Ops.topicsEditOpen, member, { topic: topic.id, summary: "s", patch: { body: "c" } }))
        yield* call(Ops.topicsEditReject, owner, { topic: topic.id, edit_id: closing.id })
        const relation = Schema.decodeUnknownSync(Topics.RelationView)(
          yield* call(Ops.topicsRelationAdd, member, { topic: topic.id, to_topic: other.id, type: "depends_on" })
        )
        yield* call(Ops.topicsRelationDelete, member, { topic: topic.id, relation_id: relation.id })
        yield* call(Ops.topicsShare, member, { topic: topic.id })
        yield* call(Ops.topicsUnshare, member, { topic: topic.id })
        yield* call(TagOperations.tagsUpdate, owner, { tag: "t", name: "u" })
        yield* call(TagOperations.tagsDelete, owner, { tag: "u" })
        yield* call(Ops.topicsArchive, owner, { topic: topic.id })
        yield* call(Ops.topicsDelete, owner, { topic: topic.id })
        const decodeEvents = Schema.decodeUnknownSync(Schema.Struct({ events: Schema.Array(Topics.EventView), next_cursor: Schema.NullOr(Schema.String) }))
        const all = decodeEvents(yield* call(Ops.topicsEvents, member, { topic: topic.id, limit: 200 }))
        assert.deepStrictEqual(all.events.map((e) => e.kind).reverse(), [
          "created",
          "updated",
          "proposed",
          "approved",
          "edit_opened",
          "edit_merged",
          "edit_opened",
          "edit_closed",
          "relation_added",
          "relation_deleted",
          "shared",
          "unshared",
          "tag_renamed",
          "tag_removed",
          "archived",
          "deleted"
        ])
        assert.strictEqual(all.next_cursor, null)
        const proposedEvent = all.events.find((e) => e.kind === "proposed")
        assert.deepStrictEqual([proposedEvent?.actor, proposedEvent?.actor_person_id], ["agent", "person_member"])
        assert.deepStrictEqual(all.events.find((e) => e.kind === "edit_merged")?.data["approved_via"], "human")
        // Pages over the whole workspace, by cursor.
        const first = decodeEvents(yield* call(Ops.topicsEvents, member, { limit: "5" }, "http"))
        assert.strictEqual(first.events.length, 5)
        const cursor = first.next_cursor ?? ""
        const next = decodeEvents(yield* call(Ops.topicsEvents, member, { limit: 5, before: cursor }))
        assert.isTrue(next.events.every((e) => Number(e.id) < Number(cursor)))
        assert.strictEqual(first.events[0]?.kind, "deleted")
      }))
  })
}
