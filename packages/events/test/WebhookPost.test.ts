import { assert, describe, it } from "@effect/vitest"
import { createServer as createTcpServer } from "node:net"
import { createServer as createTlsServer } from "node:tls"
import { generateWebhookSecret } from "@service/core/Crypto"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as AddressGuard from "@service/core/AddressGuard"
import {
  DEFAULT_TIMEOUT,
  failureReason,
  MAX_BODY_BYTES,
  type Outcome,
  RESPONSE_BODY_CAP,
  send,
  type SendInput,
  verifyEndpoint
} from "../src/WebhookPost.js"
import * as Receiver from "./support/Receiver.js"

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

// The reference package checks `webhook-timestamp` against the wall clock, so signed requests carry a current
// one: deliveries pass it, verifications read the TestClock, set to now.
const nowSeconds = () => Math.floor(Date.now() / 1000)
const clockToNow = TestClock.setTime(Date.now())

// Host names the tests resolve; `rebound` is what `moving.test` resolves to at the moment.
let rebound: ReadonlyArray<string> = ["127.0.0.1"]
const names: Readonly<Record<string, () => ReadonlyArray<string>>> = {
  "receiver.test": () => ["127.0.0.1"],
  "moving.test": () => rebound
}
const guard = AddressGuard.layerAllowingLoopbackForTests({
  resolve: (hostname) => Effect.sync(() => names[hostname]?.() ?? [])
})

const secret = generateWebhookSecret()

const delivery = (url: string, overrides: Partial<SendInput> = {}): SendInput => ({
  url,
  id: "evt_01",
  timestamp: nowSeconds(),
  body: utf8(JSON.stringify({ eventId: "evt_01", name: "contact.created", timestamp: "2026-11-25T12:00:00Z", data: {}, cursor: null })),
  secrets: [Redacted.make(secret)],
  headers: { "x-mcp-subscription-id": "sub_1" },
  ...overrides
})

const sendTo = (reply: Receiver.Reply, path = "/hook", overrides: Partial<SendInput> = {}) =>
  Effect.gen(function*() {
    const receiver = yield* Receiver.start(reply)
    const input = delivery(`http://receiver.test:${receiver.port}${path}`, overrides)
    const outcome = yield* send(input)
    return { outcome, receiver, input }
  })

const retryLater = (outcome: Outcome) => {
  if (outcome._tag !== "RetryLater") return assert.fail(`expected RetryLater, got ${outcome._tag}`)
  return outcome
}

