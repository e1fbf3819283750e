import { assert, describe, it as plain, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { CredentialId, PersonId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { Person, Principal, type Role } from "@service/core/Principal"
import * as RateLimiter from "@service/core/RateLimiter"
import { RequestId } from "@service/core/RequestContext"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as Anchors from "../src/Anchors.js"
import * as TagOperations from "../src/TagOperations.js"
import * as Ops from "../src/TopicOperations.js"
import * as Topics from "../src/Topics.js"
import * as TopicsMigrations from "../src/TopicsMigrations.js"

const principal = (workspace: Principal["workspace"], role: Role, person: string) =>
  new Principal({
    workspace,
    person: Option.some(new Person({ id: PersonId.make(person), displayName: person })),
    role,
    scopes: ["topics:write"],
    credential: { id: CredentialId.make(`cred_${role}_${person}`), kind: "bearer" }
  })

const cast = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`anchors-${Math.random().toString(36).slice(2, 10)}`)
  const workspace = yield* accounts.createWorkspace({ slug, name: slug })
  return { workspaceId: workspace.id, owner: principal(workspace, "owner", "person_owner"), member: principal(workspace, "member", "person_member") }
}).pipe(Effect.orDie)

const call = <R>(op: Operation.AnyOperation<R>, who: Principal, input: unknown) =>
  Operation.execute(op, { principal: who, entrypoint: "cli", requestId: RequestId.make("req_anchors_test_0001"), input, canonical: false })

const Written = Schema.Struct({ ...Topics.TopicView.fields, anchor_validation: Schema.optional(Anchors.AnchorValidation) })
const decodeWritten = Schema.decodeUnknownSync(Written)
const decodeLoad = Schema.decodeUnknownSync(Anchors.IndexLoad)
const decodeMatches = Schema.decodeUnknownSync(Schema.Struct({ topics: Schema.Array(Anchors.FileMatch) }))
const decodeAudit = Schema.decodeUnknownSync(Anchors.Audit)
const decodeRepository = Schema.decodeUnknownSync(Schema.Struct({ repository: Anchors.RepositoryView }))
const decodePage = Schema.decodeUnknownSync(Schema.Struct({ topics: Schema.Array(Topics.TopicView), total: Schema.Number, has_more: Schema.Boolean }))
const decodeView = Schema.decodeUnknownSync(Topics.TopicView)

const create = (who: Principal, input: Record<string, unknown>) => Effect.map(call(Ops.topicsCreate, who, input), decodeWritten)
const update = (who: Principal, input: Record<string, unknown>) => Effect.map(call(Ops.topicsUpdate, who, input), decodeWritten)
const approve = (who: Principal, topic: string) => call(Ops.topicsApprove, who, { topic })
const load = (who: Principal, input: Record<string, unknown>) => Effect.map(call(Ops.repositoryIndexLoad, who, input), decodeLoad)
const link = (who: Principal) => call(Ops.repositoryLink, who, { name: "acme/api", default_branch: "main" })

const refusalOf = <A, R>(effect: Effect.Effect<A, unknown, R>) =>
  Effect.map(Effect.flip(effect), (failure): string => {
    if (failure instanceof Operation.Refused) return failure.described.code
    if (typeof failure === "object" && failure !== null && "_tag" in failure && failure._tag === "Forbidden" && "reason" in failure) {
      return `forbidden:${String(failure.reason)}`
    }
    return `unexpected:${String(failure)}`
  })

const pad = (n: number) => String(n).padStart(2, "0")
const range = (n: number) => Array.from({ length: n }, (_, i) => i)

/**
 * 120 files: 3 under src/auth, 60 under src/billing (over 50: overbroad by count), 40 under docs (a third of
 * the index: overbroad by share) and 17 under misc.
 */
const index = (hashes: Readonly<Record<string, string>> = {}, without: ReadonlyArray<string> = []) =>
  [
    "src/auth/session.ts",
    "src/auth/token.ts",
    "src/auth/README.md",
    ...range(60).map((i) => `src/billing/file${pad(i)}.ts`),
    ...range(40).map((i) => `docs/guide${pad(i)}.md`),
    ...range(17).map((i) => `misc/x${pad(i)}.txt`)
  ].filter((path) => !without.includes(path)).map((path) => ({ path, hash: hashes[path] ?? "a".repeat(40) }))

