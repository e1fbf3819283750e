/**
 * `service login` as a person runs it: the binary in its own process asks the server for a device code and prints
 * where to enter it; the person opens the link in a real headless Chromium (Debian's), signs in and allows; the
 * command keeps the tokens (mode 0600, in SERVICE_CONFIG_DIR) and every later command sends them: `service whoami`
 * answers as the person, with a bearer token. An expired token is refreshed by the next command; `service logout`
 * revokes and forgets it, and the next command has no credential.
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
import { mkdtempSync } from "node:fs"
import * as NodeFs from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { approveInBrowser, hasChromium, loginLink } from "./support/DeviceGrant.js"
import { Target, target } from "./support/Target.js"

const EMAIL = "ana@acme.example"
const PASSWORD = "correct horse battery staple"
const binPath = fileURLToPath(new URL("../bin/service.js", import.meta.url))

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    const ana = yield* (yield* People).create({ email: Schema.decodeSync(Email)(EMAIL), name: "Ana", password: Redacted.make(PASSWORD) })
    yield* accounts.addMember({ workspaceId: acme.id, personId: ana.person.id, role: "owner" })
  }).pipe(Effect.orDie)
)

interface Running {
  readonly stderr: () => string
  readonly stdout: () => string
  readonly exited: Promise<number>
}

/** The binary with only PATH and `env`; its output read as it comes. No time limit: a busy machine is slow, not wrong. */
const start = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>): Running => {
  const child = spawn(process.execPath, [binPath, ...args], { env: { PATH: process.env["PATH"] ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  return {
    stderr: () => err,
    stdout: () => out,
    exited: new Promise((resolve) => child.on("close", (code) => resolve(code ?? -1)))
  }
}

const run = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>>) =>
  Effect.promise(async () => {
    const running = start(args, env)
    const code = await running.exited
    return { code, stdout: running.stdout(), stderr: running.stderr() }
  })

const Kept = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Struct({ access_token: Schema.String, refresh_token: Schema.String, expires_at: Schema.Number, scope: Schema.String }) }))
const Whoami = Schema.parseJson(Schema.Struct({ role: Schema.String, person: Schema.Struct({ name: Schema.String }), credential: Schema.Struct({ kind: Schema.String }) }))

const [first] = TestDatabase.targets()

if (first !== undefined) {
  const Env = target.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(first.layer, Crypto.layerTest)),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`service login on ${first.name}`, (it) => {
    it.effect.skipIf(!hasChromium)(
      "the device grant in the browser, the kept tokens sent as bearer, refreshed when expired, revoked by logout",
      () =>
        Effect.gen(function*() {
          const { baseUrl } = yield* Target
          const configDir = mkdtempSync(join(tmpdir(), "service-login-"))
          const env = { SERVICE_CONFIG_DIR: configDir }
          const storeFile = join(configDir, "credentials.json")

          const login = start(["login", "--base-url", baseUrl], env)
          const link = yield* loginLink(login.stderr)
          const shown = yield* approveInBrowser(link, { email: EMAIL, password: PASSWORD })
          assert.strictEqual(shown, "Signed in")
          const code = yield* Effect.promise(() => login.exited)
          assert.strictEqual(code, 0, login.stderr())
          assert.match(login.stdout(), /^Signed in to http:\/\/127\.0\.0\.1:\d+ \(scopes: market_data:read commercial:read topics:write saved_searches:write crm:write door:admin events:write access:write\)/)
          assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(storeFile))).mode & 0o777, 0o600)

          const whoami = (extra: Readonly<Record<string, string>> = {}) => run(["--base-url", baseUrl, "--workspace", "acme", "whoami", "--json"], { ...env, ...extra })
          const me = yield* whoami()
          assert.strictEqual(me.code, 0, me.stderr)
          const answered = Schema.decodeUnknownSync(Whoami)(me.stdout)
          assert.deepStrictEqual([answered.person.name, answered.role, answered.credential.kind], ["Ana", "owner", "bearer"])

          // An access token about to expire is refreshed by the next command, and the rotated tokens are kept.
          const before = Schema.decodeUnknownSync(Kept)(yield* Effect.promise(() => NodeFs.readFile(storeFile, "utf8")))[baseUrl]
          if (before === undefined) return assert.fail("no tokens kept for the server")
          yield* Effect.promise(() => NodeFs.writeFile(storeFile, JSON.stringify({ [baseUrl]: { ...before, expires_at: 0 } }), { mode: 0o600 }))
          const refreshedRun = yield* whoami()
          assert.strictEqual(refreshedRun.code, 0, refreshedRun.stderr)
          const after = Schema.decodeUnknownSync(Kept)(yield* Effect.promise(() => NodeFs.readFile(storeFile, "utf8")))[baseUrl]
          assert.notStrictEqual(after?.access_token, before.access_token)
          assert.notStrictEqual(after?.refresh_token, before.refresh_token)

          // Issue 32 row 18: the loopback names of one port are one server for the kept tokens.
          const byName = yield* run(["--base-url", baseUrl.replace("127.0.0.1", "localhost"), "--workspace", "acme", "whoami", "--json"], env)
          assert.strictEqual(byName.code, 0, byName.stderr)
          assert.strictEqual(Schema.decodeUnknownSync(Whoami)(byName.stdout).credential.kind, "bearer")
          // A refusal names the credential sent, and the kept login it did not use.
          const wrongKey = yield* run(["--base-url", baseUrl, "--workspace", "acme", "whoami"], { ...env, SERVICE_API_KEY: "svc_key_not_a_key_at_all_0123456789" })
          assert.strictEqual(wrongKey.code, 4, wrongKey.stderr)
          assert.include(wrongKey.stderr, "sent: the API key given (--api-key or SERVICE_API_KEY).")
          assert.include(wrongKey.stderr, "`service login` keeps a token for this server")

          const logout = yield* run(["logout", "--base-url", baseUrl], env)
          assert.strictEqual(logout.code, 0, logout.stderr)
          assert.include(logout.stdout, "Signed out of")
          const gone = yield* whoami()
          assert.strictEqual(gone.code, 4, gone.stderr)
          assert.include(gone.stderr, "service login")
        }),
      { timeout: 0 }
    )
  })
}
