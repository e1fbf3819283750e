/**
 * Runs the command line in-process, as the binary would, with captured stdout and stderr, an explicit
 * environment (nothing from the test runner's leaks in), a terminal that says whether stdout is one, and
 * either a recording fake HttpClient or a real one.
 */
import type * as Command from "@effect/cli/Command"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Terminal from "@effect/platform/Terminal"
import * as NodeContext from "@effect/platform-node/NodeContext"
import type * as Operation from "@service/core/Operation"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as InProcess from "../../src/InProcess.js"

export interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export interface Sent {
  readonly method: string
  readonly url: string
  readonly apiKey: string | undefined
  readonly contentType: string | undefined
  readonly body: unknown
}

export interface Outcome {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A terminal whose stdout is (or is not) a TTY; nothing reads input. */
export const terminal = (isTTY: boolean): Layer.Layer<Terminal.Terminal> =>
  Layer.succeed(Terminal.Terminal, Terminal.Terminal.of({
    columns: Effect.succeed(100),
    rows: Effect.succeed(40),
    isTTY: Effect.succeed(isTTY),
    readInput: Effect.dieMessage("the CLI under test reads no input"),
    readLine: Effect.dieMessage("the CLI under test reads no input"),
    display: () => Effect.void
  }))

export interface RunOptions<A = never, Name extends string = string> {
  readonly groups: ReadonlyArray<Operation.Group<unknown>>
  /** A hand-written subtree (its handlers need nothing and fail with nothing). */
  readonly operator?: Command.Command<Name, never, never, A>
  readonly prefix?: string
  /** Environment variables visible to Config (and nothing else). */
  readonly env?: Readonly<Record<string, string>>
  /** Whether stdout is a terminal (default: no). */
  readonly tty?: boolean
}

/**
 * Runs `<prefix> <args>` with the HttpClient in context and captures what it prints.
 */
export const run = <A = never, Name extends string = string>(
  args: ReadonlyArray<string>,
  options: RunOptions<A, Name>
): Effect.Effect<Outcome, never, HttpClient.HttpClient> =>
  InProcess.run(args, {
    groups: options.groups,
    prefix: options.prefix,
    operator: options.operator
  }).pipe(
    Effect.provide(terminal(options.tty ?? false)),
    Effect.provide(NodeContext.layer),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(options.env ?? {}))))
  )

const bodyOf = (request: HttpClientRequest.HttpClientRequest): unknown =>
  request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : undefined

/**
 * A fake server: records each request and answers with `reply` (or fails at the transport when `reply` is
 * `"unreachable"`).
 */
export const fakeClient = (
  reply: Reply | "unreachable" | ((sent: Sent) => Reply)
): { readonly client: HttpClient.HttpClient; readonly sent: ReadonlyArray<Sent> } => {
  const sent: Array<Sent> = []
  const client = HttpClient.make((request, url) =>
    Effect.suspend(() => {
      const record: Sent = {
        method: request.method,
        url: url.toString(),
        apiKey: request.headers["x-api-key"],
        contentType: request.body._tag === "Uint8Array" ? request.body.contentType : undefined,
        body: bodyOf(request)
      }
      sent.push(record)
      if (reply === "unreachable") {
        return Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error("connect ECONNREFUSED") }))
      }
      const answer = typeof reply === "function" ? reply(record) : reply
      return Effect.succeed(HttpClientResponse.fromWeb(
        request,
        new Response(typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body), {
          status: answer.status,
          headers: { "content-type": "application/json", ...answer.headers }
        })
      ))
    })
  )
  return { client, sent }
}

/** {@link run} against a {@link fakeClient}. */
export const runFake = <A = never, Name extends string = string>(
  args: ReadonlyArray<string>,
  options: RunOptions<A, Name> & { readonly reply?: Reply | "unreachable" | ((sent: Sent) => Reply) }
): Effect.Effect<Outcome & { readonly sent: ReadonlyArray<Sent> }> =>
  Effect.gen(function*() {
    const fake = fakeClient(options.reply ?? { status: 500, body: { code: "NO_REPLY", message: "the test set no reply" } })
    const outcome = yield* run(args, options).pipe(Effect.provideService(HttpClient.HttpClient, fake.client))
    return { ...outcome, sent: fake.sent }
  })
