/**
 * The market-data operations as MCP tools: one `<prefix>_market_<operation>` tool per declaration in
 * `Operations.all`, registered on an SDK v2 `McpServer`. Names, texts and schemas are derived from the
 * declarations; calls run the operation's `runModel` through the Effect runtime captured by {@link make}.
 *
 * Input validation belongs to `runModel` (Effect Schema, unknown properties refused with
 * `invalid_field_value` and `allowed_values`). The SDK validates `tools/call` arguments with the tool's
 * `inputSchema` before the handler runs, and `fromJsonSchema` validates with Ajv: an unknown property
 * (Effect emits `additionalProperties: false`) would then come back as a plain-text `isError` result
 * without `structuredContent` or a `market_data` block. Ajv neither strips nor coerces, it only rejects.
 * So both schemas given to the SDK here only describe: they advertise the JSON Schema in `tools/list` and
 * accept any value unchanged.
 *
 * @since 0.1.0
 */
import type { McpServer, CallToolResult, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server"
import { Unauthenticated } from "@service/core/AuthError"
import * as Authorization from "@service/core/Authorization"
import type { Principal } from "@service/core/Principal"
import * as RequestContext from "@service/core/RequestContext"
import { PageInfo } from "@service/market-contract/Envelope"
import { toBlock } from "@service/market-contract/MarketError"
import * as Operation from "@service/market-contract/Operation"
import * as Operations from "@service/market-contract/Operations"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/**
 * What the tools need from the host runtime: the market service. The request context is provided per call.
 *
 * @since 0.1.0 @category models
 */
export type Requirements = Exclude<Operations.Requirements, RequestContext.RequestContext>

/** @since 0.1.0 @category models */
export interface Options {
  /** First segment of every tool name (default `"service"`): `<prefix>_market_<operation>`. */
  readonly prefix?: string | undefined
  /** The operations to serve (default `Operations.all`). */
  readonly operations?: ReadonlyArray<Operation.AnyOperation<Operations.Requirements>> | undefined
}

/**
 * One tool as derived from its declaration, without SDK objects.
 *
 * @since 0.1.0 @category models
 */
export interface MarketTool {
  readonly name: string
  readonly operation: string
  readonly title: string
  readonly description: string
  readonly metered: boolean
  /** JSON Schema (2020-12) of the model-facing input. */
  readonly inputSchema: Readonly<Record<string, unknown>>
  /** JSON Schema (2020-12) of `structuredContent` on success: the envelope plus `shown`, `has_more`, `next_action`. */
  readonly outputSchema: Readonly<Record<string, unknown>>
}

/**
 * The derived tools, ready to register on any number of servers (one per HTTP request, one per stdio
 * connection).
 *
 * @since 0.1.0 @category models
 */
export interface MarketTools {
  readonly tools: ReadonlyArray<MarketTool>
  /**
   * Registers every tool on `server`. Calls are answered for `principal`; with `Option.none()` (a host
   * that did not authenticate) every call is refused with `UNAUTHENTICATED`.
   */
  readonly register: (server: McpServer, principal: Option.Option<Principal>) => void
}

/** @since 0.1.0 @category constants */
export const defaultPrefix = "service"

/**
 * Every tool is a read: no side effects, same answer for the same corpus, closed world (our corpus only).
 *
 * @since 0.1.0 @category constants
 */
export const annotations: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false
}

/**
 * The tool name of an operation. The operation `market_capabilities` already carries the `market_` word,
 * so it becomes `<prefix>_market_capabilities`, not `<prefix>_market_market_capabilities`.
 *
 * @since 0.1.0 @category naming
 */
export const toolName: (prefix: string, operation: string) => string = Operation.toolName

/**
 * Fields the MCP result adds beside the envelope's `page.returned` / `page.hasMore`.
 *
 * @since 0.1.0 @category models
 */
export const ToolFields = Schema.Struct({
  shown: Schema.Number.annotations({ description: "Rows (or records) in this response." }),
  has_more: Schema.Boolean.annotations({ description: "True when another page can be read with the cursor." }),
  next_action: Schema.String.annotations({ description: "What to do next: how to read more, or \"done\"." })
})
/** @since 0.1.0 @category models */
export type ToolFields = typeof ToolFields.Type

/**
 * Effect marks `unknown`, `any` and `object` keywords with `$id: "/schemas/<keyword>"`; several of them in one
 * document make JSON Schema validators (the clients' Ajv) refuse it as ambiguous, so those ids are dropped.
 */
const dropKeywordIds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(dropKeywordIds)
  if (!Predicate.isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$id" && typeof inner === "string" && inner.startsWith("/schemas/")) continue
    out[key] = dropKeywordIds(inner)
  }
  return out
}

const toJsonSchema = (ast: AST.AST): Record<string, unknown> => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  // "skip" inlines the root instead of a `$ref` to it: the SDK and clients read `type: "object"` at the root.
  const root = JSONSchema.fromAST(ast, { definitions, target: "jsonSchema2020-12", topLevelReferenceStrategy: "skip" })
  const document = Object.keys(definitions).length === 0 ? { ...root } : { ...root, $defs: definitions }
  const cleaned = dropKeywordIds(document)
  return Predicate.isRecord(cleaned) ? { ...cleaned } : document
}

// The envelope is a struct; the tool output is the same struct with the tool fields added.
const withToolFields = (output: AST.AST): Option.Option<AST.AST> =>
  AST.isTypeLiteral(output) && AST.isTypeLiteral(ToolFields.ast)
    ? Option.some(
      new AST.TypeLiteral(
        [...output.propertySignatures, ...ToolFields.ast.propertySignatures],
        output.indexSignatures
      )
    )
    : Option.none()

