/**
 * The contact quote through the real server as users reach it: over REST with the demo owner's key and as the MCP
 * tool `service_contact_quote` through the official 2.x client, whose annotations say it spends nothing. A key
 * without `commercial:read` is refused. One server per database target.
 */
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import * as Accounts from "@service/core/Accounts"
import { Crm } from "@service/crm/Crm"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ensureDemo } from "../src/Bootstrap.js"
import { rest, Running, serverOn } from "./support/Rest.js"

const OWNER_KEY = "svc_key_contacts_owner_0123456789abcdef"
const TOPICS_KEY = "svc_key_contacts_topics_0123456789abcdef"

/** The demo workspace's collection of three contacts. */
class Selection extends Context.Tag("Selection")<Selection, { readonly collectionId: string; readonly contactIds: ReadonlyArray<string> }>() {}

const prepared = Layer.effect(
  Selection,
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
    const accounts = yield* Accounts.Accounts
    const crm = yield* Crm
    const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
    yield* accounts.issueCredential({ workspaceId: demo.id, kind: "api_key", label: "topics only", scopes: ["topics:write"], secret: Redacted.make(TOPICS_KEY) })
    const contactIds: Array<string> = []
    for (const email of ["luis@norte.mx", "eva@norte.mx", "raul@norte.mx"]) {
      const outcome = yield* crm.applyContact(demo.id, { name: email.split("@")[0] ?? email, email })
      if (outcome._tag !== "Created") return yield* Effect.dieMessage(`not created: ${outcome._tag}`)
      contactIds.push(outcome.contact.id)
    }
    const collection = yield* crm.createCollection(demo.id, { name: "Norte", contactIds })
    return { collectionId: collection.id, contactIds }
  }).pipe(Effect.orDie)
)

const QuoteBody = Schema.parseJson(Schema.Struct({
  total_credits: Schema.Number,
  sufficient: Schema.Boolean,
  quote_token: Schema.String,
  idempotency_key: Schema.String,
  summary: Schema.String,
  accounts: Schema.Array(Schema.Struct({ record_id: Schema.String, credits: Schema.Number }))
}))

for (const target of TestDatabase.targets()) {
  const Env = serverOn(target, prepared)

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`contact quotes on ${target.name}`, (it) => {
    it.effect("over REST: priced per account with a token and its idempotency key; no coordinate; commercial:read is needed", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const { collectionId, contactIds } = yield* Selection
        const body = JSON.stringify({ collection_id: collectionId, record_ids: contactIds.slice(0, 2) })
        const answer = yield* rest(port, "POST", "/api/v1/workspaces/demo/contacts/quote", { "x-api-key": OWNER_KEY, "content-type": "application/json" }, body)
        assert.strictEqual(answer.status, 200, answer.text)
        const quote = Schema.decodeUnknownSync(QuoteBody)(answer.text)
        assert.deepStrictEqual([quote.total_credits, quote.sufficient, quote.accounts.length], [10, true, 2])
        assert.match(quote.idempotency_key, /^unl_[0-9a-f]{32}$/)
        assert.notInclude(answer.text, "norte.mx")
        const unknownRecord = yield* rest(port, "POST", "/api/v1/workspaces/demo/contacts/quote", { "x-api-key": OWNER_KEY, "content-type": "application/json" }, JSON.stringify({ collection_id: collectionId, record_ids: ["contact_elsewhere"] }))
        assert.strictEqual(unknownRecord.status, 400, unknownRecord.text)
        assert.include(unknownRecord.text, "records_not_in_collection")
        const denied = yield* rest(port, "POST", "/api/v1/workspaces/demo/contacts/quote", { "x-api-key": TOPICS_KEY, "content-type": "application/json" }, body)
        assert.strictEqual(denied.status, 403, denied.text)
      }))

    it.scoped("as the MCP tool service_contact_quote: read-only annotations, the summary in words", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const { collectionId, contactIds } = yield* Selection
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new Client({ name: "contacts-e2e", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } })
            await c.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { "x-api-key": OWNER_KEY } } }))
            return c
          }),
          (c) => Effect.promise(() => c.close())
        )
        const tools = yield* Effect.promise(() => client.listTools())
        const tool = tools.tools.find((t) => t.name === "service_contact_quote")
        assert.isDefined(tool)
        assert.deepInclude(tool?.annotations ?? {}, { readOnlyHint: true, destructiveHint: false })
        const result = yield* Effect.promise(() => client.callTool({ name: "service_contact_quote", arguments: { collection_id: collectionId, record_ids: contactIds } }))
        assert.notStrictEqual(result.isError, true, JSON.stringify(result))
        const text = JSON.stringify(result.structuredContent)
        assert.include(text, "Unlocking 3 accounts will cost 15 insight credits")
        assert.notInclude(text, "norte.mx")
      }))
  })
}
