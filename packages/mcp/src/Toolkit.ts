/**
 * MCP tools derived from operation groups of any domain: one tool per operation served on `mcp`, named
 * `Operation.toolName(prefix, group.mcp.namespace, op.name)`, with the declaration's annotations, texts and
 * JSON Schemas. Every call goes through `Operation.execute` (scope check, rate limit, run, metering), so a
 * call inside a JSON-RPC batch is authorized, limited and metered exactly like a single one.
 *
 * Input validation belongs to the operation (Effect Schema, unknown properties refused with the codec's
 * structural refusal). The SDK validates `tools/call` arguments with the tool's `inputSchema` before the
 * handler runs, and its `fromJsonSchema` rejects with Ajv: an unknown property would then come back as a
 * plain-text error without the domain block. So the schemas given to the SDK only describe: they are
 * listed in `tools/list` and accept every value unchanged.
 *
 * Error results carry `structuredContent` (code, message, request_id and, for a refusal, the domain block)
 * and the tool's `outputSchema` admits them beside the success shape, because the 1.x client validates
 * `structuredContent` against `outputSchema` even when `isError` is set (docs/decisions/0032).
 *
 * @since 0.1.0
 */
import type { CallToolResult, McpServer, StandardSchemaWithJSON, ToolAnnotations } from "@modelcontextprotocol/server"
import type { Forbidden } from "@service/core/AuthError"
import type { CreditsExhausted, Meter } from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import type { Principal } from "@service/core/Principal"
import type { RateLimited, RateLimiter } from "@service/core/RateLimiter"
import * as Refusal from "@service/core/Refusal"
import * as RequestContext from "@service/core/RequestContext"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as AST from "effect/SchemaAST"

/**
 * What serving the tools of groups whose operations need `R` requires from the host runtime: the domain
 * services, the meter and the rate limiter. The request context is provided per call.
 *
 * @since 0.1.0 @category models
 */
export type Requirements<R> = Exclude<R, Operation.Provided> | Meter | RateLimiter

/** @since 0.1.0 @category models */
export interface Options<R> {
  /** The groups to serve; only their operations served on `mcp` become tools. */
  readonly groups: ReadonlyArray<Operation.Group<R>>
  /** First segment of every tool name. Default: the `Operation.SurfacePrefix` in context (`"service"`). */
  readonly prefix?: string | undefined
}

/** A JSON object (a JSON Schema document, a structured result). */
type JsonObject = Readonly<Record<string, unknown>>

/**
 * One tool as derived from its declaration, without SDK objects.
 *
 * @since 0.1.0 @category models
 */
export interface Tool {
  readonly name: string
  /** The group (`Operation.Group.name`) and operation the tool runs. */
  readonly group: string
  readonly operation: string
  readonly title: string
  readonly description: string
  readonly annotations: {
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
  readonly metered: boolean
  /** The output is an envelope (`page`, `results`): results add `shown`, `has_more`, `next_action`. */
  readonly envelope: boolean
  /** JSON Schema (2020-12) of the model-facing input. */
  readonly inputSchema: JsonObject
  /** JSON Schema (2020-12) of `structuredContent`: the success shape or one of the error shapes. */
  readonly outputSchema: JsonObject
  /** `<prefix>/metered` and `<prefix>/operation`. */
  readonly meta: JsonObject
}

/**
 * A tool result without SDK types: the JSON text of `structuredContent` in `content` for clients that
 * read text only.
 *
 * @since 0.1.0 @category models
 */
export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent: JsonObject
  readonly isError?: true | undefined
}

/**
 * The derived tools, ready to register on any number of servers (one per HTTP request, one per stdio
 * connection).
 *
 * @since 0.1.0 @category models
 */
export interface Toolkit {
  readonly prefix: string
  readonly tools: ReadonlyArray<Tool>
  /** Runs the tool named `name` for `principal`. Never fails: refusals and defects become error results. */
  readonly call: (name: string, args: unknown, principal: Principal) => Effect.Effect<ToolResult>
  /** Registers every tool on `server`, answering calls for `principal`. */
  readonly register: (server: McpServer, principal: Principal) => void
}

/**
 * Fields an envelope result carries beside the envelope's `page.returned` / `page.hasMore`.
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
 * An error result that is not a domain refusal: a missing scope, or a defect (only the request id to
 * quote, never internals).
 *
 * @since 0.1.0 @category results
 */
