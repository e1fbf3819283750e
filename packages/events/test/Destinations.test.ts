import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as AddressGuard from "@service/core/AddressGuard"
import * as Delivery from "../src/Delivery.js"
import * as Destinations from "../src/Destinations.js"
import * as Hub from "./support/Hub.js"
import * as Receiver from "./support/Receiver.js"
import * as S from "./support/Subscriptions.js"

const iso = (millis: number) => new Date(millis).toISOString()
const DAY = Duration.toMillis("1 day")

const refusal = <A>(effect: Effect.Effect<A, Destinations.SubscribeRefused>) =>
  Effect.map(Effect.flip(effect), (error) => error.reason)

const countRows = (table: "events.destinations" | "events.verified_addresses", column: string, value: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT count(*)::int AS n FROM ${sql.literal(table)} WHERE ${sql.literal(column)} = ${value}`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ n: Schema.Number })))),
      Effect.orDie
    )
    return rows[0]?.n ?? 0
  })

for (const target of TestDatabase.targets()) {
  layer(S.env(target), { timeout: "120 seconds" })(`Destinations on ${target.name}`, (it) => {
    it.effect("subscribes after a signed challenge to the address: id sub_…, refreshBefore now + 7 days, an active row", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/happy", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const now = yield* TestClock.currentTimeMillis

        const subscribed = yield* destinations.subscribe(principal, S.request(url, secret))
        assert.match(subscribed.id, /^sub_[0-9a-f]{32}$/)
        assert.strictEqual(subscribed.refreshBefore, iso(now + 7 * DAY))
        assert.isNull(subscribed.cursor)
        assert.isFalse(subscribed.truncated)
        assert.strictEqual(yield* destinations.subscriptionId(principal, "contact.created", {}, url), subscribed.id)

        // One challenge, signed with the subscriber's secret, naming the subscription.
        const [challenge, ...more] = yield* hub.requests("/sub/happy")
        assert.deepStrictEqual(more, [])
        if (challenge === undefined) return assert.fail("no challenge")
        assert.strictEqual(challenge.method, "POST")
        assert.strictEqual(Hub.header(challenge, "content-type"), "application/json")
        assert.strictEqual(Hub.header(challenge, "x-mcp-subscription-id"), subscribed.id)
        assert.match(Hub.header(challenge, "webhook-id"), /^msg_verification_/)
        assert.isTrue(Receiver.verifies(secret, challenge))
        assert.isFalse(Receiver.verifies(S.newSecret(), challenge))
        const body = Hub.json(challenge)
        assert.deepStrictEqual(typeof body === "object" && body !== null ? Object.keys(body).sort() : [], ["challenge", "type"])
        assert.isTrue(Hub.isChallenge(challenge))

        const row = yield* S.destinationRow(subscribed.id)
        assert.deepStrictEqual(
          [row.kind, row.state, row.url, row.events, row.subject, row.workspace_id, row.created_by],
          ["subscription", "active", url, ["contact.created"], null, principal.workspace.id, Option.getOrThrow(principal.person).id]
        )
        assert.strictEqual(row.expires_ms, now + 7 * DAY)
        assert.strictEqual(row.refresh_ms, now + 7 * DAY)
        // The secret is stored sealed, never as given.
        assert.notStrictEqual(row.secret, secret)
        assert.notInclude(row.secret, secret.slice(6, 20))
        assert.isNull(row.previous_secret)
      }))

    it.effect("ttlMs: omitted gives 7 days, null 30 days, 1 ms is raised to 1 hour, 90 days is cut to 30 days", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/sub/ttl", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const now = yield* TestClock.currentTimeMillis
        const asked: ReadonlyArray<readonly [string, number | null | undefined, number]> = [
          ["contact.created", undefined, 7 * DAY],
          ["contact.updated", null, 30 * DAY],
          ["company.created", 1, Duration.toMillis("1 hour")],
          ["company.updated", 90 * DAY, 30 * DAY],
          ["topic.proposed", 2 * DAY + 123, 2 * DAY + 123]
        ]
        for (const [name, ttlMs, granted] of asked) {
          const subscribed = yield* S.subscribe(principal, url, secret, ttlMs === undefined ? { name } : { name, ttlMs })
          assert.strictEqual(subscribed.refreshBefore, iso(now + granted), `${name} with ttlMs ${ttlMs}`)
          assert.strictEqual((yield* S.destinationRow(subscribed.id)).expires_ms, now + granted)
        }
        // One address, one person: challenged once.
        assert.strictEqual(Hub.challenges(yield* hub.requests("/sub/ttl")).length, 1)
        assert.strictEqual(Duration.toMillis(Destinations.grantedTtl(-5)), Duration.toMillis("1 hour"))
      }))

    it.effect("refuses invalid params with their reason, before anything is sent or stored", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/invalid", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const refused = (overrides: Parameters<typeof S.request>[2], withSecret = secret) =>
          refusal(destinations.subscribe(principal, S.request(url, withSecret, overrides)))

        assert.strictEqual(yield* refused({ name: "contact.deleted" }), "unknown_event")
        assert.strictEqual(yield* refused({ name: "" }), "unknown_event")
        assert.strictEqual(yield* refused({ arguments: { subject: "opportunity/o1", since: "2026-01-01" } }), "invalid_arguments")
        assert.strictEqual(yield* refused({ arguments: { subject: "not a subject" } }), "invalid_arguments")
        assert.strictEqual(yield* refused({ arguments: { subject: "opportunity/" } }), "invalid_arguments")
        assert.strictEqual(yield* refused({ arguments: "opportunity/o1" }), "invalid_arguments")
        assert.strictEqual(yield* refused({ arguments: ["opportunity/o1"] }), "invalid_arguments")
        assert.strictEqual(yield* refused({ mode: "sse" }), "delivery_mode")
        const base64 = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64")
        for (const bad of ["", "whsec_", "not-a-secret", `whsec_${base64(23)}`, `whsec_${base64(65)}`, base64(32), `whsec_${Buffer.alloc(32, 7).toString("base64url")}_`]) {
          assert.strictEqual(yield* refused({}, bad), "secret_invalid", JSON.stringify(bad))
        }
        // The bounds themselves are accepted.
        for (const bytes of [24, 64]) {
          const ok = yield* Effect.either(destinations.subscribe(principal, S.request(url, `whsec_${base64(bytes)}`, { name: bytes === 24 ? "contact.updated" : "company.created" })))
          assert.isTrue(ok._tag === "Right", `${bytes} bytes`)
        }
        // Only the two accepted subscriptions' one challenge reached the address.
        assert.strictEqual((yield* hub.requests("/sub/invalid")).length, 1)
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 2)
      }))

    it.effect("url_rejected: http or a private address under the production guard, private and metadata ranges under the test guard", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const loopback = yield* Destinations.Destinations
        const production = yield* Destinations.make.pipe(Effect.provide(AddressGuard.layer))
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/sub/rejected", Hub.subscriber(Receiver.answer(204)))
        // The receiver itself: plain http and loopback, refused in production before anything is resolved or sent.
        assert.strictEqual(yield* refusal(production.subscribe(principal, S.request(url, secret))), "url_rejected")
        assert.strictEqual(yield* refusal(production.subscribe(principal, S.request("http://hooks.example.com/x", secret))), "url_rejected")
        assert.strictEqual(yield* refusal(production.subscribe(principal, S.request("https://10.1.2.3/hook", secret))), "url_rejected")
        assert.strictEqual(yield* refusal(production.subscribe(principal, S.request("https://[::1]/hook", secret))), "url_rejected")
        for (const bad of ["http://10.0.0.8/hook", "http://192.168.1.10/hook", "http://169.254.169.254/latest/meta-data", "not a url", "ftp://127.0.0.1/x", `http://user:pw@127.0.0.1:${new URL(url).port}/sub/rejected`]) {
          assert.strictEqual(yield* refusal(loopback.subscribe(principal, S.request(bad, secret))), "url_rejected", bad)
        }
        assert.deepStrictEqual(yield* hub.requests("/sub/rejected"), [])
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 0)
      }))

    it.effect("challenge_failed: a wrong echo, a body that is not the echo, a non-2xx answer, a closed port; nothing is stored or cached", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const replies: ReadonlyArray<Receiver.Reply> = [
          Receiver.echo(JSON.stringify({ challenge: "something else" })),
          Receiver.echo("ok"),
          Receiver.answer(204),
          Receiver.answer(500, { "content-type": "application/json" }, "{}"),
          // A redirect is not followed, even to an address that would echo.
          Receiver.answer(307, { location: hub.url("/sub/echoes") })
        ]
        yield* hub.route("/sub/echoes", Hub.subscriber(Receiver.answer(204)))
        for (const [n, reply] of replies.entries()) {
          const url = yield* hub.route(`/sub/fails-${n}`, reply)
          assert.strictEqual(yield* refusal(destinations.subscribe(principal, S.request(url, secret))), "challenge_failed", `reply ${n}`)
          assert.strictEqual((yield* hub.requests(`/sub/fails-${n}`)).length, 1)
        }
        assert.deepStrictEqual(yield* hub.requests("/sub/echoes"), [])
        const closed = `http://127.0.0.1:${yield* Receiver.closedPort}/hook`
        assert.strictEqual(yield* refusal(destinations.subscribe(principal, S.request(closed, secret))), "challenge_failed")
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 0)
        // A failed address is not remembered as verified: once it echoes, it is challenged again and passes.
        const url = yield* hub.route("/sub/fails-0", Hub.subscriber(Receiver.answer(204)))
        yield* destinations.subscribe(principal, S.request(url, secret))
        assert.strictEqual((yield* hub.requests("/sub/fails-0")).length, 2)
      }))

    it.effect("timeout: an address that never answers is refused once 10 seconds pass on the clock", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/silent", Receiver.silent)
        const principal = yield* S.subscriber
        const fiber = yield* Effect.fork(refusal(destinations.subscribe(principal, S.request(url, S.newSecret()))))
        const challenge = yield* hub.next("/sub/silent")
        assert.isTrue(Hub.isChallenge(challenge))
        yield* TestClock.adjust("9 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "refused before 10 seconds")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(fiber), "timeout")
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 0)
      }))

    it.effect("person_required: an API key (even a person's), a credential with no person, a test workspace", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const ws = yield* S.workspace()
        const url = yield* hub.route("/sub/person", Hub.subscriber(Receiver.answer(204)))
        const secret = S.newSecret()
        const person = yield* S.personIn(ws)
        const sandbox = yield* S.workspace(ws)
        assert.isTrue(sandbox.isTest)
        const refusedPrincipals = [
          S.withCredential(person, "api_key"),
          S.faceless(ws, "bearer"),
          S.faceless(ws, "api_key"),
          yield* S.personIn(sandbox)
        ]
        for (const principal of refusedPrincipals) {
          assert.strictEqual(yield* refusal(destinations.subscribe(principal, S.request(url, secret))), "person_required")
          // Refused before the event or the arguments are even looked at.
          assert.strictEqual(yield* refusal(destinations.subscribe(principal, S.request(url, secret, { name: "nope" }))), "person_required")
        }
        assert.deepStrictEqual(yield* hub.requests("/sub/person"), [])
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", ws.id), 0)
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", sandbox.id), 0)
        // The same person through their MCP client may.
        yield* destinations.subscribe(person, S.request(url, secret))
      }))

    it.effect("the same values renew the same subscription: one row, a later expiry, no new challenge; other values are other subscriptions", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/renew", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const now = yield* TestClock.currentTimeMillis
        const first = yield* S.subscribe(principal, url, secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o1" } })
        yield* TestClock.adjust("1 hour")
        // Another token of the same person, arguments spelled alike: the same subscription.
        const again = yield* destinations.subscribe(
          S.withCredential(principal, "bearer"),
          S.request(url, secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o1" } })
        )
        assert.strictEqual(again.id, first.id)
        assert.strictEqual(again.refreshBefore, iso(now + Duration.toMillis("1 hour") + 7 * DAY))
        assert.strictEqual(yield* countRows("events.destinations", "id", first.id), 1)
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 1)
        const row = yield* S.destinationRow(first.id)
        assert.deepStrictEqual([row.state, row.subject, row.previous_secret], ["active", "opportunity/o1", null])
        assert.strictEqual(row.expires_ms, now + Duration.toMillis("1 hour") + 7 * DAY)
        assert.strictEqual((yield* hub.requests("/sub/renew")).length, 1)

        // Omitted arguments and {} are the same; another subject, event, address or person is not.
        const plain = yield* S.subscribe(principal, url, secret)
        const omitted = yield* destinations.subscribe(principal, { ...S.request(url, secret), arguments: undefined })
        assert.strictEqual(omitted.id, plain.id)
        const others = [
          (yield* S.subscribe(principal, url, secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o2" } })).id,
          (yield* S.subscribe(principal, url, secret, { name: "opportunity.moved" })).id,
          (yield* S.subscribe(principal, yield* hub.route("/sub/renew-2", Hub.subscriber(Receiver.answer(204))), secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o1" } })).id,
          (yield* S.subscribe(yield* S.personIn(principal.workspace), url, secret, { name: "opportunity.moved", arguments: { subject: "opportunity/o1" } })).id
        ]
        assert.strictEqual(new Set([first.id, plain.id, ...others]).size, 6)
      }))

    it.effect("the same subscribe sent twice at once (a client's retry) gives one subscription, not a failure", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        // Both challenges are answered together, once both arrived: the two calls then store at the same moment.
        const held: Array<() => void> = []
        const url = yield* hub.route("/sub/twice", (received, response) => {
          held.push(() => Receiver.echo()(received, response))
          if (held.length === 2) held.forEach((answer) => answer())
        })
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const both = yield* Effect.all([S.subscribe(principal, url, secret), S.subscribe(principal, url, secret)], { concurrency: 2 })
        assert.strictEqual((yield* hub.requests("/sub/twice")).length, 2)
        assert.strictEqual(both[0].id, both[1].id)
        assert.strictEqual(yield* countRows("events.destinations", "workspace_id", principal.workspace.id), 1)
        assert.strictEqual((yield* S.destinationRow(both[0].id)).state, "active")
      }))

    it.effect("a new secret on renewal: both secrets sign deliveries for 24 hours, then only the new one", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/rotate", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const [oldSecret, newSecret] = [S.newSecret(), S.newSecret()]
        const first = yield* S.subscribe(principal, url, oldSecret)
        yield* TestClock.adjust("1 minute")
        const renewed = yield* destinations.subscribe(principal, S.request(url, newSecret))
        assert.strictEqual(renewed.id, first.id)
        assert.isNotNull((yield* S.destinationRow(first.id)).previous_secret)

        yield* S.recordContact(principal.workspace, "c1")
        assert.strictEqual(yield* S.drain(), 1)
        const [during] = Hub.deliveries(yield* hub.requests("/sub/rotate"))
        if (during === undefined) return assert.fail("no delivery")
        assert.isTrue(Receiver.verifies(newSecret, during), "the new secret signs")
        assert.isTrue(Receiver.verifies(oldSecret, during), "the old secret still signs")
        assert.strictEqual(Hub.header(during, "webhook-signature").split(" ").length, 2)

        // Renewing again with the new secret keeps the overlap of the earlier rotation.
        yield* TestClock.adjust("23 hours")
        yield* destinations.subscribe(principal, S.request(url, newSecret))
        yield* S.recordContact(principal.workspace, "c2")
        assert.strictEqual(yield* S.drain(), 1)
        const stillBoth = Hub.deliveries(yield* hub.requests("/sub/rotate"))[1]
        if (stillBoth === undefined) return assert.fail("no second delivery")
        assert.isTrue(Hub.signedWith(oldSecret, stillBoth) && Hub.signedWith(newSecret, stillBoth))

        // 24 hours after the rotation: only the new secret.
        yield* TestClock.adjust("1 hour")
        yield* S.recordContact(principal.workspace, "c3")
        assert.strictEqual(yield* S.drain(), 1)
        const after = Hub.deliveries(yield* hub.requests("/sub/rotate"))[2]
        if (after === undefined) return assert.fail("no third delivery")
        assert.isTrue(Hub.signedWith(newSecret, after))
        assert.isFalse(Hub.signedWith(oldSecret, after))
        assert.strictEqual(Hub.header(after, "webhook-signature").split(" ").length, 1)
        // The renewals came within 24 hours of the verification: no new challenge, even with a new secret.
        assert.strictEqual(Hub.challenges(yield* hub.requests("/sub/rotate")).length, 1)
      }))

    it.effect("a verified address is not challenged again for 24 hours, and is after; per person", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/sub/cache", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const challenged = Effect.map(hub.requests("/sub/cache"), (all) => Hub.challenges(all).length)
        yield* S.subscribe(principal, url, secret, { name: "contact.created" })
        assert.strictEqual(yield* challenged, 1)
        yield* TestClock.adjust(Duration.toMillis("24 hours") - 1)
        yield* S.subscribe(principal, url, secret, { name: "contact.updated" })
        assert.strictEqual(yield* challenged, 1)
        // Another person of the same workspace at the same address is challenged.
        yield* S.subscribe(yield* S.personIn(principal.workspace), url, secret, { name: "contact.created" })
        assert.strictEqual(yield* challenged, 2)
        yield* TestClock.adjust(1)
        // A renewal 24 hours after the verification: challenged again, with the subscription's id.
        const renewed = yield* S.subscribe(principal, url, secret, { name: "contact.created" })
        assert.strictEqual(yield* challenged, 3)
        const last = Hub.challenges(yield* hub.requests("/sub/cache"))[2]
        assert.strictEqual(last === undefined ? "" : Hub.header(last, "x-mcp-subscription-id"), renewed.id)
        // ... and that verification counts for the next 24 hours.
        yield* S.subscribe(principal, url, secret, { name: "company.created" })
        assert.strictEqual(yield* challenged, 3)
      }))

    it.effect("unsubscribe answers nothing even when nothing matches, stops delivery and keeps the history", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const destinations = yield* Destinations.Destinations
        const url = yield* hub.route("/sub/stop", Hub.subscriber(Receiver.answer(204)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const ws = principal.workspace
        // Nothing to stop: the same empty answer, for any caller and any arguments.
        yield* destinations.unsubscribe(principal, { name: "contact.created", arguments: {}, url })
        yield* destinations.unsubscribe(S.faceless(ws), { name: "contact.created", arguments: {}, url })
        yield* destinations.unsubscribe(principal, { name: "nope", arguments: { junk: true }, url: "not a url" })

        const { id } = yield* S.subscribe(principal, url, secret)
        // Another person's unsubscribe with the same values stops nothing of mine.
        yield* destinations.unsubscribe(yield* S.personIn(ws), { name: "contact.created", arguments: {}, url })
        assert.strictEqual((yield* S.destinationRow(id)).state, "active")

        yield* S.recordContact(ws, "c1")
        assert.strictEqual(yield* S.drain(), 1)
        yield* S.recordContact(ws, "c2")
        const result = yield* destinations.unsubscribe(S.withCredential(principal, "bearer"), { name: "contact.created", arguments: undefined, url })
        assert.isUndefined(result)
        const row = yield* S.destinationRow(id)
        assert.deepStrictEqual([row.state, row.state_reason], ["stopped", "unsubscribed"])
        // The pending delivery is not sent; later events are not scheduled.
        assert.strictEqual(yield* S.drain(), 1)
        yield* S.recordContact(ws, "c3")
        assert.strictEqual(yield* S.drain(), 0)
        assert.strictEqual(Hub.deliveries(yield* hub.requests("/sub/stop")).length, 1)
        // History stays: the subscription, both deliveries and the attempt.
        const kept = yield* S.deliveryRows({ destination: id })
        assert.deepStrictEqual(kept.map((d) => d.outcome), ["delivered", "stopped"])
        assert.strictEqual((yield* S.attemptRows(kept[0]?.id ?? "")).length, 1)
        assert.deepStrictEqual(yield* S.attemptRows(kept[1]?.id ?? ""), [])
        // Unsubscribing again is the same empty answer.
        yield* destinations.unsubscribe(principal, { name: "contact.created", arguments: {}, url })
        assert.strictEqual((yield* S.destinationRow(id)).state, "stopped")
        // Subscribing again with the same values starts it again, under the same id.
        assert.strictEqual((yield* S.subscribe(principal, url, secret)).id, id)
        assert.strictEqual((yield* S.destinationRow(id)).state, "active")
      }))

    it.effect("a subscription disabled by a 410 is active again after subscribing with the same values", () =>
      Effect.gen(function*() {
        yield* S.fresh
        const hub = yield* Hub.Hub
        const url = yield* hub.route("/sub/gone", Hub.subscriber(Receiver.answer(410)))
        const principal = yield* S.subscriber
        const secret = S.newSecret()
        const { id } = yield* S.subscribe(principal, url, secret)
        yield* S.recordContact(principal.workspace, "c1")
        assert.strictEqual(yield* S.drain(), 1)
        assert.strictEqual((yield* S.destinationRow(id)).state, "disabled")
        yield* S.recordContact(principal.workspace, "c2")
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((d) => d.outcome), ["gone"])

        yield* hub.route("/sub/gone", Hub.subscriber(Receiver.answer(200)))
        yield* TestClock.adjust("2 hours")
        const again = yield* S.subscribe(principal, url, secret)
        assert.strictEqual(again.id, id)
        const row = yield* S.destinationRow(id)
        assert.deepStrictEqual([row.state, row.state_reason], ["active", null])
        yield* S.recordContact(principal.workspace, "c3")
        assert.strictEqual(yield* S.drain(), 1)
        assert.deepStrictEqual((yield* S.deliveryRows({ destination: id })).map((d) => d.outcome), ["gone", "delivered"])
        const sent = Hub.deliveries(yield* hub.requests("/sub/gone"))
        assert.strictEqual(sent.length, 2)
        const redelivered = (yield* S.deliveryRows({ destination: id }))[1]
        assert.strictEqual(sent[1] === undefined ? "" : Hub.header(sent[1], "webhook-id"), Delivery.eventId(redelivered?.ledger_id ?? "?"))
      }))
  })
}
