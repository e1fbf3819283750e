/**
 * An MCP client that follows the MCP authorization specification connects from nothing but the server's address:
 * the official 1.x SDK client discovers the protected resource metadata from the 401, then the authorization server
 * metadata, registers itself (RFC 7591), and sends the person to the authorization URL with PKCE S256 and the
 * resource. A real headless Chromium (Debian's package) signs the person in on the sign-in page and answers the
 * consent page. With its tokens the client lists tools, calls a metered tool, subscribes to `contact.created` as
 * the person, is refused an unlock (no `commercial:activate`), refreshes its token, and is refused after the grant
 * is revoked (a reused refresh token revokes it). A second authorization that ticks `commercial:activate` unlocks.
 * The CLI's device grant runs through the same pages, its token bound to the REST API; and a member's grant ends
 * when they are removed. One server per database target, over the prepared demo corpus.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js"
import * as App from "@service/app/App"
import * as Fixture from "@service/conformance/Fixture"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import * as AddressGuard from "@service/core/AddressGuard"
import { Email, People } from "@service/identity/People"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash, randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { Browser, BrowserContext } from "playwright-core"
import { hasChromium, launched } from "./support/Browser.js"
import { running, Running } from "./support/Rest.js"
import { answerOf } from "./support/McpResult.js"

const INSPECTOR = "http://localhost:6274"
const PASSWORD = "correct horse battery staple"
const EMAIL = "ana@acme.example"

/** Where the webhook receiver and the client's redirect URI listen. */
const Receiver = Context.GenericTag<{ readonly url: string; readonly redirect: string }>("Receiver")

/** The quote example the contacts fixture seeded: a collection and its contact. */
class Seeded extends Context.Tag("Seeded")<Seeded, {
  readonly quote: Readonly<Record<string, unknown>>
  /** The owner's API key, and a member who signs in too. */
  readonly ownerKey: string
  readonly memberId: string
}>() {}

const MEMBER_EMAIL = "beto@acme.example"

const prepared = Layer.effect(
  Seeded,
  Effect.gen(function*() {
    const seeded = yield* Fixture.seed(App.app, "acme")
    const people = yield* People
    const owner = seeded.seats.workspace.owner
    yield* people.setEmail(owner.id, Schema.decodeSync(Email)(EMAIL)).pipe(Effect.orDie)
    yield* people.setPassword(owner.id, Redacted.make(PASSWORD)).pipe(Effect.orDie)
    const quote = seeded.seats.workspace.examples["contact_quote"]
    if (quote === undefined) return yield* Effect.dieMessage("the contacts fixture gave no quote example")
    const member = yield* people.create({ email: Schema.decodeSync(Email)(MEMBER_EMAIL), name: "Beto", password: Redacted.make(PASSWORD) }).pipe(Effect.orDie)
    yield* (yield* Accounts.Accounts).addMember({ workspaceId: seeded.seats.workspace.workspace.id, personId: member.person.id, role: "member" }).pipe(Effect.orDie)
    return { quote, ownerKey: seeded.seats.workspace.key, memberId: member.person.id }
  })
)

/**
 * A webhook receiver on loopback that passes the subscription's verification challenge, and the client's redirect URI
 * (`GET /callback`), where the browser lands with the code.
 */
const receiverUrl = Layer.scoped(
  Receiver,
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly redirect: string; readonly close: () => void }>((resume) => {
      const server = createServer((request, response) => {
        if (request.method === "GET") {
          response.writeHead(200, { "content-type": "text/plain" }).end("You may close this window.")
          return
        }
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"))
          const challenge = typeof parsed === "object" && parsed !== null && "challenge" in parsed ? parsed.challenge : undefined
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge }))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}/hooks`, redirect: `http://127.0.0.1:${port}/callback`, close: () => server.close() }))
      })
    }),
    ({ close }) => Effect.sync(close)
  )
)

