/**
 * Debian's Chromium for the tests that drive pages as a person does (`.ci/run` installs the package; a test skips
 * without it), launched headless with the flags this machine's closed network needs.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"

export const CHROMIUM = "/usr/bin/chromium"

/** Whether the browser tests can run here. */
export const hasChromium = existsSync(CHROMIUM)

/** A headless browser, closed with the scope. */
export const launched: Effect.Effect<Browser, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() =>
    chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  ),
  (browser) => Effect.promise(() => browser.close())
)
