/**
 * `service workspaces create`, `service people create` and `service workspaces add-member` as an operator runs them:
 * the binary in its own process on an embedded database in a temporary SERVICE_DATA_DIR, the password piped on
 * standard input or generated and printed once. Then the person signs in with it (the same services the sign-in
 * page uses, over that database once the commands are done).
 */
import { assert, describe, it } from "@effect/vitest"
import * as App from "@service/app/App"
import { People } from "@service/identity/People"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { service } from "./support/Service.js"

const PASSWORD = "a long enough password"

describe("service workspaces / people", () => {
  it.live("an operator makes a workspace and its owner, who then signs in with the piped or the printed password", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "identity-cli-"))
      const workspace = yield* service(["workspaces", "create", "acme", "--name", "Acme"], dir)
      assert.strictEqual(workspace.code, 0, workspace.stderr)
      assert.match(workspace.stdout, /^created workspace acme \(ws_[0-9a-f]+\)\nnext: service workspaces add-member acme <email> --role owner/)
      const again = yield* service(["workspaces", "create", "acme"], dir)
      assert.strictEqual(again.code, 2, again.stderr)
      assert.include(again.stderr, `A workspace with slug "acme" already exists.`)

      const ana = yield* service(["people", "create", "--email", "ana@acme.example", "--name", "Ana", "--password-stdin", "--json"], dir, `${PASSWORD}\n`)
      assert.strictEqual(ana.code, 0, ana.stderr)
      const made: unknown = JSON.parse(ana.stdout)
      assert.deepInclude(made, { email: "ana@acme.example", name: "Ana", sign_in_url: "http://127.0.0.1:3000/sign-in" })
      assert.notProperty(made, "password", "a password given is never printed")

      const beto = yield* service(["people", "create", "--email", "beto@acme.example", "--name", "Beto"], dir)
      assert.strictEqual(beto.code, 0, beto.stderr)
      const printed = /password: (\S+)\s+\(shown once/.exec(beto.stdout)?.[1]
      assert.isDefined(printed, beto.stdout)

      const weak = yield* service(["people", "create", "--email", "eva@acme.example", "--name", "Eva", "--password-stdin"], dir, "short\n")
      assert.strictEqual(weak.code, 2)
      assert.include(weak.stderr, "at least 12 characters")
      const taken = yield* service(["people", "create", "--email", "ANA@acme.example", "--name", "Ana again"], dir)
      assert.strictEqual(taken.code, 2)
      assert.include(taken.stderr, "already exists")
      const badEmail = yield* service(["people", "create", "--email", "not-an-address", "--name", "X"], dir)
      assert.strictEqual(badEmail.code, 2)

      const owner = yield* service(["workspaces", "add-member", "acme", "ana@acme.example", "--role", "owner"], dir)
      assert.strictEqual(owner.code, 0, owner.stderr)
      assert.strictEqual(owner.stdout.trim(), "Ana <ana@acme.example> is owner of acme")
      const nobody = yield* service(["workspaces", "add-member", "acme", "nobody@acme.example", "--role", "member"], dir)
      assert.strictEqual(nobody.code, 2)
      assert.include(nobody.stderr, "service people create --email nobody@acme.example")
      const noWorkspace = yield* service(["workspaces", "add-member", "nowhere", "ana@acme.example", "--role", "member"], dir)
      assert.strictEqual(noWorkspace.code, 2)
      assert.include(noWorkspace.stderr, "No workspace with the slug nowhere")
      // Issue 32 row 9: the only owner is not demoted, as the API refuses it (last_owner).
      const demoted = yield* service(["workspaces", "add-member", "acme", "ana@acme.example", "--role", "member"], dir)
      assert.strictEqual(demoted.code, 2, demoted.stdout)
      assert.include(demoted.stderr, "ana@acme.example is the only owner of acme")

      // The commands are done (the embedded database is one process's): sign in over the same folder.
      const signedIn = yield* Effect.gen(function*() {
        const people = yield* People
        const asAna = yield* people.signIn("ana@acme.example", Redacted.make(PASSWORD))
        const asBeto = yield* people.signIn("beto@acme.example", Redacted.make(printed ?? ""))
        const memberships = yield* people.memberships(asAna.id)
        return { ana: asAna.name, beto: asBeto.name, workspaces: memberships.map((m) => `${m.workspace.slug}:${m.role}`) }
      }).pipe(
        Effect.provide(App.app.layerFromConfig({ createIfMissing: false }).pipe(Layer.orDie)),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["SERVICE_DATA_DIR", dir]]))),
        Effect.scoped
      )
      assert.deepStrictEqual(signedIn, { ana: "Ana", beto: "Beto", workspaces: ["acme:owner"] })
      // Eleven processes, each opening the embedded database: slow on a busy machine, not wrong.
    }), { timeout: 0 })
})
