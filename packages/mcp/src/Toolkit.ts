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
 * What an agent pays for (docs/decisions/0074): `tools/list` names only the tools the credential can call
 * (its scopes, and the declaration's role or person rule), with concise descriptions (the declaration's first
 * paragraph and the codes it refuses with), input schemas without the titles and descriptions Effect derives
 * from its own filters (`maxLength(200)`, "a string that will be trimmed"), and no output schemas. A result is
 * one compact JSON text block and nothing else, success or error: many hosts show a model only `content`, and
 * `structuredContent` beside it would send every answer twice. A declared tool the credential cannot call is
 * still answered, with the same FORBIDDEN result (`required_scopes`...) an unlisted call deserves.
 *
 * @since 0.1.0
 */
import type { CallToolResult, McpServer, StandardSchemaWithJSON, Tool as SdkTool, ToolAnnotations } from "@modelcontextprotocol/server"
import type { Forbidden } from "@service/core/AuthError"
import type { CreditsExhausted, Meter } from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import type { Principal } from "@service/core/Principal"
import type { RateLimited, RateLimiter } from "@service/core/RateLimiter"
import * as Refusal from "@service/core/Refusal"
import * as RequestContext from "@service/core/RequestContext"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as JSONSchema from "effect/JSONSchema"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

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
  /** Concise, for a model: the declaration's first paragraph and the codes the operation refuses with. */
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
  /** `<prefix>/metered: true` on a metered tool; empty otherwise. */
  readonly meta: JsonObject
}

/**
 * A tool result without SDK types: one text block holding the compact JSON of `json`, which is what goes on
 * the wire (no `structuredContent`).
 *
 * @since 0.1.0 @category models
 */
export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  /** The object the text block encodes (not sent separately). */
  readonly json: JsonObject
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
  /** The tools `principal` can call: the ones `tools/list` shows it. */
  readonly listedFor: (principal: Principal) => ReadonlyArray<Tool>
  /**
   * Registers every tool on `server`, answering calls for `principal`, and lists only the tools it can call;
   * a call to any other declared tool is answered with its FORBIDDEN result.
   */
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
 * Titles and descriptions Effect gives its own schemas (`Trimmed`, `unknown`, "a string that will be trimmed"...):
 * names of annotations, not words for a model. Read from the `Schema` module itself, so a new Effect version's
 * names are covered too.
 */
const effectDefaults = ((): { readonly titles: ReadonlySet<string>; readonly descriptions: ReadonlySet<string> } => {
  const titles = new Set<string>()
  const descriptions = new Set<string>()
  // A transformation (`Trim`) describes its encoded side ("a string that will be trimmed"): both sides are read.
  const read = (ast: AST.AST): void => {
    for (const title of [AST.getTitleAnnotation(ast), AST.getIdentifierAnnotation(ast)]) {
      if (Option.isSome(title)) titles.add(title.value)
    }
    const description = AST.getDescriptionAnnotation(ast)
    if (Option.isSome(description)) descriptions.add(description.value)
    if (AST.isTransformation(ast)) {
      read(ast.from)
      read(ast.to)
    } else if (AST.isRefinement(ast)) {
      read(ast.from)
    }
  }
  for (const value of Object.values(Schema)) {
    if (Schema.isSchema(value)) read(value.ast)
  }
  return { titles, descriptions }
})()

// Effect's filters title themselves `name(arguments)` (`maxLength(200)`, `between(1, 50)`).
const filterTitle = /^[A-Za-z]+\(.*\)$/
// ...and describe themselves in lower case from the constraint ("a string at most 200 character(s) long",
// "a string matching the pattern ^\d{5}$", "an array of at most 3 item(s)"), which the keyword already says.
const filterDescription = /^an? [a-z]/
const constraintKeywords = ["maxLength", "minLength", "pattern", "maxItems", "minItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"]

const isAnnotationTitle = (title: unknown): boolean =>
  typeof title === "string" && (filterTitle.test(title) || effectDefaults.titles.has(title))

const isDefaultDescription = (node: Record<string, unknown>, description: unknown): boolean =>
  typeof description === "string" &&
  (effectDefaults.descriptions.has(description) ||
    (filterDescription.test(description) && constraintKeywords.some((keyword) => keyword in node)))

const isNullType = (value: unknown): boolean => Predicate.isRecord(value) && Object.keys(value).length === 1 && value["type"] === "null"