/** The client's storage, in memory, as an MCP host keeps it. */
class MemoryProvider implements OAuthClientProvider {
  constructor(readonly redirect: string) {}
  info: OAuthClientInformationMixed | undefined = undefined
  stored: OAuthTokens | undefined = undefined
  verifier = ""
  authorizationUrl: URL | undefined = undefined
  get redirectUrl() {
    return this.redirect
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: "Test agent", redirect_uris: [this.redirect], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.stored
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

const Structured = Schema.Struct({ code: Schema.optional(Schema.String), reason: Schema.optional(Schema.String), required_scopes: Schema.optional(Schema.Array(Schema.String)) })
const QuoteOut = Schema.Struct({ quote_token: Schema.String, idempotency_key: Schema.String, total_credits: Schema.Number })

const connect = (baseUrl: string, provider: MemoryProvider) =>
  Effect.promise(async () => {
    const client = new Client({ name: "oauth-test", version: "0.0.0" })
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: provider }))
      return { client, unauthorized: false }
    } catch (error) {
      if (error instanceof UnauthorizedError) return { client, unauthorized: true }
      throw error
    }
  })

/** What the person does in the browser: sign in when asked, read the consent page, tick, allow. Returns the code. */
const authorize = (browser: BrowserContext, url: URL, redirect: string, tick: ReadonlyArray<string> = []) =>
  Effect.promise(async () => {
    const page = await browser.newPage()
    try {
      await page.goto(url.href)
      let signedIn = false
      if (new URL(page.url()).pathname === "/sign-in") {
        signedIn = true
        await page.fill("#email", EMAIL)
        await page.fill("#password", PASSWORD)
        await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
      }
      await page.waitForSelector("select#workspace", { timeout: 15_000 }).catch(async (error: unknown) => {
        throw new Error(`no consent page at ${page.url()}: ${(await page.content()).slice(0, 1500)} (${String(error)})`)
      })
      const heading = await page.locator("h1").innerText()
      const goesTo = (await page.locator("p.redirect").count()) > 0 ? await page.locator("p.redirect").innerText() : ""
      const workspaces = await page.locator("select#workspace option").allInnerTexts()
      const boxes = await page.locator("input[name=scope]").evaluateAll((inputs) =>
        inputs.map((input) => [input.getAttribute("value") ?? "", input instanceof HTMLInputElement && input.checked] as const)
      )
      for (const scope of tick) await page.check(`input[name=scope][value="${scope}"]`)
      await Promise.all([page.waitForURL((at) => at.href.startsWith(redirect)), page.click("button[value=allow]")])
      const back = new URL(page.url())
      return { code: back.searchParams.get("code") ?? "", iss: back.searchParams.get("iss"), signedIn, heading, goesTo, workspaces, boxes: new Map(boxes) }
    } finally {
      await page.close()
    }
  })

const form = (fields: Readonly<Record<string, string>>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString()
})

/**
 * The CLI's device grant (RFC 8628) for the REST API, with the person `email` doing their part in a fresh browser
 * context: the link, the code's confirmation, sign-in, the consent page (everything asked for, `commercial:activate`
 * included, as offered), Allow. Returns what the pages showed and the tokens.
 */
const deviceGrant = (baseUrl: string, browser: Browser, email: string) =>
  Effect.gen(function*() {
    const device = Schema.decodeUnknownSync(Schema.Struct({ device_code: Schema.String, user_code: Schema.String, verification_uri_complete: Schema.String }))(
      yield* Effect.promise(() =>
        fetch(`${baseUrl}/oauth/device/auth`, form({ client_id: "service-cli", scope: "market_data:read access:write commercial:activate", resource: `${baseUrl}/api/v1` })).then((r) => r.json())
      )
    )
    const poll = () =>
      Effect.promise(() =>
        fetch(`${baseUrl}/oauth/token`, form({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: device.device_code, client_id: "service-cli" })).then((r) => r.json())
      )
    const pending = yield* poll()
    const firstPoll = Date.now()
    const seen = yield* Effect.promise(async () => {
      const page = await (await browser.newContext()).newPage()
      await page.goto(device.verification_uri_complete)
      const confirm = await page.locator("body").innerText()
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit] >> nth=0")])
      await page.fill("#email", email)
      await page.fill("#password", PASSWORD)
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
      await page.waitForSelector("select#workspace")
      const boxes = await page.locator("input[name=scope]").evaluateAll((inputs) =>
        inputs.map((input) => `${input.getAttribute("value") ?? ""}=${String(input instanceof HTMLInputElement && input.checked)}`)
      )
      await Promise.all([page.waitForNavigation(), page.click("button[value=allow]")])
      return { confirm, boxes, done: await page.locator("h1").innerText(), pending }
    })
    // A client polls no sooner than the interval (5 s, RFC 8628 3.5); sooner is told to slow down.
    yield* Effect.sleep(Duration.millis(Math.max(0, 5_100 - (Date.now() - firstPoll))))
    const token = Schema.decodeUnknownSync(Schema.Struct({ access_token: Schema.String, refresh_token: Schema.String, scope: Schema.String }))(yield* poll())
    return { device, seen, token }
  })

