/**
 * A person approving the CLI's device grant in a real headless Chromium (Debian's): opens the link `service login`
 * printed, confirms the code, signs in, optionally ticks `commercial:activate` (never granted unticked), allows,
 * and answers the page's heading.
 */
import * as Effect from "effect/Effect"
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"

/** Whether the browser tests can run here (`.ci/run` installs the package). */
export const hasChromium = existsSync(CHROMIUM)

export const approveInBrowser = (link: string, person: { readonly email: string; readonly password: string }, options: { readonly activate?: boolean } = {}) =>
  Effect.acquireUseRelease(
    Effect.promise(() =>
      chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] })
    ),
    (browser) =>
      Effect.promise(async () => {
        const page = await (await browser.newContext()).newPage()
        await page.goto(link)
        await Promise.all([page.waitForNavigation(), page.click("button[type=submit] >> nth=0")])
        await page.fill("#email", person.email)
        await page.fill("#password", person.password)
        await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
        await page.waitForSelector("select#workspace")
        if (options.activate === true) await page.check("input[name=scope][value='commercial:activate']")
        await Promise.all([page.waitForNavigation(), page.click("button[value=allow]")])
        return page.locator("h1").innerText()
      }),
    (browser) => Effect.promise(() => browser.close())
  )

/** The link `service login` prints on stderr, once it has. No time limit: a busy machine is slow, not wrong. */
export const loginLink = (stderr: () => string) =>
  Effect.promise(async () => {
    for (;;) {
      const found = /open (http\S+)/.exec(stderr())?.[1]
      if (found !== undefined) return found
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })
