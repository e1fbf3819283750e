// Issue 32 rows 1 and 5 on two API nodes over one PostgreSQL (real processes, `npm start`'s program; skipped without
// DATABASE_URL). Both nodes hold credentials for 300 s, so only a notification can end a cached one:
//
// - an admin's all-scope faceless key, used on the second node, stops there at once when the owner removes the admin
//   on the first (before: it kept reading, writing and spending on every node);
// - twelve parallel wrong sign-ins at one account, six to each node, are each counted before any password is checked:
//   four are checked and fail, eight wait (before: all twelve were checked and the count ended at 1);
// - row 14: both nodes' LISTEN connections are ended while the database refuses new connections; each says degraded
//   on /ready, then reconnects by itself once connections are allowed, and a revocation on one node reaches the
//   other's cache again (before: a dead LISTEN was never reopened and nothing said so).
//
// Every wait is on a line a process prints or on a polled condition; the timeouts are hang guards only.
import { describe, expect, it } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import { Email, freeFailures, People } from "@service/identity/People"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import pg from "pg"
import { adminUrl, DEMO_KEY, freshDatabase, hangGuard, startServer } from "./support/Processes.js"

const PASSWORD = "correct horse battery staple"
const ADMIN = "admin@scale-out.example"
const GUESSED = "guessed@scale-out.example"

interface Answer {
  readonly status: number
  readonly text: string
  readonly cookie: string
}

const call = (port: number, method: string, path: string, headers: Readonly<Record<string, string>>, body?: unknown) =>
  Effect.promise(async (): Promise<Answer> => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, text: await response.text(), cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "" }
  })

const pause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

describe.skipIf(adminUrl === "")("access on two nodes over one PostgreSQL (real processes)", () => {
  it.live("a removed admin's faceless key stops on the other node at once; parallel guesses over both nodes are each counted first; both nodes reconnect a dead LISTEN", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env, services } = yield* freshDatabase({ SERVICE_CREDENTIAL_CACHE_SECONDS: "300", SERVICE_PASSWORD_SCRYPT_LOG_N: "14" })
      // The second node after the first, so it finds the demo workspace the first bootstrapped.
      const node1 = yield* startServer("access-1", env)
      const node2 = yield* startServer("access-2", env)
      const { adminId } = yield* Effect.gen(function*() {
        const accounts = yield* Accounts.Accounts
        const people = yield* People
        const demo = Option.getOrThrow(yield* accounts.findWorkspaceBySlug(WorkspaceSlug.make("demo")))
        const admin = yield* people.create({ email: Schema.decodeSync(Email)(ADMIN), name: "Scale Admin", password: Redacted.make(PASSWORD) })
        yield* accounts.addMember({ workspaceId: demo.id, personId: admin.person.id, role: "admin" })
        const guessed = yield* people.create({ email: Schema.decodeSync(Email)(GUESSED), name: "Guessed Member", password: Redacted.make(PASSWORD) })
        yield* accounts.addMember({ workspaceId: demo.id, personId: guessed.person.id, role: "member" })
        return { adminId: admin.person.id }
      }).pipe(Effect.provide(services), Effect.orDie)

      // Row 1: the admin's faceless key, made on node 1, held by node 2.
      const signedIn = yield* call(node1.port, "POST", "/sign-in", {}, { email: ADMIN, password: PASSWORD })
      expect(signedIn.status, signedIn.text).toBe(200)
      const csrf = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ csrf_token: Schema.String })))(signedIn.text).csrf_token
      const scopes = ["market_data:read", "commercial:read", "commercial:activate", "crm:write", "access:write"]
      const made = yield* call(node1.port, "POST", "/api/v1/workspaces/demo/keys", { cookie: signedIn.cookie, "x-csrf-token": csrf }, { name: "robot", scopes, faceless: true })
      expect(made.status, made.text).toBe(200)
      const key = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ id: Schema.String, secret: Schema.String })))(made.text)
      const contacts = (port: number) => call(port, "GET", "/api/v1/workspaces/demo/crm/contacts", { "x-api-key": key.secret })
      expect((yield* contacts(node2.port)).status).toBe(200)
      expect((yield* contacts(node2.port)).status).toBe(200)

      const removed = yield* call(node1.port, "DELETE", `/api/v1/workspaces/demo/members/${adminId}`, { "x-api-key": DEMO_KEY })
      expect(removed.status, removed.text).toBe(200)
      expect(removed.text).toContain(key.id)
      // Held for 300 s on node 2: only the revocation's notification ends it.
      while ((yield* contacts(node2.port)).status !== 401) yield* pause
      const write = yield* call(node2.port, "POST", "/api/v1/workspaces/demo/crm/contacts", { "x-api-key": key.secret }, { name: "After Hours" })
      expect(write.status).toBe(401)

      // Row 5: twelve parallel wrong guesses at one account, six to each node.
      const guesses = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => call(i % 2 === 0 ? node1.port : node2.port, "POST", "/sign-in", {}, { email: GUESSED, password: `wrong guess ${i}` }),
        { concurrency: "unbounded" }
      )
      const statuses = guesses.map((answer) => answer.status).sort()
      expect(statuses).toEqual([...Array<number>(freeFailures - 1).fill(401), ...Array<number>(12 - freeFailures + 1).fill(429)])
      const right = yield* call(node2.port, "POST", "/sign-in", {}, { email: GUESSED, password: PASSWORD })
      expect(right.status).toBe(429)

      // Row 14: both LISTEN connections end while no new connection is allowed.
      const database = new URL(env["DATABASE_URL"] ?? "").pathname.slice(1)
      const admin = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: adminUrl })
          await client.connect()
          return client
        }),
        (client) => Effect.promise(() => client.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`).then(() => client.end()))
      )
      const degraded = (port: number) =>
        Effect.map(call(port, "GET", "/ready", {}), (answer) => Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ degraded: Schema.Array(Schema.String) })))(answer.text).degraded.includes("notifications"))
      expect(yield* degraded(node1.port)).toBe(false)
      yield* Effect.promise(() => admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`))
      const ended = yield* Effect.promise(() =>
        admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE '% listen'", [database])
      )
      // The two nodes' and this test's own (its services on the same database).
      expect(ended.rowCount).toBe(3)
      for (const node of [node1, node2]) while (!(yield* degraded(node.port))) yield* pause
      yield* Effect.promise(() => admin.query(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`))
      for (const node of [node1, node2]) while (yield* degraded(node.port)) yield* pause
      // Listening again: a key cached on node 2 and revoked on node 1 is refused on node 2.
      const fresh = yield* call(node1.port, "POST", "/api/v1/workspaces/demo/keys", { "x-api-key": DEMO_KEY }, { name: "after reconnecting", scopes: ["market_data:read"] })
      expect(fresh.status, fresh.text).toBe(200)
      const again = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ id: Schema.String, secret: Schema.String })))(fresh.text)
      const usage = () => call(node2.port, "GET", "/api/v1/workspaces/demo/account/usage", { "x-api-key": again.secret })
      expect((yield* usage()).status).toBe(200)
      expect((yield* usage()).status).toBe(200)
      expect((yield* call(node1.port, "DELETE", `/api/v1/workspaces/demo/keys/${again.id}`, { "x-api-key": DEMO_KEY })).status).toBe(200)
      while ((yield* usage()).status !== 401) yield* pause
    })), hangGuard)
})