export const ToolError = Schema.Struct({
  code: Schema.Literal("FORBIDDEN", "INTERNAL"),
  message: Schema.String,
  request_id: Schema.String,
  /** With FORBIDDEN: a scope the credential was not given, no person behind it, or a role it does not hold. */
  reason: Schema.optional(Schema.Literal("missing_scope", "person_required", "role_required")),
  /** With `missing_scope`: any one of these scopes authorizes the call (ask for it when signing in again). */
  required_scopes: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "ToolError" })

/**
 * The workspace's rate limit was reached; `retry_after_seconds` is when the next window opens.
 *
 * @since 0.1.0 @category results
 */
export const RateLimitedError = Schema.Struct({
  code: Schema.Literal("RATE_LIMITED"),
  message: Schema.String,
  request_id: Schema.String,
  retry_after_seconds: Schema.Int
}).annotations({ identifier: "RateLimitedError" })

/**
 * The workspace's insight credits do not cover a metered call; nothing ran and nothing was debited.
 *
 * @since 0.1.0 @category results
 */
export const CreditsExhaustedError = Schema.Struct({
  code: Schema.Literal("CREDITS_EXHAUSTED"),
  message: Schema.String,
  request_id: Schema.String,
  semantic_code: Schema.Literal("credits_exhausted"),
  suggested_correction: Schema.String,
  retryable: Schema.Boolean,
  recovery: Schema.Struct({ action: Schema.Literal("wait_for_allowance_or_add_credits") }),
  balance: Schema.Number,
  price: Schema.Number,
  renews_on: Schema.String
}).annotations({ identifier: "CreditsExhaustedError" })

/**
 * A domain refusal: the platform fields and the codec's block under its key (`market_data`...).
 *
 * @since 0.1.0 @category results
 */
export const RefusalError = (codec: Refusal.AnyRefusalCodec) =>
  Schema.Struct({
    code: Schema.Literal(Refusal.platformCode),
    message: Schema.String,
    request_id: Schema.String,
    [codec.key]: codec.block
  }).annotations({ identifier: `${codec.identifier}Refusal` })

/**
 * Effect marks `unknown`, `any` and `object` keywords with `$id: "/schemas/<keyword>"`; several of them in one
 * document make JSON Schema validators (the clients' Ajv) refuse it as ambiguous, so those ids are dropped.
 */
const dropKeywordIds = (value: unknown): unknown => {
  if (Arr.isArray(value)) return value.map(dropKeywordIds)
  if (!Predicate.isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$id" && typeof inner === "string" && inner.startsWith("/schemas/")) continue
    out[key] = dropKeywordIds(inner)
  }
  return out
}

const asObject = (value: unknown): Record<string, unknown> => (Predicate.isRecord(value) ? { ...value } : {})

// "skip" inlines the root instead of a `$ref` to it: the SDK and the clients read `type: "object"` at the root.
const fromAst = (ast: AST.AST, definitions: Record<string, JSONSchema.JsonSchema7>): Record<string, unknown> =>
  asObject(dropKeywordIds(JSONSchema.fromAST(ast, { definitions, target: "jsonSchema2020-12", topLevelReferenceStrategy: "skip" })))

const withDefinitions = (
  root: Record<string, unknown>,
  definitions: Record<string, JSONSchema.JsonSchema7>
): JsonObject => (Object.keys(definitions).length === 0 ? root : { ...root, $defs: asObject(dropKeywordIds(definitions)) })

const isObjectSchema = (schema: JsonObject): boolean => schema["type"] === "object"

const propertiesOf = (schema: JsonObject): Record<string, unknown> => asObject(schema["properties"])

const requiredOf = (schema: JsonObject): ReadonlyArray<string> => {
  const required = schema["required"]
  return Arr.isArray(required) ? required.filter(Predicate.isString) : []
}

const isEnvelopeSchema = (schema: JsonObject): boolean => {
  const properties = propertiesOf(schema)
  return "page" in properties && "results" in properties
}

/** The success shape with the tool fields added as required properties. */
const withToolFields = (success: JsonObject, definitions: Record<string, JSONSchema.JsonSchema7>): JsonObject => {
  const fields = fromAst(ToolFields.ast, definitions)
  return {
    ...success,
    properties: { ...propertiesOf(success), ...propertiesOf(fields) },
    required: [...requiredOf(success), ...requiredOf(fields)]
  }
}