/** A JSON-RPC ping straight to `/mcp` with a bearer token: its status and challenge. */
const mcpPing = (baseUrl: string, token: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
    }).then((r) => ({ status: r.status, challenge: r.headers.get("www-authenticate") ?? "" }))
  )

const toolResult = (client: Client, name: string, args: Readonly<Record<string, unknown>>) =>
  Effect.promise(() => client.callTool({ name, arguments: { ...args } }))

for (const target of TestDatabase.targets()) {
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(Layer.merge(prepared, receiverUrl)),
    Layer.provideMerge(App.layer(TestDatabase.prepared(target, App.app.snapshot), Crypto.layerTest, { addressGuard: AddressGuard.layerAllowingLoopbackForTests() })),
    Layer.orDie,
    // A browser-based client's origin (the MCP Inspector's) is allowed; everything else comes from the environment.
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_CORS_ORIGINS", INSPECTOR]])).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))))
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`an MCP client signs a person in through OAuth on ${target.name}`, (it) => {
    it.effect("a browser client of an allowed origin gets its preflights answered and reads WWW-Authenticate; another origin gets nothing", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const preflight = (path: string, origin: string) =>
          Effect.promise(() =>
            fetch(`${baseUrl}${path}`, {
              method: "OPTIONS",
              headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type,mcp-protocol-version" }
            }).then((r) => ({ status: r.status, allow: r.headers.get("access-control-allow-origin"), headers: r.headers.get("access-control-allow-headers") ?? "" }))
          )
        const mcp = yield* preflight("/mcp", INSPECTOR)
        assert.strictEqual(mcp.status, 204)
        assert.strictEqual(mcp.allow, INSPECTOR)
        assert.include(mcp.headers, "mcp-protocol-version")
        const registration = yield* preflight("/oauth/reg", INSPECTOR)
        assert.strictEqual(registration.allow, INSPECTOR)
        // Another origin is not named back, so a browser refuses the page's request.
        assert.notStrictEqual((yield* preflight("/mcp", "https://elsewhere.example")).allow, "https://elsewhere.example")

        const unauthorized = yield* Effect.promise(() =>
          fetch(`${baseUrl}/mcp`, { method: "POST", headers: { origin: INSPECTOR, "content-type": "application/json" }, body: "{}" }).then((r) => ({
            status: r.status,
            allow: r.headers.get("access-control-allow-origin"),
            exposed: r.headers.get("access-control-expose-headers") ?? "",
            challenge: r.headers.get("www-authenticate") ?? ""
          }))
        )
        assert.strictEqual(unauthorized.status, 401)
        assert.strictEqual(unauthorized.allow, INSPECTOR)
        assert.include(unauthorized.exposed, "www-authenticate")
        assert.include(unauthorized.exposed, "mcp-session-id")
        assert.include(unauthorized.challenge, `resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`)
        const metadata = yield* Effect.promise(() =>
          fetch(`${baseUrl}/.well-known/oauth-protected-resource/mcp`, { headers: { origin: INSPECTOR } }).then((r) => r.headers.get("access-control-allow-origin"))
        )
        assert.strictEqual(metadata, INSPECTOR)
      }))

    it.effect.skipIf(!hasChromium)(
      "the CLI's device grant: the person enters nothing but the link, signs in and consents; the token is bound to the REST API and opens nothing else",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const browser = yield* launched
          const { device, seen, token } = yield* deviceGrant(baseUrl, browser, EMAIL)
          assert.deepInclude(seen.pending, { error: "authorization_pending" })
          assert.include(seen.confirm, device.user_code)
          assert.deepStrictEqual(seen.boxes, ["market_data:read=true", "commercial:activate=false", "access:write=true"])
          assert.strictEqual(seen.done, "Signed in")

          assert.strictEqual(token.scope, "market_data:read access:write")
          const me = yield* Effect.promise(() =>
            fetch(`${baseUrl}/api/v1/workspaces/acme/whoami`, { headers: { authorization: `Bearer ${token.access_token}` } }).then(async (r) => ({ status: r.status, body: await r.json() }))
          )
          assert.strictEqual(me.status, 200)
          assert.deepInclude(me.body, { role: "owner", scopes: ["market_data:read", "access:write"] })
          // Bound to the REST API (RFC 8707): the MCP endpoint refuses it.
          assert.strictEqual((yield* mcpPing(baseUrl, token.access_token)).status, 401)
        }).pipe(Effect.scoped)
    )

    it.effect.skipIf(!hasChromium)(
      "a known client asking again for commercial:activate, left unticked, gets a token with what it holds; a refresh naming another resource burns nothing (issue 32 rows 16, 11)",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const hook = yield* Receiver
          const browser = yield* launched.pipe(Effect.flatMap((opened) => Effect.promise(() => opened.newContext())))
          // A client registered as the SDK registers, authorized first for market data only.
          const agent = new MemoryProvider(hook.redirect)
          assert.isTrue((yield* connect(baseUrl, agent)).unauthorized)
          const clientId = agent.info?.client_id ?? ""
          const Token = Schema.Struct({ access_token: Schema.String, refresh_token: Schema.String, scope: Schema.String })
          const authorizeFor = (scope: string) =>
            Effect.gen(function*() {
              const verifier = randomBytes(32).toString("base64url")
              const url = new URL(`${baseUrl}/oauth/auth`)
              for (
                const [name, value] of Object.entries({
                  client_id: clientId,
                  response_type: "code",
                  redirect_uri: hook.redirect,
                  scope,
                  resource: `${baseUrl}/mcp`,
                  code_challenge: createHash("sha256").update(verifier).digest("base64url"),
                  code_challenge_method: "S256",
                  state: "s"
                })
              ) url.searchParams.set(name, value)
              const consent = yield* authorize(browser, url, hook.redirect)
              assert.notStrictEqual(consent.code, "", "a code, not access_denied")
              const exchanged = yield* Effect.promise(() =>
                fetch(`${baseUrl}/oauth/token`, form({ grant_type: "authorization_code", code: consent.code, redirect_uri: hook.redirect, code_verifier: verifier, client_id: clientId })).then((r) => r.json())
              )
              return { consent, token: Schema.decodeUnknownSync(Token)(exchanged) }
            })
          const first = yield* authorizeFor("market_data:read")
          assert.strictEqual(first.token.scope, "market_data:read")

          // The same client asks again, now for commercial:activate too; the person leaves it unticked.
          const second = yield* authorizeFor("market_data:read commercial:activate")
          assert.deepStrictEqual([...second.consent.boxes], [["commercial:activate", false]], "only what it does not hold is asked")
          const token = second.token
          assert.include(token.scope, "market_data:read")
          assert.notInclude(token.scope, "commercial:activate")
          assert.strictEqual((yield* mcpPing(baseUrl, token.access_token)).status, 200)

          // A refresh naming a resource the token was not granted for is refused, and burns nothing: the correct
          // refresh that follows works, and the grant lives on.
          const refresh = (extra: Readonly<Record<string, string>>) =>
            Effect.promise(() =>
              fetch(`${baseUrl}/oauth/token`, form({ grant_type: "refresh_token", refresh_token: token.refresh_token, client_id: clientId, ...extra })).then(async (r) => ({ status: r.status, body: await r.text() }))
            )
          const wrong = yield* refresh({ resource: `${baseUrl}/api/v1` })
          assert.strictEqual(wrong.status, 400, wrong.body)
          assert.include(wrong.body, "invalid_target")
          const right = yield* refresh({ resource: `${baseUrl}/mcp` })
          assert.strictEqual(right.status, 200, right.body)
          const renewed = Schema.decodeUnknownSync(Schema.parseJson(Token))(right.body)
          assert.strictEqual((yield* mcpPing(baseUrl, renewed.access_token)).status, 200)
        }).pipe(Effect.scoped)
    )

    it.effect.skipIf(!hasChromium)(
      "a member's OAuth grant ends when an owner removes them from the workspace",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const { ownerKey, memberId } = yield* Seeded
          const browser = yield* launched
          const { token } = yield* deviceGrant(baseUrl, browser, MEMBER_EMAIL)
          const whoami = () =>
            Effect.promise(() => fetch(`${baseUrl}/api/v1/workspaces/acme/whoami`, { headers: { authorization: `Bearer ${token.access_token}` } }).then((r) => r.status))
          assert.strictEqual(yield* whoami(), 200)
          const removed = yield* Effect.promise(() =>
            fetch(`${baseUrl}/api/v1/workspaces/acme/members/${memberId}`, { method: "DELETE", headers: { "x-api-key": ownerKey } }).then(async (r) => ({ status: r.status, body: await r.json() }))
          )
          assert.strictEqual(removed.status, 200)
          assert.deepInclude(removed.body, { grants_revoked: 1 })
          assert.strictEqual(yield* whoami(), 401)
          const refreshed = yield* Effect.promise(() =>
            fetch(`${baseUrl}/oauth/token`, form({ grant_type: "refresh_token", refresh_token: token.refresh_token, client_id: "service-cli" })).then((r) => r.status)
          )
          assert.strictEqual(refreshed, 400, "the grant's refresh token is gone too")
        }).pipe(Effect.scoped)
    )

    it.effect.skipIf(!hasChromium)(
      "discovery, registration, sign-in and consent in Chromium, tools, a metered call, a subscription as the person, refresh, reuse detection and revocation; commercial:activate only when ticked",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const { quote } = yield* Seeded
          const hook = yield* Receiver
          const issuer = `${baseUrl}/oauth`
          const metadata = Schema.decodeUnknownSync(Schema.Struct({ revocation_endpoint: Schema.String, token_endpoint: Schema.String, code_challenge_methods_supported: Schema.Array(Schema.String) }))(
            yield* Effect.promise(() => fetch(`${baseUrl}/.well-known/oauth-authorization-server/oauth`).then((r) => r.json()))
          )
          assert.deepStrictEqual(metadata.code_challenge_methods_supported, ["S256"])

          // One browser context for both authorizations: the second finds the person signed in.
          const browser = yield* launched.pipe(Effect.flatMap((opened) => Effect.promise(() => opened.newContext())))

          // 1. From nothing but the address: 401 -> metadata -> registration -> the authorization URL.
          const agent = new MemoryProvider(hook.redirect)
          const first = yield* connect(baseUrl, agent)
          assert.isTrue(first.unauthorized, "the first connection needs authorization")
          const url = agent.authorizationUrl
          if (url === undefined) return assert.fail("no authorization URL")
          assert.strictEqual(url.origin + url.pathname, `${issuer}/auth`)
          assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
          assert.strictEqual(url.searchParams.get("resource"), `${baseUrl}/mcp`)
          assert.isString(agent.info?.client_id)

          // 2. The person signs in and consents in the browser; commercial:activate is offered, not ticked.
          const consent = yield* authorize(browser, url, hook.redirect)
          assert.isTrue(consent.signedIn, "the sign-in page came first")
          assert.strictEqual(consent.heading, "Allow Test agent?")
          // Where the code goes is shown before the person allows (issue 32 row 12).
          assert.include(consent.goesTo, `you go back to ${new URL(hook.redirect).host}`)
          // The person's workspaces: the one the fixture made and its test workspace.
          assert.deepStrictEqual(consent.workspaces, ["acme (acme, owner)", "acme (test) (acme-test, owner)"])
          assert.strictEqual(consent.boxes.get("market_data:read"), true)
          assert.strictEqual(consent.boxes.get("commercial:activate"), false)
          assert.strictEqual(consent.iss, issuer)
          yield* Effect.promise(() => new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: agent }).finishAuth(consent.code))
          const issued = agent.stored
          if (issued?.refresh_token === undefined) return assert.fail("no refresh token")

          // 3. Tools, a metered call, and a subscription as the person.
          const { client } = yield* connect(baseUrl, agent)
          const tools = yield* Effect.promise(() => client.listTools())
          assert.isTrue(tools.tools.some((tool) => tool.name === "service_market_search_suppliers"))
          const search = yield* toolResult(client, "service_market_search_suppliers", { state: "Zacatecas", scian_codes: ["212"], limit: 5 })
          assert.notStrictEqual(search.isError, true, JSON.stringify(answerOf(search)))
          const subscribed = yield* Effect.promise(() =>
            client.request({ method: "events/subscribe", params: { name: "contact.created", arguments: {}, delivery: { mode: "webhook", url: hook.url, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" }, cursor: null } }, ResultSchema)
          )
          assert.match(String(subscribed["id"]), /^sub_/)

          // 4. No commercial:activate: the unlock is refused with the scope to ask for.
          const quoted = Schema.decodeUnknownSync(QuoteOut)(answerOf(yield* toolResult(client, "service_contact_quote", quote)))
          const unlockArgs = { ...quote, confirm: true, max_credits: quoted.total_credits, quote_token: quoted.quote_token, idempotency_key: quoted.idempotency_key }
          const refused = yield* toolResult(client, "service_contact_unlock", unlockArgs)
          assert.isTrue(refused.isError)
          assert.deepInclude(Schema.decodeUnknownSync(Structured)(answerOf(refused)), { code: "FORBIDDEN", reason: "missing_scope", required_scopes: ["commercial:activate"] })

          // 5. Refresh: with a dead access token the SDK refreshes on the 401 and the refresh token rotates.
          agent.stored = { ...issued, access_token: "not-a-token" }
          const again = yield* toolResult(client, "service_account_usage", {})
          assert.notStrictEqual(again.isError, true)
          const refreshed = agent.stored
          assert.notStrictEqual(refreshed.access_token, issued.access_token)
          assert.notStrictEqual(refreshed.refresh_token, issued.refresh_token)

          // 6. The rotated refresh token used again: refused, and the whole grant with it.
          const reuse = yield* Effect.promise(() =>
            fetch(metadata.token_endpoint, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: issued.refresh_token ?? "", client_id: agent.info?.client_id ?? "" })
            }).then(async (r) => ({ status: r.status, body: await r.text() }))
          )
          assert.strictEqual(reuse.status, 400)
          assert.include(reuse.body, "invalid_grant")
          // The refreshed access token is dead at once, and the client's own refresh is refused too.
          assert.strictEqual((yield* mcpPing(baseUrl, refreshed.access_token)).status, 401)
          const after = yield* Effect.promise(() =>
            client.callTool({ name: "service_account_usage", arguments: {} }).then(() => "answered", (error: unknown) => error instanceof Error ? error.name : String(error))
          )
          assert.oneOf(after, ["UnauthorizedError", "InvalidGrantError"], "the revoked grant cannot be refreshed")
          yield* Effect.promise(() => client.close())

          // 7. A second authorization (the browser is still signed in) that ticks commercial:activate unlocks.
          const spender = new MemoryProvider(hook.redirect)
          const needed = yield* connect(baseUrl, spender)
          assert.isTrue(needed.unauthorized)
          const spenderUrl = spender.authorizationUrl
          if (spenderUrl === undefined) return assert.fail("no authorization URL")
          const ticked = yield* authorize(browser, spenderUrl, hook.redirect, ["commercial:activate"])
          assert.isFalse(ticked.signedIn, "the session signs the person in")
          yield* Effect.promise(() => new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { authProvider: spender }).finishAuth(ticked.code))
          const { client: paying } = yield* connect(baseUrl, spender)
          const unlocked = yield* toolResult(paying, "service_contact_unlock", unlockArgs)
          assert.notStrictEqual(unlocked.isError, true, JSON.stringify(answerOf(unlocked)))

          // 8. RFC 7009: the client revokes its access token; the next request is refused at once.
          const token = spender.stored?.access_token ?? ""
          const revoked = yield* Effect.promise(() =>
            fetch(metadata.revocation_endpoint, {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({ token, client_id: spender.info?.client_id ?? "" })
            }).then((r) => r.status)
          )
          assert.strictEqual(revoked, 200)
          const direct = yield* mcpPing(baseUrl, token)
          assert.strictEqual(direct.status, 401)
          assert.include(direct.challenge, `resource_metadata="${baseUrl}/.well-known/oauth-protected-resource/mcp"`)
          yield* Effect.promise(() => paying.close())
        }).pipe(Effect.scoped)
    )
  })
}
