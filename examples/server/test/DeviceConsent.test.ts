/**
 * Issue 32 row 4, in a real headless Chromium (Debian's). The CLI's device grant is shared by every copy of `service
 * login`, so a grant the person gave it once must not carry the next device code: an attacker starts a device flow
 * and sends the person its link; the person, still signed in from an earlier `service login`, clicks "Continue" and
 * must see the consent page again (workspace and scopes), and the attacker's poll must get nothing until they allow.
 * And no page of the sign-in, consent, device or error flows can be framed: each sends `frame-ancestors 'none'` and
 * `X-Frame-Options: DENY`.
 *
 * On PGlite and, with DATABASE_URL, PostgreSQL.
 */
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import { Email, People } from "@service/identity/People"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type { BrowserContext } from "playwright-core"
import { hasChromium, launched } from "./support/Browser.js"
import { running, Running } from "./support/Rest.js"

const EMAIL = "ana@acme.example"
const MEMBER_EMAIL = "bea@acme.example"
const PASSWORD = "correct horse battery staple"

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    const ana = yield* (yield* People).create({ email: Schema.decodeSync(Email)(EMAIL), name: "Ana", password: Redacted.make(PASSWORD) })
    yield* accounts.addMember({ workspaceId: acme.id, personId: ana.person.id, role: "owner" })
    const bea = yield* (yield* People).create({ email: Schema.decodeSync(Email)(MEMBER_EMAIL), name: "Bea", password: Redacted.make(PASSWORD) })
    yield* accounts.addMember({ workspaceId: acme.id, personId: bea.person.id, role: "member" })
  }).pipe(Effect.orDie)
)

const DeviceAuthorization = Schema.Struct({ device_code: Schema.String, user_code: Schema.String, verification_uri_complete: Schema.String })

/** `service login`'s first request: a device code for the shared CLI client. */
const startDeviceFlow = (baseUrl: string, scope = "openid offline_access market_data:read") =>
  Effect.promise(() =>
    fetch(`${baseUrl}/oauth/device/auth`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: "service-cli", scope, resource: `${baseUrl}/api/v1` })
    }).then((r) => r.json())
  ).pipe(Effect.map(Schema.decodeUnknownSync(DeviceAuthorization)))

const TokenAnswer = Schema.Union(
  Schema.Struct({ access_token: Schema.String, scope: Schema.optional(Schema.String) }),
  Schema.Struct({ error: Schema.String })
)

