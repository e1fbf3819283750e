/**
 * The credential cache through the real server (decision 0079), held for 300 s here so that only a notification or
 * the server's own signal can end an entry: a key used once is not looked up again; a revocation through the API,
 * a sign-out and a member's removal are seen by the very next request on both databases; a revocation committed by
 * another connection reaches the server through the credential tables' triggers; a session is never served past
 * its expiry.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CredentialCache from "@service/core/CredentialCache"
import { WorkspaceSlug } from "@service/core/Ids"
import { Email, People } from "@service/identity/People"
import { Notifications } from "@service/storage/Notifications"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { type Answer, rest, Running, serverOn } from "./support/Rest.js"

const PASSWORD = "correct horse battery staple"
const people = {
  ana: { email: "ana@cache.example", name: "Ana Owner", role: "owner" },
  beto: { email: "beto@cache.example", name: "Beto Member", role: "member" },
  carla: { email: "carla@cache.example", name: "Carla Member", role: "member" },
  dani: { email: "dani@cache.example", name: "Dani Admin", role: "admin" }
} as const

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const directory = yield* People
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    for (const person of Object.values(people)) {
      const made = yield* directory.create({ email: Schema.decodeSync(Email)(person.email), name: person.name, password: Redacted.make(PASSWORD) })
      yield* accounts.addMember({ workspaceId: acme.id, personId: made.person.id, role: person.role })
    }
  }).pipe(Effect.orDie)
)

const held = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["SERVICE_CREDENTIAL_CACHE_SECONDS", "300"]])).pipe(ConfigProvider.orElse(() => ConfigProvider.fromEnv()))
)

const json = { "content-type": "application/json" }
const api = (path: string) => `/api/v1/workspaces/acme${path}`
const Session = Schema.parseJson(Schema.Struct({ person: Schema.Struct({ id: Schema.String }), csrf_token: Schema.String }))
const CreatedKey = Schema.parseJson(Schema.Struct({ id: Schema.String, secret: Schema.String }))
const expect = (answer: Answer, status: number) => assert.strictEqual(answer.status, status, answer.text.slice(0, 600))

interface Browser {
  readonly cookie: string
  readonly csrf: string
  readonly personId: string
}
const signIn = (port: number, email: string) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "POST", "/sign-in", json, JSON.stringify({ email, password: PASSWORD }))
    expect(answer, 200)
    const session = Schema.decodeUnknownSync(Session)(answer.text)
    return { cookie: String(answer.headers["set-cookie"] ?? "").split(";")[0] ?? "", csrf: session.csrf_token, personId: session.person.id } satisfies Browser
  })
const asBrowser = (browser: Browser, unsafe = true) => ({ ...json, cookie: browser.cookie, ...(unsafe ? { "x-csrf-token": browser.csrf } : {}) })
const createKey = (port: number, browser: Browser, name: string, faceless = false) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "POST", api("/keys"), asBrowser(browser), JSON.stringify({ name, scopes: ["market_data:read"], faceless }))
    expect(answer, 200)
    return Schema.decodeUnknownSync(CreatedKey)(answer.text)
  })
const usage = (port: number, headers: Readonly<Record<string, string>>) => rest(port, "GET", api("/account/usage"), headers)

// Real time between polls: the notification travels over a socket.
const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

// A write no trigger reports: what the cache cannot know of, to show that a held credential is not looked up.
const unreported = (sql: SqlClient.SqlClient, table: string, change: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    yield* sql`ALTER TABLE ${sql(table)} DISABLE TRIGGER USER`
    yield* Effect.orDie(change)
    yield* sql`ALTER TABLE ${sql(table)} ENABLE TRIGGER USER`
  }).pipe(Effect.orDie)

for (const target of TestDatabase.targets()) {
  layer(serverOn(target, prepared).pipe(Layer.provide(held)), { timeout: "300 seconds" })(`the credential cache on ${target.name}`, (it) => {
    it.effect("a key used once is not looked up again; a revocation by another connection arrives through NOTIFY", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const ana = yield* signIn(port, people.ana.email)
        const key = yield* createKey(port, ana, "held")
        const withKey = { "x-api-key": key.secret }
        expect(yield* usage(port, withKey), 200)
        // Revoked behind the cache's back: still answered, so the key was not read again.
        yield* unreported(sql, "core.credentials", sql`UPDATE core.credentials SET revoked_at = now() WHERE id = ${key.id}`)
        expect(yield* usage(port, withKey), 200)
        // A change the trigger reports. PGlite: one connection, whose listeners run before the write returns.
        // PostgreSQL: a second pool, as another node would; its notification arrives moments later.
        if (target.name === "pglite") {
          yield* sql`UPDATE core.credentials SET scopes = ARRAY['market_data:read'], revoked_at = now() WHERE id = ${key.id}`
          expect(yield* usage(port, withKey), 401)
        } else {
          const other = yield* PgClient.make({ url: (yield* PgClient.PgClient).config.url, maxConnections: 1 }).pipe(
            Effect.provide(Reactivity.layer)
          )
          yield* other`UPDATE core.credentials SET revoked_at = now() WHERE id = ${key.id}`
          while ((yield* usage(port, withKey)).status !== 401) yield* pause
        }
      }).pipe(Effect.scoped))

    it.effect("a key revoked through the API, a session signed out, a removed member and a removed admin's faceless key are refused by the next request", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const beto = yield* signIn(port, people.beto.email)
        const carla = yield* signIn(port, people.carla.email)
        const key = yield* createKey(port, ana, "revoked")
        const betoKey = yield* createKey(port, beto, "beto's")
        const dani = yield* signIn(port, people.dani.email)
        const robot = yield* createKey(port, dani, "dani's robot", true)
        for (const headers of [{ "x-api-key": key.secret }, { "x-api-key": betoKey.secret }, { "x-api-key": robot.secret }, asBrowser(beto, false), asBrowser(carla, false)]) {
          expect(yield* usage(port, headers), 200)
          expect(yield* usage(port, headers), 200)
        }
        expect(yield* rest(port, "DELETE", api(`/keys/${key.id}`), asBrowser(ana)), 200)
        expect(yield* usage(port, { "x-api-key": key.secret }), 401)
        expect(yield* rest(port, "POST", "/sign-out", asBrowser(carla), "{}"), 303)
        expect(yield* usage(port, asBrowser(carla, false)), 401)
        expect(yield* rest(port, "DELETE", api(`/members/${beto.personId}`), asBrowser(ana)), 200)
        expect(yield* usage(port, { "x-api-key": betoKey.secret }), 401)
        expect(yield* usage(port, asBrowser(beto, false)), 401)
        expect(yield* rest(port, "DELETE", api(`/members/${dani.personId}`), asBrowser(ana)), 200)
        expect(yield* usage(port, { "x-api-key": robot.secret }), 401)
      }))

    // Issue 32 row 14. New connections to the test database are refused while the LISTEN connection is ended, so the
    // node stays without it long enough to be seen: /ready says degraded and the cache holds nothing; once
    // connections are allowed again it listens again by itself, says so, and hears another connection's revocation.
    it.effect.skipIf(target.name !== "postgres")("a node whose LISTEN connection dies says degraded, holds nothing, reconnects and hears again", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const Ready = Schema.parseJson(Schema.Struct({ ready: Schema.Boolean, degraded: Schema.Array(Schema.String) }))
        const degraded = rest(port, "GET", "/ready").pipe(Effect.map((answer) => Schema.decodeUnknownSync(Ready)(answer.text).degraded.includes("notifications")))
        assert.isFalse(yield* degraded)
        const ana = yield* signIn(port, people.ana.email)
        const held = yield* createKey(port, ana, "held while listening")
        expect(yield* usage(port, { "x-api-key": held.secret }), 200)

        const Database = Schema.Array(Schema.Struct({ name: Schema.String }))
        const [database] = yield* sql`SELECT current_database() AS name`.pipe(Effect.flatMap(Schema.decodeUnknown(Database)))
        const name = database?.name ?? ""
        // Another database's connection alters this one (a database cannot refuse connections to itself).
        const admin = yield* PgClient.make({ url: yield* Config.redacted("DATABASE_URL"), maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))
        yield* admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS false`
        yield* Effect.addFinalizer(() => Effect.orDie(admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS true`))
        const ended = yield* sql`SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE datname = current_database() AND application_name LIKE '% listen'`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ ended: Schema.Boolean }))))
        )
        assert.deepStrictEqual(ended, [{ ended: true }], "one LISTEN connection, ended")
        while (!(yield* degraded)) yield* pause
        // Not listening: a revocation no notification reports is refused by the very next request all the same.
        yield* unreported(sql, "core.credentials", sql`UPDATE core.credentials SET revoked_at = now() WHERE id = ${held.id}`)
        expect(yield* usage(port, { "x-api-key": held.secret }), 401)

        yield* admin`ALTER DATABASE ${admin(name)} ALLOW_CONNECTIONS true`
        while (yield* degraded) yield* pause
        const again = yield* createKey(port, ana, "held after reconnecting")
        expect(yield* usage(port, { "x-api-key": again.secret }), 200)
        const other = yield* PgClient.make({ url: (yield* PgClient.PgClient).config.url, maxConnections: 1 }).pipe(Effect.provide(Reactivity.layer))
        yield* other`UPDATE core.credentials SET revoked_at = now() WHERE id = ${again.id}`
        while ((yield* usage(port, { "x-api-key": again.secret })).status !== 401) yield* pause
      }).pipe(Effect.scoped))

    // The server runs on the test clock, as Sessions judges expiry by it: the session ends 1.5 s from the clock's
    // now, and the clock is moved past it.
    it.effect("a session is not served from the cache past its expiry", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const notifications = yield* Notifications
        const ana = yield* signIn(port, people.ana.email)
        const soon = new Date((yield* Clock.currentTimeMillis) + 1_500)
        yield* unreported(sql, "identity.sessions", sql`UPDATE identity.sessions SET expires_at = ${soon} WHERE person_id = ${ana.personId}`)
        // Forget what came before, so the next lookup reads the new expiry and holds the session until then.
        yield* notifications.signal(CredentialCache.channel, "test")
        expect(yield* usage(port, asBrowser(ana, false)), 200)
        expect(yield* usage(port, asBrowser(ana, false)), 200)
        yield* TestClock.adjust("2 seconds")
        expect(yield* usage(port, asBrowser(ana, false)), 401)
      }))
  })
}
