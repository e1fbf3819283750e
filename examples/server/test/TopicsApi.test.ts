/**
 * Topics through the real server as users reach them: every row of the state table and every authority rule
 * over REST and over MCP (an owner, a member and a key with no person behind it), and the deprecated `watchers`
 * path. One server per database target, shared by the tests of this file.
 */
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Accounts from "@service/core/Accounts"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ensureDemo } from "@service/server/Demo"
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { jsonOf, rest, Running, serverOn } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const OWNER_KEY = "svc_key_topics_owner_0123456789abcdef"
const MEMBER_KEY = "svc_key_topics_member_0123456789abcdef"
const FACELESS_KEY = "svc_key_topics_faceless_0123456789abcdef"

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
    const accounts = yield* Accounts.Accounts
    const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
    const member = yield* accounts.createPerson({ displayName: "Topic member" })
    yield* accounts.addMember({ workspaceId: demo.id, personId: member.id, role: "member" })
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "member",
      scopes: ["topics:write"],
      personId: member.id,
      secret: Redacted.make(MEMBER_KEY)
    })
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "faceless agent",
      scopes: ["topics:write"],
      secret: Redacted.make(FACELESS_KEY)
    })
  }).pipe(Effect.orDie)
)

const Topic = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  trust: Schema.String,
  classification: Schema.Struct({ status: Schema.String }),
  governance: Schema.Struct({ authoritative: Schema.Boolean, approved_by: Schema.NullOr(Schema.String), approved_at: Schema.NullOr(Schema.String) })
})
const Refusal = Schema.Struct({ topics: Schema.Struct({ code: Schema.String }) })
const Forbidden = Schema.Struct({ code: Schema.Literal("FORBIDDEN"), message: Schema.String })
const List = Schema.Struct({ topics: Schema.Array(Schema.Struct({ id: Schema.String })) })

const api = (path: string) => `/api/v1/workspaces/demo${path}`

const call = <A, I>(schema: Schema.Schema<A, I>, expected: number, method: string, path: string, key: string, body?: unknown) =>
  Effect.gen(function*() {
    const { port } = yield* Running
    const headers: Record<string, string> = { "x-api-key": key }
    if (body !== undefined) headers["content-type"] = "application/json"
    const answer = yield* rest(port, method, path, headers, body === undefined ? undefined : JSON.stringify(body))
    assert.strictEqual(answer.status, expected, `${method} ${path}: ${answer.text.slice(0, 600)}`)
    return Schema.decodeUnknownSync(schema)(jsonOf(answer.text))
  })

const create = (body: Readonly<Record<string, unknown>>, key = OWNER_KEY) => call(Topic, 200, "POST", api("/topics"), key, body)
const move = (topic: string, trigger: string, key: string) => call(Topic, 200, "POST", api(`/topics/${topic}/${trigger}`), key, {})

