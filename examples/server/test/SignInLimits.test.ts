/**
 * Issue 32 row 5 through the real server: every guess is limited. Each sign-in attempt is counted before its password
 * is checked, in one statement per account and per client address, so a burst of parallel guesses cannot all pass
 * the lockout (before: 12 parallel guesses were all checked and the count ended at 1); one client address guessing
 * many accounts waits too; the address is the one behind a trusted proxy (`SERVICE_TRUSTED_PROXIES`), as the door
 * reads it. A cheap scrypt cost here (N = 2^14): the limits are what is tested, not the hash. One server per database
 * target.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import { Email, freeAddressFailures, freeFailures, People } from "@service/identity/People"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { rest, Running, serverOn } from "./support/Rest.js"

const PASSWORD = "correct horse battery staple"
const people = ["ana@limits.example", "beto@limits.example", "carla@limits.example"] as const

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    for (const email of people) {
      const made = yield* (yield* People).create({ email: Schema.decodeSync(Email)(email), name: email, password: Redacted.make(PASSWORD) })
      yield* accounts.addMember({ workspaceId: acme.id, personId: made.person.id, role: "member" })
    }
  }).pipe(Effect.orDie)
)

const configured = Layer.setConfigProvider(
  ConfigProvider.fromMap(new Map([["SERVICE_TRUSTED_PROXIES", "127.0.0.1"], ["SERVICE_PASSWORD_SCRYPT_LOG_N", "14"]])).pipe(
    ConfigProvider.orElse(() => ConfigProvider.fromEnv())
  )
)

const signIn = (port: number, email: string, password: string, from: string) =>
  rest(port, "POST", "/sign-in", { "content-type": "application/json", "x-forwarded-for": from }, JSON.stringify({ email, password }))

for (const target of TestDatabase.targets()) {
  layer(serverOn(target, prepared).pipe(Layer.provide(configured)), { timeout: "300 seconds" })(`sign-in limits on ${target.name}`, (it) => {
    it.effect("parallel guesses at one account are counted before any is checked: only the free ones are checked", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const email = people[0]
        // Each from its own address, so only the account's count is at work.
        const answers = yield* Effect.forEach(
          Array.from({ length: 12 }, (_, i) => i),
          (i) => signIn(port, email, `wrong password ${i}`, `198.51.100.${i + 1}`),
          { concurrency: "unbounded" }
        )
        const statuses = answers.map((answer) => answer.status).sort()
        // Attempts 1 to 4 are checked and fail; the 5th is checked and locks; every later one waits unchecked.
        assert.deepStrictEqual(statuses, [...Array<number>(freeFailures - 1).fill(401), ...Array<number>(12 - freeFailures + 1).fill(429)])
        const counted = yield* sql`SELECT failures FROM identity.sign_in_failures WHERE email = ${email}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ failures: Schema.Number }))))
        )
        assert.deepStrictEqual(counted, [{ failures: freeFailures }], "the refused attempts were not counted again")
        // Locked: even the right password waits, and says for how long.
        const right = yield* signIn(port, email, PASSWORD, "198.51.100.99")
        assert.strictEqual(right.status, 429, right.text)
        assert.match(String(right.headers["retry-after"]), /^\d+$/)
      }))

    it.effect("one address guessing many accounts waits too, whatever account it tries next; other addresses do not", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const guesser = "203.0.113.7"
        for (let i = 0; i < freeAddressFailures; i++) {
          const answer = yield* signIn(port, `nobody${i}@limits.example`, "not the password at all", guesser)
          assert.strictEqual(answer.status, 401, `guess ${i + 1}: ${answer.text}`)
        }
        const next = yield* signIn(port, people[1], PASSWORD, guesser)
        assert.strictEqual(next.status, 429, next.text)
        assert.include(next.text, "from your network")
        // A forwarded header from an address that is not a trusted proxy would be ignored; here the proxy is trusted,
        // so another client behind it is another address.
        const elsewhere = yield* signIn(port, people[1], PASSWORD, "203.0.113.8")
        assert.strictEqual(elsewhere.status, 200, elsewhere.text)
      }))

    it.effect("an IPv6 client is counted by its /64: a new address of the same network for every guess still waits", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        for (let i = 0; i < freeAddressFailures; i++) {
          const from = `2001:db8:5:6::${(i + 1).toString(16)}`
          const answer = yield* signIn(port, `nobody-v6-${i}@limits.example`, "not the password at all", from)
          assert.strictEqual(answer.status, 401, `guess ${i + 1}: ${answer.text}`)
        }
        const next = yield* signIn(port, people[1], PASSWORD, "2001:db8:5:6:aaaa:bbbb:cccc:dddd")
        assert.strictEqual(next.status, 429, next.text)
        const otherNetwork = yield* signIn(port, people[1], PASSWORD, "2001:db8:5:7::1")
        assert.strictEqual(otherNetwork.status, 200, otherNetwork.text)
      }))
  })
}
