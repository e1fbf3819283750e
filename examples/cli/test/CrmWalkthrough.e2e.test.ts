/**
 * The CRM walkthrough of `docs/crm.md` as a new user runs it, with the server and the CLI binary only: a door
 * Source made with the CLI receives two signed notices (what a form tool sends), the contacts the door created are
 * listed, a collection of the two is made, quoted, and unlocked. Unlocking spends credits, so it needs
 * `commercial:activate`, which no key holds unless a person names it: the person signs the CLI in (`service
 * login`, the device grant, in a real headless Chromium), ticks it on the consent page, and the unlock runs with
 * that token. The key the walkthrough started with is refused the unlock (`missing_scope`), and the same unlock
 * again answers the first result without spending twice.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
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
import { spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { approveInBrowser, hasChromium, loginLink } from "./support/DeviceGrant.js"
import { Target, target } from "./support/Target.js"

const EMAIL = "owner@walkthrough.example"
const PASSWORD = "correct horse battery staple"
const KEY = "svc_key_crm_walkthrough_0123456789abcdefghijklmnopq"
const binPath = fileURLToPath(new URL("../bin/service.js", import.meta.url))

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const demo = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("walk"), name: "Walkthrough" })
    const owner = yield* (yield* People).create({ email: Schema.decodeSync(Email)(EMAIL), name: "Owner", password: Redacted.make(PASSWORD) })
    yield* accounts.addMember({ workspaceId: demo.id, personId: owner.person.id, role: "owner" })
    // What `npm start` prints: the owner's key, without commercial:activate.
    yield* accounts.issueCredential({
      workspaceId: demo.id,
      kind: "api_key",
      label: "demo",
      scopes: ["market_data:read", "commercial:read", "crm:write", "door:admin", "events:write", "access:write"],
      personId: owner.person.id,
      secret: Redacted.make(KEY)
    })
  }).pipe(Effect.orDie)
)

/** The binary with only PATH and `env`; its output read as it comes. No time limit: a busy machine is slow, not wrong. */
const start = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) => {
  const child = spawn(process.execPath, [binPath, ...args], { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  return {
    stderr: () => err,
    stdout: () => out,
    exited: new Promise<number>((resolve) => child.on("close", (code) => resolve(code ?? -1)))
  }
}

const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.promise(async () => {
    const running = start(args, env)
    const code = await running.exited
    return { code, stdout: running.stdout(), stderr: running.stderr() }
  })

const CreatedSource = Schema.parseJson(Schema.Struct({ source: Schema.Struct({ id: Schema.String }), secret: Schema.String }))
const ContactPage = Schema.parseJson(Schema.Struct({
  contacts: Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.NullOr(Schema.String), source_id: Schema.NullOr(Schema.String) }))
}))
const CollectionMade = Schema.parseJson(Schema.Struct({ id: Schema.String, size: Schema.Number }))
const Quote = Schema.parseJson(Schema.Struct({
  total_credits: Schema.Number,
  quote_token: Schema.String,
  idempotency_key: Schema.String,
  accounts: Schema.Array(Schema.Struct({ record_id: Schema.String }))
}))
const Unlocked = Schema.parseJson(Schema.Struct({
  replayed: Schema.Boolean,
  charged_credits: Schema.Number,
  accounts: Schema.Array(Schema.Struct({ record_id: Schema.String, outcome: Schema.String }))
}))

/** A CloudEvent signed per Standard Webhooks, as a form tool sends it to the door. */
const send = (baseUrl: string, source: string, secret: string, id: string, data: Readonly<Record<string, string>>) =>
  Effect.promise(async () => {
    const body = JSON.stringify({ specversion: "1.0", id, source: "https://forms.example.com/contact", type: "contact.created", data })
    const timestamp = Math.floor(Date.now() / 1000)
    const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
    const signature = createHmac("sha256", key).update(`msg_${id}.${timestamp}.${body}`).digest("base64")
    const response = await fetch(`${baseUrl}/api/v1/door/${source}`, {
      method: "POST",
      headers: {
        "content-type": "application/cloudevents+json",
        "webhook-id": `msg_${id}`,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": `v1,${signature}`
      },
      body
    })
    return response.status
  })

const [first] = TestDatabase.targets()