/**
 * Makes a JSON Schema document cheaper to read without changing what it accepts:
 *
 * - Effect marks `unknown`, `any` and `object` keywords with `$id: "/schemas/<keyword>"`; several of them in one
 *   document make JSON Schema validators (the clients' Ajv) refuse it as ambiguous, so those ids are dropped;
 * - titles and descriptions Effect derives from its own annotations are dropped (real ones stay);
 * - `anyOf: [{type: T, ...}, {type: "null"}]` (Effect's `NullOr`) becomes `type: [T, "null"]`;
 * - an empty `required`, `additionalProperties: false` (the operation's decode refuses unknown arguments, naming
 *   them) and the `type` of a string enum are dropped.
 */
const compact = (value: unknown): unknown => {
  if (Arr.isArray(value)) return value.map(compact)
  if (!Predicate.isRecord(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) {
    if (key === "$id" && typeof inner === "string" && inner.startsWith("/schemas/")) continue
    if (key === "title" && isAnnotationTitle(inner)) continue
    if (key === "description" && isDefaultDescription(value, inner)) continue
    if (key === "required" && Arr.isArray(inner) && inner.length === 0) continue
    // Unknown arguments are refused by the operation's decode anyway, with a structural refusal naming the field.
    if (key === "additionalProperties" && inner === false) continue
    // An enum says the type already.
    if (key === "type" && inner === "string" && Arr.isArray(value["enum"]) && value["enum"].every(Predicate.isString)) continue
    out[key] = compact(inner)
  }
  const anyOf = out["anyOf"]
  if (Arr.isArray(anyOf) && anyOf.length === 2) {
    const [first, second] = anyOf
    const other = isNullType(second) ? first : isNullType(first) ? second : undefined
    if (Predicate.isRecord(other) && typeof other["type"] === "string" && !("anyOf" in other)) {
      const { anyOf: _, ...rest } = out
      return { ...other, ...rest, type: [other["type"], "null"] }
    }
  }
  return out
}

const asObject = (value: unknown): Record<string, unknown> => (Predicate.isRecord(value) ? { ...value } : {})

// "skip" inlines the root instead of a `$ref` to it: the SDK and the clients read `type: "object"` at the root.
const fromAst = (ast: AST.AST, definitions: Record<string, JSONSchema.JsonSchema7>): Record<string, unknown> =>
  asObject(compact(JSONSchema.fromAST(ast, { definitions, target: "jsonSchema2020-12", topLevelReferenceStrategy: "skip" })))

const withDefinitions = (
  root: Record<string, unknown>,
  definitions: Record<string, JSONSchema.JsonSchema7>
): JsonObject => (Object.keys(definitions).length === 0 ? root : { ...root, $defs: asObject(compact(definitions)) })

const isObjectSchema = (schema: JsonObject): boolean => schema["type"] === "object"

const propertiesOf = (schema: JsonObject): Record<string, unknown> => asObject(schema["properties"])

const isEnvelopeSchema = (schema: JsonObject): boolean => {
  const properties = propertiesOf(schema)
  return "page" in properties && "results" in properties
}

/** Whether the output is an object (a tool result must be one) and an envelope; its schema is not listed. */
const outputShapeOf = (op: Operation.AnyOperation<unknown>): Option.Option<{ readonly envelope: boolean }> => {
  const output = fromAst(op.output.ast, {})
  return isObjectSchema(output) ? Option.some({ envelope: isEnvelopeSchema(output) }) : Option.none()
}

const inputSchemaOf = (op: Operation.AnyOperation<unknown>): JsonObject => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  return withDefinitions(fromAst(op.modelInput.ast, definitions), definitions)
}

/**
 * Codes every operation may answer, which the server instructions explain once (bad input, an unreachable or
 * unpublished store, a timeout): listing them on every tool would only repeat them.
 */
const commonCodes: ReadonlySet<string> = new Set([
  "invalid_field_value",
  "serving_projection_unavailable",
  "serving_projection_stale",
  "market_data_timeout",
  "market_data_unavailable",
  "invalid_cursor",
  "cursor_stale"
])

// `<thing>_not_found` says itself what happened: an id that names nothing the workspace holds.
const isCommonCode = (code: string): boolean => commonCodes.has(code) || code.endsWith("_not_found")

/**
 * The MCP description: the declaration's first paragraph (HTTP and the CLI keep the whole text) and, when the
 * operation has refusals of its own, their codes, so a model knows what it may meet and look up in
 * `recovery.action`.
 *
 * @since 0.1.0 @category descriptions
 */
export const conciseDescription = (description: string, refuses: ReadonlyArray<string>): string => {
  const first = description.split(/\n\s*\n/)[0]?.trim() ?? ""
  const own = refuses.filter((code) => !isCommonCode(code) && !first.includes(code))
  return own.length === 0 ? first : `${first} Refuses: ${own.join(", ")}.`
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
      // The cursor is in `page.nextCursor` already: naming it again would add its length to every page.
      next_action: cursor !== null ? "call again with the same arguments and cursor set to page.nextCursor to read more" : "done"
    }
  })

