/**
 * The door's workspace operations through the real server, as users reach them: REST with curl-like calls,
 * MCP through both official client generations. Sources, Arrivals with their trails, roles, test workspaces
 * and the OpenAPI document. One server per database target, shared by the tests of this file.
 */
import { assert, layer } from "@effect/vitest"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Accounts from "@service/core/Accounts"
import { WorkspaceId } from "@service/core/Ids"
import { Crm } from "@service/crm/Crm"
import * as StandardWebhooks from "@service/door/StandardWebhooks"
import { EventLedger } from "@service/events/EventLedger"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import { ensureDemo } from "@service/server/Demo"
import { jsonOf, rest, Running, serverOn } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const OWNER_KEY = "svc_key_door_api_owner_0123456789abcdef"
const MEMBER_KEY = "svc_key_door_api_member_0123456789abcdef"
const FACELESS_KEY = "svc_key_door_api_faceless_0123456789abcdef"

/** The demo workspace's id, for the CRM and ledger reads the tests make in-process. */
const demoWorkspaceId = Effect.flatMap(Accounts.Accounts, (accounts) =>
  Effect.flatMap(accounts.findWorkspaceBySlug("demo"), (demo) =>
    Option.match(demo, { onNone: () => Effect.dieMessage("no demo workspace"), onSome: (workspace) => Effect.succeed(workspace.id) })))

// The demo owner's key, a member's key and a key with no person behind it, all with the door's and CRM's scopes.
const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
    const accounts = yield* Accounts.Accounts
    const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
    const member = yield* accounts.createPerson({ displayName: "Demo member" })
    yield* accounts.addMember({ workspaceId: demo.id, personId: member.id, role: "member" })
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "member",
      scopes: ["commercial:read", "door:admin", "crm:write"],
      personId: member.id,
      secret: Redacted.make(MEMBER_KEY)
    })
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "faceless",
      scopes: ["commercial:read", "door:admin", "crm:write"],
      secret: Redacted.make(FACELESS_KEY)
    })
  }).pipe(Effect.orDie)
)

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const SourceView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  status: Schema.String,
  pipeline_id: Schema.NullOr(Schema.String),
  stage_id: Schema.NullOr(Schema.String),
  door_path: Schema.String
})
const Created = Schema.Struct({ source: SourceView, secret: Schema.String })
const Trail = Schema.Array(Schema.Struct({ event: Schema.String, status: Schema.NullOr(Schema.String) }))
const ArrivalView = Schema.Struct({
  id: Schema.String,
  source_id: Schema.String,
  status: Schema.String,
  contact_id: Schema.NullOr(Schema.String),
  opportunity_id: Schema.NullOr(Schema.String),
  trail: Trail
})
const Page = Schema.Struct({ arrivals: Schema.Array(ArrivalView), next_cursor: Schema.NullOr(Schema.String) })
const Refusal = Schema.Struct({ door: Schema.Struct({ code: Schema.String, recovery: Schema.Struct({ action: Schema.String }) }) })
const Forbidden = Schema.Struct({ code: Schema.Literal("FORBIDDEN"), message: Schema.String })
const Sandbox = Schema.Struct({
  workspace: Schema.Struct({ id: Schema.String, slug: Schema.String, test_of: Schema.String }),
  api_key: Schema.String,
  pipelines: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String, copied_from: Schema.String })),
  sources: Schema.Array(Schema.Struct({ source: SourceView, copied_from: Schema.String, secret: Schema.NullOr(Schema.String) }))
})
const SentTest = Schema.Struct({ arrival: Schema.String, status: Schema.String, duplicate: Schema.Boolean })

/** A JSON call with an API key; the body is decoded with `schema` when the status is the expected one. */
const call = <A, I>(
  schema: Schema.Schema<A, I>,
  expected: number,
  method: string,
  path: string,
  key: string,
  body?: unknown
) =>
  Effect.gen(function*() {
    const { port } = yield* Running
    const headers: Record<string, string> = { "x-api-key": key }
    if (body !== undefined) headers["content-type"] = "application/json"
    const answer = yield* rest(port, method, path, headers, body === undefined ? undefined : JSON.stringify(body))
    assert.strictEqual(answer.status, expected, `${method} ${path}: ${answer.text.slice(0, 600)}`)
    return Schema.decodeUnknownSync(schema)(jsonOf(answer.text))
  })

