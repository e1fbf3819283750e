import { assert, describe, it } from "@effect/vitest"
import { fromJsonSchema } from "@modelcontextprotocol/server"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { CredentialId, WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import * as Meter from "@service/core/Meter"
import * as Operation from "@service/core/Operation"
import { Principal, type Scope } from "@service/core/Principal"
import * as RateLimiter from "@service/core/RateLimiter"
import * as Refusal from "@service/core/Refusal"
import { Workspace } from "@service/core/Workspace"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Toolkit from "../src/Toolkit.js"

// A toy domain with no database: what the toolkit derives must come from the declarations alone.
class ToyRefusal extends Schema.TaggedError<ToyRefusal>()("ToyRefusal", { code: Schema.Literal("bad_value", "gone"), why: Schema.String }) {}

const codec = Refusal.makeCodec({
  key: "toy",
  identifier: "Toy",
  tag: "ToyRefusal",
  is: (u: unknown): u is ToyRefusal => u instanceof ToyRefusal,
  rules: {
    bad_value: { status: 400, retryable: false, action: "fix_arguments", description: "a value is wrong" },
    gone: { status: 404, retryable: false, action: "search_again", description: "the item is gone" }
  },
  code: (r) => r.code,
  message: (r) => r.why,
  toBlock: (r) => ({ code: r.code, why: r.why, suggested_correction: "Send another word." }),
  block: Schema.Struct({ code: Schema.String, why: Schema.String, suggested_correction: Schema.String }),
  invalidInput: (input) => new ToyRefusal({ code: "bad_value", why: input.why }),
  invalidInputCode: "bad_value",
  codeField: "code",
  sample: (code) => new ToyRefusal({ code, why: `sample ${code}` })
})

const Page = Schema.NullOr(Schema.Struct({ returned: Schema.Number, hasMore: Schema.Boolean, nextCursor: Schema.NullOr(Schema.String) }))

const base = {
  refusals: codec,
  refuses: ["gone"],
  scopes: ["market_data:read", "context:read"],
  paginates: false,
  cli: { words: ["x"] },
  http: { method: "POST", path: "/x", input: { kind: "body" } }
} as const

const find = Operation.make({
  ...base,
  name: "find_words",
  title: "Find words",
  description: "Finds words (an envelope with a page).",
  input: Schema.Struct({ word: Schema.String }),
  modelInput: Schema.Struct({ word: Schema.String }),
  output: Schema.Struct({ results: Schema.Array(Schema.String), page: Page }),
  annotations: Operation.readOnly,
  metered: true,
  capability: { question: "Which words?", requires: "word", example: { word: "hola" } },
  run: ({ word }) =>
    word === "gone"
      ? Effect.fail(new ToyRefusal({ code: "gone", why: "That word is gone." }))
      : word === "boom"
      ? Effect.die(new Error("secret internals"))
      : Effect.succeed({ results: [word, word], page: { returned: 2, hasMore: true, nextCursor: "c2" } })
})

const wipe = Operation.make({
  ...base,
  name: "wipe",
  title: "Wipe",
  description: "Removes everything (not an envelope).",
  input: Schema.Struct({}),
  modelInput: Schema.Struct({}),
  output: Schema.Struct({ wiped: Schema.Number }),
  annotations: Operation.destructive,
  scopes: ["topics:write"],
  metered: false,
  capability: { question: "Wipe?", requires: "Nothing.", example: {} },
  run: () => Effect.succeed({ wiped: 3 })
})

const hidden = Operation.make({
  ...wipe,
  name: "hidden",
  surfaces: { mcp: false },
  run: () => Effect.succeed({ wiped: 0 })
})

const group = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A toy group.",
  refusals: codec,
  operations: [find, wipe, hidden],
  http: { prefix: "/toy", workspaceScoped: false },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "Toy commands." }
})

const principalWith = (scopes: ReadonlyArray<Scope>) =>
  new Principal({
    workspace: new Workspace({ id: WorkspaceId.make("ws_toy"), slug: WorkspaceSlug.make("toy"), name: "Toy" }),
    person: Option.none(),
    role: "member",
    scopes,
    credential: { id: CredentialId.make("key_toy"), kind: "api_key" }
  })

