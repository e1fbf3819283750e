import { assert, describe, it, layer } from "@effect/vitest"
import * as CoreNotifications from "../src/Notifications.js"
import * as StorageNotifications from "@service/storage/Notifications"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Redacted from "effect/Redacted"
import { Accounts } from "../src/Accounts.js"
import { Authenticator } from "../src/Authenticator.js"
import * as CoreBundle from "../src/CoreBundle.js"
import * as CredentialCache from "../src/CredentialCache.js"
import { CredentialId, WorkspaceSlug } from "../src/Ids.js"
import { Meter } from "../src/Meter.js"
import * as Operation from "../src/Operation.js"
import { Principal, type Scope } from "../src/Principal.js"
import * as Refusal from "../src/Refusal.js"
import { RequestContext, RequestId } from "../src/RequestContext.js"

class ToyRefusal extends Schema.TaggedError<ToyRefusal>()("ToyRefusal", {
  code: Schema.Literal("bad_value", "gone"),
  why: Schema.String,
  allowed: Schema.optional(Schema.Array(Schema.String)),
  range: Schema.optional(Refusal.AllowedRange)
}) {}

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
  toBlock: (r) => ({ code: r.code, why: r.why, ...(r.allowed === undefined ? {} : { allowed: r.allowed }), ...(r.range === undefined ? {} : { range: r.range }) }),
  block: Schema.Struct({ code: Schema.String, why: Schema.String }),
  invalidInput: (input) =>
    new ToyRefusal({
      code: "bad_value",
      why: input.why,
      ...(input.allowedValues === undefined ? {} : { allowed: input.allowedValues }),
      ...(input.allowedRange === undefined ? {} : { range: input.allowedRange })
    }),
  invalidInputCode: "bad_value",
  codeField: "code",
  sample: (code) => new ToyRefusal({ code, why: `sample ${code}` })
})

const Input = Schema.Struct({
  word: Schema.String.annotations({ description: "A word." }),
  mode: Schema.optional(Schema.Literal("loud", "quiet")),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
  period: Schema.optional(Schema.Struct({ from_date: Schema.String, to_date: Schema.String }))
})

// The toy operation, as a read (echo) or, under another name, as a change.
const makeToy = <const Name extends string>(
  name: Name,
  annotations: Operation.Annotations,
  scopes: ReadonlyArray<Scope> = ["market_data:read", "context:read"]
) => Operation.make({
  name,
  title: "Echo",
  description: "Echoes a word.",
  input: Input,
  modelInput: Input,
  output: Schema.Struct({ word: Schema.String, entrypoint: Schema.String }),
  refusals: codec,
  refuses: ["gone"],
  scopes,
  annotations,
  metered: true,
  paginates: false,
  capability: {
    question: "Echo?",
    requires: "word",
    example: { word: "hola mundo", mode: "loud", period: { from_date: "2024-01-01", to_date: "2024-12-31" } }
  },
  http: { method: "POST", path: "/echo", input: { kind: "body" } },
  cli: { words: ["echo"], nested: { period: { from_date: "period-from", to_date: "period-to" } } },
  run: (input) =>
    Effect.gen(function*() {
      if (input.word === "gone") return yield* new ToyRefusal({ code: "gone", why: "It is gone." })
      if (input.word === "boom") return yield* Effect.die("boom")
      const context = yield* RequestContext
      return { word: input.word, entrypoint: context.entrypoint }
    })
})
const echo = makeToy("toy_echo", Operation.readOnly)

const group = Operation.group({
  name: "toy",
  title: "Toy",
  description: "A toy group.",
  refusals: codec,
  operations: [echo],
  http: { prefix: "/toy", workspaceScoped: false },
  mcp: { namespace: "toy" },
  cli: { word: "toy", description: "Toy commands." }
})

describe("naming", () => {
  it("builds tool names and command lines from the transport's prefix", () => {
    assert.strictEqual(Operation.toolName("acme", "toy", echo.name), "acme_toy_echo")
    assert.strictEqual(Operation.toolName("service", "market", "search_suppliers"), "service_market_search_suppliers")
    assert.deepStrictEqual(Operation.commandWords("acme", group, echo), ["acme", "toy", "echo"])
    assert.strictEqual(Operation.httpPath(group, echo), "/api/v1/toy/echo")
    assert.strictEqual(
      Operation.cliExample("acme", group, echo),
      "acme toy echo --word 'hola mundo' --mode loud --period-from 2024-01-01 --period-to 2024-12-31"
    )
  })

  it("puts example fields no flag carries (objects, arrays of objects) in one quoted --input-json", () => {
    const op = { cli: { words: ["compare"] }, capability: { ...echo.capability, example: { segments: [{ name: "a b" }], codes: ["x", "y"], top: 3 } } }
    const line = Operation.cliExample("acme", group, op)
    assert.notInclude(line, "[object Object]")
    assert.strictEqual(line, `acme toy compare --codes x,y --top 3 --input-json '{"segments":[{"name":"a b"}]}'`)
  })

  it("always lists the structural refusal among an operation's refusals", () => {
    assert.deepStrictEqual(echo.refuses, ["bad_value", "gone"])
    assert.deepStrictEqual(echo.surfaces, { http: true, mcp: true, cli: true })
  })
})

