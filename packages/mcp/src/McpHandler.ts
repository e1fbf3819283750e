/**
 * Serving operation groups and extra methods with the official SDK v2: a web-standard handler for HTTP
 * (protocol 2026-07-28 and the 2025 era, stateless) and a stdio server for local clients. The host
 * authenticates; this module only receives the resulting {@link Principal}. No SDK type appears in this
 * module's API.
 *
 * JSON-RPC batches (2025-03-26 allowed them; later revisions removed them, and the SDK refuses them on
 * the 2026 era but serves any 2025-era batch of up to 100 messages concurrently) are capped in front of
 * the SDK: a batch over {@link Options.maxBatchSize} is refused before anything runs
 * (docs/decisions/0033). Stdio carries no batches: the SDK reads one message per line.
 *
 * On stdio the host's services open in the background: the opening handshake is answered at once and every other
 * message waits for them (docs/decisions/0086).
 *
 * @since 0.1.0
 */
import {
  type AuthInfo,
  createMcpHandler,
  isJsonContentType,
  McpServer,
  ProtocolError,
  readRequestBody,
  type StandardSchemaV1
} from "@modelcontextprotocol/server"
import { serveStdio as serveStdioSdk, StdioServerTransport } from "@modelcontextprotocol/server/stdio"
import type * as Operation from "@service/core/Operation"
import { Principal } from "@service/core/Principal"
import * as Text from "@service/core/Text"
import type * as Method from "@service/core/Method"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import type { Readable, Writable } from "node:stream"
import { StdioGate } from "./internal/stdioGate.js"
import * as Toolkit from "./Toolkit.js"

/**
 * JSON-RPC messages accepted in one batch unless the host sets its own cap.
 *
 * @since 0.1.0 @category constants
 */
export const defaultMaxBatchSize = 10

/** @since 0.1.0 @category models */
export interface Options<R, RM> {
  /** Server name reported in `serverInfo`. */
  readonly name: string
  /** Server version reported in `serverInfo`. */
  readonly version: string
  /** The operation groups served as tools (only operations served on `mcp`). */
  readonly groups: ReadonlyArray<Operation.Group<R>>
  /** Extra JSON-RPC methods (`events/*`...), each answered for the caller's principal. */
  readonly methods?: ReadonlyArray<Method.Method<RM>> | undefined
  /** First segment of every tool name. Default: the `Operation.SurfacePrefix` in context (`"service"`). */
  readonly prefix?: string | undefined
  /**
   * The `instructions` of the `initialize` result (and `server/discover`): how an agent should use the server.
   * Hosts put them in the model's context once per session, so they say what every tool would otherwise repeat.
   */
  readonly instructions?: string | undefined
  /** Messages accepted in one JSON-RPC batch (default {@link defaultMaxBatchSize}). */
  readonly maxBatchSize?: number | undefined
  /** Bytes accepted in one request body, chunked or not (default {@link defaultMaxRequestBodySize}, as every JSON route). */
  readonly maxRequestBodySize?: number | undefined
  /**
   * Advertise MCP Events (SEP-3415) in `server/discover` and `initialize`: `extensions["io.modelcontextprotocol/events"]`
   * and the top-level `events` key deployed clients read. Default: when `methods` serve `events/*`.
   */
  readonly events?: boolean | undefined
}

/**
 * What serving `groups` (operations needing `R`) and methods (needing `RM`) requires from the host.
 *
 * @since 0.1.0 @category models
 */
export type Requirements<R, RM> = Toolkit.Requirements<R> | RM

/**
 * An MCP endpoint as a plain function of an authenticated request.
 *
 * @since 0.1.0 @category models
 */
export interface WebHandler {
  /** Serves one HTTP request (POST; GET/DELETE get 405) on behalf of `principal`. */
  readonly handle: (request: Request, principal: Principal) => Promise<Response>
  /** Aborts in-flight modern exchanges; legacy serving holds nothing between requests. */
  readonly close: () => Promise<void>
  /** The tools served, as derived from the groups. */
  readonly tools: ReadonlyArray<Toolkit.Tool>
}

// The principal travels to the per-request server factory through the SDK's pass-through `authInfo`.
const PRINCIPAL_KEY = "principal"

const authInfoOf = (principal: Principal): AuthInfo => ({
  // The host verified the credential; its secret never reaches the SDK.
  token: "",
  clientId: principal.credential.id,
  scopes: [...principal.scopes],
  extra: { [PRINCIPAL_KEY]: principal }
})