/**
 * The tool's output schema: an object that is the success shape or one of the error shapes. The root keeps
 * `type: "object"`: the 2025-era wire requires it (the SDK would otherwise wrap results in `{ result }`).
 */
const outputSchemaOf = (
  op: Operation.AnyOperation<unknown>
): Option.Option<{ readonly schema: JsonObject; readonly envelope: boolean }> => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const output = fromAst(op.output.ast, definitions)
  if (!isObjectSchema(output)) return Option.none()
  const envelope = isEnvelopeSchema(output)
  const success = envelope ? withToolFields(output, definitions) : output
  const errors = [RefusalError(op.refusals), ToolError, RateLimitedError, ...(op.metered ? [CreditsExhaustedError] : [])].map((schema) => fromAst(schema.ast, definitions))
  return Option.some({
    schema: withDefinitions({ type: "object", anyOf: [success, ...errors] }, definitions),
    envelope
  })
}

const inputSchemaOf = (op: Operation.AnyOperation<unknown>): JsonObject => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  return withDefinitions(fromAst(op.modelInput.ast, definitions), definitions)
}

/**
 * A schema the SDK can list but that accepts every value unchanged (see the module documentation).
 */
const describeOnly = (jsonSchema: JsonObject): StandardSchemaWithJSON<unknown> => ({
  "~standard": {
    version: 1,
    vendor: "effect-schema",
    jsonSchema: { input: () => ({ ...jsonSchema }), output: () => ({ ...jsonSchema }) },
    validate: (value) => ({ value })
  }
})

const EnvelopePage = Schema.Struct({
  page: Schema.NullOr(Schema.Struct({ returned: Schema.Number, hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) })),
  results: Schema.Unknown
})
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
      shown: page !== null ? page.returned : Arr.isArray(results) ? results.length : 1,
      has_more: page !== null && page.hasMore,
      next_action: cursor !== null ? `call again with the same arguments and cursor=${cursor} to read more` : "done"
    }
  })

const result = (structured: JsonObject, isError: boolean): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(structured) }],
  structuredContent: structured,
  ...(isError ? { isError: true } : {})
})

const toSdkResult = (toolResult: ToolResult): CallToolResult => ({
  content: toolResult.content.map((block) => ({ ...block })),
  structuredContent: { ...toolResult.structuredContent },
  ...(toolResult.isError === true ? { isError: true } : {})
})

const internalMessage = "The call failed unexpectedly; quote the request id."

const mcpAnnotations = (annotations: Operation.Annotations): Tool["annotations"] => ({
  readOnlyHint: annotations.readOnly,
  destructiveHint: annotations.destructive,
  idempotentHint: annotations.idempotent,
  openWorldHint: annotations.openWorld
})

interface Entry<R> {
  readonly op: Operation.AnyOperation<R>
  readonly tool: Tool
}

const derive = <R>(prefix: string, groups: ReadonlyArray<Operation.Group<R>>): Effect.Effect<ReadonlyArray<Entry<R>>> =>
  Effect.gen(function*() {
    const entries: Array<Entry<R>> = []
    for (const group of groups) {
      for (const op of Operation.servedOn(group, "mcp")) {
        const name = Operation.toolName(prefix, group.mcp.namespace, op.name)
        if (entries.some((entry) => entry.tool.name === name)) {
          return yield* Effect.dieMessage(`Two operations would both be the MCP tool ${name}.`)
        }
        const output = outputSchemaOf(op)
        if (Option.isNone(output)) {
          return yield* Effect.dieMessage(`The output of operation ${op.name} is not an object; it cannot be an MCP tool.`)
        }
        entries.push({
          op,
          tool: {
            name,
            group: group.name,
            operation: op.name,
            title: op.title,
            description: op.description,
            annotations: mcpAnnotations(op.annotations),
            metered: op.metered,
            envelope: output.value.envelope,
            inputSchema: inputSchemaOf(op),
            outputSchema: output.value.schema,
            meta: { [`${prefix}/metered`]: op.metered, [`${prefix}/operation`]: op.name }
          }
        })
      }
    }
    return entries
  })

