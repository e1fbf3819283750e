/**
 * A topic's public link, checked the way a reader meets it: the page opened in a real headless Chromium
 * (Debian's package; `.ci/run` installs it), the markdown fetched as is, and the link revoked.
 */
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { hasChromium, launched } from "./support/Browser.js"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import { jsonOf, rest, Running, running } from "./support/Rest.js"

const KEY = "svc_key_share_page_0123456789abcdef"

const prepared = Layer.effectDiscard(ensureDemo(Option.some(Redacted.make(KEY))).pipe(Effect.orDie))

// Everything a hostile body could try: a script element, an inline handler, a javascript: link, raw HTML.
const hostileBody = [
  "Steps to **release** a version:",
  "",
  "1. Tag the commit",
  "2. Publish the changelog",
  "",
  "<script>window.__pwned = 'script'</script>",
  "<img src=x onerror=\"window.__pwned = 'onerror'\">",
  "[click me](javascript:window.__pwned='link')",
  "",
  "```",
  "npm publish",
  "```"
].join("\n")

const json = (port: number, method: string, path: string, body?: unknown) =>
  Effect.map(
    rest(port, method, path, { "x-api-key": KEY, ...(body === undefined ? {} : { "content-type": "application/json" }) }, body === undefined ? undefined : JSON.stringify(body)),
    (answer) => ({ status: answer.status, json: jsonOf(answer.text), text: answer.text })
  )

const [first] = TestDatabase.targets()

// One target is enough: the page is rendered by the same code on both databases.
for (const target of first === undefined ? [] : [first]) {
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(target.layer, Crypto.layerTest)),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`share links on ${target.name}`, (it) => {
    it.effect.skipIf(!hasChromium)(
      "the page renders in headless Chromium with its title and body, and nothing in the body runs; the raw markdown is served; a revoked link is a bare 404",
      () =>
        Effect.gen(function*() {
          const { baseUrl, port } = yield* Running
          const created = yield* json(port, "POST", "/api/v1/workspaces/demo/topics", { title: "Release <checklist>", body: hostileBody, tags: ["releases"] })
          assert.strictEqual(created.status, 200, created.text)
          const topic = Schema.decodeUnknownSync(Schema.Struct({ id: Schema.String }))(created.json)
          const shared = yield* json(port, "POST", `/api/v1/workspaces/demo/topics/${topic.id}/share`, {})
          assert.strictEqual(shared.status, 200, shared.text)
          const link = Schema.decodeUnknownSync(Schema.Struct({ token: Schema.String, path: Schema.String }))(shared.json)
          const pagePath = `/api/v1/s/${link.token}`

          const seen = yield* launched.pipe(
            Effect.flatMap((browser) =>
              Effect.promise(async () => {
                const page = await browser.newPage()
                const errors: Array<string> = []
                page.on("pageerror", (error) => errors.push(error.message))
                const response = await page.goto(`${baseUrl}${pagePath}`)
                // Clicking the would-be javascript: link must not run it either.
                const linkCount = await page.locator("a", { hasText: "click me" }).count()
                const pwned: unknown = await page.evaluate(() => Reflect.get(window, "__pwned"))
                return {
                  status: response?.status(),
                  csp: response?.headers()["content-security-policy"] ?? "",
                  title: await page.title(),
                  heading: await page.locator("h1").innerText(),
                  items: await page.locator("ol li").allInnerTexts(),
                  bodyText: await page.locator(".body").innerText(),
                  scripts: await page.locator("script").count(),
                  linkCount,
                  pwned,
                  errors
                }
              })
            ),
            Effect.scoped
          )
          assert.strictEqual(seen.status, 200)
          assert.strictEqual(seen.title, "Release <checklist>")
          assert.strictEqual(seen.heading, "Release <checklist>")
          assert.deepStrictEqual(seen.items, ["Tag the commit", "Publish the changelog"])
          assert.include(seen.bodyText, "npm publish")
          // The hostile parts are shown as text, never run.
          assert.include(seen.bodyText, "<script>window.__pwned = 'script'</script>")
          assert.strictEqual(seen.scripts, 0)
          assert.strictEqual(seen.linkCount, 0)
          assert.isUndefined(seen.pwned)
          assert.include(seen.csp, "default-src 'none'")

          const raw = yield* rest(port, "GET", `${pagePath}/raw`)
          assert.strictEqual(raw.status, 200)
          assert.match(String(raw.headers["content-type"]), /^text\/markdown/)
          assert.strictEqual(raw.text, `# Release <checklist>\n\n${hostileBody}\n`)

          const revoked = yield* json(port, "DELETE", `/api/v1/workspaces/demo/topics/${topic.id}/share`)
          assert.strictEqual(revoked.status, 200, revoked.text)
          const gone = yield* rest(port, "GET", pagePath)
          const goneRaw = yield* rest(port, "GET", `${pagePath}/raw`)
          const unknown = yield* rest(port, "GET", "/api/v1/s/shr_unknown_token")
          assert.deepStrictEqual([gone.status, goneRaw.status, unknown.status], [404, 404, 404])
          assert.strictEqual(gone.text, unknown.text)
        }),
      0
    )
  })
}