describe("structural validation", () => {
  const refusalOf = (input: unknown) =>
    Effect.flip(echo.runModel(input)).pipe(Effect.provideService(RequestContext, { requestId: RequestId.make("req_test_validation_0"), entrypoint: "belt" }))

  it.effect("names an unknown field and lists the accepted ones", () =>
    Effect.gen(function*() {
      const refusal = yield* refusalOf({ word: "a", colour: "red" })
      assert.strictEqual(refusal.code, "bad_value")
      assert.deepStrictEqual(refusal.allowed, ["word", "mode", "limit", "period"])
    }))

  it.effect("gives the closed set of a literal field", () =>
    Effect.gen(function*() {
      const refusal = yield* refusalOf({ word: "a", mode: "shout" })
      assert.deepStrictEqual(refusal.allowed, ["loud", "quiet"])
    }))

  it.effect("gives the range of an out-of-range number", () =>
    Effect.gen(function*() {
      const refusal = yield* refusalOf({ word: "a", limit: 500 })
      assert.deepStrictEqual(refusal.range, { minimum: 1, maximum: 50 })
      assert.include(refusal.why, "limit")
    }))

  it.effect("never echoes more than a short excerpt of the input", () =>
    Effect.gen(function*() {
      const refusal = yield* refusalOf({ word: "a", mode: "x".repeat(100_000) })
      assert.isBelow(refusal.why.length, 400)
    }))

  it("escapes control characters in excerpts", () => {
    assert.strictEqual(Refusal.excerpt("a\u0000b"), "a\\u0000b")
    assert.include(Refusal.excerpt("y".repeat(500), 10), "(500 characters)")
  })
})