/** `service login`'s poll: what the token endpoint answered. */
const pollAnswer = (baseUrl: string, deviceCode: string) =>
  Effect.promise(() =>
    fetch(`${baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: "service-cli" })
    }).then((r) => r.json())
  ).pipe(Effect.map(Schema.decodeUnknownSync(TokenAnswer)))

/** Polls as a client does: told to slow down, it adds 5 s to its interval (5 s at first, RFC 8628 3.5) and asks again. */
const pollPatiently = (baseUrl: string, deviceCode: string, interval = 5): Effect.Effect<typeof TokenAnswer.Type> =>
  Effect.flatMap(pollAnswer(baseUrl, deviceCode), (answer) =>
    "error" in answer && answer.error === "slow_down"
      ? Effect.zipRight(Effect.sleep(Duration.seconds(interval + 5)), pollPatiently(baseUrl, deviceCode, interval + 5))
      : Effect.succeed(answer))

/** The token endpoint's error code, or "token" once tokens are issued. */
const poll = (baseUrl: string, deviceCode: string) => Effect.map(pollPatiently(baseUrl, deviceCode), (answer) => "error" in answer ? answer.error : "token")

const framingOf = (headers: Readonly<Record<string, string>>) => ({
  frameAncestors: /frame-ancestors 'none'/.test(headers["content-security-policy"] ?? ""),
  xFrameOptions: headers["x-frame-options"] ?? ""
})

const browserContext = Effect.flatMap(launched, (browser) => Effect.promise(() => browser.newContext()))

/** Opens a device link, confirms the code, and answers which page follows (signing in first when asked). */
const openDeviceLink = (context: BrowserContext, link: string, email = EMAIL) =>
  Effect.promise(async () => {
    const page = await context.newPage()
    const framing: Array<{ readonly url: string; readonly frameAncestors: boolean; readonly xFrameOptions: string }> = []
    page.on("response", (response) => {
      if ((response.headers()["content-type"] ?? "").includes("text/html")) framing.push({ url: response.url(), ...framingOf(response.headers()) })
    })
    await page.goto(link)
    await Promise.all([page.waitForNavigation(), page.click("button[type=submit] >> nth=0")])
    if ((await page.locator("#email").count()) > 0) {
      await page.fill("#email", email)
      await page.fill("#password", PASSWORD)
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
    }
    const consent = (await page.locator("select#workspace").count()) > 0
    return { page, consent, heading: await page.locator("h1").innerText(), framing }
  })

for (const target of TestDatabase.targets()) {
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(target.layer, Crypto.layerTest)),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`the CLI's device grant on ${target.name}`, (it) => {
    it.effect.skipIf(!hasChromium)(
      "a second device code asks for consent again, though the person allowed the CLI before; no flow page can be framed",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const context = yield* browserContext
          // The person's own `service login`: confirm, sign in, allow.
          const own = yield* startDeviceFlow(baseUrl)
          const first = yield* openDeviceLink(context, own.verification_uri_complete)
          assert.isTrue(first.consent, `the first login shows the consent page, got "${first.heading}"`)
          yield* Effect.promise(() => Promise.all([first.page.waitForNavigation(), first.page.click("button[value=allow]")]))
          assert.strictEqual(yield* poll(baseUrl, own.device_code), "token")
          // An attacker's code, opened by the same person in the same browser, still signed in.
          const attackers = yield* startDeviceFlow(baseUrl)
          const second = yield* openDeviceLink(context, attackers.verification_uri_complete)
          assert.isTrue(second.consent, `the remembered grant was reused: the page said "${second.heading}" with no consent asked`)
          assert.strictEqual(yield* poll(baseUrl, attackers.device_code), "authorization_pending")
          // Every HTML page of both flows refuses to be framed.
          const pages = [...first.framing, ...second.framing]
          assert.isAtLeast(pages.length, 5)
          for (const page of pages) {
            assert.isTrue(page.frameAncestors, `${page.url}: no frame-ancestors 'none'`)
            assert.strictEqual(page.xFrameOptions, "DENY", page.url)
          }
        }).pipe(Effect.scoped)
    )

    it.effect.skipIf(!hasChromium)(
      "a member is not offered commercial:activate on the consent page, and a form that ticks it anyway is refused (issue 32 row 2)",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Running
          const context = yield* browserContext
          const flow = yield* startDeviceFlow(baseUrl, "openid offline_access market_data:read commercial:read commercial:activate")
          const opened = yield* openDeviceLink(context, flow.verification_uri_complete, MEMBER_EMAIL)
          assert.isTrue(opened.consent, opened.heading)
          const box = opened.page.locator("input[name=scope][value='commercial:activate']")
          assert.isTrue(yield* Effect.promise(() => box.isDisabled()), "the spending box is not offered to a member")
          assert.include(yield* Effect.promise(() => opened.page.locator("fieldset").innerText()), "Only a workspace's owners and admins give it.")
          // A forged form: the box enabled and ticked by hand.
          yield* Effect.promise(() => box.evaluate((input) => {
            input.removeAttribute("disabled")
            input.setAttribute("checked", "")
          }))
          const [forged] = yield* Effect.promise(() => Promise.all([opened.page.waitForNavigation(), opened.page.click("button[value=allow]")]))
          assert.strictEqual(forged?.status(), 403)
          assert.include(yield* Effect.promise(() => opened.page.locator("p.error").innerText()), "only owners and admins give commercial:activate")
          assert.strictEqual(yield* poll(baseUrl, flow.device_code), "authorization_pending")
          const polledAt = Date.now()
          // Allowed as offered: a token without spending, fetched no sooner than the polling interval allows.
          yield* Effect.promise(() => Promise.all([opened.page.waitForNavigation(), opened.page.click("button[value=allow]")]))
          yield* Effect.sleep(Duration.millis(Math.max(0, 5_100 - (Date.now() - polledAt))))
          const answer = yield* pollPatiently(baseUrl, flow.device_code)
          assert.isTrue("access_token" in answer, JSON.stringify(answer))
          assert.notInclude("scope" in answer ? answer.scope ?? "" : "", "commercial:activate")
        }).pipe(Effect.scoped)
    )

    it.effect("the authorization endpoint's error page cannot be framed", () =>
      Effect.gen(function*() {
        const { baseUrl } = yield* Running
        const response = yield* Effect.promise(() => fetch(`${baseUrl}/oauth/auth?client_id=nobody&response_type=code`))
        assert.strictEqual(response.status, 400)
        assert.include(response.headers.get("content-type") ?? "", "text/html")
        assert.deepStrictEqual(framingOf(Object.fromEntries(response.headers)), { frameAncestors: true, xFrameOptions: "DENY" })
      }))
  })
}
