import { assert, layer } from "@effect/vitest"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import { Accounts, layerSql } from "../src/Accounts.js"
import { Authenticator } from "../src/Authenticator.js"
import { requireOwnerOrAdminPerson, requireScope } from "../src/Authorization.js"
import * as CoreMigrations from "../src/CoreMigrations.js"
import { WorkspaceSlug } from "../src/Ids.js"

const failsUnauthenticated = <A, R>(effect: Effect.Effect<A, { readonly _tag: string }, R>) =>
  Effect.map(Effect.either(effect), (result) => Either.isLeft(result) && result.left._tag === "Unauthenticated")

for (const target of TestDatabase.targets()) {
  const Env = layerSql.pipe(Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations])))

  layer(Env, { timeout: "120 seconds" })(`Accounts and Authenticator on ${target.name}`, (it) => {
    it.effect("issues an API key once, stores only its hash, and authenticates it into a principal", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const auth = yield* Authenticator
        const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
        const owner = yield* accounts.createPerson({ displayName: "Ana" })
        yield* accounts.addMember({ workspaceId: workspace.id, personId: owner.id, role: "owner" })
        const key = yield* accounts.issueCredential({
          workspaceId: workspace.id,
          kind: "api_key",
          label: "ci",
          scopes: ["market_data:read"],
          personId: owner.id
        })
        const secret = Redacted.value(key.secret)
        assert.isTrue(secret.startsWith("svc_key_"))
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ secret_sha256: string }>`SELECT secret_sha256 FROM core.credentials WHERE id = ${key.id}`
        assert.notInclude(JSON.stringify(stored), secret)
        assert.match(stored[0]?.secret_sha256 ?? "", /^[0-9a-f]{64}$/)

        const principal = yield* auth.authenticate({ kind: "api_key", secret: key.secret })
        assert.strictEqual(principal.workspace.slug, "acme")
        assert.strictEqual(principal.role, "owner")
        assert.isFalse(principal.faceless)
        yield* requireScope(principal, ["market_data:read", "context:read"])
        assert.isTrue(Either.isLeft(yield* Effect.either(requireScope(principal, ["topics:write"]))))
        assert.strictEqual((yield* requireOwnerOrAdminPerson(principal)).id, owner.id)

        // The same secret presented as a bearer token is not a bearer token.
        assert.isTrue(yield* failsUnauthenticated(auth.authenticate({ kind: "bearer", secret: key.secret })))
      }))

    it.effect("faceless keys have no person and cannot act as owner or admin", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const auth = yield* Authenticator
        const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("faceless"), name: "F" })
        const key = yield* accounts.issueCredential({
          workspaceId: workspace.id,
          kind: "api_key",
          label: "robot",
          scopes: ["context:read"],
          secret: Redacted.make("robot-key-0123456789")
        })
        const principal = yield* auth.authenticate({ kind: "api_key", secret: key.secret })
        assert.isTrue(principal.faceless)
        assert.isTrue(Option.isNone(principal.person))
        yield* requireScope(principal, ["market_data:read", "context:read"])
        const refused = yield* Effect.either(requireOwnerOrAdminPerson(principal))
        assert.isTrue(Either.isLeft(refused) && refused.left.reason === "person_required")
      }))

    it.effect("unknown, revoked and expired credentials all fail the same way", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const auth = yield* Authenticator
        const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("revoked"), name: "R" })
        const person = yield* accounts.createPerson({ displayName: "Bo" })
        yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "member" })
        assert.isTrue(yield* failsUnauthenticated(auth.authenticate({ kind: "api_key", secret: Redacted.make("nope-nope-nope-nope") })))

        const key = yield* accounts.issueCredential({ workspaceId: workspace.id, kind: "api_key", label: "k", scopes: ["market_data:read"] })
        yield* auth.authenticate({ kind: "api_key", secret: key.secret })
        yield* accounts.revokeCredential(key.id)
        assert.isTrue(yield* failsUnauthenticated(auth.authenticate({ kind: "api_key", secret: key.secret })))

        const token = yield* accounts.issueCredential({
          workspaceId: workspace.id,
          kind: "bearer",
          label: "oauth",
          scopes: ["market_data:read"],
          personId: person.id,
          expiresAt: new Date(60_000)
        })
        const principal = yield* auth.authenticate({ kind: "bearer", secret: token.secret })
        assert.strictEqual(principal.credential.kind, "bearer")
        assert.strictEqual(principal.role, "member")
        yield* TestClock.adjust("2 minutes")
        assert.isTrue(yield* failsUnauthenticated(auth.authenticate({ kind: "bearer", secret: token.secret })))
      }))

    it.effect("validates credential requests and workspace slugs", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("rules"), name: "Rules" })
        const taken = yield* Effect.either(accounts.createWorkspace({ slug: WorkspaceSlug.make("rules"), name: "Again" }))
        assert.isTrue(Either.isLeft(taken) && taken.left._tag === "WorkspaceSlugTaken")
        const bearerWithoutPerson = yield* Effect.either(
          accounts.issueCredential({ workspaceId: workspace.id, kind: "bearer", label: "t", scopes: ["market_data:read"] })
        )
        assert.isTrue(Either.isLeft(bearerWithoutPerson) && bearerWithoutPerson.left._tag === "InvalidCredentialRequest")
        const noScopes = yield* Effect.either(
          accounts.issueCredential({ workspaceId: workspace.id, kind: "api_key", label: "t", scopes: [] })
        )
        assert.isTrue(Either.isLeft(noScopes))
        assert.throws(() => WorkspaceSlug.make("Not A Slug"))
      }))
  })
}