const principalOf = (authInfo: AuthInfo | undefined): Principal | undefined => {
  const candidate = authInfo?.extra?.[PRINCIPAL_KEY]
  return candidate instanceof Principal ? candidate : undefined
}

// The SDK's params check is skipped: `Method.run` decodes with the method's own schema (see Method).
const anyParams: StandardSchemaV1<unknown> = {
  "~standard": { version: 1, vendor: "effect-schema", validate: (value) => ({ value }) }
}

interface Served<RM> {
  readonly toolkit: Toolkit.Toolkit
  readonly methods: ReadonlyArray<Method.Method<RM>>
  readonly runtime: Runtime.Runtime<RM>
}

/** The MCP Events extension's id (SEP-3415). @since 0.1.0 @category constants */
export const EVENTS_EXTENSION = "io.modelcontextprotocol/events"

// The extension is advertised when its methods are served (SEP-3415 names them `events/*`), unless told.
const servesEvents = <R, RM>(options: Options<R, RM>): boolean =>
  options.events ?? (options.methods ?? []).some((method) => method.method.startsWith("events/"))

/** A server that answers the opening handshake (identity, capabilities, instructions) and serves nothing yet. */
const bareServer = <R, RM>(options: Options<R, RM>): McpServer => {
  // The tool list is fixed for the life of a server: no list_changed notifications will come. The top-level
  // `events` key is not in the SDK's capability type; a variable (not a literal) carries it through unchanged.
  const eventsCapabilities = { extensions: { [EVENTS_EXTENSION]: {} }, events: {} }
  const capabilities = servesEvents(options) ? { tools: { listChanged: false }, ...eventsCapabilities } : { tools: { listChanged: false } }
  return new McpServer(
    { name: options.name, version: options.version },
    options.instructions === undefined ? { capabilities } : { capabilities, instructions: options.instructions }
  )
}

const newServer = <R, RM>(options: Options<R, RM>, served: Served<RM>, principal: Principal | undefined): McpServer => {
  const server = bareServer(options)
  // A request the host did not authenticate gets no tools and no methods: nothing runs without a principal.
  if (principal !== undefined) serveOn(server, served, principal)
  return server
}

/** Registers the tools and the extra methods on `server`, answered for `principal`. */
const serveOn = <RM>(server: McpServer, served: Served<RM>, principal: Principal): void => {
  served.toolkit.register(server, principal)
  const runPromise = Runtime.runPromise(served.runtime)
  for (const method of served.methods) {
    server.server.setRequestHandler(method.method, { params: anyParams }, async (params, ctx) => {
      const outcome = await runPromise(Effect.either(method.run(params, principal)), { signal: ctx.mcpReq.signal })
      if (Either.isLeft(outcome)) {
        const { code, data, message } = outcome.left
        throw new ProtocolError(code, message, data)
      }
      return { ...outcome.right }
    })
  }
}

const errorReporter = (runtime: Runtime.Runtime<never>, what: string) => (error: Error): void => {
  // Rejected requests (bad headers, wrong method) land here too: useful when debugging, noise otherwise.
  Runtime.runFork(runtime)(Effect.logDebug(what, error.message))
}

/**
 * Bytes one `/mcp` request body may hold: 256 KiB, the limit of every JSON route (the door's and the REST API's),
 * enforced on the declared length and on the bytes counted while a chunked body streams in.
 *
 * @since 0.1.0 @category constants
 */
export const defaultMaxRequestBodySize = 256 * 1024

const jsonRpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status })

/**
 * The answer to a batch over the cap: HTTP 400 with JSON-RPC `-32600` naming the cap, as the SDK answers
 * its own batch limit.
 *
 * @since 0.1.0 @category batches
 */
export const batchTooLarge = (size: number, cap: number): Response =>
  jsonRpcError(
    400,
    -32600,
    `Invalid Request: a JSON-RPC batch may hold at most ${cap} messages; this one holds ${size}. Send at most ${cap} messages per request.`
  )

/**
 * Reads a POST body once, refuses a batch over the cap before anything runs, and hands the parsed body to
 * the SDK so it is not read twice. Anything that is not a JSON POST goes to the SDK untouched.
 */
