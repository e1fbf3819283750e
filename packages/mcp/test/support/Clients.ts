/**
 * The two official client generations behind one small interface, so each test body runs with both: the
 * 1.x `@modelcontextprotocol/sdk` client (2025-11-25) and the 2.x `@modelcontextprotocol/client` in its
 * modern (2026-07-28) and legacy modes. Each connects in process to a web handler and lists the tools
 * first, as agents do: the 1.x client only validates results against output schemas it has listed.
 */
import { ResultSchema } from "@modelcontextprotocol/sdk/types.js"
import type { Principal } from "@service/core/Principal"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type * as McpHandler from "../../src/McpHandler.js"
import { connectV1, connectV2 } from "./Fixture.js"

/** A tool as `tools/list` showed it. */
export interface ListedTool {
  readonly name: string
  readonly annotations?: Readonly<Record<string, unknown>> | undefined
  readonly inputSchema: { readonly type: string; readonly properties?: Readonly<Record<string, unknown>> | undefined }
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/** A tool result as the client returned it. */
export interface Called {
  readonly isError: boolean
  readonly structuredContent: unknown
  /** The JSON of the first text block: what a model reading text sees. */
  readonly text: unknown
}

/** A JSON-RPC error as the client threw it. */
export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

export interface Caller {
  readonly era: string
  readonly protocolVersion: string | undefined
  /** The tools as listed when the client connected. */
  readonly tools: ReadonlyArray<ListedTool>
  /** Lists the tools again (`tools/list`). */
  readonly list: Effect.Effect<ReadonlyArray<ListedTool>>
  readonly call: (name: string, args: Readonly<Record<string, unknown>>) => Effect.Effect<Called>
  /** A custom method: the result, or the JSON-RPC error. */
  readonly request: (method: string, params: Readonly<Record<string, unknown>>) => Effect.Effect<unknown, RpcError>
}

export type Generation = "1.x" | "2.x modern" | "2.x legacy"

export const generations: ReadonlyArray<Generation> = ["1.x", "2.x modern", "2.x legacy"]

const ErrorShape = Schema.Struct({ code: Schema.Number, message: Schema.String, data: Schema.optional(Schema.Unknown) })
const decodeError = Schema.decodeUnknownSync(ErrorShape)

const firstText = (content: unknown): unknown => {
  if (!Arr.isArray(content)) return undefined
  const block = content[0]
  if (typeof block !== "object" || block === null || !("text" in block) || typeof block.text !== "string") return undefined
  return JSON.parse(block.text)
}

const ResultShape = Schema.Struct({
  isError: Schema.optional(Schema.Boolean),
  structuredContent: Schema.optional(Schema.Unknown),
  content: Schema.optional(Schema.Unknown)
})

const called = (raw: unknown): Called => {
  const result = Schema.decodeUnknownSync(ResultShape)(raw)
  return { isError: result.isError === true, structuredContent: result.structuredContent, text: firstText(result.content) }
}

// Any JSON object: custom results keep every field.
const AnyResult = Schema.standardSchemaV1(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
const AnyResultV1 = ResultSchema.loose()

/** Connects a client of `generation` for `principal`. */
export const connect = (
  generation: Generation,
  web: McpHandler.WebHandler,
  principal: Principal
): Effect.Effect<Caller, never, Scope.Scope> =>
  Effect.gen(function*() {
    if (generation === "1.x") {
      const { client, transport } = yield* connectV1(web, principal)
      const { tools } = yield* Effect.promise(() => client.listTools())
      return {
        era: generation,
        protocolVersion: transport.protocolVersion,
        tools,
        list: Effect.promise(() => client.listTools()).pipe(Effect.map((listed) => listed.tools)),
        call: (name, args) => Effect.promise(() => client.callTool({ name, arguments: { ...args } })).pipe(Effect.map(called)),
        request: (method, params) =>
          Effect.tryPromise({
            try: () => client.request({ method, params: { ...params } }, AnyResultV1),
            catch: (error) => decodeError(error)
          })
      } satisfies Caller
    }
    const client = yield* connectV2(web, principal, generation === "2.x modern" ? "auto" : "legacy")
    const { tools } = yield* Effect.promise(() => client.listTools())
    return {
      era: generation,
      protocolVersion: client.getNegotiatedProtocolVersion(),
      tools,
      list: Effect.promise(() => client.listTools()).pipe(Effect.map((listed) => listed.tools)),
      call: (name, args) => Effect.promise(() => client.callTool({ name, arguments: { ...args } })).pipe(Effect.map(called)),
      request: (method, params) =>
        Effect.tryPromise({
          try: () => client.request({ method, params: { ...params } }, AnyResult),
          catch: (error) => decodeError(error)
        })
    } satisfies Caller
  })