describe("WebhookPost", () => {
  describe("send", () => {
    it.scoped("delivers a signed POST to the validated address, with the URL's host and the extra headers", () =>
      Effect.gen(function*() {
        const { input: sent, outcome, receiver } = yield* sendTo(Receiver.answer(204), "/hooks/a?x=1")
        assert.strictEqual(outcome._tag, "Delivered")
        if (outcome._tag === "Delivered") assert.strictEqual(outcome.status, 204)
        const request = yield* Queue.take(receiver.received)
        assert.strictEqual(request.method, "POST")
        assert.strictEqual(request.path, "/hooks/a?x=1")
        assert.strictEqual(request.headers.host, `receiver.test:${receiver.port}`)
        assert.strictEqual(request.headers["content-type"], "application/json")
        assert.strictEqual(request.headers["webhook-id"], "evt_01")
        assert.strictEqual(request.headers["webhook-timestamp"], String(sent.timestamp))
        assert.strictEqual(request.headers["x-mcp-subscription-id"], "sub_1")
        assert.deepStrictEqual(new Uint8Array(request.body), sent.body)
        assert.isTrue(Receiver.verifies(secret, request))
        assert.isFalse(Receiver.verifies(generateWebhookSecret(), request))
      }).pipe(Effect.provide(guard)))

    it.scoped("signs with both secrets while a renewal overlaps, each verifying on its own", () =>
      Effect.gen(function*() {
        const previous = generateWebhookSecret()
        const { outcome, receiver } = yield* sendTo(Receiver.answer(200), "/hook", {
          secrets: [Redacted.make(secret), Redacted.make(previous)]
        })
        assert.strictEqual(outcome._tag, "Delivered")
        const request = yield* Queue.take(receiver.received)
        const signature = request.headers["webhook-signature"]
        assert.strictEqual(typeof signature === "string" ? signature.split(" ").length : 0, 2)
        assert.isTrue(Receiver.verifies(secret, request))
        assert.isTrue(Receiver.verifies(previous, request))
        assert.isFalse(Receiver.verifies(generateWebhookSecret(), request))
      }).pipe(Effect.provide(guard)))

    it.scoped("keeps the signed headers whatever the extras say", () =>
      Effect.gen(function*() {
        const { receiver } = yield* sendTo(Receiver.answer(200), "/hook", {
          headers: { "Webhook-Id": "forged", "Content-Type": "text/plain", "X-Extra": "1" }
        })
        const request = yield* Queue.take(receiver.received)
        assert.strictEqual(request.headers["webhook-id"], "evt_01")
        assert.strictEqual(request.headers["content-type"], "application/json")
        assert.strictEqual(request.headers["x-extra"], "1")
        assert.isTrue(Receiver.verifies(secret, request))
      }).pipe(Effect.provide(guard)))

    it.scoped("410 is Gone, 413 TooLarge, 500 RetryLater with the status", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual((yield* sendTo(Receiver.answer(410))).outcome, { _tag: "Gone" })
        assert.deepStrictEqual((yield* sendTo(Receiver.answer(413))).outcome, { _tag: "TooLarge" })
        assert.deepStrictEqual((yield* sendTo(Receiver.answer(500, { "retry-after": "60" }))).outcome, {
          _tag: "RetryLater",
          reason: "status",
          status: 500
        })
      }).pipe(Effect.provide(guard)))

    it.scoped("reads Retry-After on 429 (seconds) and 503 (an HTTP date)", () =>
      Effect.gen(function*() {
        const tooMany = retryLater((yield* sendTo(Receiver.answer(429, { "retry-after": "120" }))).outcome)
        assert.strictEqual(tooMany.status, 429)
        assert.strictEqual(Option.map(Option.fromNullable(tooMany.retryAfter), Duration.toSeconds).pipe(Option.getOrNull), 120)

        const now = Date.UTC(2026, 10, 25, 12, 0, 0)
        yield* TestClock.setTime(now)
        const date = new Date(now + 90_000).toUTCString()
        const unavailable = retryLater((yield* sendTo(Receiver.answer(503, { "retry-after": date }))).outcome)
        assert.strictEqual(unavailable.status, 503)
        assert.strictEqual(Option.map(Option.fromNullable(unavailable.retryAfter), Duration.toSeconds).pipe(Option.getOrNull), 90)

        const unreadable = retryLater((yield* sendTo(Receiver.answer(503, { "retry-after": "soon" }))).outcome)
        assert.isUndefined(unreadable.retryAfter)
      }).pipe(Effect.provide(guard)))

    it.scoped("does not follow a redirect", () =>
      Effect.gen(function*() {
        const { outcome, receiver } = yield* sendTo(Receiver.answer(302, { location: "/elsewhere" }))
        assert.deepStrictEqual(outcome, { _tag: "RetryLater", reason: "redirect", status: 302 })
        assert.strictEqual((yield* Queue.take(receiver.received)).path, "/hook")
        assert.strictEqual(yield* Queue.size(receiver.received), 0)
      }).pipe(Effect.provide(guard)))

    it.scoped("gives up when the receiver does not answer within the timeout", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver.start(Receiver.silent)
        const fiber = yield* Effect.fork(send(delivery(`http://receiver.test:${receiver.port}/hook`), { timeout: "200 millis" }))
        yield* Queue.take(receiver.received)
        yield* TestClock.adjust("200 millis")
        assert.deepStrictEqual(yield* Fiber.join(fiber), { _tag: "RetryLater", reason: "timeout" })
      }).pipe(Effect.provide(guard)))

    it.scoped("a refused connection is RetryLater (connection)", () =>
      Effect.gen(function*() {
        const port = yield* Receiver.closedPort
        const outcome = yield* send(delivery(`http://receiver.test:${port}/hook`))
        assert.deepStrictEqual(outcome, { _tag: "RetryLater", reason: "connection", detail: "ECONNREFUSED" })
      }).pipe(Effect.provide(guard)))

    it.scoped("a TLS failure is RetryLater (tls); the URL's host name is the TLS server name", () =>
      Effect.gen(function*() {
        // A server that answers a TLS hello in plain HTTP.
        const plain = createTcpServer((socket) => socket.once("data", () => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n")))
        const plainPort = yield* listening(plain)
        const tls = retryLater(yield* send(delivery(`https://receiver.test:${plainPort}/hook`)))
        assert.strictEqual(tls.reason, "tls")

        // A TLS server that has no certificate: it only records the server name it was asked for.
        const names: Array<string> = []
        const sni = createTlsServer({
          SNICallback: (name, callback) => {
            names.push(name)
            callback(new Error("no certificate here"), undefined)
          }
        })
        const sniPort = yield* listening(sni)
        retryLater(yield* send(delivery(`https://receiver.test:${sniPort}/hook`)))
        assert.deepStrictEqual(names, ["receiver.test"])
      }).pipe(Effect.provide(guard)))

    it.scoped("reads no answer body: a 2xx with an endless body is Delivered and the socket is closed", () =>
      Effect.gen(function*() {
        const closed = yield* Deferred.make<void>()
        const { outcome } = yield* sendTo(Receiver.endless(200, "", () => Deferred.unsafeDone(closed, Exit.void)))
        assert.strictEqual(outcome._tag, "Delivered")
        yield* Deferred.await(closed)
      }).pipe(Effect.provide(guard)))

    it.scoped("refuses a body over 256 KiB before sending anything; 256 KiB exactly is sent", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver.start(Receiver.answer(200))
        const url = `http://receiver.test:${receiver.port}/hook`
        const error = yield* Effect.flip(send(delivery(url, { body: new Uint8Array(MAX_BODY_BYTES + 1) })))
        assert.strictEqual(error._tag, "PayloadTooLarge")
        assert.strictEqual(error.size, MAX_BODY_BYTES + 1)
        assert.strictEqual(yield* Queue.size(receiver.received), 0)
        assert.strictEqual((yield* send(delivery(url, { body: new Uint8Array(MAX_BODY_BYTES) })))._tag, "Delivered")
        assert.strictEqual((yield* Queue.take(receiver.received)).body.length, MAX_BODY_BYTES)
      }).pipe(Effect.provide(guard)))

    it.scoped("checks the address again at every send: a host rebound to a private or metadata address is Rejected", () =>
      Effect.gen(function*() {
        yield* clockToNow
        const receiver = yield* Receiver.start((received, response) =>
          received.headers["webhook-id"]?.toString().startsWith("msg_verification_")
            ? Receiver.echo()(received, response)
            : Receiver.answer(200)(received, response)
        )
        const url = `http://moving.test:${receiver.port}/hook`
        rebound = ["127.0.0.1"]
        assert.strictEqual((yield* verifyEndpoint({ url, secret: Redacted.make(secret), subscriptionId: "sub_1" }))._tag, "Verified")
        assert.strictEqual((yield* send(delivery(url)))._tag, "Delivered")
        for (const addresses of [["10.0.0.1"], ["169.254.169.254"], ["127.0.0.1", "10.0.0.1"], ["::ffff:169.254.169.254"]]) {
          rebound = addresses
          const outcome = yield* send(delivery(url))
          if (outcome._tag !== "Rejected") return assert.fail(`${addresses.join(", ")}: ${outcome._tag}`)
          assert.strictEqual(outcome.rule, "blocked_address")
        }
        rebound = []
        assert.deepStrictEqual(yield* send(delivery(url)), { _tag: "RetryLater", reason: "connection", detail: "unresolvable" })
        // Only the verification and the first delivery reached the receiver.
        yield* Queue.takeN(receiver.received, 2)
        assert.strictEqual(yield* Queue.size(receiver.received), 0)
      }).pipe(Effect.ensuring(Effect.sync(() => (rebound = ["127.0.0.1"]))), Effect.provide(guard)))

    it.scoped("the production guard refuses a loopback receiver: nothing is sent", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver.start(Receiver.answer(200))
        const plain = yield* send(delivery(`http://127.0.0.1:${receiver.port}/hook`))
        assert.isTrue(plain._tag === "Rejected" && plain.rule === "scheme")
        const secure = yield* send(delivery(`https://127.0.0.1:${receiver.port}/hook`))
        assert.isTrue(secure._tag === "Rejected" && secure.rule === "blocked_address")
        assert.strictEqual(yield* Queue.size(receiver.received), 0)
      }).pipe(Effect.provide(AddressGuard.layer)))
  })

  describe("verifyEndpoint", () => {
    const verify = (reply: Receiver.Reply) =>
      Effect.gen(function*() {
        yield* clockToNow
        const receiver = yield* Receiver.start(reply)
        const outcome = yield* verifyEndpoint({
          url: `http://receiver.test:${receiver.port}/callback`,
          secret: Redacted.make(secret),
          subscriptionId: "sub_42"
        })
        return { outcome, receiver }
      })

    it.scoped("posts a signed challenge and accepts its echo", () =>
      Effect.gen(function*() {
        const { outcome, receiver } = yield* verify(Receiver.echo())
        assert.deepStrictEqual(outcome, { _tag: "Verified" })
        assert.isTrue(Option.isNone(failureReason(outcome)))
        const request = yield* Queue.take(receiver.received)
        assert.match(String(request.headers["webhook-id"]), /^msg_verification_[A-Za-z0-9_-]+$/)
        assert.strictEqual(request.headers["x-mcp-subscription-id"], "sub_42")
        assert.strictEqual(request.headers["content-type"], "application/json")
        const body: unknown = JSON.parse(request.body.toString("utf8"))
        assert.isTrue(typeof body === "object" && body !== null && "type" in body && body.type === "verification")
        assert.isTrue(Receiver.verifies(secret, request))
      }).pipe(Effect.provide(guard)))

    it.scoped("uses a fresh challenge and id every time", () =>
      Effect.gen(function*() {
        const { receiver } = yield* verify(Receiver.echo())
        yield* verifyEndpoint({ url: `http://receiver.test:${receiver.port}/callback`, secret: Redacted.make(secret), subscriptionId: "sub_42" })
        const [first, second] = yield* Queue.takeN(receiver.received, 2)
        assert.notStrictEqual(first?.headers["webhook-id"], second?.headers["webhook-id"])
        assert.notStrictEqual(first?.body.toString(), second?.body.toString())
      }).pipe(Effect.provide(guard)))

    it.scoped("a wrong echo, a non-2xx answer, a redirect or a body that is not JSON fail the challenge", () =>
      Effect.gen(function*() {
        const replies: ReadonlyArray<Receiver.Reply> = [
          Receiver.echo(JSON.stringify({ challenge: "something else" })),
          Receiver.echo("{}"),
          Receiver.echo("not json"),
          (received, response) => response.writeHead(500).end(JSON.stringify(JSON.parse(received.body.toString("utf8")))),
          Receiver.answer(302, { location: "/elsewhere" })
        ]
        for (const reply of replies) {
          const { outcome } = yield* verify(reply)
          assert.strictEqual(outcome._tag, "ChallengeFailed")
          assert.deepStrictEqual(failureReason(outcome), Option.some("challenge_failed"))
        }
      }).pipe(Effect.provide(guard)))

    it.scoped(`reads at most ${RESPONSE_BODY_CAP} bytes of the answer, then hangs up`, () =>
      Effect.gen(function*() {
        const closed = yield* Deferred.make<void>()
        const { outcome } = yield* verify((received, response) => {
          const parsed: unknown = JSON.parse(received.body.toString("utf8"))
          const challenge = typeof parsed === "object" && parsed !== null && "challenge" in parsed ? parsed.challenge : null
          Receiver.endless(200, JSON.stringify({ challenge }), () => Deferred.unsafeDone(closed, Exit.void))(received, response)
        })
        assert.strictEqual(outcome._tag, "ChallengeFailed")
        if (outcome._tag === "ChallengeFailed") assert.include(outcome.detail, String(RESPONSE_BODY_CAP))
        yield* Deferred.await(closed)
      }).pipe(Effect.provide(guard)))

    it.scoped("no answer within 10 seconds is Timeout", () =>
      Effect.gen(function*() {
        yield* clockToNow
        const receiver = yield* Receiver.start(Receiver.silent)
        const fiber = yield* Effect.fork(verifyEndpoint({
          url: `http://receiver.test:${receiver.port}/callback`,
          secret: Redacted.make(secret),
          subscriptionId: "sub_42"
        }))
        yield* Queue.take(receiver.received)
        yield* TestClock.adjust(DEFAULT_TIMEOUT)
        const outcome = yield* Fiber.join(fiber)
        assert.deepStrictEqual(outcome, { _tag: "Timeout" })
        assert.deepStrictEqual(failureReason(outcome), Option.some("timeout"))
      }).pipe(Effect.provide(guard)))

    it.scoped("a refused connection fails the challenge", () =>
      Effect.gen(function*() {
        const port = yield* Receiver.closedPort
        const outcome = yield* verifyEndpoint({ url: `http://receiver.test:${port}/`, secret: Redacted.make(secret), subscriptionId: "s" })
        assert.strictEqual(outcome._tag, "ChallengeFailed")
        if (outcome._tag === "ChallengeFailed") assert.include(outcome.detail, "ECONNREFUSED")
      }).pipe(Effect.provide(guard)))

    it.effect("an address the guard refuses, or a host that does not resolve, is UrlRejected", () =>
      Effect.gen(function*() {
        for (const url of ["https://10.0.0.1/callback", "https://nowhere.test/callback", "http://1.1.1.1/callback"]) {
          const outcome = yield* verifyEndpoint({ url, secret: Redacted.make(secret), subscriptionId: "s" }).pipe(
            Effect.provide(Layer.succeed(AddressGuard.AddressGuard, AddressGuard.make({ resolve: () => Effect.succeed([]) })))
          )
          assert.strictEqual(outcome._tag, "UrlRejected", url)
          assert.deepStrictEqual(failureReason(outcome), Option.some("url_rejected"))
        }
      }))
  })
})

// Listens on a loopback port for the test's scope.
const listening = (server: ReturnType<typeof createTcpServer>) =>
  Effect.acquireRelease(
    Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(address === null || typeof address === "string" ? Effect.dieMessage("no port") : Effect.succeed(address.port))
      })
    }),
    () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )
