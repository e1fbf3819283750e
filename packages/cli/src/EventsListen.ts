/**
 * `service events listen`: see the workspace's events arrive without writing a receiver. The CLI listens on
 * 127.0.0.1 (a free port unless `--port`), creates a Destination for the events asked (`--events`, default every
 * catalog event) pointing at itself through the server's own `destinations_create` operation, verifies every
 * delivery's Standard Webhooks signature with the secret that answer showed, prints it (a line, or `--json` one
 * JSON object per line), optionally re-posts the body and its signature headers to a developer's app
 * (`--forward-to`), and when interrupted (Ctrl-C, SIGTERM) stops the Destination (`destinations_stop`).
 *
 * The server must be allowed to deliver to this machine: `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true`, a local
 * development setting. Without it the Destination is refused (`address_rejected`) and the command says so.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as CliOptions from "@effect/cli/Options"
import * as Operation from "@service/core/Operation"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import { createHmac, timingSafeEqual } from "node:crypto"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as Cli from "./Cli.js"
import * as Credentials from "./Credentials.js"
import * as Failure from "./Failure.js"
import * as Format from "./Format.js"
import * as InputFlags from "./InputFlags.js"
import * as Remote from "./Remote.js"

/** The operations the command drives, by the names the events bundle declares. @since 0.1.0 @category constants */
export const operations = { create: "destinations_create", stop: "destinations_stop" } as const

/** How far a delivery's `webhook-timestamp` may be from this machine's clock (Standard Webhooks' tolerance). */
const toleranceSeconds = 5 * 60

// -----------------------------------------------------------------------------
// Verification (Standard Webhooks 1.0.0)
// -----------------------------------------------------------------------------

/**
 * Whether a delivery is signed with `secret`: `webhook-signature` holds one `v1,<base64 HMAC-SHA256>` of
 * `<webhook-id>.<webhook-timestamp>.<raw body>` (several, space-separated, while a secret rotates), under the key
 * the secret carries after `whsec_`; the timestamp within five minutes of `nowSeconds`. Left: why not.
 *
 * @since 0.1.0 @category verification
 */
export const verify = (
  secret: string,
  headers: { readonly id: string | undefined; readonly timestamp: string | undefined; readonly signature: string | undefined },
  body: Uint8Array,
  nowSeconds: number
): Either.Either<void, string> => {
  const { id, signature, timestamp } = headers
  if (id === undefined || timestamp === undefined || signature === undefined) {
    return Either.left("missing webhook-id, webhook-timestamp or webhook-signature")
  }
  const seconds = Number(timestamp)
  if (!Number.isInteger(seconds) || Math.abs(nowSeconds - seconds) > toleranceSeconds) {
    return Either.left("webhook-timestamp is not within five minutes of this machine's clock")
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64")
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest()
  const matches = signature.split(" ").some((entry) => {
    const [version, value] = entry.split(",")
    if (version !== "v1" || value === undefined) return false
    const given = Buffer.from(value, "base64")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  return matches ? Either.void : Either.left("the signature does not match the Destination's secret")
}

// -----------------------------------------------------------------------------
// The receiver
// -----------------------------------------------------------------------------

/** One request the receiver took, waiting for the command to answer it. */
interface Received {
  readonly path: string
  readonly headers: NodeHttp.IncomingHttpHeaders
  readonly body: Buffer
  readonly respond: (status: number, text?: string) => void
}

const header = (headers: NodeHttp.IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** A node HTTP server on 127.0.0.1 whose requests wait in `queue`; closed with the scope. */
const receiver = (port: number, queue: Queue.Queue<Received>) =>
  Effect.acquireRelease(
    Effect.async<NodeHttp.Server, Failure.Failure>((resume) => {
      const server = NodeHttp.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const respond = (status: number, text = "") => {
            response.writeHead(status, { "content-type": "text/plain" }).end(text)
          }
          // The command answers once it has printed (and forwarded): the server sees the forwarded app's answer.
          if (request.method !== "POST") return respond(405)
          Queue.unsafeOffer(queue, { path: request.url ?? "/", headers: request.headers, body: Buffer.concat(chunks), respond })
        })
      })
      server.once("error", (error) => resume(Effect.fail(Failure.unexpected(`Could not listen on 127.0.0.1:${port}: ${error.message}`))))
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  )

// -----------------------------------------------------------------------------
// The server's operations
// -----------------------------------------------------------------------------

type Target = Parameters<typeof Remote.call>[1]

const findOperation = (groups: ReadonlyArray<Operation.Group<unknown>>, name: string): Either.Either<Target, Failure.Failure> => {
  for (const group of groups) {
    for (const operation of Operation.servedOn(group, "http")) {
      if (operation.name === name) return Either.right({ group, operation })
    }
  }
  return Either.left(Failure.unexpected(`This CLI has no ${name} operation to create a Destination with.`))
}

const Created = Schema.Struct({ id: Schema.String, secret: Schema.String })

const isAddressRejected = (failure: Failure.Failure) =>
  failure._tag === "Refused" && Object.values(failure.block).includes("address_rejected")

/** What to tell a person whose server refuses to deliver to this machine. @since 0.1.0 @category messages */
export const privateAddressesHint = (baseUrl: string) =>
  [
    `The server at ${baseUrl} does not deliver to addresses on this machine.`,
    `Start it with SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true (local development only, never production), e.g.`,
    `  SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true npm start`,
    `and run this command again.`
  ].join("\n")

// -----------------------------------------------------------------------------
// Printing
// -----------------------------------------------------------------------------

const Delivery = Schema.parseJson(Schema.Struct({
  eventId: Schema.String,
  name: Schema.String,
  timestamp: Schema.String,
  data: Schema.Unknown
}))

/**
 * The record an event is about, as the ledger names subjects (`contact/<id>`): the `<kind>_id` field of its data for
 * an event named `<kind>.<what>`; none when the data has no such field.
 *
 * @since 0.1.0 @category printing
 */
export const subjectOf = (name: string, data: unknown): string | undefined => {
  const kind = name.split(".")[0] ?? ""
  const id = Predicate.isRecord(data) ? data[`${kind}_id`] : undefined
  return Predicate.isString(id) ? `${kind}/${id}` : undefined
}

// -----------------------------------------------------------------------------
// The command
// -----------------------------------------------------------------------------

/** @since 0.1.0 @category models */
export interface Options {
  /** Where the server's operations are declared (the application's groups). */
  readonly groups: ReadonlyArray<Operation.Group<unknown>>
  /** Every catalog event name: what `--events` defaults to. */
  readonly catalog: ReadonlyArray<string>
}

const flags = {
  events: CliOptions.text("events").pipe(
    CliOptions.withDescription("Comma-separated catalog event names (default: every catalog event)."),
    CliOptions.optional
  ),
  subject: CliOptions.text("subject").pipe(
    CliOptions.withDescription("Only events of this record, e.g. contact/<id>."),
    CliOptions.optional
  ),
  forwardTo: CliOptions.text("forward-to").pipe(
    CliOptions.withDescription("Also POST each verified delivery (body and webhook-* headers) to this URL; its answer is the answer the server gets."),
    CliOptions.optional
  ),
  port: InputFlags.numberOption("port", "integer").pipe(CliOptions.withDescription("Port to listen on, on 127.0.0.1 (default: a free one)."), CliOptions.withDefault(0)),
  json: CliOptions.boolean("json").pipe(CliOptions.withDescription("One JSON object per delivery and line."))
}

/**
 * `service events listen`, for `Cli.Options.nested` under `events`.
 *
 * @since 0.1.0 @category commands
 */
export const command = (options: Options) =>
  Command.make("listen", flags, ({ events, forwardTo, json, port, subject }) =>
    Effect.gen(function*() {
      const settings = yield* Cli.Settings
      const credential = yield* Credentials.resolve(settings)
      if (Option.isNone(credential)) return yield* Effect.fail(Failure.missingApiKey)
      const create = yield* findOperation(options.groups, operations.create)
      const stop = yield* findOperation(options.groups, operations.stop)
      const connection = { baseUrl: settings.baseUrl, credential: credential.value, pathParams: { workspace: settings.workspace } }
      const names = Option.match(events, {
        onNone: () => options.catalog,
        onSome: (text) => text.split(",").map((name) => name.trim()).filter((name) => name !== "")
      })
      if (names.length === 0) return yield* Effect.fail(Failure.usage("--events names no event."))

      const queue = yield* Effect.acquireRelease(Queue.unbounded<Received>(), Queue.shutdown)
      const server = yield* receiver(port, queue)
      const address: AddressInfo | string | null = server.address()
      if (address === null || typeof address === "string") return yield* Effect.dieMessage("the receiver has no TCP address")
      const base = `http://127.0.0.1:${address.port}`

      const path = "/events"
      const input = yield* Remote.check(create, {
        url: `${base}${path}`,
        events: names,
        ...(Option.isSome(subject) ? { subject: subject.value } : {}),
        description: `service events listen on ${base}`
      })
      const destination = yield* Effect.acquireRelease(
        Remote.call(connection, create, input).pipe(
          Effect.flatMap((output) => Effect.orDie(Schema.decodeUnknown(Created)(output))),
          Effect.catchAll((failure): Effect.Effect<never, Failure.Failure | Failure.Reported> =>
            isAddressRejected(failure)
              ? Console.error(`${Format.failure(failure)}\n\n${privateAddressesHint(settings.baseUrl)}`).pipe(
                Effect.zipRight(Effect.fail(new Failure.Reported({ failure })))
              )
              : Effect.fail(failure)
          )
        ),
        // Stopped however the command ends: interrupted, or a later step failed.
        (made) =>
          Remote.check(stop, { destination_id: made.id }).pipe(
            Effect.flatMap((stopInput) => Remote.call(connection, stop, stopInput)),
            Effect.zipRight(Console.error(`Stopped Destination ${made.id}.`)),
            Effect.catchAll((failure) =>
              Console.error(`Could not stop Destination ${made.id}; stop it with: service events destinations stop ${made.id}\n${Format.failure(failure)}`)
            )
          )
      )
      yield* Console.error(
        [
          `Ready: listening on ${base} for ${names.join(", ")}${Option.isSome(subject) ? ` of ${subject.value}` : ""}`,
          `(Destination ${destination.id} in workspace ${settings.workspace}${
            Option.isSome(forwardTo) ? `; forwarding to ${forwardTo.value}` : ""
          }). Ctrl-C stops it.`,
          // What an app behind --forward-to verifies the forwarded signatures with.
          `Signing secret: ${destination.secret}`
        ].join("\n")
      )

      const forward = (target: string, received: Received) =>
        Effect.tryPromise(async () => {
          const headers: Record<string, string> = { "content-type": header(received.headers, "content-type") ?? "application/json" }
          for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature", "x-mcp-subscription-id"]) {
            const value = header(received.headers, name)
            if (value !== undefined) headers[name] = value
          }
          const answer = await fetch(target, { method: "POST", headers, body: new Uint8Array(received.body), redirect: "manual" })
          await answer.arrayBuffer()
          return answer.status
        }).pipe(Effect.either)

      return yield* Effect.forever(Effect.gen(function*() {
        const received = yield* Queue.take(queue)
        if (received.path !== path) return yield* Effect.sync(() => received.respond(404))
        const secret = destination.secret
        const nowSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const checked = verify(secret, {
          id: header(received.headers, "webhook-id"),
          timestamp: header(received.headers, "webhook-timestamp"),
          signature: header(received.headers, "webhook-signature")
        }, received.body, nowSeconds)
        if (Either.isLeft(checked)) {
          yield* Console.error(`Refused a request to ${received.path}: ${checked.left}.`)
          return yield* Effect.sync(() => received.respond(401, checked.left))
        }
        const delivery = Schema.decodeUnknownOption(Delivery)(received.body.toString("utf8"))
        if (Option.isNone(delivery)) {
          yield* Console.error(`A signed request to ${received.path} is not an event delivery.`)
          return yield* Effect.sync(() => received.respond(400))
        }
        const { data, eventId, name, timestamp } = delivery.value
        const forwarded = Option.isSome(forwardTo) ? Option.some(yield* forward(forwardTo.value, received)) : Option.none()
        const status = Option.match(forwarded, {
          onNone: () => 204,
          // The app's answer is the server's: its retries, 410 and 413 apply to the app. Unreachable: retried later.
          onSome: Either.match({ onLeft: () => 502, onRight: (answer) => answer })
        })
        const subjectText = subjectOf(name, data)
        const forwardText = Option.map(forwarded, Either.match({
          onLeft: (error) => `unreachable (${error.cause instanceof Error ? error.cause.message : String(error.cause)})`,
          onRight: (answer) => `HTTP ${answer}`
        }))
        yield* Console.log(
          json
            ? JSON.stringify({
              verified: true,
              webhook_id: header(received.headers, "webhook-id"),
              name,
              event_id: eventId,
              timestamp,
              ...(subjectText === undefined ? {} : { subject: subjectText }),
              data,
              ...(Option.isSome(forwardText) ? { forwarded: forwardText.value } : {})
            })
            : [
              `${timestamp}  ${name}  ${eventId}${subjectText === undefined ? "" : `  ${subjectText}`}  (signature verified)`,
              `  ${JSON.stringify(data)}`,
              ...(Option.isSome(forwardText) ? [`  -> ${Option.getOrElse(forwardTo, () => "")}: ${forwardText.value}`] : [])
            ].join("\n")
        )
        yield* Effect.sync(() => received.respond(status))
      }))
    }).pipe(Effect.scoped)).pipe(
      Command.withDescription(
        "Print the workspace's events as they are delivered: listens on 127.0.0.1, creates a Destination pointing here, verifies each signature, and stops the Destination on Ctrl-C. The server needs SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true."
      )
    )