const reader = principalWith(["market_data:read", "topics:write"])

// In-memory ports: the metered units, and a limiter that refuses once `allowed` calls were made.
const ports = (allowed: number) =>
  Effect.gen(function*() {
    const meter = yield* Effect.provide(Meter.Meter, Meter.layerMemory({ monthlyAllowance: 1_000 }))
    // Served units across the workspace's operations, as the meter recorded them.
    const units = Effect.map(meter.usage(reader.workspace.id), (rows) => rows.reduce((sum, row) => sum + row.units, 0))
    const calls = yield* Ref.make(0)
    const layer = Layer.mergeAll(
      Layer.succeed(Meter.Meter, meter),
      Layer.succeed(
        RateLimiter.RateLimiter,
        RateLimiter.RateLimiter.of({
          consume: () =>
            Ref.updateAndGet(calls, (n) => n + 1).pipe(
              Effect.flatMap((n) => n > allowed ? Effect.fail(new RateLimiter.RateLimited({ limit: allowed, retryAfterSeconds: 42 })) : Effect.void)
            )
        })
      )
    )
    return { layer, units }
  })

const ErrorBody = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  request_id: Schema.String,
  retry_after_seconds: Schema.optional(Schema.Number),
  reason: Schema.optional(Schema.String),
  required_scopes: Schema.optional(Schema.Array(Schema.String)),
  toy: Schema.optional(Schema.Struct({ code: Schema.String, why: Schema.String, suggested_correction: Schema.String }))
})
const OutputSchema = Schema.Struct({ anyOf: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) })

const decodeError = Schema.decodeUnknownSync(ErrorBody, { onExcessProperty: "error" })