const capBatches = (maxBatchSize: number, maxBodySize: number) =>
(
  request: Request,
  forward: (request: Request, parsedBody: unknown) => Promise<Response>
): Effect.Effect<Response> => {
  if (request.method.toUpperCase() !== "POST") return Effect.promise(() => forward(request, undefined))
  // A compressed body is never inflated (the REST API's rule): 415 before a byte is read.
  const encoding = (request.headers.get("content-encoding") ?? "").split(",").map((c) => c.trim().toLowerCase()).filter((c) => c.length > 0)
  if (encoding.some((c) => c !== "identity")) {
    return Effect.succeed(jsonRpcError(415, -32000, "Unsupported Media Type: send the body uncompressed (no Content-Encoding)."))
  }
  if (!isJsonContentType(request.headers.get("content-type"))) return Effect.promise(() => forward(request, undefined))
  return Effect.gen(function*() {
    const body = yield* Effect.either(Effect.tryPromise(() => readRequestBody(request, maxBodySize)))
    // The same answers the SDK gives for an unreadable, oversized or malformed body.
    if (Either.isLeft(body)) return jsonRpcError(400, -32700, "Parse error: the request body could not be read")
    if (body.right.tooLarge) return jsonRpcError(413, -32000, `Payload Too Large: Request body must not exceed ${maxBodySize} bytes`)
    const text = body.right.text
    const parsed = yield* Effect.either(Effect.try((): unknown => JSON.parse(text)))
    if (Either.isLeft(parsed)) return jsonRpcError(400, -32700, "Parse error: Invalid JSON")
    // Nesting no message needs is refused before the SDK's schemas walk it; a NUL or a lone surrogate in tool
    // arguments is the tool's structural refusal (the kernel's text rule), like any other bad input.
    const deep = Text.inspect(parsed.right)
    if (Option.isSome(deep) && deep.value.reason === "depth") {
      return jsonRpcError(400, -32600, `Invalid Request: ${Text.describe(deep.value).why} ${Text.describe(deep.value).suggestedCorrection}`)
    }
    if (Arr.isArray(parsed.right) && parsed.right.length > maxBatchSize) {
      yield* Effect.logDebug(`Refused a JSON-RPC batch of ${parsed.right.length} messages (cap ${maxBatchSize})`)
      return batchTooLarge(parsed.right.length, maxBatchSize)
    }
    const parsedBody = parsed.right
    return yield* Effect.promise(() => forward(request, parsedBody))
  })
}

const serveFrom = <R, RM>(options: Options<R, RM>): Effect.Effect<Served<RM>, never, Requirements<R, RM>> =>
  Effect.gen(function*() {
    const toolkit = yield* Toolkit.make({ groups: options.groups, prefix: options.prefix })
    const runtime = yield* Effect.runtime<RM>()
    return { toolkit, methods: options.methods ?? [], runtime }
  })

/**
 * A web handler serving the tools of `groups` and the extra methods: protocol 2026-07-28 (stateless,
 * per-request `_meta` envelope) and, on the same endpoint, 2025-era clients through the SDK's stateless
 * legacy fallback. A fresh `McpServer` is built per request for the principal passed to `handle`.
 *
 * @since 0.1.0 @category constructors
 */
export const makeWebHandler = <R, RM = never>(
  options: Options<R, RM>
): Effect.Effect<WebHandler, never, Requirements<R, RM>> =>
  Effect.gen(function*() {
    const served = yield* serveFrom(options)
    const runtime = yield* Effect.runtime<never>()
    const maxBodySize = options.maxRequestBodySize ?? defaultMaxRequestBodySize
    const mcp = createMcpHandler((ctx) => newServer(options, served, principalOf(ctx.authInfo)), {
      legacy: "stateless",
      maxRequestBodySize: maxBodySize,
      onerror: errorReporter(runtime, "MCP HTTP handler reported an error")
    })
    const cap = capBatches(options.maxBatchSize ?? defaultMaxBatchSize, maxBodySize)
    return {
      handle: (request, principal) => {
        const authInfo = authInfoOf(principal)
        return Runtime.runPromise(runtime)(
          cap(request, (forwarded, parsedBody) =>
            mcp.fetch(forwarded, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody }))
        )
      },
      close: () => mcp.close(),
      tools: served.toolkit.tools
    }
  })

