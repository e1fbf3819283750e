/**
 * Serving the market tools with the official SDK v2: a web-standard handler for HTTP (protocol
 * 2026-07-28 and the 2025 era, stateless) and a stdio server for local clients. The host authenticates;
 * this module only receives the resulting {@link Principal}. No SDK type appears in this module's API.
 *
 * @since 0.1.0
 */
import { type AuthInfo, createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import { serveStdio as serveStdioSdk, StdioServerTransport } from "@modelcontextprotocol/server/stdio"
import { Principal } from "@service/core/Principal"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import type { Readable, Writable } from "node:stream"
import * as MarketTools from "./MarketTools.js"

/** @since 0.1.0 @category models */
export interface ServerOptions {
  /** Server name reported in `serverInfo`. */
  readonly name: string
  /** Server version reported in `serverInfo`. */
  readonly version: string
  /** First segment of every tool name (default `"service"`). */
  readonly toolPrefix?: string | undefined
}

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

const principalOf = (authInfo: AuthInfo | undefined): Option.Option<Principal> => {
  const candidate = authInfo?.extra?.[PRINCIPAL_KEY]
  return candidate instanceof Principal ? Option.some(candidate) : Option.none()
}

const newServer = (
  options: ServerOptions,
  tools: MarketTools.MarketTools,
  principal: Option.Option<Principal>
): McpServer => {
  const server = new McpServer({ name: options.name, version: options.version }, {
    // The tool list is fixed for the life of a server: no list_changed notifications will come.
    capabilities: { tools: { listChanged: false } }
  })
  tools.register(server, principal)
  return server
}

const toolOptions = (options: ServerOptions): MarketTools.Options =>
  options.toolPrefix === undefined ? {} : { prefix: options.toolPrefix }

const errorReporter = (runtime: Runtime.Runtime<never>, what: string) => (error: Error): void => {
  // Rejected requests (bad headers, wrong method) land here too: useful when debugging, noise otherwise.
  Runtime.runFork(runtime)(Effect.logDebug(what, error.message))
}

/**
 * A web handler serving the market tools: protocol 2026-07-28 (stateless, per-request `_meta` envelope)
 * and, on the same endpoint, 2025-era clients through the SDK's stateless legacy fallback. A fresh
 * `McpServer` is built per request for the principal passed to `handle`.
 *
 * @since 0.1.0 @category constructors
 */
export const makeWebHandler = (options: ServerOptions): Effect.Effect<WebHandler, never, MarketTools.Requirements> =>
  Effect.gen(function*() {
    const tools = yield* MarketTools.make(toolOptions(options))
    const runtime = yield* Effect.runtime<never>()
    const mcp = createMcpHandler((ctx) => newServer(options, tools, principalOf(ctx.authInfo)), {
      legacy: "stateless",
      onerror: errorReporter(runtime, "MCP HTTP handler reported an error")
    })
    return {
      handle: (request, principal) => mcp.fetch(request, { authInfo: authInfoOf(principal) }),
      close: () => mcp.close()
    }
  })

/** @since 0.1.0 @category models */
export interface StdioOptions extends ServerOptions {
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
 * Serves the market tools over stdio for a fixed principal until the client closes stdin (or the fiber
 * is interrupted). The SDK's `serveStdio` picks the era from the opening message: a `server/discover`
 * probe gets 2026-07-28, an `initialize` the 2025 era.
 *
 * @since 0.1.0 @category constructors
 */
export const serveStdio = (options: StdioOptions): Effect.Effect<void, never, MarketTools.Requirements> =>
  Effect.gen(function*() {
    const tools = yield* MarketTools.make(toolOptions(options))
    const runtime = yield* Effect.runtime<never>()
    const stdin = options.stdin ?? process.stdin
    const stdout = options.stdout ?? process.stdout
    const principal = Option.some(options.principal)
    yield* Effect.acquireUseRelease(
      Effect.sync(() =>
        serveStdioSdk(() => newServer(options, tools, principal), {
          transport: new StdioServerTransport(stdin, stdout),
          onerror: errorReporter(runtime, "MCP stdio server reported an error")
        })
      ),
      () => inputEnded(stdin),
      (handle) => Effect.promise(() => handle.close())
    )
  })
