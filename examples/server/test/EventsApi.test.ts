/**
 * MCP event subscriptions through the real server as an agent reaches them: the official 2.x client discovers
 * the events capability, lists the catalog, subscribes with a receiver on loopback (which passes the challenge),
 * and receives signed events from the server's embedded worker; the signatures verify with the Standard
 * Webhooks reference package. Then 410 (disabled), renewal with a new secret (re-enabled, both secrets sign),
 * 413 (that event dropped, the next delivered), unsubscribe (nothing more), the ttl (clamped, then elapsed), a
 * receiver that does not answer (retried after 10 s), the refusals, and a saved search's alert after a
 * publication. One server and one receiver per database target.
 */
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as SqlClient from "@effect/sql/SqlClient"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import * as AddressGuard from "@service/core/AddressGuard"
import * as SavedSearches from "@service/market-contract/SavedSearches"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import { Webhook } from "standardwebhooks"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import { rest, Running, running } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const OWNER_KEY = "svc_key_events_owner_0123456789abcdef"
const PERSON_KEY = "svc_key_events_person_0123456789abcdef"
const BEARER = "svc_tok_events_subscriber_0123456789abcdef"

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
    const accounts = yield* Accounts.Accounts
    const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
    const person = yield* accounts.createPerson({ displayName: "Subscriber" })
    yield* accounts.addMember({ workspaceId: demo.id, personId: person.id, role: "member" })
    // The person's own MCP client (a bearer token they authorized) and their CLI key.
    for (const [kind, secret] of [["bearer", BEARER], ["api_key", PERSON_KEY]] as const) {
      yield* accounts.issueCredential({
        workspaceId: demo.id,
        kind,
        label: `subscriber ${kind}`,
        scopes: ["context:read", "topics:write"],
        personId: person.id,
        secret: Redacted.make(secret)
      })
    }
  }).pipe(Effect.orDie)
)

// -- The receiver ------------------------------------------------------------

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

interface Receiver {
  url: string
  readonly received: Array<Received>
  /** The status deliveries get (verification challenges are always echoed). */
  status: number
  /** Deliveries to addresses ending in one of these paths get no answer at all (a receiver that hangs). */
  readonly hanging: Set<string>
}

class ReceiverService extends Context.Tag("Receiver")<ReceiverService, Receiver>() {}

const receiver = Layer.scoped(
  ReceiverService,
  Effect.acquireRelease(
    Effect.async<{ readonly receiver: Receiver; readonly close: () => void }>((resume) => {
      const state: Receiver = { url: "", received: [], status: 200, hanging: new Set() }
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          const parsed: unknown = JSON.parse(body)
          if (typeof parsed === "object" && parsed !== null && "type" in parsed && parsed.type === "verification" && "challenge" in parsed) {
            response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge: parsed.challenge }))
            return
          }
          state.received.push({ headers: request.headers, body })
          if (state.hanging.has(request.url ?? "")) return
          response.writeHead(state.status).end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        state.url = `http://127.0.0.1:${port}/hooks/events`
        resume(Effect.succeed({
          receiver: state,
          close: () => {
            server.closeAllConnections()
            server.close()
          }
        }))
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ receiver }) => receiver))
)

const secret = (): string => `whsec_${randomBytes(32).toString("base64")}`

/** Polls until `n` deliveries arrived: the embedded worker looks for due deliveries every second. */
const deliveries = (n: number) =>
  Effect.gen(function*() {
    const { received } = yield* ReceiverService
    for (let i = 0; i < 1200 && received.length < n; i++) yield* Effect.sleep(Duration.millis(100))
    assert.isAtLeast(received.length, n, "deliveries did not arrive")
    return received
  })

const Body = Schema.parseJson(Schema.Struct({
  eventId: Schema.String,
  name: Schema.String,
  timestamp: Schema.String,
  data: Schema.Struct({ topic_id: Schema.String, status: Schema.String }),
  cursor: Schema.Null
}))

const headersOf = (received: Received): Record<string, string> =>
  Object.fromEntries(Object.entries(received.headers).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : [])))