/** @since 0.1.0 @category models */
export interface StdioOptions<R, RM, ROut, E, RIn, EP, RP> extends Options<R, RM> {
  /**
   * What the tools and methods run over (the database, the keys...), opened in the background: the opening
   * handshake is answered meanwhile, and every other request waits for it.
   */
  readonly services: Layer.Layer<ROut, E, RIn>
  /**
   * The principal every call is answered for (stdio has no per-request credential), found once `services` are
   * open (it runs over them; what it needs beyond them is the caller's to give). A `Scope` lives as long as the server.
   */
  readonly principal: Effect.Effect<Principal, EP, RP>
  /** Defaults to `process.stdin`. */
  readonly stdin?: Readable | undefined
  /** Defaults to `process.stdout`: nothing else may write there. */
  readonly stdout?: Writable | undefined
  /**
   * After a failed start, how long requests are still answered with its reason when the client keeps stdin open
   * (default 10 s).
   */
  readonly refuseFor?: Duration.DurationInput | undefined
}

// Completes when the client closes our input: the SDK transport closes itself then, and so do we.
const inputEnded = (stdin: Readable): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const done = () => resume(Effect.void)
    if (stdin.readableEnded || stdin.destroyed) {
      done()
      return
    }
    stdin.once("end", done)
    stdin.once("close", done)
    return Effect.sync(() => {
      stdin.off("end", done)
      stdin.off("close", done)
    })
  })

/**
 * JSON-RPC error code of an answer from a stdio server that could not start (the JSON-RPC "server error" range).
 *
 * @since 0.1.0 @category constants
 */
export const serverStartFailed = -32000

const reasonOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message.length > 0
    ? error.message
    : String(error)

/**
 * Serves the tools of `groups` and the extra methods over stdio for one principal until the client closes stdin
 * (or the fiber is interrupted). The SDK's `serveStdio` picks the era from the opening message: a
 * `server/discover` probe gets 2026-07-28, an `initialize` the 2025 era.
 *
 * The opening handshake (`initialize` and `notifications/initialized`, `server/discover`, `ping`) is answered at
 * once, while `services` open and `principal` is found in the background; every other message is held, in order,
 * until then. Tools and methods are registered before the first held message reaches the server, so a `tools/list`
 * sent right after `initialize` gets the full list. If start-up fails, its reason goes to the log and every held
 * and later request is answered with a JSON-RPC error ({@link serverStartFailed}, "The server could not start:
 * <reason>"), so the client shows it instead of "Connection closed"; the effect then fails with the start-up's cause
 * once the client closes stdin, or after `refuseFor`.
 *
 * @since 0.1.0 @category constructors
 */
export const serveStdio = <R, RM, ROut, E, RIn, EP, RP>(
  options: StdioOptions<R, RM, ROut, E, RIn, EP, RP>
): Effect.Effect<void, E | EP, RIn | Exclude<Exclude<Requirements<R, RM> | RP, ROut>, Scope.Scope>> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const stdin = options.stdin ?? process.stdin
    const stdout = options.stdout ?? process.stdout
    const gate = new StdioGate(new StdioServerTransport(stdin, stdout))
    // Servers the opening exchange made before the principal was known (a `server/discover` probe may be
    // discarded for an `initialize`): they get their tools and methods once it is, before any held message.
    const unserved: Array<McpServer> = []
    let serve: ((server: McpServer) => void) | undefined
    const factory = () => {
      const server = bareServer(options)
      if (serve === undefined) unserved.push(server)
      else serve(server)
      return server
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => serveStdioSdk(factory, { transport: gate, onerror: errorReporter(runtime, "MCP stdio server reported an error") })),
      (handle) => Effect.promise(() => handle.close())
    )
    const start = Effect.gen(function*() {
      const context = yield* Layer.build(options.services)
      const served = yield* serveFrom(options).pipe(Effect.provide(context))
      const principal = yield* options.principal.pipe(Effect.provide(context))
      return { served, principal }
    })
    // The client closing stdin during start-up ends it: there is no one left to answer.
    const started = yield* Effect.raceFirst(
      Effect.map(Effect.exit(start), Option.some),
      Effect.as(inputEnded(stdin), Option.none())
    )
    if (Option.isNone(started)) return
    if (Exit.isFailure(started.value)) {
      const cause = started.value.cause
      if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
      const message = `The server could not start: ${reasonOf(Cause.squash(cause))}`
      gate.refuse(serverStartFailed, message)
      yield* Effect.logError(message)
      yield* Effect.timeoutOption(inputEnded(stdin), options.refuseFor ?? "10 seconds")
      return yield* Effect.failCause(cause)
    }
    const { principal, served } = started.value.value
    serve = (server) => serveOn(server, served, principal)
    for (const server of unserved.splice(0)) serve(server)
    gate.open()
    yield* inputEnded(stdin)
  }).pipe(Effect.scoped)
