// The door under a mixed load through a real listening server (PGlite, and PostgreSQL when DATABASE_URL is set):
// a few hundred requests, eight at a time, with resends (same webhook-id), re-deliveries (same CloudEvent source
// and id under a new webhook-id), forged signatures, stale timestamps, oversized bodies and unknown Sources mixed
// in. The requests come from eight loopback addresses (127.0.0.2-9), fewer than 120 each: the door's limit of
// 120 a minute per address stays as it is in production, and the server reads only the socket's address.
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as App from "@service/app/App"
import * as Accounts from "@service/core/Accounts"
import { Crypto, generateWebhookSecret } from "@service/core/Crypto"
import * as Intake from "@service/door/Intake"
import * as Sources from "@service/door/Sources"
import * as StandardWebhooks from "@service/door/StandardWebhooks"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import { request as httpRequest } from "node:http"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"

class Running extends Context.Tag("Running")<Running, { readonly port: number }>() {}

const running = Layer.effect(
  Running,
  Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
    return { port: address.port }
  })
)

interface Answer {
  readonly status: number
  readonly text: string
}

/**
 * One POST on a connection of its own from `localAddress`. An oversized body is refused before it is read, so
 * the socket may break while the client still writes: the answer, once it came, is what counts.
 */
const post = (port: number, localAddress: string, path: string, headers: Readonly<Record<string, string>>, body: string) =>
  Effect.async<Answer>((resume) => {
    let answered = false
    const req = httpRequest({ host: "127.0.0.1", port, localAddress, method: "POST", path, headers, agent: false }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () => {
        answered = true
        resume(Effect.succeed({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }))
      })
    })
    req.on("error", (error) => {
      if (!answered) resume(Effect.die(error))
    })
    req.end(body)
  })

const Accepted = Schema.parseJson(Schema.Struct({ arrival: Schema.String }))
const Duplicate = Schema.parseJson(Schema.Struct({ arrival: Schema.String, status: Intake.ArrivalStatus }))
const Refusal = Schema.parseJson(Schema.Struct({ code: Schema.String, message: Schema.String, request_id: Schema.String }))
const StoredRows = Schema.Array(Schema.Struct({ id: Schema.String, webhook_id: Schema.NullOr(Schema.String), status: Schema.String }))

type Kind = "valid" | "resend" | "redelivery" | "forged" | "stale" | "oversized" | "unknown_source"

interface Planned {
  readonly kind: Kind
  /** The distinct event it belongs to (valid, resend, redelivery). */
  readonly event: number
  readonly webhookId: string
}

const DISTINCT = 150
const RESENDS = 40
const REDELIVERIES = 30
const FORGED = 20
const STALE = 15
const OVERSIZED = 6
const UNKNOWN = 15
const ADDRESSES = 8

/** The plan, shuffled with a fixed seed so copies race their first request. */
const plan = (): ReadonlyArray<Planned> => {
  const items: Array<Planned> = []
  for (let i = 0; i < DISTINCT; i++) items.push({ kind: "valid", event: i, webhookId: `msg_load_${i}` })
  for (let i = 0; i < RESENDS; i++) items.push({ kind: "resend", event: (i * 7) % DISTINCT, webhookId: `msg_load_${(i * 7) % DISTINCT}` })
  for (let i = 0; i < REDELIVERIES; i++) {
    items.push({ kind: "redelivery", event: (i * 11 + 3) % DISTINCT, webhookId: `msg_redelivered_${i}` })
  }
  for (let i = 0; i < FORGED; i++) items.push({ kind: "forged", event: -1, webhookId: `msg_forged_${i}` })
  for (let i = 0; i < STALE; i++) items.push({ kind: "stale", event: -1, webhookId: `msg_stale_${i}` })
  for (let i = 0; i < OVERSIZED; i++) items.push({ kind: "oversized", event: -1, webhookId: `msg_big_${i}` })
  for (let i = 0; i < UNKNOWN; i++) items.push({ kind: "unknown_source", event: -1, webhookId: `msg_unknown_${i}` })
  let seed = 42
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return seed / 2_147_483_648
  }
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const a = items[i]
    const b = items[j]
    if (a !== undefined && b !== undefined) {
      items[i] = b
      items[j] = a
    }
  }
  return items
}

const eventBody = (event: number) =>
  JSON.stringify({
    specversion: "1.0",
    id: `load-${event}`,
    source: "https://forms.example.com/load",
    type: "contact.created",
    data: { name: `Load ${event}`, email: `load.${event}@acme.mx` }
  })