/**
 * Derives the tools of `groups`, capturing the current runtime to run calls.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(options: Options<R>): Effect.Effect<Toolkit, never, Requirements<R>> =>
  Effect.gen(function*() {
    const prefix = options.prefix ?? (yield* Operation.SurfacePrefix)
    const runtime = yield* Effect.runtime<Requirements<R>>()
    const entries = yield* derive(prefix, options.groups)

    const success = (entry: Entry<R>, output: unknown): Effect.Effect<ToolResult> => {
      if (!Predicate.isRecord(output)) return Effect.dieMessage(`Operation ${entry.op.name} did not return an object.`)
      if (!entry.tool.envelope) return Effect.succeed(result(output, false))
      return Option.match(toolFields(output), {
        onNone: () => Effect.dieMessage(`Operation ${entry.op.name} did not return an envelope.`),
        onSome: (fields) => Effect.succeed(result({ ...output, ...fields }, false))
      })
    }

    const failure = (entry: Entry<R>, requestId: string) => ({
      Refused: ({ described }: Operation.Refused) =>
        Effect.succeed(result({
          code: Refusal.platformCode,
          message: described.message,
          request_id: requestId,
          [entry.op.refusals.key]: described.block
        }, true)),
      Forbidden: (forbidden: Forbidden) =>
        Effect.succeed(result({
          code: "FORBIDDEN",
          message: forbidden.message,
          request_id: requestId,
          reason: forbidden.reason,
          ...(forbidden.reason === "missing_scope" ? { required_scopes: forbidden.scopes } : {})
        }, true)),
      CreditsExhausted: (exhausted: CreditsExhausted) =>
        Effect.succeed(result({
          code: "CREDITS_EXHAUSTED",
          message: exhausted.message,
          request_id: requestId,
          semantic_code: exhausted.semanticCode,
          suggested_correction: exhausted.suggestedCorrection,
          retryable: false,
          recovery: { action: exhausted.recoveryAction },
          balance: exhausted.balance,
          price: exhausted.price,
          renews_on: exhausted.renewsOn
        }, true)),
      RateLimited: (limited: RateLimited) =>
        Effect.succeed(result({
          code: "RATE_LIMITED",
          message: limited.message,
          request_id: requestId,
          retry_after_seconds: limited.retryAfterSeconds
        }, true))
    })

    const run = (entry: Entry<R>, args: unknown, principal: Principal): Effect.Effect<ToolResult, never, Requirements<R>> =>
      Effect.gen(function*() {
        const requestId = yield* RequestContext.makeRequestId
        return yield* Operation.execute(entry.op, { principal, entrypoint: "mcp", requestId, input: args, canonical: false }).pipe(
          // Discovery operations name tools: they read the prefix this toolkit serves.
          Effect.provideService(Operation.SurfacePrefix, prefix),
          Effect.flatMap((output) => success(entry, output)),
          Effect.catchTags(failure(entry, requestId)),
          // A defect keeps its details in the log; the caller only gets the request id to quote.
          Effect.catchAllCause((cause) =>
            Effect.logError("MCP tool call failed", cause).pipe(
              Effect.as(result({ code: "INTERNAL", message: internalMessage, request_id: requestId }, true))
            )
          ),
          Effect.annotateLogs({ requestId })
        )
      }).pipe(
        Effect.annotateLogs({ tool: entry.tool.name }),
        Effect.withSpan("Toolkit.call", { attributes: { tool: entry.tool.name } })
      )

    const call = (name: string, args: unknown, principal: Principal): Effect.Effect<ToolResult> => {
      const entry = entries.find((candidate) => candidate.tool.name === name)
      if (entry === undefined) return Effect.dieMessage(`No MCP tool named ${name}.`)
      return run(entry, args, principal).pipe(Effect.provide(runtime))
    }

    const runPromise = Runtime.runPromise(runtime)

    const register = (server: McpServer, principal: Principal): void => {
      for (const entry of entries) {
        const { tool } = entry
        const annotations: ToolAnnotations = { ...tool.annotations }
        server.registerTool(
          tool.name,
          {
            title: tool.title,
            description: tool.description,
            inputSchema: describeOnly(tool.inputSchema),
            outputSchema: describeOnly(tool.outputSchema),
            annotations,
            _meta: { ...tool.meta }
          },
          (args, ctx) => runPromise(run(entry, args, principal), { signal: ctx.mcpReq.signal }).then(toSdkResult)
        )
      }
    }

    return { prefix, tools: entries.map((entry) => entry.tool), call, register }
  })
