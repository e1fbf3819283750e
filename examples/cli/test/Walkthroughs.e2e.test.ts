/**
 * The walkthroughs of `docs/crm.md`, `docs/door.md`, `docs/access.md` and `docs/events.md`, run exactly as printed: each block typed
 * into a shell in a folder laid out like the repository root, against `npm start`'s program, with a headless
 * Chromium doing the person's part (see support/Walkthrough.ts for what the test does in the reader's place). A
 * command the doc changes, a flag it forgets, an output that is no longer what it shows: the walkthrough fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { approveInBrowser, hasChromium } from "./support/DeviceGrant.js"
import { type Block, findInOrder, runWalkthrough, sectionBlocks } from "./support/Walkthrough.js"

const doc = (name: string) => readFileSync(fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url)), "utf8")

/** The demo owner consents in the browser, with the password `npm start` kept in `.data/demo-password`. */
const asDemoOwner = (options: { readonly activate?: boolean }) => (link: string, dataDir: string) =>
  Effect.runPromise(
    approveInBrowser(link, { email: "owner@demo.example", password: readFileSync(join(dataDir, "demo-password"), "utf8").trim() }, options).pipe(
      Effect.flatMap((heading) => heading.includes("Signed in") || heading.includes("signed in") ? Effect.void : Effect.dieMessage(`consent ended on "${heading}"`))
    )
  )

const walk = (blocks: ReadonlyArray<Block>, options: Parameters<typeof runWalkthrough>[1]) =>
  Effect.acquireRelease(Effect.promise(() => runWalkthrough(blocks, options)), (report) => Effect.promise(() => report.close()))

const timeout = Duration.toMillis(Duration.minutes(15))

describe.skipIf(!hasChromium)("walkthroughs as printed", () => {
  it.scoped("docs/crm.md: door notices in, contacts listed, a collection quoted, refused to the key, unlocked after sign-in, replayed", () =>
    Effect.gen(function*() {
      const blocks = sectionBlocks(doc("crm.md"), "Walkthrough")
      assert.isAtLeast(blocks.length, 10)
      const report = yield* walk(blocks, { approve: asDemoOwner({ activate: true }), settles: ["crm contacts list --source-id"] })
      const shell = report.terminals.get("terminal-1") ?? ""
      // The first unlock spent the quote's credits once; the second spent nothing more.
      const first = findInOrder(shell, ["charged_credits: 10", "replayed: false", "charged_credits: 10", "replayed: true"])
      assert.isTrue("end" in first, shell)
    }), timeout)

  it.scoped("docs/door.md: a Source made, a notice signed and sent with openssl and curl, its Arrival accepted, the contact read, a test workspace tried", () =>
    Effect.gen(function*() {
      const blocks = sectionBlocks(doc("door.md"), "Walkthrough")
      assert.isAtLeast(blocks.length, 6)
      const report = yield* walk(blocks, { approve: asDemoOwner({}), settles: ["door/arrivals?source_id"] })
      assert.include(report.terminals.get("terminal-1") ?? "", '"name":"Acme","domain":"acme.mx"')
    }), timeout)

  it.scoped("docs/access.md: signed in with curl, a key made and revoked, an invitation, members' spending, the CLI signed in and out", () =>
    Effect.gen(function*() {
      const blocks = sectionBlocks(doc("access.md"), "Walkthrough")
      assert.isAtLeast(blocks.length, 8)
      const report = yield* walk(blocks, { approve: asDemoOwner({}) })
      const shell = report.terminals.get("terminal-1") ?? ""
      // The revoked key is refused after it was accepted; the CLI's whoami used the person's token.
      assert.isTrue("end" in findInOrder(shell, ['"scopes":["market_data:read"]', '"code":"UNAUTHENTICATED"']), shell)
    }), timeout)

  it.scoped("docs/events.md: a server delivering to this machine, events listen in one terminal, door notices from another, a receiver of one's own", () =>
    Effect.gen(function*() {
      const blocks = sectionBlocks(doc("events.md"), "Receiving events on your machine")
      assert.isAtLeast(blocks.length, 12)
      assert.isAtLeast(new Set(blocks.map((block) => block.terminal)).size, 3)
      const report = yield* walk(blocks, { approve: asDemoOwner({}) })
      // Ctrl-C stopped the listener's Destination, and the receiver's delivery was delivered and then stopped.
      assert.include(report.terminals.get("terminal-2") ?? "", "Stopped Destination dst_")
      assert.isTrue("end" in findInOrder(report.terminals.get("terminal-3") ?? "", ["1 delivery:", "evt_7 contact.created delivered", "stopped: dst_…"]))
    }), timeout)
})
