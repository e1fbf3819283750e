import * as SqlClient from "@effect/sql/SqlClient"
import * as CoreNotifications from "@service/core/Notifications"
import * as StorageNotifications from "@service/storage/Notifications"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as AddressGuard from "@service/core/AddressGuard"
import { Authenticator, type PresentedCredential } from "@service/core/Authenticator"
import * as CoreBundle from "@service/core/CoreBundle"
import * as CredentialCache from "@service/core/CredentialCache"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as IdentityBundle from "../src/IdentityBundle.js"
import * as IdentityMigrations from "../src/IdentityMigrations.js"
import { tokenHash } from "../src/internal/oauthStore.js"
import { OAuthServer } from "../src/OAuthServer.js"
import { Sessions } from "../src/Sessions.js"

// The identity Authenticator over its own tables, on the test clock (which stands still, so a held credential can
// only be dropped by a change, never by its time bound running out).
for (const target of TestDatabase.targets()) {
  const Env = IdentityBundle.layer.pipe(
    Layer.provideMerge(CoreBundle.bundle.layer),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(AddressGuard.layer),
    // The database's notifications under core's port, as App.layer connects them.
    Layer.provideMerge(Layer.effect(CoreNotifications.Notifications, StorageNotifications.Notifications)),
    Layer.provideMerge(TestDatabase.withMigrations(target, [...CoreBundle.bundle.migrations, IdentityMigrations.migrations]))
  )

  // A change no trigger reports: what the cache cannot know of, to show that a held credential is not looked up.
  const unreported = (table: string, change: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE ${sql(table)} DISABLE TRIGGER USER`
      yield* Effect.orDie(change(sql))
      yield* sql`ALTER TABLE ${sql(table)} ENABLE TRIGGER USER`
    }).pipe(Effect.orDie)

  // On PostgreSQL the notifications of the setup's writes arrive moments after the writes return, and one that lands
  // after a lookup was held clears the cache. A marker sent now is heard after them (one listening connection, in
  // commit order), so once it is heard nothing earlier can clear what is held next.
  const earlierChangesHeard = Effect.gen(function*() {
    const notifications = yield* CoreNotifications.Notifications
    const sql = yield* SqlClient.SqlClient
    const marker = `heard-${Math.random().toString(36).slice(2)}`
    const heard = yield* Deferred.make<void>()
    yield* notifications.subscribe(CredentialCache.channel, (payload) => {
      if (payload === marker) Deferred.unsafeDone(heard, Exit.void)
    })
    yield* sql`SELECT pg_notify(${CredentialCache.channel}, ${marker})`
    yield* Deferred.await(heard)
  }).pipe(Effect.scoped, Effect.orDie)

  const seeded = Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const slug = WorkspaceSlug.make(`w${Math.random().toString(36).slice(2, 10)}`)
    const workspace = yield* accounts.createWorkspace({ slug, name: "Acme" })
    const person = yield* accounts.createPerson({ displayName: "Ana" })
    yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "owner" })
    return { workspace, person }
  })

  const succeeds = (credential: PresentedCredential) =>
    Effect.map(Effect.exit(Effect.flatMap(Authenticator, (a) => a.authenticate(credential))), Exit.isSuccess)

  layer(Env, { timeout: "120 seconds" })(`the identity Authenticator's cache on ${target.name}`, (it) => {
    it.effect("an OAuth access token is held once looked up; revoking its grant is seen by the next request", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const oauth = yield* OAuthServer
        const { person, workspace } = yield* seeded
        const grantId = `grant_${workspace.id}`
        const token = `svc_at_${workspace.id}_0123456789`
        const audience = (yield* oauth.resourceMetadata("api")).resource
        yield* sql`INSERT INTO identity.oauth_grants (grant_id, person_id, workspace_id, client_id, scopes)
          VALUES (${grantId}, ${person.id}, ${workspace.id}, 'client', ARRAY['market_data:read'])`
        yield* sql`INSERT INTO identity.oauth_models (model, id, payload, grant_id, expires_at)
          VALUES ('AccessToken', ${tokenHash(token)}, ${JSON.stringify({ aud: audience, scope: "market_data:read", clientId: "client", grantId })}::jsonb,
                  ${grantId}, now() + interval '1 hour')`
        const bearer = { kind: "bearer", secret: Redacted.make(token), resource: "api" } as const
        yield* earlierChangesHeard
        const principal = yield* Effect.flatMap(Authenticator, (a) => a.authenticate(bearer))
        assert.deepStrictEqual([principal.credential.kind, Option.map(principal.person, (p) => p.id)], ["bearer", Option.some(person.id)])
        // The token bound to the REST API opens nothing on /mcp: the resource is part of what is held.
        assert.isFalse(yield* succeeds({ ...bearer, resource: "mcp" }))
        // Gone behind the cache's back: still answered, so it was not looked up again.
        yield* unreported("identity.oauth_models", (sql) => sql`DELETE FROM identity.oauth_models WHERE grant_id = ${grantId}`)
        assert.isTrue(yield* succeeds(bearer))
        // Revoked as removing the member does it: refused at once.
        assert.strictEqual(yield* oauth.revokeGrantsOf(person.id, workspace.id), 1)
        assert.isFalse(yield* succeeds(bearer))
      }))

    it.effect("a session is held; its CSRF token is still checked on every request; signing out is seen at once", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { person, workspace } = yield* seeded
        const started = yield* sessions.start(person.id)
        const session = { kind: "session", secret: started.secret, workspace: workspace.slug } as const
        yield* earlierChangesHeard
        assert.isTrue(yield* succeeds(session))
        yield* unreported("identity.sessions", (sql) => sql`UPDATE identity.sessions SET revoked_at = now() WHERE id = ${started.id}`)
        assert.isTrue(yield* succeeds(session), "held")
        assert.isTrue(yield* succeeds({ ...session, csrf: Redacted.make(started.csrf) }))
        assert.isFalse(yield* succeeds({ ...session, csrf: Redacted.make("not the token") }), "a wrong CSRF token, even when held")
        const again = yield* sessions.start(person.id)
        const other = { kind: "session", secret: again.secret, workspace: workspace.slug } as const
        assert.isTrue(yield* succeeds(other))
        yield* sessions.end(again.secret)
        assert.isFalse(yield* succeeds(other))
      }))

    it.effect("an API key is held; revoking it, or removing its person, is seen by the next request", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        const sessions = yield* Sessions
        const { person, workspace } = yield* seeded
        const issued = yield* accounts.issueCredential({ workspaceId: workspace.id, kind: "api_key", label: "k", scopes: ["market_data:read"], personId: person.id })
        const key = { kind: "api_key", secret: issued.secret } as const
        assert.isTrue(yield* succeeds(key))
        yield* accounts.revokeCredential(issued.id)
        // Revoked outside an operation: the trigger's notification is what tells the cache. PGlite hears it before
        // the write returns; on PostgreSQL it arrives moments later.
        while (yield* succeeds(key)) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        const second = yield* accounts.issueCredential({ workspaceId: workspace.id, kind: "api_key", label: "k2", scopes: ["market_data:read"], personId: person.id })
        const started = yield* sessions.start(person.id)
        assert.isTrue(yield* succeeds({ kind: "api_key", secret: second.secret }))
        assert.isTrue(yield* succeeds({ kind: "session", secret: started.secret, workspace: workspace.slug }))
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM core.members WHERE workspace_id = ${workspace.id} AND person_id = ${person.id}`
        if (target.name === "pglite") {
          assert.isFalse(yield* succeeds({ kind: "api_key", secret: second.secret }))
        } else {
          while (yield* succeeds({ kind: "api_key", secret: second.secret })) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          }
        }
      }))
  })
}
