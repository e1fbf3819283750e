/**
 * The contact quote and unlock through the real server as users reach it. The quote over REST with the demo
 * owner's key and as the MCP tool `service_contact_quote` through the official 2.x client, whose annotations say it
 * spends nothing; a key without `commercial:read` is refused. The unlock over REST and as the MCP tool
 * `service_contact_unlock` through the official 1.x client, with a key holding `commercial:activate`: it spends the
 * quoted credits once, a retry with the idempotency key replays it without spending again, the owner's
 * `commercial:read` key may quote but not unlock, and every refusal says what to do next. One server per database
 * target.
 */
import { assert, layer } from "@effect/vitest"
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Accounts from "@service/core/Accounts"
import * as Quotes from "@service/contacts/Quotes"
import * as Unlocks from "@service/contacts/Unlocks"
import { Crm } from "@service/crm/Crm"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ensureDemo } from "@service/server/Demo"
import { rest, Running, serverOn } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const OWNER_KEY = "svc_key_contacts_owner_0123456789abcdef"
const TOPICS_KEY = "svc_key_contacts_topics_0123456789abcdef"
/** The demo owner's key that may also spend: `commercial:read` and `commercial:activate`. */
const ACTIVATE_KEY = "svc_key_contacts_activate_0123456789abcdef"
/** A member's key given every contact scope, commercial:activate included, as if by an owner who allowed it once. */
const MEMBER_KEY = "svc_key_contacts_member_0123456789abcdef0"

/**
 * The demo workspace's collection of three contacts (quoted only, never unlocked), and a second collection of six
 * contacts the unlock tests spend on, two each, so no test depends on another's order.
 */
class Selection extends Context.Tag("Selection")<Selection, {
  readonly collectionId: string
  readonly contactIds: ReadonlyArray<string>
  readonly unlockCollectionId: string
  readonly unlockContactIds: ReadonlyArray<string>
  readonly memberCollectionId: string
  readonly memberContactIds: ReadonlyArray<string>
}>() {}

const prepared = Layer.effect(
  Selection,
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(OWNER_KEY)))
    const accounts = yield* Accounts.Accounts
    const crm = yield* Crm
    const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug("demo"))
    yield* accounts.issueCredential({ workspaceId: demo.id, kind: "api_key", label: "topics only", scopes: ["topics:write"], secret: Redacted.make(TOPICS_KEY) })
    // The same person as the owner key's (ensureDemo gives it the owner), so both keys' quotes are that person's.
    const owner = (yield* accounts.listMembers(demo.id)).find((member) => member.role === "owner")
    if (owner === undefined) return yield* Effect.dieMessage("the demo workspace has no owner")
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "contacts: read and activate",
      scopes: ["commercial:read", "commercial:activate"],
      personId: owner.person.id,
      secret: Redacted.make(ACTIVATE_KEY)
    })
    const contactsOf = (emails: ReadonlyArray<string>) =>
      Effect.forEach(emails, (email) =>
        Effect.flatMap(crm.applyContact(demo.id, { name: email.split("@")[0] ?? email, email }), (outcome) =>
          outcome._tag === "Created" ? Effect.succeed(outcome.contact.id) : Effect.dieMessage(`not created: ${outcome._tag}`)))
    const contactIds = yield* contactsOf(["luis@norte.mx", "eva@norte.mx", "raul@norte.mx"])
    const collection = yield* crm.createCollection(demo.id, { name: "Norte", contactIds })
    const unlockContactIds = yield* contactsOf(["ana@sur.cl", "beto@sur.cl", "caro@sur.cl", "dani@sur.cl", "ema@sur.cl", "fede@sur.cl"])
    const unlockCollection = yield* crm.createCollection(demo.id, { name: "Sur", contactIds: unlockContactIds })
    const memberContactIds = yield* contactsOf(["gala@este.mx", "hugo@este.mx", "ines@este.mx"])
    const memberCollection = yield* crm.createCollection(demo.id, { name: "Este", contactIds: memberContactIds })
    const mia = yield* accounts.createPerson({ displayName: "Mia Member" })
    yield* accounts.addMember({ workspaceId: demo.id, personId: mia.id, role: "member" })
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "a member's spending key",
      scopes: ["commercial:read", "commercial:activate", "access:write"],
      personId: mia.id,
      secret: Redacted.make(MEMBER_KEY)
    })
    return {
      collectionId: collection.id,
      contactIds,
      unlockCollectionId: unlockCollection.id,
      unlockContactIds,
      memberCollectionId: memberCollection.id,
      memberContactIds
    }
  }).pipe(Effect.orDie)
)