/**
 * A schema the SDK can list but that accepts every value unchanged (see the module documentation).
 */
const describeOnly = (jsonSchema: Readonly<Record<string, unknown>>): StandardSchemaWithJSON<unknown> => ({
  "~standard": {
    version: 1,
    vendor: "effect-schema",
    jsonSchema: { input: () => ({ ...jsonSchema }), output: () => ({ ...jsonSchema }) },
    validate: (value) => ({ value })
  }
})

const EnvelopePage = Schema.Struct({ page: Schema.NullOr(PageInfo), results: Schema.Unknown })
const decodeEnvelopePage = Schema.decodeUnknownOption(EnvelopePage)

/**
 * The tool fields for an encoded envelope: `shown` is `page.returned` when paginated, the array length
 * for list results, otherwise 1 (one record).
 *
 * @since 0.1.0 @category results
 */
export const toolFields = (envelope: unknown): Option.Option<ToolFields> =>
  Option.map(decodeEnvelopePage(envelope), ({ page, results }) => {
    const cursor = page !== null && page.hasMore ? page.nextCursor : null
    return {
      shown: page !== null ? page.returned : Array.isArray(results) ? results.length : 1,
      has_more: page !== null && page.hasMore,
      next_action: cursor !== null ? `call again with the same arguments and cursor=${cursor} to read more` : "done"
    }
  })

const textResult = (structured: Readonly<Record<string, unknown>>, isError: boolean): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(structured) }],
  structuredContent: { ...structured },
  ...(isError ? { isError: true } : {})
})

const refusalResult = (
  code: "VALIDATION_FAILED" | "FORBIDDEN" | "UNAUTHENTICATED" | "INTERNAL",
  message: string,
  requestId: string,
  extra: Readonly<Record<string, unknown>> = {}
): CallToolResult => textResult({ code, message, request_id: requestId, ...extra }, true)

/**
 * Builds the tools of every operation in `Operations.all` (or `options.operations`), capturing the current
 * runtime to run calls.
 *
 * @since 0.1.0 @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<MarketTools, never, Requirements> =>
  Effect.gen(function*() {
    const prefix = options.prefix ?? defaultPrefix
    const runtime = yield* Effect.runtime<Requirements>()
    const runPromise = Runtime.runPromise(runtime)

    const derived = yield* Effect.forEach(options.operations ?? Operations.all, (op) =>
      Option.match(withToolFields(op.output.ast), {
        onNone: () => Effect.dieMessage(`The output of operation ${op.name} is not a struct; it cannot be an MCP tool.`),
        onSome: (outputAst) =>
          Effect.succeed({
            op,
            tool: {
              name: toolName(prefix, op.name),
              operation: op.name,
              title: op.title,
              description: op.description,
              metered: op.metered,
              inputSchema: toJsonSchema(op.modelInput.ast),
              outputSchema: toJsonSchema(outputAst)
            } satisfies MarketTool
          })
      }))

    const call = (
      op: Operation.AnyOperation<Operations.Requirements>,
      principal: Option.Option<Principal>,
      args: unknown
    ): Effect.Effect<CallToolResult, never, Requirements> =>
      Effect.gen(function*() {
        const { requestId } = yield* RequestContext.RequestContext
        const answer = Effect.gen(function*() {
          const caller = yield* Option.match(principal, {
            onNone: (): Effect.Effect<Principal, Unauthenticated> => Effect.fail(new Unauthenticated()),
            onSome: Effect.succeed
          })
          yield* Authorization.requireScope(caller, Operations.readScopes)
          const envelope = yield* op.runModel(args)
          const fields = toolFields(envelope)
          if (!Predicate.isRecord(envelope) || Option.isNone(fields)) {
            return yield* Effect.dieMessage(`Operation ${op.name} did not return an envelope.`)
          }
          return textResult({ ...envelope, ...fields.value }, false)
        })
        return yield* answer.pipe(
          Effect.catchTags({
            MarketDataRefusal: (refusal) =>
              Effect.succeed(
                refusalResult("VALIDATION_FAILED", refusal.why, requestId, { market_data: toBlock(refusal) })
              ),
            Forbidden: (forbidden) => Effect.succeed(refusalResult("FORBIDDEN", forbidden.message, requestId)),
            Unauthenticated: (error) => Effect.succeed(refusalResult("UNAUTHENTICATED", error.message, requestId))
          }),
          // A defect keeps its details in the log; the caller only gets the request id to quote.
          Effect.catchAllCause((cause) =>
            Effect.logError("MCP tool call failed", cause).pipe(
              Effect.as(refusalResult("INTERNAL", "The call failed unexpectedly; quote the request id.", requestId))
            )
          )
        )
      }).pipe(
        Effect.annotateLogs({ tool: toolName(prefix, op.name) }),
        Effect.withSpan("MarketTools.call", { attributes: { operation: op.name } }),
        RequestContext.withFreshRequest("mcp")
      )

    const register = (server: McpServer, principal: Option.Option<Principal>): void => {
      for (const { op, tool } of derived) {
        server.registerTool(
          tool.name,
          {
            title: tool.title,
            description: tool.description,
            inputSchema: describeOnly(tool.inputSchema),
            outputSchema: describeOnly(tool.outputSchema),
            annotations,
            _meta: { [`${prefix}/metered`]: tool.metered, [`${prefix}/operation`]: tool.operation }
          },
          (args, ctx) => runPromise(call(op, principal, args), { signal: ctx.mcpReq.signal })
        )
      }
    }

    return { tools: derived.map(({ tool }) => tool), register }
  })