const api = (path: string, slug = "demo") => `/api/v1/workspaces/${slug}${path}`

/** Sends a body, signed as a CloudEvent would be, to a Source's door address. */
const sendSigned = (doorPath: string, secret: string, id: string, body: string) =>
  Effect.gen(function*() {
    const { port } = yield* Running
    const timestamp = Math.floor(Date.now() / 1000)
    const signature = StandardWebhooks.sign({ secret, id: `msg_${id}`, timestamp, body: new TextEncoder().encode(body) })
    return yield* rest(port, "POST", doorPath, {
      "content-type": "application/cloudevents+json",
      "webhook-id": `msg_${id}`,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signature
    }, body)
  })

/** Sends a signed CloudEvent to a Source's door address. */
const sendEvent = (doorPath: string, secret: string, id: string, data: Readonly<Record<string, string>>) =>
  sendSigned(doorPath, secret, id, JSON.stringify({ specversion: "1.0", id, source: "https://forms.example.com/api", type: "contact.created", data }))

/** Reads an Arrival until a worker has settled it (no wall-clock budget: a busy machine is slow, not wrong). */
const settled = (arrivalId: string, key = OWNER_KEY, slug = "demo") =>
  call(ArrivalView, 200, "GET", api(`/door/arrivals/${arrivalId}`, slug), key).pipe(
    Effect.flatMap((arrival) => (arrival.status === "received" ? Effect.fail("waiting") : Effect.succeed(arrival))),
    Effect.retry(Schedule.spaced("200 millis"))
  )

const arrivalOf = (text: string): string => Schema.decodeUnknownSync(Schema.Struct({ arrival: Schema.String }))(jsonOf(text)).arrival