for (const target of TestDatabase.targets()) {
  const services = App.layer(target.layer, Crypto.layerTest)
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(services),
    Layer.orDie
  )

  layer(Env, { timeout: Duration.infinity, excludeTestServices: true })(`door under load on ${target.name}`, (it) => {
    it.effect("one Arrival per distinct request, copies answered 200 with it, refusals as the spec says, no 5xx, every Arrival settles", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const sql = yield* SqlClient.SqlClient
        const intake = yield* Intake.Intake
        const demo = yield* ensureDemo(Option.some(Redacted.make("svc_key_door_load_0123456789abcdef")))
        const workspaceId = Option.getOrThrow(yield* (yield* Accounts.Accounts).findWorkspaceBySlug(demo.slug)).id
        const { secret, source } = yield* (yield* Sources.Sources).create(workspaceId, { name: "load form" })
        const key = Redacted.value(secret)
        const forgedKey = generateWebhookSecret()
        const items = plan()

        const send = (item: Planned, index: number) =>
          Effect.suspend(() => {
            const oversized = item.kind === "oversized"
            const body = oversized ? "x".repeat(300 * 1024) : item.event >= 0 ? eventBody(item.event) : eventBody(10_000 + index)
            const now = Math.floor(Date.now() / 1000)
            const timestamp = item.kind === "stale" ? now - 600 : now
            const signingKey = item.kind === "forged" ? forgedKey : key
            const headers: Record<string, string> = {
              "content-type": "application/cloudevents+json",
              "webhook-id": item.webhookId,
              "webhook-timestamp": String(timestamp),
              "webhook-signature": StandardWebhooks.sign({ secret: signingKey, id: item.webhookId, timestamp, body: new TextEncoder().encode(body) })
            }
            // Half the oversized bodies are streamed without a length, so the door's own reader refuses them.
            if (oversized && index % 2 === 0) headers["transfer-encoding"] = "chunked"
            const path = item.kind === "unknown_source" ? "/api/v1/door/src_doesnotexist000000000000" : `/api/v1/door/${source.id}`
            const from = `127.0.0.${2 + (index % ADDRESSES)}`
            return Effect.map(post(port, from, path, headers, body), (answer) => ({ item, answer }))
          })

        const answers = yield* Effect.forEach(items, send, { concurrency: 8 })

        const serverErrors = answers.filter(({ answer }) => answer.status >= 500)
        assert.deepStrictEqual(serverErrors.map(({ answer }) => answer.text), [], "no request may get a 5xx")
        const limited = answers.filter(({ answer }) => answer.status === 429)
        assert.strictEqual(limited.length, 0, "fewer than 120 requests per address: none may be rate limited")

        // Per distinct event: exactly one 202, every copy 200 with the same Arrival.
        const arrivalsByEvent = new Map<number, string>()
        for (const { answer, item } of answers) {
          if (item.kind !== "valid" && item.kind !== "resend" && item.kind !== "redelivery") continue
          if (answer.status !== 202) continue
          assert.isFalse(arrivalsByEvent.has(item.event), `event ${item.event} got two 202s`)
          arrivalsByEvent.set(item.event, Schema.decodeUnknownSync(Accepted)(answer.text).arrival)
        }
        assert.strictEqual(arrivalsByEvent.size, DISTINCT)
        let copies = 0
        for (const { answer, item } of answers) {
          if (item.kind !== "valid" && item.kind !== "resend" && item.kind !== "redelivery") continue
          if (answer.status === 202) continue
          assert.strictEqual(answer.status, 200, `${item.kind} ${item.webhookId}: ${answer.text}`)
          assert.strictEqual(Schema.decodeUnknownSync(Duplicate)(answer.text).arrival, arrivalsByEvent.get(item.event))
          copies += 1
        }
        assert.strictEqual(copies, RESENDS + REDELIVERIES)

        const refusalCodes = (kind: Kind) =>
          answers.filter(({ item }) => item.kind === kind).map(({ answer }) => `${answer.status} ${Schema.decodeUnknownSync(Refusal)(answer.text).code}`)
        const all = (n: number, value: string) => Array.from({ length: n }, () => value)
        assert.deepStrictEqual(refusalCodes("forged"), all(FORGED, "401 invalid_signature"))
        assert.deepStrictEqual(refusalCodes("unknown_source"), all(UNKNOWN, "401 invalid_signature"))
        assert.deepStrictEqual(refusalCodes("stale"), all(STALE, "401 stale_timestamp"))
        // Declared or streamed, an oversized body gets the door's own refusal, before the body is buffered.
        assert.deepStrictEqual(refusalCodes("oversized"), all(OVERSIZED, "413 payload_too_large"))

        // Stored: one Arrival per distinct event (the 202s), and the refused requests of this Source as their trail
        // (written apart from the answers: waited for).
        yield* intake.refusalsKept
        const stored = yield* sql`SELECT id, webhook_id, status FROM door.arrivals WHERE source_id = ${source.id}`.pipe(
          Effect.flatMap(Schema.decodeUnknown(StoredRows))
        )
        const kept = stored.filter((row) => row.webhook_id !== null).map((row) => row.id).sort()
        assert.deepStrictEqual(kept, [...arrivalsByEvent.values()].sort())
        assert.strictEqual(stored.filter((row) => row.webhook_id === null && row.status === "rejected").length, FORGED + STALE)

        // The embedded worker applies every one: polled, no wall-clock budget.
        const settled = yield* Effect.forEach([...arrivalsByEvent.values()], (id) =>
          intake.arrival(workspaceId, id).pipe(
            Effect.flatMap((found) =>
              Option.isSome(found) && found.value.status !== "received" ? Effect.succeed(found.value.status) : Effect.fail("waiting")
            ),
            Effect.retry(Schedule.spaced("250 millis"))
          ))
        assert.deepStrictEqual([...new Set(settled)], ["accepted"])
      }), 0)
  })
}
