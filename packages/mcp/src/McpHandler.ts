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
import * as Arr from "effect/Array"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as NodeReadline from "node:readline"
import type { Readable, Writable } from "node:stream"
import type * as Method from "@service/core/Method"
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
  readonly events: boolean
}

/** The MCP Events extension's id (SEP-3415). @since 0.1.0 @category constants */
export const EVENTS_EXTENSION = "io.modelcontextprotocol/events"

const newServer = <RM>(
  info: { readonly name: string; readonly version: string; readonly instructions?: string | undefined },
  served: Served<RM>,
  principal: Principal | undefined
): McpServer => {
  // The tool list is fixed for the life of a server: no list_changed notifications will come. The top-level
  // `events` key is not in the SDK's capability type; a variable (not a literal) carries it through unchanged.
  const eventsCapabilities = { extensions: { [EVENTS_EXTENSION]: {} }, events: {} }
  const capabilities = served.events ? { tools: { listChanged: false }, ...eventsCapabilities } : { tools: { listChanged: false } }
  const server = new McpServer(
    { name: info.name, version: info.version },
    info.instructions === undefined ? { capabilities } : { capabilities, instructions: info.instructions }
  )
  // A request the host did not authenticate gets no tools and no methods: nothing runs without a principal.
  if (principal === undefined) return server
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
  return server
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

const serve = <R, RM>(options: Options<R, RM>): Effect.Effect<Served<RM>, never, Requirements<R, RM>> =>
  Effect.gen(function*() {
    const toolkit = yield* Toolkit.make({ groups: options.groups, prefix: options.prefix })
    const runtime = yield* Effect.runtime<RM>()
    const methods = options.methods ?? []
    // The extension is advertised when its methods are served (SEP-3415 names them `events/*`), unless told.
    return { toolkit, methods, runtime, events: options.events ?? methods.some((method) => method.method.startsWith("events/")) }
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
    const served = yield* serve(options)
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
export interface StdioOptions<R, RM> extends Options<R, RM> {
  /** Every call is answered for this principal (stdio has no per-request credential). */
  readonly principal: Principal
  /** Defaults to `process.stdin`. */
  readonly stdin?: Readable | undefined
  /** Defaults to `process.stdout`: nothing else may write there. */
  readonly stdout?: Writable | undefined
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
 * Serves the tools of `groups` and the extra methods over stdio for a fixed principal until the client
 * closes stdin (or the fiber is interrupted). The SDK's `serveStdio` picks the era from the opening
 * message: a `server/discover` probe gets 2026-07-28, an `initialize` the 2025 era.
 *
 * @since 0.1.0 @category constructors
 */
export const serveStdio = <R, RM = never>(
  options: StdioOptions<R, RM>
): Effect.Effect<void, never, Requirements<R, RM>> =>
  Effect.gen(function*() {
    const served = yield* serve(options)
    const runtime = yield* Effect.runtime<never>()
    const stdin = options.stdin ?? process.stdin
    const stdout = options.stdout ?? process.stdout
    yield* Effect.acquireUseRelease(
      Effect.sync(() =>
        serveStdioSdk(() => newServer(options, served, options.principal), {
          transport: new StdioServerTransport(stdin, stdout),
          onerror: errorReporter(runtime, "MCP stdio server reported an error")
        })
      ),
      () => inputEnded(stdin),
      (handle) => Effect.promise(() => handle.close())
    )
  })

/**
 * JSON-RPC error code of an answer from a stdio server that could not start (the JSON-RPC "server error" range).
 *
 * @since 0.1.0 @category constants
 */
export const serverStartFailed = -32000

const requestIdOf = (line: string): Option.Option<string | number> => {
  const parsed = Either.try((): unknown => JSON.parse(line))
  if (Either.isLeft(parsed)) return Option.none()
  const message = parsed.right
  if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return Option.none()
  const id = message.id
  return typeof id === "string" || typeof id === "number" ? Option.some(id) : Option.none()
}

/**
 * For a stdio server that could not start (a locked data folder, a bad key): answers every request the client sends
 * (its `server/discover` probe, its `initialize`) with a JSON-RPC error whose message says why, so the client shows
 * the reason instead of "Connection closed". Completes when the client closes stdin, or after `wait` (default 10 s)
 * when it does not.
 *
 * @since 0.1.0 @category constructors
 */
export const refuseStdio = (
  reason: string,
  options: { readonly stdin?: Readable | undefined; readonly stdout?: Writable | undefined; readonly wait?: Duration.DurationInput | undefined } = {}
): Effect.Effect<void> => {
  const stdin = options.stdin ?? process.stdin
  const stdout = options.stdout ?? process.stdout
  const message = `The server could not start: ${reason}`
  const answering = Effect.async<void>((resume) => {
    const lines = NodeReadline.createInterface({ input: stdin, crlfDelay: Infinity })
    lines.on("line", (line) => {
      const id = requestIdOf(line)
      if (Option.isNone(id)) return
      stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: id.value, error: { code: serverStartFailed, message } })}\n`)
    })
    lines.once("close", () => resume(Effect.void))
    return Effect.sync(() => lines.close())
  })
  return answering.pipe(Effect.timeoutOption(options.wait ?? "10 seconds"), Effect.asVoid)
}