const result = (json: JsonObject, isError: boolean): ToolResult => ({
  content: [{ type: "text", text: JSON.stringify(json) }],
  json,
  ...(isError ? { isError: true } : {})
})

const toSdkResult = (toolResult: ToolResult): CallToolResult => ({
  content: toolResult.content.map((block) => ({ ...block })),
  ...(toolResult.isError === true ? { isError: true } : {})
})

const internalMessage = "The call failed unexpectedly; quote the request id."

const mcpAnnotations = (annotations: Operation.Annotations): Tool["annotations"] => ({
  readOnlyHint: annotations.readOnly,
  destructiveHint: annotations.destructive,
  idempotentHint: annotations.idempotent,
  openWorldHint: annotations.openWorld
})

/**
 * Whether `principal` can call `op`: it holds one of the scopes and, where the declaration names a rule (a role, a
 * person behind the credential), the rule admits it. A rule that cannot decide at once lists the tool: the call
 * checks it again anyway.
 *
 * @since 0.1.0 @category listing
 */
export const callableBy = (op: Operation.AnyOperation<unknown>, principal: Principal): boolean =>
  // A rule that cannot decide synchronously (a defect) is left to the call itself: the tool stays listed.
  Exit.match(Effect.runSyncExit(Operation.permits(op, principal)), {
    onSuccess: () => true,
    onFailure: (cause) => Option.isNone(Cause.failureOption(cause))
  })

/**
 * The hints a client cannot assume: MCP reads a missing hint as its default (`readOnlyHint` false,
 * `destructiveHint` true, `idempotentHint` false, `openWorldHint` true), and the destructive and idempotent hints
 * mean nothing on a read-only tool.
 *
 * @since 0.1.0 @category listing
 */
export const listedAnnotations = (annotations: Tool["annotations"]): ToolAnnotations => ({
  ...(annotations.readOnlyHint ? { readOnlyHint: true } : {}),
  ...(!annotations.readOnlyHint && !annotations.destructiveHint ? { destructiveHint: false } : {}),
  ...(!annotations.readOnlyHint && annotations.idempotentHint ? { idempotentHint: true } : {}),
  ...(annotations.openWorldHint ? {} : { openWorldHint: false })
})

// No `title`: it is for display (hosts fall back to the name), and 66 of them cost an agent 2,000 characters.
const toSdkTool = (tool: Tool): SdkTool => ({
  name: tool.name,
  description: tool.description,
  inputSchema: { ...tool.inputSchema, type: "object" },
  annotations: listedAnnotations(tool.annotations),
  ...(Object.keys(tool.meta).length === 0 ? {} : { _meta: { ...tool.meta } })
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
        const output = outputShapeOf(op)
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
            description: conciseDescription(op.description, op.refuses),
            annotations: mcpAnnotations(op.annotations),
            metered: op.metered,
            envelope: output.value.envelope,
            inputSchema: inputSchemaOf(op),
            // Only a metered tool carries the flag: the tool name already names the operation.
            meta: op.metered ? { [`${prefix}/metered`]: true } : {}
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
        Effect.withSpan("Toolkit.call", { captureStackTrace: false, attributes: { tool: entry.tool.name } })
      )

    const call = (name: string, args: unknown, principal: Principal): Effect.Effect<ToolResult> => {
      const entry = entries.find((candidate) => candidate.tool.name === name)
      if (entry === undefined) return Effect.dieMessage(`No MCP tool named ${name}.`)
      return run(entry, args, principal).pipe(Effect.provide(runtime))
    }

    const runPromise = Runtime.runPromise(runtime)

    const listedFor = (principal: Principal): ReadonlyArray<Tool> =>
      entries.filter((entry) => callableBy(entry.op, principal)).map((entry) => entry.tool)

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
            annotations,
            _meta: { ...tool.meta }
          },
          (args, ctx) => runPromise(run(entry, args, principal), { signal: ctx.mcpReq.signal }).then(toSdkResult)
        )
      }
      // Every tool stays registered, so a call to one the credential cannot use is answered with its FORBIDDEN
      // result; only the listing is narrowed to the tools it can call.
      const listed = listedFor(principal).map(toSdkTool)
      server.server.setRequestHandler("tools/list", () => ({ tools: listed.map((tool) => ({ ...tool })) }))
    }

    return { prefix, tools: entries.map((entry) => entry.tool), call, listedFor, register }
  })