if (first !== undefined) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(first.layer, Crypto.layerTest)),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`the CRM walkthrough on ${first.name}`, (it) => {
    it.effect.skipIf(!hasChromium)(
      "door notices in, contacts listed, a collection of two made, quoted and unlocked with a person's consent",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const env = { SERVICE_CONFIG_DIR: mkdtempSync(join(tmpdir(), "service-crm-")) }
          const cli = (...args: ReadonlyArray<string>) => run(["--base-url", baseUrl, "--workspace", "walk", ...args], env)
          const withKey = (...args: ReadonlyArray<string>) => cli("--api-key", KEY, ...args)
          const ok = (result: { code: number; stdout: string; stderr: string }) => {
            assert.strictEqual(result.code, 0, result.stderr)
            return result.stdout
          }

          // 1. A door Source, and two people sent to it.
          const made = Schema.decodeUnknownSync(CreatedSource)(ok(yield* withKey("door", "sources", "create", "--name", "Web form", "--json")))
          assert.strictEqual(yield* send(baseUrl, made.source.id, made.secret, "lead-1", { name: "Ana Ruiz", email: "ana@acme.mx", company: "Acme" }), 202)
          assert.strictEqual(yield* send(baseUrl, made.source.id, made.secret, "lead-2", { name: "Luis Ortega", email: "luis@acme.mx" }), 202)

          // 2. The contacts the door created, listed by their Source (the embedded worker applies them).
          const listed = yield* Effect.gen(function*() {
            for (;;) {
              const page = Schema.decodeUnknownSync(ContactPage)(ok(yield* withKey("crm", "contacts", "list", "--source-id", made.source.id, "--json")))
              if (page.contacts.length === 2) return page.contacts
              yield* Effect.sleep("200 millis")
            }
          })
          assert.deepStrictEqual(listed.map((c) => c.name).sort(), ["Ana Ruiz", "Luis Ortega"])
          assert.isTrue(listed.every((c) => c.source_id === made.source.id))
          const ids = listed.map((c) => c.id)
          const text = ok(yield* withKey("crm", "contacts", "list"))
          assert.include(text, "Ana Ruiz")

          // 3. A collection of the two.
          const collection = Schema.decodeUnknownSync(CollectionMade)(
            ok(yield* withKey("crm", "collections", "create", "--name", "Acme buyers", "--contact-ids", ids.join(","), "--json"))
          )
          assert.strictEqual(collection.size, 2)

          // 4. The quote (free, with the key).
          const quote = Schema.decodeUnknownSync(Quote)(ok(yield* withKey("contacts", "quote", collection.id, "--record-ids", ids.join(","), "--json")))
          assert.deepStrictEqual(quote.accounts.map((a) => a.record_id).sort(), [...ids].sort())
          const unlockArgs = [
            "contacts",
            "unlock",
            collection.id,
            "--record-ids",
            ids.join(","),
            "--confirm",
            "--max-credits",
            String(quote.total_credits),
            "--quote-token",
            quote.quote_token,
            "--idempotency-key",
            quote.idempotency_key,
            "--json"
          ]

          // 5. The key cannot spend: commercial:activate is never implicit.
          const refused = yield* withKey(...unlockArgs)
          assert.notStrictEqual(refused.code, 0)
          assert.include(refused.stderr, "missing_scope")

          // 6. The person signs the CLI in and ticks commercial:activate on the consent page.
          const login = start(["login", "--base-url", baseUrl], env)
          const link = yield* loginLink(login.stderr)
          yield* approveInBrowser(link, { email: EMAIL, password: PASSWORD }, { activate: true })
          assert.strictEqual(yield* Effect.promise(() => login.exited), 0, login.stderr())
          assert.include(login.stdout(), "commercial:activate")

          // 7. The unlock, with the signed-in CLI; again with the same key answers the first result.
          const unlocked = Schema.decodeUnknownSync(Unlocked)(ok(yield* cli(...unlockArgs)))
          assert.strictEqual(unlocked.replayed, false)
          assert.strictEqual(unlocked.charged_credits, quote.total_credits)
          // Researched, both paid: the sandbox provider finds some people and not others, deterministically.
          assert.deepStrictEqual(unlocked.accounts.map((a) => a.record_id).sort(), [...ids].sort())
          assert.isTrue(unlocked.accounts.every((a) => a.outcome === "found" || a.outcome === "not_found"), JSON.stringify(unlocked.accounts))
          const again = Schema.decodeUnknownSync(Unlocked)(ok(yield* cli(...unlockArgs)))
          assert.strictEqual(again.replayed, true)
          assert.strictEqual(again.charged_credits, quote.total_credits)
        }),
      // A dozen binaries and a browser: slow on a busy machine, not wrong.
      { timeout: 0 }
    )
  })
}