describe("Toolkit", () => {
  it.effect("derives one tool per operation served on MCP, named from the prefix and the group's namespace", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))
      assert.strictEqual(kit.prefix, "service")
      assert.deepStrictEqual(kit.tools.map((tool) => tool.name), ["service_toy_find_words", "service_toy_wipe"])

      const acme = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provideService(Operation.SurfacePrefix, "acme"), Effect.provide(layer))
      assert.deepStrictEqual(acme.tools.map((tool) => tool.name), ["acme_toy_find_words", "acme_toy_wipe"])
      const own = yield* Toolkit.make({ groups: [group], prefix: "own" }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(own.tools.map((tool) => tool.name), ["own_toy_find_words", "own_toy_wipe"])
    }))

  it.effect("annotations, _meta and the envelope flag come from the declaration", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))
      const [findTool, wipeTool] = kit.tools
      assert.deepStrictEqual(findTool?.annotations, { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false })
      assert.deepStrictEqual(wipeTool?.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false })
      assert.deepStrictEqual(findTool?.meta, { "service/metered": true, "service/operation": "find_words" })
      assert.deepStrictEqual(wipeTool?.meta, { "service/metered": false, "service/operation": "wipe" })
      assert.isTrue(findTool?.envelope)
      assert.isFalse(wipeTool?.envelope)
      assert.deepStrictEqual(findTool?.inputSchema, {
        type: "object",
        required: ["word"],
        properties: { word: { type: "string" } },
        additionalProperties: false
      })
    }))

  it.effect("runs calls through Operation.execute: tool fields on envelopes, other outputs as they are, metering", () =>
    Effect.gen(function*() {
      const { layer, units } = yield* ports(100)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))
      const found = yield* kit.call("service_toy_find_words", { word: "hola" }, reader)
      assert.deepStrictEqual(found.structuredContent, {
        results: ["hola", "hola"],
        page: { returned: 2, hasMore: true, nextCursor: "c2" },
        shown: 2,
        has_more: true,
        next_action: "call again with the same arguments and cursor=c2 to read more"
      })
      assert.isUndefined(found.isError)
      assert.deepStrictEqual(found.content, [{ type: "text", text: JSON.stringify(found.structuredContent) }])
      const wiped = yield* kit.call("service_toy_wipe", {}, reader)
      assert.deepStrictEqual(wiped.structuredContent, { wiped: 3 })
      // find_words is metered, wipe is not.
      assert.strictEqual(yield* units, 1)
    }))

  it.effect("maps refusals, missing scopes, rate limits and defects to error results", () =>
    Effect.gen(function*() {
      const { layer, units } = yield* ports(3)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))

      const refused = yield* kit.call("service_toy_find_words", { word: "gone" }, reader)
      assert.isTrue(refused.isError)
      const refusal = decodeError(refused.structuredContent)
      assert.strictEqual(refusal.code, "VALIDATION_FAILED")
      assert.strictEqual(refusal.message, "That word is gone.")
      assert.deepStrictEqual(refusal.toy, { code: "gone", why: "That word is gone.", suggested_correction: "Send another word." })
      assert.match(refusal.request_id, /^req_/)

      const structural = decodeError((yield* kit.call("service_toy_find_words", { word: "x", extra: 1 }, reader)).structuredContent)
      assert.strictEqual(structural.toy?.code, "bad_value")

      const forbidden = decodeError((yield* kit.call("service_toy_wipe", {}, principalWith(["market_data:read"]))).structuredContent)
      assert.strictEqual(forbidden.code, "FORBIDDEN")
      assert.strictEqual(forbidden.reason, "missing_scope")
      assert.deepStrictEqual(forbidden.required_scopes, ["topics:write"])
      assert.include(forbidden.message, "needs the scope topics:write")

      const defect = yield* kit.call("service_toy_find_words", { word: "boom" }, reader)
      assert.strictEqual(decodeError(defect.structuredContent).code, "INTERNAL")
      assert.notInclude(JSON.stringify(defect), "secret")

      // Every call that passed the scope check consumed the limiter (3 so far, the forbidden one did not): the next is refused.
      const limited = decodeError((yield* kit.call("service_toy_wipe", {}, reader)).structuredContent)
      assert.strictEqual(limited.code, "RATE_LIMITED")
      assert.strictEqual(limited.retry_after_seconds, 42)
      assert.strictEqual(yield* units, 0)
    }))

  it("refuses to declare an operation that writes on a read scope, or names no scope", () => {
    assert.throws(() => Operation.make({ ...wipe, scopes: ["topics:write", "market_data:read"] }), /writes but accepts the read scopes market_data:read/)
    assert.throws(() => Operation.make({ ...wipe, scopes: [] }), /names no scope/)
  })

  it.effect("refuses to derive two tools of one name, or a tool whose output is not an object", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const twice = yield* Effect.exit(Toolkit.make({ groups: [group, { ...group, name: "again" }] }).pipe(Effect.provide(layer)))
      assert.isTrue(twice._tag === "Failure")
      const list = Operation.make({ ...wipe, name: "list", output: Schema.Array(Schema.String), run: () => Effect.succeed(["a"]) })
      const notObject = yield* Effect.exit(
        Toolkit.make({ groups: [{ ...group, operations: [list] }] }).pipe(Effect.provide(layer))
      )
      assert.isTrue(notObject._tag === "Failure")
    }))
})

describe("SDK facts behind the design", () => {
  it.effect("fromJsonSchema validates with Ajv and rejects unknown properties (why input schemas only describe)", () =>
    Effect.gen(function*() {
      const strict = fromJsonSchema({ type: "object", properties: { a: { type: "string" } }, additionalProperties: false })
      const rejected = yield* Effect.promise(async () => strict["~standard"].validate({ a: "x", extra: 1 }))
      assert.deepStrictEqual(rejected.issues?.map((issue) => issue.message), ["data must NOT have additional properties"])
    }))

  it.effect("the 1.x client's validator accepts error results against the output schema, not against the success shape alone", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))
      const tool = kit.tools[0]
      assert.isDefined(tool)
      if (tool === undefined) return
      const refused = (yield* kit.call(tool.name, { word: "gone" }, reader)).structuredContent
      const success = (yield* kit.call(tool.name, { word: "hola" }, reader)).structuredContent
      const ajv = new AjvJsonSchemaValidator()
      const validate = ajv.getValidator(tool.outputSchema)
      assert.isTrue(validate(refused).valid)
      assert.isTrue(validate(success).valid)
      // What 1.32 threw before (-32602 "Structured content does not match the tool's output schema").
      const [successOnly] = Schema.decodeUnknownSync(OutputSchema)(tool.outputSchema).anyOf
      assert.isFalse(ajv.getValidator({ ...successOnly })(refused).valid)
    }))
})