// Answers decode with the operations' own output schemas: every field as declared.
const QuoteBody = Schema.parseJson(Quotes.Quote)
const UnlockBody = Schema.parseJson(Unlocks.Unlock)

/** A refused contact operation over HTTP: the transport's envelope and the domain's block under `contacts`. */
const RefusalBody = Schema.parseJson(Schema.Struct({
  statusCode: Schema.Number,
  code: Schema.String,
  message: Schema.String,
  contacts: Schema.Struct({
    code: Schema.String,
    why: Schema.String,
    suggested_correction: Schema.String,
    retryable: Schema.Boolean,
    recovery: Schema.Struct({ action: Schema.String }),
    field: Schema.optional(Schema.String)
  })
}))

/** What a client acts on in a refusal: its status, code, faulty field and recovery. */
const refusalOf = (body: typeof RefusalBody.Type) => ({
  status: body.statusCode,
  code: body.contacts.code,
  field: body.contacts.field,
  action: body.contacts.recovery.action,
  retryable: body.contacts.retryable
})

const ForbiddenBody = Schema.parseJson(Schema.Struct({ statusCode: Schema.Literal(403), code: Schema.Literal("FORBIDDEN"), message: Schema.String }))

/** The credit account (the account group's usage operation): only the fields every version of it has. */
const UsageBody = Schema.parseJson(Schema.Struct({
  balance: Schema.Number,
  consumption: Schema.Array(Schema.Struct({ operation: Schema.String, calls: Schema.Number, credits: Schema.Number }))
}))

/** The annotations the unlock tool is listed with: every hint is MCP's default (see where it is read). */
const UNLOCK_ANNOTATIONS = {}

const json = { "content-type": "application/json" }

/** The workspace's balance and what `contact_unlock` has cost it, as the usage route answers them. */
const creditsOf = (port: number) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "GET", "/api/v1/workspaces/demo/account/usage", { "x-api-key": ACTIVATE_KEY })
    assert.strictEqual(answer.status, 200, answer.text)
    const account = Schema.decodeUnknownSync(UsageBody)(answer.text)
    const unlocks = account.consumption.find((row) => row.operation === "contact_unlock")
    return { balance: account.balance, unlockCalls: unlocks?.calls ?? 0, unlockCredits: unlocks?.credits ?? 0 }
  })

/** A quote over REST with `key`, decoded. */
const restQuote = (port: number, key: string, collectionId: string, recordIds: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "POST", "/api/v1/workspaces/demo/contacts/quote", { ...json, "x-api-key": key }, JSON.stringify({
      collection_id: collectionId,
      record_ids: recordIds
    }))
    assert.strictEqual(answer.status, 200, answer.text)
    return Schema.decodeUnknownSync(QuoteBody)(answer.text)
  })