/** A topic put up for review over REST: the ledger records `topic.proposed`. */
const propose = (title: string) =>
  Effect.gen(function*() {
    const { port } = yield* Running
    const answer = yield* rest(port, "POST", "/api/v1/workspaces/demo/topics", { "x-api-key": OWNER_KEY, "content-type": "application/json" }, JSON.stringify({ title, body: "For review.", status: "proposed" }))
    assert.strictEqual(answer.status, 200, answer.text)
    return Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ id: Schema.String })))(answer.text).id
  })

const Subscribed = Schema.Struct({ id: Schema.String, refreshBefore: Schema.String, cursor: Schema.Null, truncated: Schema.Boolean })
const Listed = Schema.Struct({
  events: Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    delivery: Schema.Array(Schema.String),
    inputSchema: Schema.Unknown,
    payloadSchema: Schema.Unknown
  }))
})
const Empty = Schema.Struct({})
const ErrorData = Schema.Struct({ code: Schema.Number, data: Schema.Struct({ reason: Schema.String }) })

for (const target of TestDatabase.targets()) {
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    // The receiver listens on loopback: only this test-only guard lets deliveries reach it.
    Layer.provideMerge(App.layer(target.layer, Crypto.layerTest, { addressGuard: AddressGuard.layerAllowingLoopbackForTests() })),
    Layer.provideMerge(receiver),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`MCP events on ${target.name}`, (it) => {
    const connect = (headers: Record<string, string>) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          return yield* Effect.promise(async () => {
            const client = new Client({ name: "events-e2e", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
            await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers } }))
            return client
          })
        }),
        (client) => Effect.promise(() => client.close())
      )
    const request = <A, I>(client: Client, method: string, params: Record<string, unknown>, schema: Schema.Schema<A, I>) =>
      Effect.promise(() => client.request({ method, params }, Schema.standardSchemaV1(schema)))
    const refusalOf = (client: Client, method: string, params: Record<string, unknown>) =>
      Effect.promise(() => client.request({ method, params }, Schema.standardSchemaV1(Empty)).then(() => undefined, (error: unknown) => error)).pipe(
        Effect.map((error) => Schema.decodeUnknownSync(ErrorData)(error))
      )

    it.scoped("an agent subscribes, receives signed events, and 410, renewal, 413 and unsubscribe behave as the spec says", () =>
      Effect.gen(function*() {
        const hook = yield* ReceiverService
        const sql = yield* SqlClient.SqlClient
        const agent = yield* connect({ authorization: `Bearer ${BEARER}` })

        // The capability and the catalog.
        assert.strictEqual(agent.getProtocolEra(), "modern")
        assert.deepStrictEqual(agent.getServerCapabilities()?.extensions?.["io.modelcontextprotocol/events"], {})
        const listed = yield* request(agent, "events/list", {}, Listed)
        assert.strictEqual(listed.events.length, 22)
        assert.isTrue(listed.events.every((e) => e.delivery.join() === "webhook"))
        const opportunities = yield* request(agent, "events/list", { subject: "opportunity/opp_1" }, Listed)
        assert.deepStrictEqual(opportunities.events.map((e) => e.name), ["opportunity.created", "opportunity.moved", "opportunity.closed"])

        // Subscribe: the address passes the challenge.
        const first = secret()
        const params = (key: string) => ({ name: "topic.proposed", arguments: {}, delivery: { mode: "webhook", url: hook.url, secret: key }, cursor: null })
        const subscribed = yield* request(agent, "events/subscribe", params(first), Subscribed)
        assert.match(subscribed.id, /^sub_[0-9a-f]{32}$/)
        assert.deepStrictEqual([subscribed.cursor, subscribed.truncated], [null, false])
        const week = Date.parse(subscribed.refreshBefore) - Date.now()
        assert.isTrue(week > Duration.toMillis(Duration.days(7)) - 60_000 && week <= Duration.toMillis(Duration.days(7)))

        // An event arrives signed, with the subscription's id.
        const topicId = yield* propose("Pricing policy")
        const [delivered] = yield* deliveries(1)
        if (delivered === undefined) return assert.fail("no delivery")
        const verified = new Webhook(first).verify(delivered.body, headersOf(delivered))
        const body = Schema.decodeUnknownSync(Body)(delivered.body)
        assert.deepStrictEqual([body.name, body.data.topic_id, body.data.status, body.cursor], ["topic.proposed", topicId, "proposed", null])
        assert.deepStrictEqual(verified, JSON.parse(delivered.body))
        assert.strictEqual(delivered.headers["webhook-id"], body.eventId)
        assert.strictEqual(delivered.headers["x-mcp-subscription-id"], subscribed.id)
        assert.strictEqual(delivered.headers["content-type"], "application/json")

        // 410: the subscription is disabled, and later events are not sent.
        hook.status = 410
        yield* propose("Refund policy")
        yield* deliveries(2)
        const stateOf = Effect.map(
          sql`SELECT state FROM events.destinations WHERE id = ${subscribed.id}`,
          (rows) => String(rows[0]?.["state"])
        ).pipe(Effect.orDie)
        for (let i = 0; i < 600 && (yield* stateOf) !== "disabled"; i++) yield* Effect.sleep(Duration.millis(100))
        assert.strictEqual(yield* stateOf, "disabled")
        hook.status = 200
        yield* propose("Travel policy")

        // The same values renew the same subscription: re-enabled, and both secrets sign for 24 hours.
        const second = secret()
        const renewed = yield* request(agent, "events/subscribe", params(second), Subscribed)
        assert.strictEqual(renewed.id, subscribed.id)
        const rows = yield* sql`SELECT count(*)::int AS n FROM events.destinations WHERE id = ${subscribed.id}`.pipe(Effect.orDie)
        assert.strictEqual(Number(rows[0]?.["n"]), 1)
        const hiring = yield* propose("Hiring policy")
        const afterRenewal = yield* deliveries(3)
        const third = afterRenewal[2]
        if (third === undefined) return assert.fail("no delivery after renewal")
        // The next event delivered is the one after the renewal: the one sent while disabled never is.
        assert.strictEqual(Schema.decodeUnknownSync(Body)(third.body).data.topic_id, hiring)
        for (const key of [first, second]) new Webhook(key).verify(third.body, headersOf(third))
        assert.strictEqual(String(third.headers["webhook-signature"]).split(" ").length, 2)

        // 413: that event is dropped, the next one is delivered.
        hook.status = 413
        yield* propose("Security policy")
        yield* deliveries(4)
        hook.status = 200
        const lastTopic = yield* propose("Privacy policy")
        const afterDrop = yield* deliveries(5)
        assert.strictEqual(Schema.decodeUnknownSync(Body)(afterDrop[4]?.body).data.topic_id, lastTopic)

        // The delivery log, over HTTP and as an MCP tool: newest first, each attempt with its status.
        const { port } = yield* Running
        const logged = yield* rest(port, "GET", `/api/v1/workspaces/demo/events/deliveries?destination_id=${subscribed.id}&limit=10`, { "x-api-key": OWNER_KEY })
        assert.strictEqual(logged.status, 200, logged.text)
        const Log = Schema.parseJson(Schema.Struct({
          deliveries: Schema.Array(Schema.Struct({
            event_id: Schema.String,
            outcome: Schema.String,
            attempts: Schema.Array(Schema.Struct({ status: Schema.NullOr(Schema.Number), result: Schema.String }))
          })),
          next_cursor: Schema.NullOr(Schema.String)
        }))
        const log = Schema.decodeUnknownSync(Log)(logged.text)
        assert.deepStrictEqual(log.deliveries.map((d) => d.outcome), ["delivered", "too_large", "delivered", "gone", "delivered"])
        assert.deepStrictEqual(log.deliveries.map((d) => d.attempts.map((a) => a.status)), [[200], [413], [200], [410], [200]])
        assert.strictEqual(log.deliveries[4]?.event_id, body.eventId)
        const subscriptions = yield* Effect.promise(() => agent.callTool({ name: "service_events_subscriptions", arguments: {} }))
        assert.include(JSON.stringify(answerOf(subscriptions)), subscribed.id)
        assert.include(JSON.stringify(answerOf(subscriptions)), hook.url.replace("/hooks/events", ""))
        assert.notInclude(JSON.stringify(answerOf(subscriptions)), "/hooks/events")

        // Unsubscribe answers {} (also when nothing matches) and stops delivery; the history stays.
        // (The protocol's own `_meta` and `resultType` aside.)
        const own = (result: object) => Object.keys(result).filter((key) => key !== "_meta" && key !== "resultType")
        for (const name of ["topic.proposed", "topic.approved"]) {
          assert.deepStrictEqual(own(yield* request(agent, "events/unsubscribe", { name, arguments: {}, delivery: { url: hook.url } }, Empty)), [])
        }
        yield* propose("Archive policy")
        const pending = yield* sql`SELECT count(*)::int AS n FROM events.deliveries d JOIN events.ledger l ON l.id = d.ledger_id
          WHERE d.destination_id = ${subscribed.id}`.pipe(Effect.orDie)
        assert.strictEqual(Number(pending[0]?.["n"]), 5, "the five events sent while it was active, none after")
        assert.strictEqual(hook.received.length, 5)
      }), 0)

    it.scoped("an owner's Destination gets signed events with its own secret, replays a window with the same webhook-ids, and stops", () =>
      Effect.gen(function*() {
        const hook = yield* ReceiverService
        const { port } = yield* Running
        const json = (key: string, method: string, path: string, body?: unknown) =>
          rest(port, method, `/api/v1/workspaces/demo/events${path}`, { "x-api-key": key, "content-type": "application/json" }, body === undefined ? undefined : JSON.stringify(body))
        const url = hook.url.replace("/hooks/events", "/hooks/destination")
        // A member is not an owner or admin.
        assert.strictEqual((yield* json(PERSON_KEY, "POST", "/destinations", { url, events: ["topic.proposed"] })).status, 403)
        const refused = yield* json(OWNER_KEY, "POST", "/destinations", { url: "http://192.168.1.10/hook", events: ["topic.proposed"] })
        assert.strictEqual(refused.status, 422, refused.text)
        assert.include(refused.text, "address_rejected")
        const created = yield* json(OWNER_KEY, "POST", "/destinations", { url, events: ["topic.proposed"], description: "CRM sync" })
        assert.strictEqual(created.status, 200, created.text)
        const destination = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ id: Schema.String, secret: Schema.String })))(created.text)
        assert.match(destination.id, /^dst_[0-9a-f]{24}$/)

        const since = new Date().toISOString()
        const before = hook.received.length
        const topicId = yield* propose("Vendor policy")
        const [sent] = (yield* deliveries(before + 1)).slice(before)
        if (sent === undefined) return assert.fail("no delivery to the Destination")
        new Webhook(destination.secret).verify(sent.body, headersOf(sent))
        assert.strictEqual(Schema.decodeUnknownSync(Body)(sent.body).data.topic_id, topicId)
        assert.isUndefined(sent.headers["x-mcp-subscription-id"])

        // Replay the window: the same event again, under the same webhook-id.
        const replayed = yield* json(OWNER_KEY, "POST", `/destinations/${destination.id}/replay`, { from: since, to: new Date(Date.now() + 1000).toISOString() })
        assert.strictEqual(replayed.status, 200, replayed.text)
        assert.include(replayed.text, `"scheduled":1`)
        const [again] = (yield* deliveries(before + 2)).slice(before + 1)
        assert.strictEqual(again?.headers["webhook-id"], sent.headers["webhook-id"])

        // Stopped: no more deliveries; an unknown id is a 404 with the events block.
        assert.strictEqual((yield* json(OWNER_KEY, "DELETE", `/destinations/${destination.id}`)).status, 200)
        const missing = yield* json(OWNER_KEY, "DELETE", "/destinations/dst_000000000000000000000000")
        assert.strictEqual(missing.status, 404)
        assert.include(missing.text, "destination_not_found")
      }), 0)

    it.scoped("subscribing is refused with the spec's codes and reasons; an API key cannot subscribe; older clients keep working", () =>
      Effect.gen(function*() {
        const hook = yield* ReceiverService
        const agent = yield* connect({ authorization: `Bearer ${BEARER}` })
        const base = { name: "topic.approved", arguments: {}, delivery: { mode: "webhook", url: hook.url, secret: secret() } }
        const cases: ReadonlyArray<readonly [Record<string, unknown>, number, string]> = [
          [{ ...base, name: "topic.exploded" }, -32602, "unknown_event"],
          [{ ...base, arguments: { subject: "not a subject" } }, -32602, "invalid_arguments"],
          [{ ...base, arguments: { colour: "red" } }, -32602, "invalid_arguments"],
          [{ ...base, delivery: { ...base.delivery, secret: "hunter2" } }, -32602, "secret_invalid"],
          [{ ...base, delivery: { ...base.delivery, mode: "poll" } }, -32602, "delivery_mode"],
          [{ ...base, delivery: { ...base.delivery, url: "http://10.0.0.7/hook" } }, -32015, "url_rejected"],
          [{ ...base, delivery: { ...base.delivery, url: "http://169.254.169.254/latest" } }, -32015, "url_rejected"]
        ]
        for (const [params, code, reason] of cases) {
          assert.deepInclude(yield* refusalOf(agent, "events/subscribe", params), { code, data: { reason } }, JSON.stringify(params))
        }
        // A person's API key is not their MCP client: it cannot subscribe.
        const keyed = yield* connect({ "x-api-key": PERSON_KEY })
        assert.deepInclude(yield* refusalOf(keyed, "events/subscribe", base), { code: -32012, data: { reason: "person_required" } })

        // A 1.x client, which knows nothing of these methods, still connects and lists the tools.
        const { baseUrl } = yield* Running
        const legacy = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new ClientV1({ name: "events-legacy", version: "0.0.0" })
            await client.connect(new TransportV1(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${BEARER}` } } }))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        const tools = yield* Effect.promise(() => legacy.listTools())
        assert.isTrue(tools.tools.some((t) => t.name === "service_topics_search"))
      }), 0)

    it.scoped("ttl through the MCP client: clamped to an hour, null is 30 days, nothing after it elapses; no answer in 10 s is retried", () =>
      Effect.gen(function*() {
        const hook = yield* ReceiverService
        const sql = yield* SqlClient.SqlClient
        const agent = yield* connect({ authorization: `Bearer ${BEARER}` })
        const at = (path: string) => hook.url.replace("/hooks/events", path)
        const subscribe = (name: string, url: string, ttlMs: number | null) =>
          request(agent, "events/subscribe", { name, arguments: {}, delivery: { mode: "webhook", url, secret: secret() }, cursor: null, ttlMs }, Subscribed)

        // A second is clamped to an hour; null is 30 days.
        const short = yield* subscribe("topic.proposed", at("/hooks/ttl"), 1000)
        const hour = Date.parse(short.refreshBefore) - Date.now()
        assert.isTrue(hour > 3_600_000 - 60_000 && hour <= 3_600_000, String(hour))
        const long = yield* subscribe("topic.proposed", at("/hooks/ttl-long"), null)
        const month = Date.parse(long.refreshBefore) - Date.now()
        assert.isTrue(month > Duration.toMillis(Duration.days(30)) - 60_000 && month <= Duration.toMillis(Duration.days(30)), String(month))
        yield* request(agent, "events/unsubscribe", { name: "topic.proposed", arguments: {}, delivery: { url: at("/hooks/ttl-long") } }, Empty)

        // The hour passes (its expiry moved to the past rather than waited for): the next event is not scheduled
        // for it, and the subscriptions read says expired.
        yield* sql`UPDATE events.destinations SET expires_at = ${new Date(Date.now() - 1000).toISOString()}::timestamptz WHERE id = ${short.id}`
        yield* propose("Expense policy")
        const scheduled = yield* sql`SELECT count(*)::int AS n FROM events.deliveries WHERE destination_id = ${short.id}`
        assert.strictEqual(Number(scheduled[0]?.["n"]), 0)
        const listed = yield* Effect.promise(() => agent.callTool({ name: "service_events_subscriptions", arguments: {} }))
        const Views = Schema.Struct({ subscriptions: Schema.Array(Schema.Struct({ id: Schema.String, state: Schema.String })) })
        const views = Schema.decodeUnknownSync(Views)(answerOf(listed))
        assert.strictEqual(views.subscriptions.find((v) => v.id === short.id)?.state, "expired")

        // A receiver that does not answer: the attempt ends after 10 seconds and is retried 5 seconds later, under
        // the same webhook-id.
        hook.hanging.add("/hooks/slow")
        const slow = yield* subscribe("topic.approved", at("/hooks/slow"), null)
        const topicId = yield* propose("Hanging policy")
        const approved = yield* rest((yield* Running).port, "POST", `/api/v1/workspaces/demo/topics/${topicId}/approve`, { "x-api-key": OWNER_KEY, "content-type": "application/json" }, "{}")
        assert.strictEqual(approved.status, 200, approved.text)
        const toSlow = () => hook.received.filter((r) => r.headers["x-mcp-subscription-id"] === slow.id)
        for (let i = 0; i < 600 && toSlow().length < 1; i++) yield* Effect.sleep(Duration.millis(100))
        hook.hanging.delete("/hooks/slow")
        for (let i = 0; i < 600 && toSlow().length < 2; i++) yield* Effect.sleep(Duration.millis(100))
        const [hung, retried] = toSlow()
        assert.isDefined(retried, "the attempt that got no answer was retried")
        assert.strictEqual(retried?.headers["webhook-id"], hung?.headers["webhook-id"])
        const waited = Number(retried?.headers["webhook-timestamp"]) - Number(hung?.headers["webhook-timestamp"])
        assert.isAtLeast(waited, 14, "10 s without an answer, then the schedule's 5 s")
        // The log has both attempts once the second is written (just after its answer).
        const results = sql`SELECT a.result FROM events.delivery_attempts a JOIN events.deliveries d ON d.id = a.delivery_id
          WHERE d.destination_id = ${slow.id} ORDER BY a.attempt`.pipe(Effect.map((rows) => rows.map((row) => String(row["result"]))))
        for (let i = 0; i < 100 && (yield* results).length < 2; i++) yield* Effect.sleep(Duration.millis(100))
        assert.deepStrictEqual(yield* results, ["timeout", "delivered"])
      }).pipe(Effect.orDie), 0)

    it.scoped("a saved search alerts its subscriber: a publication adding GACM tenders arrives as a signed search.matched", () =>
      Effect.gen(function*() {
        const hook = yield* ReceiverService
        const { port } = yield* Running
        const agent = yield* connect({ authorization: `Bearer ${BEARER}` })
        const publish = (names: ReadonlyArray<string>) =>
          DemoCorpus.loadAndPublishWhere((file) => names.some((name) => file.path.includes(name))).pipe(
            Effect.map(({ publication }) => publication.snapshotId),
            Effect.orDie
          )
        yield* publish(["ocds_gacm_naicm_records"])

        // The owner saves the search over REST; the agent subscribes to its alert through MCP.
        const saved = yield* rest(port, "POST", "/api/v1/workspaces/demo/saved-searches", { "x-api-key": OWNER_KEY, "content-type": "application/json" }, JSON.stringify({ name: "GACM tenders", kind: "opportunities", criteria: { buyer: "GACM" } }))
        assert.strictEqual(saved.status, 200, saved.text)
        const { id } = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ id: Schema.String })))(saved.text)
        const key = secret()
        const url = hook.url.replace("/hooks/events", "/hooks/search")
        yield* request(agent, "events/subscribe", { name: "search.matched", arguments: { subject: `saved_search/${id}` }, delivery: { mode: "webhook", url, secret: key }, cursor: null }, Subscribed)

        // A publication that adds GACM records; the workers compare saved searches with it (run here at once rather
        // than wait for SERVICE_SEARCH_ALERTS_EVERY; the embedded worker's own round may come first, and either way
        // the alert is recorded once) and the embedded worker delivers the alert.
        const second = yield* publish(["ocds_gacm_naicm_records", "ocds_gacm_naicm_releases", "compranet_contratos_2015"])
        yield* (yield* SavedSearches.SavedSearches).check
        const isAlert = (r: Received) => r.body.includes("\"search.matched\"")
        for (let i = 0; i < 1200 && !hook.received.some(isAlert); i++) yield* Effect.sleep(Duration.millis(100))
        const alert = hook.received.find(isAlert)
        if (alert === undefined) return assert.fail("no search.matched delivery")
        new Webhook(key).verify(alert.body, headersOf(alert))
        const body = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({
          name: Schema.Literal("search.matched"),
          data: Schema.Struct({ saved_search_id: Schema.String, publication: Schema.String, added: Schema.Number, record_refs: Schema.Array(Schema.String) })
        })))(alert.body)
        assert.deepStrictEqual([body.data.saved_search_id, body.data.publication], [id, second])
        assert.isAbove(body.data.added, 0)
        assert.strictEqual(body.data.record_refs.length, Math.min(body.data.added, 20))
        assert.strictEqual(hook.received.filter(isAlert).length, 1)
      }), 0)
  })
}
