/**
 * One loopback receiver shared by a whole test file, as a layer: each test routes its own path to a reply it can
 * change at any time, and reads (or waits for) the requests that reached that path. Unrouted paths answer 404.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import { Webhook } from "standardwebhooks"
import * as Receiver from "./Receiver.js"

interface Route {
  reply: Receiver.Reply
  readonly log: Array<Receiver.Received>
  readonly arrived: Queue.Queue<Receiver.Received>
}

export interface HubService {
  /** `http://127.0.0.1:<port><path>`. */
  readonly url: (path: string) => string
  /** Routes `path` to `reply` (replacing an earlier reply; the log stays) and returns its URL. */
  readonly route: (path: string, reply: Receiver.Reply) => Effect.Effect<string>
  /** Every request that reached `path`, in order. */
  readonly requests: (path: string) => Effect.Effect<ReadonlyArray<Receiver.Received>>
  /** Waits for the next request to reach `path` (each request is taken once). */
  readonly next: (path: string) => Effect.Effect<Receiver.Received>
}

export class Hub extends Context.Tag("test/events/Hub")<Hub, HubService>() {}

export const layer: Layer.Layer<Hub> = Layer.scoped(
  Hub,
  Effect.gen(function*() {
    const routes = new Map<string, Route>()
    const receiver = yield* Receiver.start((received, response) => {
      const route = routes.get(received.path)
      if (route === undefined) return void response.writeHead(404).end()
      route.log.push(received)
      Queue.unsafeOffer(route.arrived, received)
      route.reply(received, response)
    })
    const url = (path: string) => `http://127.0.0.1:${receiver.port}${path}`
    const route = (path: string, reply: Receiver.Reply) =>
      Effect.gen(function*() {
        const existing = routes.get(path)
        if (existing !== undefined) existing.reply = reply
        else routes.set(path, { reply, log: [], arrived: yield* Queue.unbounded<Receiver.Received>() })
        return url(path)
      })
    const known = (path: string) =>
      Effect.suspend(() => {
        const found = routes.get(path)
        return found === undefined ? Effect.dieMessage(`Hub: ${path} is not routed`) : Effect.succeed(found)
      })
    return Hub.of({
      url,
      route,
      requests: (path) => Effect.map(known(path), (r) => [...r.log]),
      next: (path) => Effect.flatMap(known(path), (r) => Queue.take(r.arrived))
    })
  })
)

// -----------------------------------------------------------------------------
// Reading requests
// -----------------------------------------------------------------------------

export const header = (received: Receiver.Received, name: string): string => {
  const value = received.headers[name]
  return typeof value === "string" ? value : ""
}

export const json = (received: Receiver.Received): unknown => JSON.parse(received.body.toString("utf8"))

/** The `data` of a delivered event (empty when the body has none). */
export const data = (received: Receiver.Received): Record<string, unknown> => {
  const body = json(received)
  return typeof body === "object" && body !== null && "data" in body && typeof body.data === "object" && body.data !== null
    ? Object.fromEntries(Object.entries(body.data))
    : {}
}

/** A subscription's address verification (`{type: "verification", challenge}`). */
export const isChallenge = (received: Receiver.Received): boolean => {
  const body = json(received)
  return typeof body === "object" && body !== null && "type" in body && body.type === "verification"
}

export const challenges = (all: ReadonlyArray<Receiver.Received>) => all.filter(isChallenge)
export const deliveries = (all: ReadonlyArray<Receiver.Received>) => all.filter((r) => !isChallenge(r))

/**
 * Whether one `v1` entry of the request's `webhook-signature` is the Standard Webhooks reference package's
 * signature with `secret` over the request as received, whatever its timestamp (the package's `verify` also
 * wants the timestamp within 5 minutes of the wall clock, which a TestClock moved by hours is not).
 */
export const signedWith = (secret: string, received: Receiver.Received): boolean => {
  const expected = new Webhook(secret).sign(
    header(received, "webhook-id"),
    new Date(Number(header(received, "webhook-timestamp")) * 1000),
    received.body.toString("utf8")
  )
  return header(received, "webhook-signature").split(" ").includes(expected)
}

// -----------------------------------------------------------------------------
// Replies
// -----------------------------------------------------------------------------

/** A subscriber: echoes challenges, answers deliveries with `deliver`. */
export const subscriber = (deliver: Receiver.Reply): Receiver.Reply => (received, response) =>
  isChallenge(received) ? Receiver.echo()(received, response) : deliver(received, response)

/** Answers a delivery by what its body carries (`data` of the delivered event). */
export const byData = (choose: (data: Record<string, unknown>) => Receiver.Reply): Receiver.Reply => (received, response) =>
  choose(data(received))(received, response)