/** An unlock over REST with `key`, undecoded: its status and text are what the tests check. */
const restUnlock = (port: number, key: string, body: Readonly<Record<string, unknown>>) =>
  rest(port, "POST", "/api/v1/workspaces/demo/contacts/unlock", { ...json, "x-api-key": key }, JSON.stringify(body))

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
        assert.deepInclude(tool?.annotations ?? {}, { readOnlyHint: true })
        // The demo owner key lacks commercial:activate: the unlock is not shown to it (decision 0074).
        assert.isUndefined(tools.tools.find((t) => t.name === "service_contact_unlock"))
        const result = yield* Effect.promise(() => client.callTool({ name: "service_contact_quote", arguments: { collection_id: collectionId, record_ids: contactIds } }))
        assert.notStrictEqual(result.isError, true, JSON.stringify(result))
        const text = JSON.stringify(answerOf(result))
        assert.include(text, "Unlocking 3 accounts will cost 15 insight credits")
        assert.notInclude(text, "norte.mx")
      }))

    it.effect("unlock over REST: 5 credits per account once, a retry with the key replays without spending", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const { unlockCollectionId, unlockContactIds } = yield* Selection
        const selected = unlockContactIds.slice(0, 2)
        const before = yield* creditsOf(port)
        const quote = yield* restQuote(port, ACTIVATE_KEY, unlockCollectionId, selected)
        assert.deepStrictEqual([quote.total_credits, quote.sufficient], [10, true])
        const request = Unlocks.requestFor(quote)
        const answer = yield* restUnlock(port, ACTIVATE_KEY, request)
        assert.strictEqual(answer.status, 200, answer.text)
        const first = Schema.decodeUnknownSync(UnlockBody)(answer.text)
        assert.isFalse(first.replayed)
        assert.isFalse(first.test_workspace)
        assert.deepStrictEqual([first.collection_id, first.idempotency_key], [unlockCollectionId, quote.idempotency_key])
        assert.sameMembers(first.accounts.map((a) => a.record_id), [...selected])
        for (const account of first.accounts) {
          assert.include(["found", "not_found"], account.outcome)
          assert.strictEqual(account.credits, 5)
          if (account.outcome === "found") assert.match(account.coordinates?.email ?? "", /@sandbox\.invalid$/)
          else assert.isNull(account.coordinates)
        }
        assert.deepStrictEqual([first.charged_credits, first.refunded_credits], [10, 0])
        assert.include(first.summary, "Spent 10 credits")
        const after = yield* creditsOf(port)
        assert.strictEqual(after.balance, before.balance - 10)
        assert.strictEqual(first.balance, after.balance)
        assert.deepStrictEqual([after.unlockCalls, after.unlockCredits], [before.unlockCalls + 2, before.unlockCredits + 10])

        // The same request again: the first answer, replayed, and nothing spent again.
        const retry = yield* restUnlock(port, ACTIVATE_KEY, request)
        assert.strictEqual(retry.status, 200, retry.text)
        const again = Schema.decodeUnknownSync(UnlockBody)(retry.text)
        assert.isTrue(again.replayed)
        assert.deepStrictEqual({ ...again, replayed: false }, first)
        assert.deepStrictEqual(yield* creditsOf(port), after)

        // Unlocked now: quoted again, they cost nothing.
        const requote = yield* restQuote(port, ACTIVATE_KEY, unlockCollectionId, selected)
        assert.deepStrictEqual([requote.total_credits, requote.accounts.map((a) => a.credits)], [0, [0, 0]])
      }))

    it.effect("unlock over REST is refused before any spend: commercial:read alone is 403, no confirm is 400, a max below the price is 409", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const { unlockCollectionId, unlockContactIds } = yield* Selection
        const selected = unlockContactIds.slice(2, 4)
        const before = yield* creditsOf(port)

        // The owner's demo key (commercial:read, no commercial:activate) may quote, not unlock.
        const ownerQuote = yield* restQuote(port, OWNER_KEY, unlockCollectionId, selected)
        assert.strictEqual(ownerQuote.total_credits, 10)
        const denied = yield* restUnlock(port, OWNER_KEY, Unlocks.requestFor(ownerQuote))
        assert.strictEqual(denied.status, 403, denied.text)
        const forbidden = Schema.decodeUnknownSync(ForbiddenBody)(denied.text)
        assert.include(forbidden.message, "commercial:activate")

        const quote = yield* restQuote(port, ACTIVATE_KEY, unlockCollectionId, selected)
        const unconfirmed = yield* restUnlock(port, ACTIVATE_KEY, { ...Unlocks.requestFor(quote), confirm: false })
        assert.strictEqual(unconfirmed.status, 400, unconfirmed.text)
        const confirmation = Schema.decodeUnknownSync(RefusalBody)(unconfirmed.text)
        assert.deepStrictEqual(refusalOf(confirmation), {
          status: 400,
          code: "confirmation_required",
          field: "confirm",
          action: "confirm_with_the_user",
          retryable: false
        })
        assert.isNotEmpty(confirmation.contacts.suggested_correction)

        const underpriced = yield* restUnlock(port, ACTIVATE_KEY, { ...Unlocks.requestFor(quote), max_credits: quote.total_credits - 1 })
        assert.strictEqual(underpriced.status, 409, underpriced.text)
        const priceChanged = Schema.decodeUnknownSync(RefusalBody)(underpriced.text)
        assert.deepStrictEqual(refusalOf(priceChanged), {
          status: 409,
          code: "price_changed",
          field: "max_credits",
          action: "request_a_new_quote",
          retryable: false
        })
        assert.isNotEmpty(priceChanged.contacts.suggested_correction)
        assert.include(priceChanged.contacts.why, "10 credits")

        // Nothing of it was spent or unlocked: the balance is the same and the accounts still cost their price.
        assert.deepStrictEqual(yield* creditsOf(port), before)
        assert.strictEqual((yield* restQuote(port, ACTIVATE_KEY, unlockCollectionId, selected)).total_credits, 10)
      }))

    it.scoped("as the MCP tool service_contact_unlock through the 1.x client: annotated as spending, unlocks the quote once, replays", () =>
      Effect.gen(function*() {
        const { baseUrl, port } = yield* Running
        const { unlockCollectionId, unlockContactIds } = yield* Selection
        const selected = unlockContactIds.slice(4, 6)
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const c = new ClientV1({ name: "contacts-e2e-v1", version: "0.0.0" })
            await c.connect(new TransportV1(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { "x-api-key": ACTIVATE_KEY } } }))
            return c
          }),
          (c) => Effect.promise(() => c.close())
        )
        const tools = yield* Effect.promise(() => client.listTools())
        const tool = tools.tools.find((t) => t.name === "service_contact_unlock")
        assert.isDefined(tool)
        // It spends (not read-only, not undoable), is not idempotent and reaches a provider: MCP's defaults for every
        // hint, so the listing sends none (decision 0074).
        assert.deepStrictEqual(tool?.annotations, UNLOCK_ANNOTATIONS)
        assert.match(tool?.description ?? "", /spends insight credits/i)

        const before = yield* creditsOf(port)
        const quoted = yield* Effect.promise(() =>
          client.callTool({ name: "service_contact_quote", arguments: { collection_id: unlockCollectionId, record_ids: selected } })
        )
        assert.notStrictEqual(quoted.isError, true, JSON.stringify(quoted))
        const quote = Schema.decodeUnknownSync(Quotes.Quote)(answerOf(quoted))
        assert.strictEqual(quote.total_credits, 10)
        const args = Unlocks.requestFor(quote)
        const unlocked = yield* Effect.promise(() => client.callTool({ name: "service_contact_unlock", arguments: args }))
        assert.notStrictEqual(unlocked.isError, true, JSON.stringify(unlocked))
        const first = Schema.decodeUnknownSync(Unlocks.Unlock)(answerOf(unlocked))
        assert.isFalse(first.replayed)
        assert.deepStrictEqual([first.charged_credits, first.accounts.map((a) => a.credits)], [10, [5, 5]])
        assert.include(first.summary, "Spent 10 credits")
        const after = yield* creditsOf(port)
        assert.strictEqual(after.balance, before.balance - 10)

        const retried = yield* Effect.promise(() => client.callTool({ name: "service_contact_unlock", arguments: args }))
        assert.notStrictEqual(retried.isError, true, JSON.stringify(retried))
        const again = Schema.decodeUnknownSync(Unlocks.Unlock)(answerOf(retried))
        assert.isTrue(again.replayed)
        assert.deepStrictEqual({ ...again, replayed: false }, first)
        assert.deepStrictEqual(yield* creditsOf(port), after)
      }))

    it.effect("spending is a role: a member's key holds commercial:activate only while an owner lets members spend, up to the monthly cap (issue 32 row 2)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const { memberCollectionId, memberContactIds } = yield* Selection
        const Whoami = Schema.parseJson(Schema.Struct({ role: Schema.String, scopes: Schema.Array(Schema.String) }))
        const scopesOf = (key: string) =>
          rest(port, "GET", "/api/v1/workspaces/demo/whoami", { "x-api-key": key }).pipe(Effect.map((answer) => Schema.decodeUnknownSync(Whoami)(answer.text)))
        const setSpending = (body: Readonly<Record<string, unknown>>, key = OWNER_KEY) =>
          rest(port, "PUT", "/api/v1/workspaces/demo/spending", { ...json, "x-api-key": key }, JSON.stringify(body))
        const unlockOf = (ids: ReadonlyArray<string>) =>
          Effect.flatMap(restQuote(port, MEMBER_KEY, memberCollectionId, ids), (quote) => restUnlock(port, MEMBER_KEY, Unlocks.requestFor(quote)))

        // By default a member holds no spending, whatever the key was given, and cannot give it either.
        assert.deepStrictEqual(yield* scopesOf(MEMBER_KEY), { role: "member", scopes: ["commercial:read", "access:write"] })
        const before = yield* creditsOf(port)
        const refused = yield* unlockOf(memberContactIds.slice(0, 1))
        assert.strictEqual(refused.status, 403, refused.text)
        assert.include(Schema.decodeUnknownSync(ForbiddenBody)(refused.text).message, "only its owners and admins hold and give it")
        const minted = yield* rest(port, "POST", "/api/v1/workspaces/demo/keys", { ...json, "x-api-key": MEMBER_KEY }, JSON.stringify({ name: "spend", scopes: ["commercial:activate"] }))
        assert.strictEqual(minted.status, 422, minted.text)
        assert.include(minted.text, "spending_not_allowed")

        // Only an owner decides; a cap is required.
        assert.strictEqual((yield* setSpending({ members_may_spend: true, member_monthly_cap: 5 }, MEMBER_KEY)).status, 403)
        assert.strictEqual((yield* setSpending({ members_may_spend: true })).status, 422)
        const allowed = yield* setSpending({ members_may_spend: true, member_monthly_cap: 5 })
        assert.strictEqual(allowed.status, 200, allowed.text)
        assert.deepInclude(JSON.parse(allowed.text), { members_may_spend: true, member_monthly_cap: 5 })
        assert.include((yield* scopesOf(MEMBER_KEY)).scopes, "commercial:activate")

        // Two accounts cost 10, past the cap of 5: refused before any spend. One fits; the next one does not.
        const tooMuch = yield* unlockOf(memberContactIds.slice(0, 2))
        assert.strictEqual(tooMuch.status, 402, tooMuch.text)
        assert.deepInclude(refusalOf(Schema.decodeUnknownSync(RefusalBody)(tooMuch.text)), { code: "spending_cap_reached", action: "ask_an_owner_or_admin" })
        assert.strictEqual((yield* creditsOf(port)).balance, before.balance)
        const fits = yield* unlockOf(memberContactIds.slice(0, 1))
        assert.strictEqual(fits.status, 200, fits.text)
        assert.strictEqual((yield* creditsOf(port)).balance, before.balance - 5)
        const past = yield* unlockOf(memberContactIds.slice(1, 2))
        assert.strictEqual(past.status, 402, past.text)
        assert.include(past.text, "spent 5 this month")

        // Taken back: the member's key stops spending at once.
        assert.strictEqual((yield* setSpending({ members_may_spend: false })).status, 200)
        assert.notInclude((yield* scopesOf(MEMBER_KEY)).scopes, "commercial:activate")
        assert.strictEqual((yield* unlockOf(memberContactIds.slice(2, 3))).status, 403)
        assert.strictEqual((yield* creditsOf(port)).balance, before.balance - 5)
      }))
  })
}
