import { assert, describe, it } from "@effect/vitest"
import { fromJsonSchema } from "@modelcontextprotocol/server"
import { Forbidden } from "@service/core/AuthError"
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
            ),
          flush: Effect.void
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
      assert.deepStrictEqual(findTool?.meta, { "service/metered": true })
      assert.deepStrictEqual(wipeTool?.meta, {})
      assert.isTrue(findTool?.envelope)
      assert.isFalse(wipeTool?.envelope)
      // No `additionalProperties: false`: the operation's decode refuses unknown arguments anyway, naming them.
      assert.deepStrictEqual(findTool?.inputSchema, {
        type: "object",
        required: ["word"],
        properties: { word: { type: "string" } }
      })
    }))

  it.effect("input schemas keep real titles and descriptions, not the names Effect gives its own filters", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const annotated = Operation.make({
        ...wipe,
        name: "annotated",
        input: Schema.Struct({
          query: Schema.String.pipe(Schema.maxLength(200)).annotations({ description: "Words to find." }),
          name: Schema.NullOr(Schema.Trim),
          limit: Schema.Int.pipe(Schema.between(1, 50)),
          tags: Schema.Array(Schema.String.pipe(Schema.pattern(/^[a-z]+$/))).pipe(Schema.maxItems(3)),
          kind: Schema.Literal("a", "b").annotations({ title: "Kind of thing" })
        }),
        modelInput: undefined
      })
      const kit = yield* Toolkit.make({ groups: [{ ...group, operations: [annotated] }] }).pipe(Effect.provide(layer))
      const schema = kit.tools[0]?.inputSchema
      const text = JSON.stringify(schema)
      assert.notMatch(text, /"title":"[A-Za-z]+\(/, text)
      assert.notInclude(text, "a string that will be trimmed")
      assert.notInclude(text, "character(s)")
      assert.notInclude(text, "\"title\":\"Trimmed\"")
      assert.deepStrictEqual(schema?.["properties"], {
        query: { type: "string", description: "Words to find.", maxLength: 200 },
        name: { type: ["string", "null"] },
        limit: { type: "integer", minimum: 1, maximum: 50 },
        tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" }, maxItems: 3 },
        kind: { enum: ["a", "b"], title: "Kind of thing" }
      })
    }))

  it.effect("lists for a principal only the tools its scopes and the declared rule allow", () =>
    Effect.gen(function*() {
      const { layer } = yield* ports(100)
      const ownersOnly = Operation.make({
        ...wipe,
        name: "owners_only",
        authorize: (principal) =>
          principal.role === "owner" ? Effect.void : Effect.fail(new Forbidden({ reason: "role_required", detail: "Owners only." }))
      })
      const kit = yield* Toolkit.make({ groups: [{ ...group, operations: [find, wipe, ownersOnly] }] }).pipe(Effect.provide(layer))
      const names = (principal: Principal) => kit.listedFor(principal).map((tool) => tool.name)
      assert.deepStrictEqual(names(principalWith(["market_data:read"])), ["service_toy_find_words"])
      assert.deepStrictEqual(names(reader), ["service_toy_find_words", "service_toy_wipe"])
      const owner = new Principal({ ...reader, role: "owner" })
      assert.deepStrictEqual(names(owner), ["service_toy_find_words", "service_toy_wipe", "service_toy_owners_only"])
      // A tool left out of the listing still answers: the refusal names what is missing.
      const refused = yield* kit.call("service_toy_owners_only", {}, reader)
      assert.isTrue(refused.isError)
      assert.strictEqual(decodeError(refused.json).reason, "role_required")
    }))

  it.effect("runs calls through Operation.execute: tool fields on envelopes, other outputs as they are, metering", () =>
    Effect.gen(function*() {
      const { layer, units } = yield* ports(100)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))
      const found = yield* kit.call("service_toy_find_words", { word: "hola" }, reader)
      assert.deepStrictEqual(found.json, {
        results: ["hola", "hola"],
        page: { returned: 2, hasMore: true, nextCursor: "c2" },
        shown: 2,
        has_more: true,
        next_action: "call again with the same arguments and cursor set to page.nextCursor to read more"
      })
      assert.isUndefined(found.isError)
      assert.deepStrictEqual(found.content, [{ type: "text", text: JSON.stringify(found.json) }])
      assert.notProperty(found, "structuredContent")
      const wiped = yield* kit.call("service_toy_wipe", {}, reader)
      assert.deepStrictEqual(wiped.json, { wiped: 3 })
      // find_words is metered, wipe is not.
      assert.strictEqual(yield* units, 1)
    }))

  it.effect("maps refusals, missing scopes, rate limits and defects to error results", () =>
    Effect.gen(function*() {
      const { layer, units } = yield* ports(3)
      const kit = yield* Toolkit.make({ groups: [group] }).pipe(Effect.provide(layer))

      const refused = yield* kit.call("service_toy_find_words", { word: "gone" }, reader)
      assert.isTrue(refused.isError)
      const refusal = decodeError(refused.json)
      assert.strictEqual(refusal.code, "VALIDATION_FAILED")
      assert.strictEqual(refusal.message, "That word is gone.")
      assert.deepStrictEqual(refusal.toy, { code: "gone", why: "That word is gone.", suggested_correction: "Send another word." })
      assert.match(refusal.request_id, /^req_/)

      const structural = decodeError((yield* kit.call("service_toy_find_words", { word: "x", extra: 1 }, reader)).json)
      assert.strictEqual(structural.toy?.code, "bad_value")

      const forbidden = decodeError((yield* kit.call("service_toy_wipe", {}, principalWith(["market_data:read"]))).json)
      assert.strictEqual(forbidden.code, "FORBIDDEN")
      assert.strictEqual(forbidden.reason, "missing_scope")
      assert.deepStrictEqual(forbidden.required_scopes, ["topics:write"])
      assert.include(forbidden.message, "needs the scope topics:write")

      const defect = yield* kit.call("service_toy_find_words", { word: "boom" }, reader)
      assert.strictEqual(decodeError(defect.json).code, "INTERNAL")
      assert.notInclude(JSON.stringify(defect), "secret")

      // Every call that passed the scope check consumed the limiter (3 so far, the forbidden one did not): the next is refused.
      const limited = decodeError((yield* kit.call("service_toy_wipe", {}, reader)).json)
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

  it("the concise description is the first paragraph and the codes of the operation's own refusals", () => {
    assert.strictEqual(
      Toolkit.conciseDescription("Finds words.\n\nMore detail for HTTP readers.", ["gone", "invalid_field_value", "word_not_found", "bad_value"]),
      "Finds words. Refuses: gone, bad_value."
    )
    // A code the text already names is not repeated; with none left, no suffix.
    assert.strictEqual(Toolkit.conciseDescription("Refused with gone when it is gone.", ["gone"]), "Refused with gone when it is gone.")
  })
})