for (const target of TestDatabase.targets()) {
  const Env = serverOn(target, prepared)

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`door API on ${target.name}`, (it) => {
    it.effect("Sources: created with the secret shown once, listed and read, paused and resumed, rotated with overlap, archived for good", () =>
      Effect.gen(function*() {
        const created = yield* call(Created, 200, "POST", api("/door/sources"), OWNER_KEY, { name: "Website form" })
        assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
        assert.strictEqual(created.source.status, "active")
        assert.strictEqual(created.source.door_path, `/api/v1/door/${created.source.id}`)
        const id = created.source.id

        // The secret is never shown again: not in the list, not in the read.
        const listed = yield* call(Json, 200, "GET", api("/door/sources"), OWNER_KEY)
        assert.notInclude(JSON.stringify(listed), created.secret)
        const read = yield* call(SourceView, 200, "GET", api(`/door/sources/${id}`), OWNER_KEY)
        assert.strictEqual(read.name, "Website form")

        const first = yield* sendEvent(created.source.door_path, created.secret, "api-1", { email: "api.one@acme.mx" })
        assert.strictEqual(first.status, 202, first.text)

        // Issue 32 row 20: a correctly signed event nested 10,000 deep is refused like the unsigned one, not a 500.
        const deep = `{"specversion":"1.0","id":"deep-1","source":"https://forms.example.com/api","type":"contact.created","data":{"email":"deep@acme.mx","a":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`
        const deepObjects = `{"specversion":"1.0","id":"deep-2","source":"https://forms.example.com/api","type":"contact.created","data":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`
        for (const [id, body] of [["deep-1", deep], ["deep-2", deepObjects]] as const) {
          const tooDeep = yield* sendSigned(created.source.door_path, created.secret, id, body)
          assert.strictEqual(tooDeep.status, 400, `${id}: ${tooDeep.text.slice(0, 400)}`)
          assert.include(tooDeep.text, "invalid_event")
        }

        const paused = yield* call(SourceView, 200, "PATCH", api(`/door/sources/${id}`), OWNER_KEY, { status: "paused", name: "Website form (paused)" })
        assert.deepStrictEqual([paused.status, paused.name], ["paused", "Website form (paused)"])
        const whilePaused = yield* sendEvent(created.source.door_path, created.secret, "api-2", { email: "api.two@acme.mx" })
        assert.strictEqual(whilePaused.status, 503, whilePaused.text)
        yield* call(SourceView, 200, "PATCH", api(`/door/sources/${id}`), OWNER_KEY, { status: "active" })

        const Rotated = Schema.Struct({ secret: Schema.String, previous_valid_until: Schema.String })
        const rotated = yield* call(Rotated, 200, "POST", api(`/door/sources/${id}/rotate-secret`), OWNER_KEY, {})
        assert.notStrictEqual(rotated.secret, created.secret)
        const overlapHours = (Date.parse(rotated.previous_valid_until) - Date.now()) / 3_600_000
        assert.isTrue(overlapHours > 23.9 && overlapHours <= 24, `overlap of ${overlapHours} h`)
        // Both secrets verify during the overlap.
        assert.strictEqual((yield* sendEvent(created.source.door_path, created.secret, "api-3", { email: "api.three@acme.mx" })).status, 202)
        assert.strictEqual((yield* sendEvent(created.source.door_path, rotated.secret, "api-4", { email: "api.four@acme.mx" })).status, 202)

        const archived = yield* call(SourceView, 200, "POST", api(`/door/sources/${id}/archive`), OWNER_KEY, {})
        assert.strictEqual(archived.status, "archived")
        assert.strictEqual((yield* sendEvent(created.source.door_path, rotated.secret, "api-5", { email: "api.five@acme.mx" })).status, 410)
        const refused = yield* call(Refusal, 409, "PATCH", api(`/door/sources/${id}`), OWNER_KEY, { status: "active" })
        assert.deepStrictEqual([refused.door.code, refused.door.recovery.action], ["source_archived", "create_source"])
        const onlyArchived = yield* call(Schema.Struct({ sources: Schema.Array(SourceView) }), 200, "GET", api("/door/sources?status=archived"), OWNER_KEY)
        assert.deepStrictEqual(onlyArchived.sources.map((s) => s.id), [id])

        const missing = yield* call(Refusal, 404, "GET", api("/door/sources/src_000000000000000000000000"), OWNER_KEY)
        assert.strictEqual(missing.door.code, "source_not_found")
        const unknownField = yield* call(Refusal, 400, "POST", api("/door/sources"), OWNER_KEY, { name: "x", colour: "red" })
        assert.strictEqual(unknownField.door.code, "invalid_field_value")
        const cloudWithTemplate = yield* call(Refusal, 400, "POST", api("/door/sources"), OWNER_KEY, { name: "x", template: "stripe" })
        assert.strictEqual(cloudWithTemplate.door.code, "invalid_field_value")
      }), 0)

    it.effect("a Source opens an opportunity in its Pipeline stage for each new contact; moves and erasure are recorded in the ledger; a stage of another Pipeline is refused", () =>
      Effect.gen(function*() {
        const workspaceId = yield* demoWorkspaceId
        const crm = yield* Crm
        const sales = yield* crm.createPipeline(workspaceId, { name: "Sales", stages: [{ name: "New" }, { name: "Won", outcome: "won" }] })
        const other = yield* crm.createPipeline(workspaceId, { name: "Other", stages: [{ name: "Only" }] })
        const stage = sales.stages[0]?.id ?? ""
        const created = yield* call(Created, 200, "POST", api("/door/sources"), OWNER_KEY, {
          name: "Sales form",
          pipeline_id: sales.id,
          stage_id: stage
        })
        assert.deepStrictEqual([created.source.pipeline_id, created.source.stage_id], [sales.id, stage])
        const sent = yield* sendEvent(created.source.door_path, created.secret, "pipe-1", { name: "Pipe One", email: "pipe.one@acme.mx" })
        const arrival = yield* settled(arrivalOf(sent.text))
        assert.strictEqual(arrival.status, "accepted")
        assert.isNotNull(arrival.opportunity_id)

        // Moving it along the Pipeline records opportunity.moved, and opportunity.closed on a won stage.
        const Moved = Schema.Struct({ previous_stage_id: Schema.String, outcome: Schema.String, opportunity: Schema.Struct({ stage_id: Schema.String }) })
        const won = sales.stages[1]?.id ?? ""
        const moved = yield* call(Moved, 200, "POST", api(`/crm/opportunities/${arrival.opportunity_id ?? ""}/move`), OWNER_KEY, { stage_id: won })
        assert.deepStrictEqual([moved.previous_stage_id, moved.opportunity.stage_id, moved.outcome], [stage, won, "won"])
        const ledger = yield* (yield* EventLedger).read({ workspaceId, subject: `opportunity/${arrival.opportunity_id ?? ""}`, limit: 10 })
        assert.deepStrictEqual(ledger.map((e) => e.name), ["opportunity.created", "opportunity.moved", "opportunity.closed"])
        const otherStage = yield* call(Schema.Struct({ crm: Schema.Struct({ code: Schema.String }) }), 404, "POST", api(`/crm/opportunities/${arrival.opportunity_id ?? ""}/move`), OWNER_KEY, {
          stage_id: other.stages[0]?.id ?? ""
        })
        assert.strictEqual(otherStage.crm.code, "stage_not_found")

        // Erasure: the person's data goes, later Arrivals for them end rejected, the ledger says so without the email.
        yield* call(Forbidden, 403, "POST", api(`/crm/contacts/${arrival.contact_id ?? ""}/erase`), MEMBER_KEY, {})
        const erased = yield* call(Schema.Struct({ email: Schema.Null, name: Schema.Null }), 200, "POST", api(`/crm/contacts/${arrival.contact_id ?? ""}/erase`), OWNER_KEY, {})
        assert.deepStrictEqual(erased, { email: null, name: null })
        const again = yield* sendEvent(created.source.door_path, created.secret, "pipe-2", { name: "Pipe One", email: "pipe.one@acme.mx" })
        assert.strictEqual((yield* settled(arrivalOf(again.text))).status, "rejected")
        const erasure = yield* (yield* EventLedger).read({ workspaceId, subject: `contact/${arrival.contact_id ?? ""}`, names: ["contact.erased"], limit: 10 })
        assert.strictEqual(erasure.length, 1)
        assert.notInclude(JSON.stringify(erasure), "pipe.one@acme.mx")

        const wrong = yield* call(Refusal, 404, "PATCH", api(`/door/sources/${created.source.id}`), OWNER_KEY, {
          pipeline_id: sales.id,
          stage_id: other.stages[0]?.id ?? ""
        })
        assert.deepStrictEqual([wrong.door.code, wrong.door.recovery.action], ["pipeline_not_found", "list_pipelines"])
        const half = yield* call(Refusal, 400, "PATCH", api(`/door/sources/${created.source.id}`), OWNER_KEY, { pipeline_id: sales.id })
        assert.strictEqual(half.door.code, "invalid_field_value")
        const cleared = yield* call(SourceView, 200, "PATCH", api(`/door/sources/${created.source.id}`), OWNER_KEY, { pipeline_id: null, stage_id: null })
        assert.deepStrictEqual([cleared.pipeline_id, cleared.stage_id], [null, null])
      }), 0)

    it.effect("webhook Sources: a template behind its secret address, and a tool's own notice mapped by a person then reprocessed", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        // PostHog does not sign: its Source answers a token once, and the address is the authentication.
        const CreatedAddress = Schema.Struct({ source: SourceView, token: Schema.String, secret_address_path: Schema.String, secret: Schema.Null })
        const posthog = yield* call(CreatedAddress, 200, "POST", api("/door/sources"), OWNER_KEY, { name: "PostHog", type: "webhook", template: "posthog" })
        assert.strictEqual(posthog.secret_address_path, `${posthog.source.door_path}/${posthog.token}`)
        const sample = Schema.decodeUnknownSync(Schema.Struct({ body: Schema.String }))(
          jsonOf(NodeFs.readFileSync(new URL("../../../packages/door/data/webhooks/templates/posthog.json", import.meta.url), "utf8"))
        ).body
        const json = { "content-type": "application/json" }
        const first = yield* rest(port, "POST", posthog.secret_address_path, json, sample)
        assert.strictEqual(first.status, 202, first.text)
        const applied = yield* settled(arrivalOf(first.text))
        assert.strictEqual(applied.status, "accepted")
        assert.isNotNull(applied.contact_id)
        // The same notice again is a duplicate; the plain address without the token is the 401 of a bad signature.
        assert.strictEqual((yield* rest(port, "POST", posthog.secret_address_path, json, sample)).status, 200)
        const withoutToken = yield* rest(port, "POST", posthog.source.door_path, json, sample)
        const unknownSource = yield* rest(port, "POST", "/api/v1/door/src_000000000000000000000000", json, sample)
        const withoutId = (text: string) => text.replace(/"request_id":"[^"]*"/, "")
        assert.deepStrictEqual([withoutToken.status, withoutId(withoutToken.text)], [unknownSource.status, withoutId(unknownSource.text)])
        const Rotated = Schema.Struct({ token: Schema.String, secret: Schema.Null, previous_valid_until: Schema.Null })
        const rotated = yield* call(Rotated, 200, "POST", api(`/door/sources/${posthog.source.id}/rotate-secret`), OWNER_KEY, {})
        const old = yield* rest(port, "POST", posthog.secret_address_path, json, sample)
        assert.strictEqual(old.status, 401, "the old address stops at once")
        const unknownAddress = yield* rest(port, "POST", "/api/v1/door/src_000000000000000000000000/tok_x", json, sample)
        assert.strictEqual(withoutId(old.text), withoutId(unknownAddress.text))
        assert.strictEqual((yield* rest(port, "POST", `${posthog.source.door_path}/${rotated.token}`, json, sample)).status, 200)
        const stripe = yield* call(Refusal, 400, "POST", api("/door/sources"), OWNER_KEY, { name: "Stripe", type: "webhook", template: "stripe" })
        assert.strictEqual(stripe.door.code, "invalid_field_value")

        // A tool with no template: its first notice is kept as the example, a person confirms the mapping.
        const generic = yield* call(Created, 200, "POST", api("/door/sources"), OWNER_KEY, { name: "CRM export", type: "webhook" })
        // Issue 32 row 20: a correctly signed notice nested 10,000 deep is refused, not a 500, and not kept.
        const deepNotice = `{"kind":"lead","lead":{"mail":"deep@acme.mx","a":${"[".repeat(10_000)}${"]".repeat(10_000)}}}`
        const deepTimestamp = Math.floor(Date.now() / 1000)
        const deepAnswer = yield* rest(port, "POST", generic.source.door_path, {
          "content-type": "application/json",
          "webhook-id": "msg_generic_deep",
          "webhook-timestamp": String(deepTimestamp),
          "webhook-signature": StandardWebhooks.sign({ secret: generic.secret, id: "msg_generic_deep", timestamp: deepTimestamp, body: new TextEncoder().encode(deepNotice) })
        }, deepNotice)
        assert.strictEqual(deepAnswer.status, 400, deepAnswer.text.slice(0, 400))
        const notice = JSON.stringify({ kind: "lead", lead: { id: "L-1", mail: "generic.one@acme.mx", full_name: "Generic One" } })
        const id = "msg_generic_1"
        const timestamp = Math.floor(Date.now() / 1000)
        const signature = StandardWebhooks.sign({ secret: generic.secret, id, timestamp, body: new TextEncoder().encode(notice) })
        const received = yield* rest(port, "POST", generic.source.door_path, {
          ...json,
          "webhook-id": id,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signature
        }, notice)
        assert.strictEqual(received.status, 202, received.text)
        assert.strictEqual(Schema.decodeUnknownSync(Schema.Struct({ status: Schema.String }))(jsonOf(received.text)).status, "unmapped")
        const Detail = Schema.Struct({
          example: Schema.Unknown,
          proposal: Schema.NullOr(Json),
          mapping: Schema.NullOr(Schema.Struct({ version: Schema.Number })),
          undecided_fields: Schema.Array(Schema.String)
        })
        const before = yield* call(Detail, 200, "GET", api(`/door/sources/${generic.source.id}`), OWNER_KEY)
        assert.deepStrictEqual(before.example, jsonOf(notice))
        assert.isNotNull(before.proposal)
        assert.isNull(before.mapping)

        const mapping = { event_type: ["kind"], accepted_events: ["lead"], notice_id: ["lead.id"], items: null, fields: { email: ["lead.mail"], name: ["lead.full_name"] } }
        const broken = yield* call(
          Schema.Struct({ door: Schema.Struct({ code: Schema.String, problems: Schema.Array(Schema.String) }) }),
          422,
          "PUT",
          api(`/door/sources/${generic.source.id}/mapping`),
          OWNER_KEY,
          { ...mapping, fields: { email: ["lead[0"] } }
        )
        assert.strictEqual(broken.door.code, "mapping_invalid")
        assert.isAbove(broken.door.problems.length, 0)
        const confirmed = yield* call(Detail, 200, "PUT", api(`/door/sources/${generic.source.id}/mapping`), OWNER_KEY, mapping)
        assert.strictEqual(confirmed.mapping?.version, 1)
        yield* call(Forbidden, 403, "PUT", api(`/door/sources/${generic.source.id}/mapping`), MEMBER_KEY, mapping)

        const Counts = Schema.Struct({ requeued: Schema.Number, changed: Schema.Number, unchanged: Schema.Number, expired: Schema.Number, created: Schema.Number })
        const counts = yield* call(Counts, 200, "POST", api(`/door/sources/${generic.source.id}/reprocess-unmapped`), OWNER_KEY, {})
        assert.deepStrictEqual(counts, { requeued: 1, changed: 1, unchanged: 0, expired: 0, created: 1 })
        const after = yield* settled(arrivalOf(received.text))
        assert.strictEqual(after.status, "accepted")
        assert.isNotNull(after.contact_id)
      }), 0)

    it.effect("Arrivals: newest first in pages with a cursor, filtered by Source and status, each with its trail", () =>
      Effect.gen(function*() {
        const created = yield* call(Created, 200, "POST", api("/door/sources"), OWNER_KEY, { name: "Paged form" })
        const ids: Array<string> = []
        for (const n of [1, 2, 3]) {
          const sent = yield* sendEvent(created.source.door_path, created.secret, `page-${n}`, { email: `page.${n}@acme.mx` })
          ids.push(arrivalOf(sent.text))
        }
        // Without email or phone: set aside.
        const aside = yield* sendEvent(created.source.door_path, created.secret, "page-4", { name: "No Key" })
        ids.push(arrivalOf(aside.text))
        for (const id of ids) yield* settled(id)

        const bySource = `/door/arrivals?source_id=${created.source.id}`
        const first = yield* call(Page, 200, "GET", api(`${bySource}&limit=3`), OWNER_KEY)
        assert.deepStrictEqual(first.arrivals.map((a) => a.id), [...ids].reverse().slice(0, 3))
        assert.isString(first.next_cursor)
        const second = yield* call(Page, 200, "GET", api(`${bySource}&limit=3&cursor=${first.next_cursor ?? ""}`), OWNER_KEY)
        assert.deepStrictEqual(second.arrivals.map((a) => a.id), [ids[0]])
        assert.isNull(second.next_cursor)

        const setAside = yield* call(Page, 200, "GET", api(`${bySource}&status=set_aside`), OWNER_KEY)
        assert.deepStrictEqual(setAside.arrivals.map((a) => a.id), [ids[3]])

        const shown = yield* call(ArrivalView, 200, "GET", api(`/door/arrivals/${ids[0] ?? ""}`), OWNER_KEY)
        assert.deepStrictEqual(shown.trail.map((step) => step.event), ["arrival.received", "contact.created", "arrival.settled"])
        assert.deepStrictEqual(shown.trail.map((step) => step.status), ["received", null, "accepted"])
        // The contact it names is in the CRM, with its company matched by the business domain.
        const Contact = Schema.Struct({ email: Schema.String, company: Schema.NullOr(Schema.Struct({ domain: Schema.NullOr(Schema.String) })) })
        const contact = yield* call(Contact, 200, "GET", api(`/crm/contacts/${shown.contact_id ?? ""}`), OWNER_KEY)
        assert.deepStrictEqual([contact.email, contact.company?.domain], ["page.1@acme.mx", "acme.mx"])
        const noContact = yield* call(Schema.Struct({ crm: Schema.Struct({ code: Schema.String }) }), 404, "GET", api("/crm/contacts/contact_000000000000000000000000"), OWNER_KEY)
        assert.strictEqual(noContact.crm.code, "contact_not_found")

        const badCursor = yield* call(Refusal, 400, "GET", api(`${bySource}&cursor=not-a-cursor`), OWNER_KEY)
        assert.strictEqual(badCursor.door.code, "invalid_field_value")
        const missing = yield* call(Refusal, 404, "GET", api("/door/arrivals/arr_000000000000000000000000"), OWNER_KEY)
        assert.strictEqual(missing.door.code, "arrival_not_found")
      }), 0)

    it.effect("only an owner or admin person changes Sources: a member reads, a key without a person cannot change", () =>
      Effect.gen(function*() {
        const asMember = yield* call(Forbidden, 403, "POST", api("/door/sources"), MEMBER_KEY, { name: "Member form" })
        assert.include(asMember.message, "owner or admin")
        const asFaceless = yield* call(Forbidden, 403, "POST", api("/door/sources"), FACELESS_KEY, { name: "Faceless form" })
        assert.include(asFaceless.message, "person")
        yield* call(Json, 200, "GET", api("/door/sources"), MEMBER_KEY)
        yield* call(Json, 200, "GET", api("/door/arrivals"), FACELESS_KEY)
        yield* call(Forbidden, 403, "POST", api("/sandboxes"), MEMBER_KEY, {})
        // Another workspace's slug answers as if it did not exist.
        const { port } = yield* Running
        const elsewhere = yield* rest(port, "GET", api("/door/sources", "other"), { "x-api-key": OWNER_KEY })
        assert.strictEqual(elsewhere.status, 404)
      }), 0)

    it.scoped("MCP: arrival_send_test writes in a test workspace and arrival_read reads it back, on the 1.x and 2.x clients", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const sandbox = yield* call(Sandbox, 200, "POST", api("/sandboxes"), OWNER_KEY, {})
        const source = sandbox.sources[0]
        assert.isDefined(source)
        if (source === undefined) return
        const headers = { "x-api-key": sandbox.api_key }
        const v1 = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new ClientV1({ name: "door-e2e-v1", version: "0.0.0" })
            await client.connect(new TransportV1(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        const v2 = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new ClientV2({ name: "door-e2e-v2", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
            await client.connect(new TransportV2(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        const Result = Schema.Struct({ isError: Schema.optional(Schema.Boolean), content: Schema.Unknown })
        for (const [era, callTool] of [
          ["1.x", (name: string, args: Record<string, unknown>): Promise<unknown> => v1.callTool({ name, arguments: args })],
          ["2.x", (name: string, args: Record<string, unknown>): Promise<unknown> => v2.callTool({ name, arguments: args })]
        ] as const) {
          const tools = era === "1.x" ? (yield* Effect.promise(() => v1.listTools())).tools : (yield* Effect.promise(() => v2.listTools())).tools
          const sendTool = tools.find((t) => t.name === "service_arrival_send_test")
          // A write tool leaves readOnlyHint out: MCP's default is false.
          assert.notStrictEqual(sendTool?.annotations?.readOnlyHint, true, era)
          assert.strictEqual(tools.find((t) => t.name === "service_arrival_read")?.annotations?.readOnlyHint, true, era)

          const sent = Schema.decodeUnknownSync(Result)(yield* Effect.promise(() => callTool("service_arrival_send_test", { source_id: source.source.id, type: "contact.created" })))
          assert.notStrictEqual(sent.isError, true, `${era}: ${JSON.stringify(sent)}`)
          const arrivalId = Schema.decodeUnknownSync(SentTest)(answerOf(sent)).arrival
          const read = Schema.decodeUnknownSync(Result)(yield* Effect.promise(() => callTool("service_arrival_read", { arrival_id: arrivalId })))
          const page = Schema.decodeUnknownSync(Page)(answerOf(read))
          assert.deepStrictEqual(page.arrivals.map((a) => a.id), [arrivalId], era)

          const refused = Schema.decodeUnknownSync(Result)(yield* Effect.promise(() => callTool("service_arrival_read", { arrival_id: "arr_000000000000000000000000" })))
          assert.strictEqual(refused.isError, true, era)
          assert.strictEqual(Schema.decodeUnknownSync(Refusal)(answerOf(refused)).door.code, "arrival_not_found", era)
        }
      }), 0)

    it.effect("test workspaces copy Pipelines and Sources with new secrets, take unsigned test Arrivals, at most 5, none from a test workspace", () =>
      Effect.gen(function*() {
        const workspaceId = yield* demoWorkspaceId
        const crm = yield* Crm
        const pipeline = yield* crm.createPipeline(workspaceId, { name: "Copied", stages: [{ name: "First" }] })
        const original = yield* call(Created, 200, "POST", api("/door/sources"), OWNER_KEY, {
          name: "Copied form",
          pipeline_id: pipeline.id,
          stage_id: pipeline.stages[0]?.id ?? ""
        })
        const notTest = yield* call(Refusal, 409, "POST", api(`/door/sources/${original.source.id}/test-arrivals`), OWNER_KEY, { type: "contact.created" })
        assert.deepStrictEqual([notTest.door.code, notTest.door.recovery.action], ["not_a_test_workspace", "use_test_workspace"])

        const sandbox = yield* call(Sandbox, 200, "POST", api("/sandboxes"), OWNER_KEY, { name: "Try the door" })
        assert.strictEqual(sandbox.workspace.test_of, workspaceId)
        const copy = sandbox.sources.find((s) => s.copied_from === original.source.id)
        assert.isDefined(copy)
        if (copy === undefined) return
        assert.notStrictEqual(copy.secret, original.secret)
        const copiedPipeline = sandbox.pipelines.find((p) => p.copied_from === pipeline.id)
        assert.strictEqual(copy.source.pipeline_id, copiedPipeline?.id)
        // No data came along.
        const slug = sandbox.workspace.slug
        const empty = yield* call(Page, 200, "GET", api("/door/arrivals", slug), sandbox.api_key)
        assert.deepStrictEqual(empty.arrivals, [])

        const sent = yield* call(SentTest, 200, "POST", api(`/door/sources/${copy.source.id}/test-arrivals`, slug), sandbox.api_key, { type: "contact.created" })
        assert.deepStrictEqual([sent.status, sent.duplicate], ["received", false])
        const arrival = yield* settled(sent.arrival, sandbox.api_key, slug)
        assert.strictEqual(arrival.status, "accepted")
        assert.isNotNull(arrival.opportunity_id)
        const aside = yield* call(SentTest, 200, "POST", api(`/door/sources/${copy.source.id}/test-arrivals`, slug), sandbox.api_key, { type: "topic.approved" })
        assert.strictEqual((yield* settled(aside.arrival, sandbox.api_key, slug)).status, "set_aside")
        // The copy's own secret signs for the copy.
        assert.strictEqual((yield* sendEvent(copy.source.door_path, copy.secret ?? "", "sandbox-1", { email: "sandbox.one@acme.mx" })).status, 202)

        const nested = yield* call(Refusal, 409, "POST", api("/sandboxes", slug), sandbox.api_key, {})
        assert.strictEqual(nested.door.code, "test_workspace_not_allowed")
        const made = (yield* (yield* Accounts.Accounts).testWorkspaces(WorkspaceId.make(sandbox.workspace.test_of))).length
        for (let n = made; n < 5; n++) yield* call(Sandbox, 200, "POST", api("/sandboxes"), OWNER_KEY, {})
        const sixth = yield* call(Refusal, 409, "POST", api("/sandboxes"), OWNER_KEY, {})
        assert.deepStrictEqual([sixth.door.code, sixth.door.recovery.action], ["test_workspace_limit", "remove_test_workspace"])
      }), 0)

    it.effect("OpenAPI publishes the door's routes with their bodies and refusals", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const document = jsonOf((yield* rest(port, "GET", "/openapi.json")).text)
        const Paths = Schema.Struct({ paths: Schema.Record({ key: Schema.String, value: Json }) })
        const { paths } = Schema.decodeUnknownSync(Paths)(document)
        for (
          const [path, methods] of [
            ["/api/v1/workspaces/{workspace}/door/sources", ["get", "post"]],
            ["/api/v1/workspaces/{workspace}/door/sources/{source_id}", ["get", "patch"]],
            ["/api/v1/workspaces/{workspace}/door/sources/{source_id}/archive", ["post"]],
            ["/api/v1/workspaces/{workspace}/door/sources/{source_id}/rotate-secret", ["post"]],
            ["/api/v1/workspaces/{workspace}/door/sources/{source_id}/test-arrivals", ["post"]],
            ["/api/v1/workspaces/{workspace}/door/templates", ["get"]],
            ["/api/v1/workspaces/{workspace}/door/arrivals", ["get"]],
            ["/api/v1/workspaces/{workspace}/door/arrivals/{arrival_id}", ["get"]],
            ["/api/v1/workspaces/{workspace}/sandboxes", ["post"]]
          ] as const
        ) {
          const item = paths[path]
          assert.isDefined(item, path)
          assert.deepStrictEqual(Object.keys(item ?? {}).filter((k) => methods.some((m) => m === k)).sort(), [...methods].sort(), path)
        }
        // The body of a route whose path names the Source does not repeat the path's field.
        const patch = JSON.stringify(paths["/api/v1/workspaces/{workspace}/door/sources/{source_id}"]?.["patch"])
        assert.include(patch, "pipeline_id")
        assert.include(patch, "404")
        const templates = yield* call(Schema.Struct({ templates: Schema.Array(Schema.Struct({ name: Schema.String, needs_signing_secret: Schema.Boolean })) }), 200, "GET", api("/door/templates"), OWNER_KEY)
        assert.strictEqual(templates.templates.length, 11)
        assert.deepStrictEqual(templates.templates.filter((t) => !t.needs_signing_secret).map((t) => t.name).sort(), ["jotform", "posthog"])
      }), 0)
  })
}