for (const target of TestDatabase.targets()) {
  const Env = CoreBundle.bundle.layer.pipe(
    // The database's notifications under core's port, as App.layer connects them.
    Layer.provideMerge(Layer.effect(CoreNotifications.Notifications, StorageNotifications.Notifications)),
    Layer.provideMerge(TestDatabase.withMigrations(target, CoreBundle.bundle.migrations))
  )

  layer(Env, { timeout: "120 seconds" })(`Operation.execute on ${target.name}`, (it) => {
    const principalFor = (scopes: ReadonlyArray<"market_data:read" | "topics:write">) =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const slug = WorkspaceSlug.make(`w${Math.random().toString(36).slice(2, 10)}`)
        const workspace = yield* accounts.createWorkspace({ slug, name: "Toy" })
        return new Principal({
          workspace,
          person: Option.none(),
          role: "member",
          scopes,
          credential: { id: CredentialId.make("cred_toy"), kind: "api_key" }
        })
      })
    const call = (principal: Principal, input: unknown) =>
      Operation.execute(echo, { principal, entrypoint: "mcp", requestId: RequestId.make("req_test_execute_01"), input, canonical: false })

    it.scoped("a call that changes something tells this process's credential caches once it has succeeded; a read does not", () =>
      Effect.gen(function*() {
        const notifications = yield* CoreNotifications.Notifications
        const heard: Array<string> = []
        yield* notifications.subscribe(CredentialCache.channel, (why) => heard.push(why))
        const principal = yield* principalFor(["market_data:read", "topics:write"])
        yield* call(principal, { word: "hola" })
        assert.deepStrictEqual(heard, [])
        const write = makeToy("toy_write", Operation.write, ["topics:write"])
        const run = (word: string) =>
          Operation.execute(write, { principal, entrypoint: "http", requestId: RequestId.make("req_test_execute_02"), input: { word }, canonical: true })
        yield* Effect.either(run("gone"))
        assert.deepStrictEqual(heard, [], "a refused change changed nothing")
        yield* run("hola")
        assert.deepStrictEqual(heard, ["toy_write"])
      }))

    it.effect("runs with the request context and meters one unit per success", () =>
      Effect.gen(function*() {
        const principal = yield* principalFor(["market_data:read"])
        const output = yield* call(principal, { word: "hola" })
        assert.deepStrictEqual(output, { word: "hola", entrypoint: "mcp" })
        yield* call(principal, { word: "hola" })
        yield* Effect.either(call(principal, { word: "gone" }))
        const usage = yield* (yield* Meter).usage(principal.workspace.id)
        assert.deepStrictEqual(usage.map((u) => [u.operation, u.units]), [["toy_echo", 2]])
      }))

    it.effect("a test workspace runs metered calls and spends nothing; it authenticates as a test workspace", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const real = yield* principalFor(["market_data:read"])
        const sandbox = yield* accounts.createWorkspace({
          slug: WorkspaceSlug.make(`t${Math.random().toString(36).slice(2, 10)}`),
          name: "Toy test",
          testOf: real.workspace
        })
        assert.isTrue(sandbox.isTest)
        assert.strictEqual(sandbox.testOf, real.workspace.id)
        // A test workspace of a test workspace hangs off the real one.
        const nested = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(`n${Math.random().toString(36).slice(2, 10)}`), name: "n", testOf: sandbox })
        assert.strictEqual(nested.testOf, real.workspace.id)
        const principal = new Principal({ ...real, workspace: sandbox })
        assert.deepStrictEqual(yield* call(principal, { word: "hola" }), { word: "hola", entrypoint: "mcp" })
        yield* call(principal, { word: "hola" })
        const meter = yield* Meter
        assert.deepStrictEqual(yield* meter.usage(sandbox.id), [])
        assert.strictEqual((yield* meter.account(sandbox.id)).balance, (yield* meter.account(nested.id)).balance)
        // Its credentials authenticate into it, flagged as a test workspace.
        const key = "svc_key_sandbox_0123456789abcdef0123"
        yield* accounts.issueCredential({ workspaceId: sandbox.id, kind: "api_key", label: "t", scopes: ["market_data:read"], secret: Redacted.make(key) })
        const authenticated = yield* (yield* Authenticator).authenticate({ kind: "api_key", secret: Redacted.make(key) })
        assert.isTrue(authenticated.workspace.isTest)
        assert.strictEqual(Option.getOrThrow(yield* accounts.findWorkspaceBySlug(sandbox.slug)).testOf, real.workspace.id)
      }))

    it.effect("refuses a principal without any of the scopes before running", () =>
      Effect.gen(function*() {
        const principal = yield* principalFor(["topics:write"])
        const result = yield* Effect.either(call(principal, { word: "hola" }))
        assert.isTrue(Either.isLeft(result) && result.left._tag === "Forbidden")
        const usage = yield* (yield* Meter).usage(principal.workspace.id)
        assert.deepStrictEqual(usage, [])
      }))

    it.effect("reads domain refusals through the codec and keeps defects as defects", () =>
      Effect.gen(function*() {
        const principal = yield* principalFor(["market_data:read"])
        const refused = yield* Effect.either(call(principal, { word: "gone" }))
        assert.isTrue(Either.isLeft(refused) && refused.left._tag === "Refused")
        if (Either.isLeft(refused) && refused.left._tag === "Refused") {
          assert.deepStrictEqual(refused.left.described, {
            code: "gone",
            status: 404,
            retryable: false,
            action: "search_again",
            message: "It is gone.",
            block: { code: "gone", why: "It is gone." }
          })
        }
        const exit = yield* Effect.exit(call(principal, { word: "boom" }))
        assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause) && Option.isNone(Cause.failureOption(exit.cause)))
      }))
  })
}

describe("operations that take no input", () => {
  const nothing = Operation.make({
    name: "toy_nothing",
    title: "Nothing",
    description: "Takes nothing.",
    input: Schema.Struct({}),
    modelInput: Schema.Struct({}),
    output: Schema.Struct({ ok: Schema.Boolean }),
    refusals: codec,
    refuses: [],
    scopes: ["market_data:read"],
    annotations: Operation.readOnly,
    metered: false,
    paginates: false,
    capability: { question: "?", requires: "Nothing.", example: {} },
    http: { method: "GET", path: "/nothing", input: { kind: "query" } },
    cli: { words: ["nothing"] },
    run: () => Effect.succeed({ ok: true })
  })

  it.effect("refuse an unknown field instead of ignoring it", () =>
    Effect.gen(function*() {
      const refusal = yield* Effect.flip(nothing.runModel({ sql: "select 1" }))
      assert.strictEqual(refusal.code, "bad_value")
      assert.include(refusal.why, "sql")
      assert.deepStrictEqual(yield* nothing.runModel({}), { ok: true })
    }))
})