for (const target of TestDatabase.targets()) {
  const Env = serverOn(target, prepared)

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`topics API on ${target.name}`, (it) => {
    it.effect("every row of the state table over REST, with owner or admin authority where the spec asks for it", () =>
      Effect.gen(function*() {
        // none -> proposed (POST with status proposed); without a status a topic starts as a draft.
        const proposedAtOnce = yield* create({ title: "Deploy runbook", body: "Steps to deploy.", status: "proposed" }, MEMBER_KEY)
        assert.deepStrictEqual([proposedAtOnce.status, proposedAtOnce.trust, proposedAtOnce.classification.status], ["proposed", "proposed", "proposed"])
        const draft = yield* create({ title: "Onboarding notes", body: "First week." }, MEMBER_KEY)
        assert.deepStrictEqual([draft.status, draft.trust], ["draft", "draft"])

        // draft -> proposed: anyone who may write.
        const proposed = yield* move(draft.id, "propose", MEMBER_KEY)
        assert.strictEqual(proposed.status, "proposed")

        // proposed -> draft (reject): owner or admin only; a member and a faceless key change nothing.
        for (const key of [MEMBER_KEY, FACELESS_KEY]) {
          const refused = yield* call(Forbidden, 403, "POST", api(`/topics/${draft.id}/reject`), key, {})
          assert.match(refused.message, /owner or admin|person/)
        }
        assert.strictEqual((yield* call(Topic, 200, "GET", api(`/topics/${draft.id}`), OWNER_KEY)).status, "proposed")
        const rejected = yield* move(draft.id, "reject", OWNER_KEY)
        assert.strictEqual(rejected.status, "draft")
        // reject is only from proposed.
        const notProposed = yield* call(Refusal, 409, "POST", api(`/topics/${draft.id}/reject`), OWNER_KEY, {})
        assert.strictEqual(notProposed.topics.code, "invalid_transition")

        // -> reviewed (approve): owner or admin only; sets the governance approval.
        for (const key of [MEMBER_KEY, FACELESS_KEY]) yield* call(Forbidden, 403, "POST", api(`/topics/${proposedAtOnce.id}/approve`), key, {})
        assert.isNull((yield* call(Topic, 200, "GET", api(`/topics/${proposedAtOnce.id}`), OWNER_KEY)).governance.approved_at)
        const approved = yield* move(proposedAtOnce.id, "approve", OWNER_KEY)
        assert.deepStrictEqual([approved.status, approved.trust, approved.governance.authoritative], ["reviewed", "reviewed", true])
        assert.isString(approved.governance.approved_by)
        assert.isString(approved.governance.approved_at)
        // A draft is approved directly too (decision 0057).
        assert.strictEqual((yield* move(draft.id, "approve", OWNER_KEY)).status, "reviewed")

        // -> archived: hidden from the list unless asked for, never returned by search.
        const archived = yield* move(proposedAtOnce.id, "archive", OWNER_KEY)
        assert.strictEqual(archived.status, "archived")
        const listed = yield* call(List, 200, "GET", api("/topics"), OWNER_KEY)
        assert.notInclude(listed.topics.map((t) => t.id), archived.id)
        const onlyArchived = yield* call(List, 200, "GET", api("/topics?status=archived"), OWNER_KEY)
        assert.deepStrictEqual(onlyArchived.topics.map((t) => t.id), [archived.id])
        const found = yield* call(List, 200, "GET", api("/topics/search?query=deploy"), OWNER_KEY)
        assert.notInclude(found.topics.map((t) => t.id), archived.id)
        // Nothing leaves archived but deletion.
        const stuck = yield* call(Refusal, 409, "POST", api(`/topics/${archived.id}/propose`), OWNER_KEY, {})
        assert.strictEqual(stuck.topics.code, "invalid_transition")
      }), 0)

    it.effect("suggested edits are merged and closed only by an owner or admin person", () =>
      Effect.gen(function*() {
        const topic = yield* create({ title: "Pricing", body: "Plans.", status: "proposed" })
        yield* move(topic.id, "approve", OWNER_KEY)
        const Edit = Schema.Struct({ id: Schema.String, status: Schema.String })
        const edit = yield* call(Edit, 200, "POST", api(`/topics/${topic.id}/proposals`), FACELESS_KEY, {
          summary: "Mention the free plan",
          patch: { body: "Plans, including a free one." }
        })
        assert.strictEqual(edit.status, "open")
        for (const key of [MEMBER_KEY, FACELESS_KEY]) {
          yield* call(Forbidden, 403, "POST", api(`/topics/${topic.id}/proposals/${edit.id}/merge`), key, {})
          yield* call(Forbidden, 403, "POST", api(`/topics/${topic.id}/proposals/${edit.id}/reject`), key, {})
        }
        const Merged = Schema.Struct({
          suggested_edit: Schema.Struct({ status: Schema.String, approved_via: Schema.NullOr(Schema.String) }),
          topic: Schema.Struct({ body: Schema.String })
        })
        const merged = yield* call(Merged, 200, "POST", api(`/topics/${topic.id}/proposals/${edit.id}/merge`), OWNER_KEY, {})
        assert.deepStrictEqual([merged.suggested_edit.status, merged.suggested_edit.approved_via], ["merged", "human"])
        assert.strictEqual(merged.topic.body, "Plans, including a free one.")
        const after = yield* call(Schema.Struct({ body: Schema.String }), 200, "GET", api(`/topics/${topic.id}`), OWNER_KEY)
        assert.strictEqual(after.body, "Plans, including a free one.")
      }), 0)

    it.effect("the deprecated watchers path answers as topics, with Deprecation and a Link to the canonical path", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const topic = yield* create({ title: "Watchers alias", body: "Old CLIs." })
        const old = yield* rest(port, "GET", `/api/v1/workspaces/demo/watchers/${topic.id}`, { "x-api-key": OWNER_KEY })
        assert.strictEqual(old.status, 200, old.text)
        assert.strictEqual(Schema.decodeUnknownSync(Topic)(jsonOf(old.text)).id, topic.id)
        assert.match(String(old.headers["deprecation"]), /^@\d+$/)
        assert.strictEqual(old.headers["link"], `</api/v1/workspaces/demo/topics/${topic.id}>; rel="successor-version"`)
        const list = yield* rest(port, "GET", "/api/v1/workspaces/demo/watchers?limit=5", { "x-api-key": OWNER_KEY })
        assert.strictEqual(list.status, 200)
        assert.isDefined(list.headers["deprecation"])
      }), 0)

    it.effect("action routes need no body: no content type and no body, or an empty JSON body, is {}", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const bare = (path: string, headers: Readonly<Record<string, string>> = {}) =>
          Effect.map(rest(port, "POST", api(path), { "x-api-key": OWNER_KEY, ...headers }), (answer) => {
            assert.strictEqual(answer.status, 200, `POST ${path}: ${answer.text.slice(0, 400)}`)
            return jsonOf(answer.text)
          })
        const topic = yield* create({ title: "Bodiless actions", body: "Every action without a body." })
        const status = (value: unknown) => Schema.decodeUnknownSync(Topic)(value).status
        assert.strictEqual(status(yield* bare(`/topics/${topic.id}/propose`)), "proposed")
        assert.strictEqual(status(yield* bare(`/topics/${topic.id}/reject`, { "content-type": "application/json" })), "draft")
        assert.strictEqual(status(yield* bare(`/topics/${topic.id}/approve`, { "content-length": "0" })), "reviewed")
        const edit = yield* call(Schema.Struct({ id: Schema.String }), 200, "POST", api(`/topics/${topic.id}/proposals`), MEMBER_KEY, {
          summary: "Shorter",
          patch: { body: "Short." }
        })
        const rejected = yield* bare(`/topics/${topic.id}/proposals/${edit.id}/reject`)
        assert.strictEqual(Schema.decodeUnknownSync(Schema.Struct({ status: Schema.String }))(rejected).status, "closed")
        // A body with content is still checked: an unknown field is refused.
        const refused = yield* rest(port, "POST", api(`/topics/${topic.id}/archive`), { "x-api-key": OWNER_KEY, "content-type": "application/json" }, JSON.stringify({ bogus: true }))
        assert.strictEqual(refused.status, 400, refused.text)
        assert.strictEqual(status(yield* bare(`/topics/${topic.id}/archive`)), "archived")
      }), 0)

    it.effect("a share link answers the path that serves the page, and its full URL", () =>
      Effect.gen(function*() {
        const { baseUrl, port } = yield* Running
        const topic = yield* create({ title: "Shared page", body: "Shown to outsiders." })
        const answer = yield* rest(port, "POST", api(`/topics/${topic.id}/share`), { "x-api-key": OWNER_KEY })
        assert.strictEqual(answer.status, 200, answer.text)
        const link = Schema.decodeUnknownSync(Schema.Struct({ token: Schema.String, path: Schema.String, url: Schema.String }))(jsonOf(answer.text))
        assert.strictEqual(link.path, `/api/v1/s/${link.token}`)
        assert.strictEqual(link.url, `${baseUrl}${link.path}`)
        const page = yield* rest(port, "GET", link.path)
        assert.strictEqual(page.status, 200)
        assert.include(page.text, "Shared page")
        const raw = yield* Effect.promise(() => fetch(`${link.url}/raw`).then((r) => r.text()))
        assert.include(raw, "Shown to outsiders.")
      }), 0)

    it.effect("an empty path id answers a 404 naming the group the path belongs to, and says a segment is empty", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const notFound = (method: string, path: string) =>
          Effect.map(rest(port, method, path, { "x-api-key": OWNER_KEY }), (answer) => {
            assert.strictEqual(answer.status, 404, `${method} ${path}: ${answer.text}`)
            return Schema.decodeUnknownSync(Schema.Struct({ code: Schema.String, message: Schema.String }))(jsonOf(answer.text))
          })
        for (const [method, path, group] of [
          ["GET", "/api/v1/workspaces/demo/topics//proposals", "Topics"],
          ["POST", "/api/v1/workspaces/demo/topics//approve", "Topics"],
          ["POST", "/api/v1/workspaces/demo/crm/contacts//erase", "CRM"]
        ] as const) {
          const answer = yield* notFound(method, path)
          assert.strictEqual(answer.code, "NOT_FOUND")
          assert.include(answer.message, `No ${group}`, answer.message)
          assert.notInclude(answer.message, "Saved searches")
          assert.include(answer.message, "A path segment is empty")
        }
      }), 0)

    it.effect("the curl walkthrough of docs/topics.md runs as written", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const doc = readFileSync(fileURLToPath(new URL("../../../docs/topics.md", import.meta.url)), "utf8")
        const section = doc.split("\n## ").find((part) => part.startsWith("Walkthrough with curl")) ?? ""
        const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? "")
        assert.isAtLeast(blocks.length, 3)
        // The line that sets BASE and KEY is the reader's; the test sets them to the server under test.
        const script = blocks.join("\n").split("\n").filter((line) => !line.startsWith("export BASE=")).join("\n")
        const run = yield* Effect.promise(() =>
          new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
            const child = spawn("bash", ["-euo", "pipefail", "-c", script], { env: { PATH: process.env["PATH"] ?? "", BASE: baseUrl, KEY: OWNER_KEY } })
            let stdout = ""
            let stderr = ""
            child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
            child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
            child.on("close", (code) => resolve({ code, stdout, stderr }))
          })
        )
        assert.strictEqual(run.code, 0, `${run.stdout}\n${run.stderr}`)
        // What each commented line says it prints, in order.
        const lines = run.stdout.split("\n")
        let at = 0
        for (const expected of ["proposed", "reviewed", "merged", "Refund policy", "or as store credit", "true", "404"]) {
          const found = lines.findIndex((line, i) => i >= at && line.includes(expected))
          assert.isAtLeast(found, 0, `"${expected}" after line ${at} of:\n${run.stdout}`)
          at = found
        }
      }), 0)

    it.scoped("over MCP: approve and merge are refused to a key without a person and to a member, allowed to the owner", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const connect = (key: string) =>
          Effect.acquireRelease(
            Effect.promise(async () => {
              const client = new Client({ name: "topics-e2e", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
              await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { "x-api-key": key } } }))
              return client
            }),
            (client) => Effect.promise(() => client.close())
          )
        const Result = Schema.Struct({ isError: Schema.optional(Schema.Boolean), content: Schema.Unknown })
        const callWith = (client: Client, name: string, args: Record<string, unknown>) =>
          Effect.map(Effect.promise(() => client.callTool({ name, arguments: args })), (raw) => Schema.decodeUnknownSync(Result)(raw))
        const agent = yield* connect(FACELESS_KEY)
        const member = yield* connect(MEMBER_KEY)
        const owner = yield* connect(OWNER_KEY)
        const tools = (yield* Effect.promise(() => agent.listTools())).tools
        // A write tool leaves readOnlyHint out (MCP's default is false); approve needs a person, so a faceless key is
        // not shown it, and a call to it is still refused below (decision 0074).
        const create = tools.find((t) => t.name === "service_topics_create")
        assert.isDefined(create)
        assert.notStrictEqual(create?.annotations?.readOnlyHint, true)
        assert.isUndefined(tools.find((t) => t.name === "service_topics_approve"))
        assert.strictEqual(tools.find((t) => t.name === "service_topics_search")?.annotations?.readOnlyHint, true)

        const created = yield* callWith(agent, "service_topics_create", { title: "Agent note", body: "Seen in a call.", status: "proposed" })
        assert.notStrictEqual(created.isError, true, JSON.stringify(created))
        const topicId = Schema.decodeUnknownSync(Topic)(answerOf(created)).id
        for (const client of [agent, member]) {
          const refused = yield* callWith(client, "service_topics_approve", { topic: topicId })
          assert.strictEqual(refused.isError, true)
          assert.include(JSON.stringify(answerOf(refused)), "FORBIDDEN")
        }
        const stillProposed = yield* callWith(owner, "service_topics_read", { topic: topicId })
        assert.strictEqual(Schema.decodeUnknownSync(Topic)(answerOf(stillProposed)).status, "proposed")
        const approved = yield* callWith(owner, "service_topics_approve", { topic: topicId })
        assert.strictEqual(Schema.decodeUnknownSync(Topic)(answerOf(approved)).trust, "reviewed")
      }), 0)
  })
}