plain("globs: *, ? and ** over whole paths, with their literal prefix", () => {
  assert.isTrue(Anchors.matches("src/*.ts", "src/a.ts"))
  assert.isFalse(Anchors.matches("src/*.ts", "src/a/b.ts"))
  assert.isTrue(Anchors.matches("src/**", "src/a/b.ts"))
  assert.isTrue(Anchors.matches("src/**/*.ts", "src/a.ts"))
  assert.isTrue(Anchors.matches("**/*.md", "README.md"))
  assert.isTrue(Anchors.matches("**/*.md", "docs/deep/x.md"))
  assert.isTrue(Anchors.matches("src/auth/", "src/auth/x/y.ts"))
  assert.isTrue(Anchors.matches("./src/?.ts", "/src/a.ts"))
  assert.isFalse(Anchors.matches("src/?.ts", "src/ab.ts"))
  assert.isTrue(Anchors.matches("a+b.(x)", "a+b.(x)"))
  assert.isFalse(Anchors.matches("src/{a,b}.ts", "src/a.ts"))
  assert.strictEqual(Anchors.staticPrefix("src/auth/*.ts"), "src/auth/")
  assert.strictEqual(Anchors.staticPrefix("**/x"), "")
  assert.strictEqual(Anchors.staticPrefix("src/auth"), "src/auth")
  assert.deepStrictEqual([0, 1, 50, 51].map((n) => Anchors.classify(n, 60)), ["zero", "ok", "ok", "overbroad"])
  // 20% of an index of at least 100 files.
  assert.deepStrictEqual([Anchors.classify(21, 100), Anchors.classify(20, 100), Anchors.classify(30, 99)], ["overbroad", "ok", "ok"])
})

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Topics.layer, Accounts.layerSql, Meter.layerMemory({ monthlyAllowance: 1_000 }), RateLimiter.layerUnlimited).pipe(
    Layer.provideMerge(EventLedger.layer),
    Layer.provideMerge(
      TestDatabase.withMigrations(target, [CoreMigrations.migrations, EventsMigrations.migrations, TopicsMigrations.migrations])
    ),
    Layer.orDie
  )

  describe(`anchors on ${target.name}`, () => {
    layer(Env, { timeout: "180 seconds" })((it) => {
      it.effect("anchor_validation: omitted, skipped, then ok, overbroad and zero with samples and warnings; never blocking", () =>
        Effect.gen(function*() {
          const { owner, member } = yield* cast
          const patterns = ["src/auth/*.ts", "src/billing/**", "docs/*.md", "nothing/**", "src/auth"]
          // No repository: omitted.
          assert.isUndefined((yield* create(member, { title: "Auth", patterns })).anchor_validation)
          assert.strictEqual(yield* refusalOf(load(owner, { branch: "main", files: [] })), "repository_not_linked")
          assert.strictEqual(yield* refusalOf(link(member)), "forbidden:role_required")
          yield* link(owner)
          // A repository but no index: skipped, with the reason; no patterns: omitted.
          const skipped = (yield* create(member, { title: "Auth", patterns })).anchor_validation
          assert.isTrue(skipped !== undefined && "skipped" in skipped && skipped.skipped.includes("No file index"))
          assert.isUndefined((yield* create(member, { title: "Plain" })).anchor_validation)

          assert.strictEqual(yield* refusalOf(load(member, { branch: "main", files: index() })), "forbidden:role_required")
          assert.strictEqual(yield* refusalOf(load(owner, { branch: "develop", files: index() })), "invalid_field_value")
          const loaded = yield* load(owner, { branch: "main", commit: "0123abc", files: index() })
          assert.deepInclude(loaded, { status: "loaded", files: 120, drifted: 0 })

          const written = yield* create(member, { title: "Auth", patterns })
          const validation = written.anchor_validation
          if (validation === undefined || "skipped" in validation) return assert.fail("expected a checked validation")
          assert.deepInclude(validation, { repository: "acme/api", branch: "main", indexed_files: 120 })
          assert.deepStrictEqual(validation.patterns.map((p) => [p.pattern, p.status, p.matches]), [
            ["src/auth/*.ts", "ok", 2],
            ["src/billing/**", "overbroad", 60],
            ["docs/*.md", "overbroad", 40],
            ["nothing/**", "zero", 0],
            ["src/auth", "zero", 0]
          ])
          assert.deepStrictEqual(validation.patterns[0]?.samples, ["src/auth/session.ts", "src/auth/token.ts"])
          assert.strictEqual(validation.patterns[1]?.samples.length, 5)
          assert.isTrue(validation.patterns[2]?.warnings.some((w) => w.includes("33.3%")))
          assert.isTrue(validation.patterns[4]?.warnings.some((w) => w.includes("src/auth/**")))
          assert.deepStrictEqual(validation.warnings, [
            "2 of 5 patterns match no file: the topic is not anchored by them.",
            "2 of 5 patterns are overbroad."
          ])
          // Never blocking: the topic was written with every pattern.
          assert.deepStrictEqual(written.patterns, patterns)

          // PATCH: checked when it carries patterns, omitted otherwise or with none.
          const patched = (yield* update(member, { topic: written.id, patterns: ["docs/guide01.md"] })).anchor_validation
          assert.isTrue(patched !== undefined && "patterns" in patched && patched.patterns[0]?.status === "ok")
          assert.isUndefined((yield* update(member, { topic: written.id, title: "Auth 2" })).anchor_validation)
          assert.isUndefined((yield* update(member, { topic: written.id, patterns: [] })).anchor_validation)
        }))

      it.effect("match-files returns the topics, not archived, whose patterns match the given paths", () =>
        Effect.gen(function*() {
          const { owner, member } = yield* cast
          const auth = yield* create(member, { title: "Auth", patterns: ["src/auth/*.ts"] })
          const docs = yield* create(member, { title: "Docs", patterns: ["docs/**", "**/*.md"] })
          const old = yield* create(member, { title: "Old auth", patterns: ["src/auth/**"] })
          yield* call(Ops.topicsArchive, member, { topic: old.id })
          yield* create(member, { title: "No patterns" })
          const found = decodeMatches(
            yield* call(Ops.topicsMatchFiles, member, { paths: ["src/auth/session.ts", "./docs/a.md", "src/auth/README.md", "other.txt"] })
          )
          assert.deepStrictEqual(found.topics.map((t) => [t.id, t.patterns, t.paths]), [
            [docs.id, ["docs/**", "**/*.md"], ["docs/a.md", "src/auth/README.md"]],
            [auth.id, ["src/auth/*.ts"], ["src/auth/session.ts"]]
          ])
          yield* approve(owner, auth.id)
          const reviewed = decodeMatches(yield* call(Ops.topicsMatchFiles, member, { paths: ["src/auth/session.ts", "docs/a.md"], min_trust: "reviewed" }))
          assert.deepStrictEqual(reviewed.topics.map((t) => [t.id, t.trust]), [[auth.id, "reviewed"]])
          assert.strictEqual(yield* refusalOf(call(Ops.topicsMatchFiles, member, { paths: [] })), "invalid_field_value")
        }))

      it.effect("a reviewed topic drifts when its anchored files change after approval; the list puts it first", () =>
        Effect.gen(function*() {
          const { owner, member, workspaceId } = yield* cast
          const anchors = yield* Anchors.Anchors
          yield* link(owner)
          yield* load(owner, { branch: "main", files: index() })
          const auth = yield* create(member, { title: "Auth", patterns: ["src/auth/*.ts"] })
          yield* approve(owner, auth.id)
          yield* TestClock.adjust("1 minute")
          const docs = yield* create(member, { title: "Docs", patterns: ["docs/guide00.md"] })
          yield* approve(owner, docs.id)
          yield* TestClock.adjust("1 minute")
          const draft = yield* create(member, { title: "Draft", patterns: ["src/auth/*.ts"] })
          const order = Effect.map(call(Ops.topicsList, member, {}), (page) => decodePage(page).topics.map((t) => t.id))
          assert.deepStrictEqual(yield* order, [docs.id, auth.id, draft.id])

          // A load in two pages: session.ts changed, token.ts removed.
          const files = index({ "src/auth/session.ts": "b".repeat(40) }, ["src/auth/token.ts"])
          const staged = yield* load(owner, { branch: "main", files: files.slice(0, 70), complete: false })
          if (staged.status !== "staged") return assert.fail("expected a staged page")
          assert.strictEqual(staged.staged, 70)
          assert.strictEqual(yield* refusalOf(load(owner, { branch: "main", files: [], upload: "upl_000000000000000000000000" })), "invalid_field_value")
          const loaded = yield* load(owner, { branch: "main", files: files.slice(70), upload: staged.upload })
          assert.deepInclude(loaded, { status: "loaded", files: 119, drifted: 1 })

          assert.deepStrictEqual(yield* anchors.drift(workspaceId, auth.id), [
            { path: "src/auth/session.ts", change: "changed", approved_hash: "a".repeat(40), current_hash: "b".repeat(40) },
            { path: "src/auth/token.ts", change: "removed", approved_hash: "a".repeat(40), current_hash: null }
          ])
          // Drafts are not vouched for, so they do not drift; drifted reviewed knowledge comes first.
          assert.deepStrictEqual(yield* anchors.drift(workspaceId, draft.id), [])
          assert.deepStrictEqual(yield* order, [auth.id, docs.id, draft.id])
          // Every read says so: the list, the topic read.
          const flags = Effect.map(call(Ops.topicsList, member, {}), (page) => decodePage(page).topics.map((t) => t.governance.drifted))
          assert.deepStrictEqual(yield* flags, [true, false, false])
          const driftedOf = (id: string) => Effect.map(call(Ops.topicsRead, member, { topic: id }), (t) => decodeView(t).governance.drifted)
          assert.isTrue(yield* driftedOf(auth.id))
          assert.isFalse(yield* driftedOf(draft.id))
          const audit = decodeAudit(yield* call(Ops.topicsAudit, member, {}))
          assert.deepStrictEqual(audit.drifted.map((t) => [t.id, t.changed]), [[auth.id, 2]])

          // Approving again takes a new baseline: no drift, in the approval's own answer too.
          const again = yield* approve(owner, auth.id)
          assert.isFalse(decodeView(again).governance.drifted)
          assert.isFalse(yield* driftedOf(auth.id))
          assert.deepStrictEqual(yield* anchors.drift(workspaceId, auth.id), [])
          assert.deepStrictEqual(yield* order, [auth.id, docs.id, draft.id])
          assert.deepStrictEqual(decodeAudit(yield* call(Ops.topicsAudit, member, {})).drifted, [])

          // Relinking another repository drops the index and the baselines.
          yield* call(Ops.repositoryLink, owner, { name: "acme/web", default_branch: "main" })
          const read = decodeRepository(yield* call(Ops.repositoryRead, member, {})).repository
          assert.deepInclude(read, { name: "acme/web", url: null, default_branch: "main", index: null })
          assert.deepStrictEqual(yield* anchors.drift(workspaceId, auth.id), [])
        }))

      it.effect("the audit reports stale, zero-match and overbroad topics, orphan tags and topics awaiting review", () =>
        Effect.gen(function*() {
          const { owner, member } = yield* cast
          const empty = decodeAudit(yield* call(Ops.topicsAudit, member, {}))
          assert.deepStrictEqual(empty, {
            index: null,
            drifted: [],
            stale: [],
            zero_match: [],
            overbroad: [],
            orphan_tags: [],
            awaiting_review: []
          })
          yield* link(owner)
          yield* load(owner, { branch: "main", files: index() })
          const stale = yield* create(member, { title: "Stale", patterns: ["src/auth/*.ts"], review_interval_days: 1 })
          yield* approve(owner, stale.id)
          const zero = yield* create(member, { title: "Zero", patterns: ["src/auth/*.ts", "gone/*.ts"], tags: ["auth"] })
          const broad = yield* create(member, { title: "Broad", patterns: ["**"] })
          const proposed = yield* create(member, { title: "Proposed", status: "proposed" })
          yield* TestClock.adjust("1 second")
          const edited = yield* create(member, { title: "Edited" })
          yield* approve(owner, edited.id)
          yield* call(Ops.topicsEditOpen, member, { topic: edited.id, summary: "Say more.", patch: { body: "More." } })
          yield* call(TagOperations.tagsCreate, member, { name: "unused" })
          yield* TestClock.adjust("2 days")

          const audit = decodeAudit(yield* call(Ops.topicsAudit, member, {}))
          assert.deepInclude(audit.index ?? {}, { repository: "acme/api", branch: "main", files: 120 })
          assert.deepStrictEqual(audit.drifted, [])
          assert.deepStrictEqual(audit.stale.map((t) => t.id), [stale.id])
          assert.deepStrictEqual(audit.zero_match.map((t) => [t.id, t.patterns]), [[zero.id, ["gone/*.ts"]]])
          assert.deepStrictEqual(audit.overbroad.map((t) => [t.id, t.patterns]), [[broad.id, ["**"]]])
          assert.deepStrictEqual(audit.orphan_tags, ["unused"])
          assert.deepStrictEqual(audit.awaiting_review.map((t) => [t.id, t.status, t.open_edits]), [
            [proposed.id, "proposed", 0],
            [edited.id, "reviewed", 1]
          ])
        }))
    })
  })
}
