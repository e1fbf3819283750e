/**
 * The shared conformance suite every transport runs once, in the style of Effect's `suite(layer)` tests.
 * Driven by the declarations, never by hand-kept lists. For every group given:
 *
 * - the transport lists exactly the declared endpoints, tools or commands (twins and deprecated HTTP
 *   aliases included);
 * - every operation's capability example runs and its output decodes with the declared schema;
 * - an unknown input field gives the codec's structural refusal;
 * - every declared refusal code, injected through a twin group whose operations fail with the codec's
 *   sample refusal, reaches the caller as the same block (and, over HTTP, the declared status);
 * - every operation whose example names records the fixtures seeded refuses those ids from another workspace;
 * - every operation that writes refuses a credential holding only read scopes (403 `missing_scope`) before it
 *   changes anything (its example then still runs as the owner); every operation with a role or person rule
 *   refuses a faceless key, and a member's key when the rule refuses members;
 * - every contract case of the group (`group.cases`: a numbered rule, a row of the errors or limits
 *   table) gives what it expects, on the real corpus;
 * - every answer satisfies the group's invariant (`group.invariant`);
 * - no response seen on the surface, whole as the caller received it, carries one of the harness's
 *   forbidden values (source identities, publishers, contact coordinates).
 *
 * Twins share the declarations but live under their own prefix, namespace and command word, so one
 * served application carries both.
 *
 * The harness calls as the owner of its workspace (or of its test workspace, for an operation whose capability
 * `runsIn` one), with every scope the groups accept and the records the examples name seeded by the bundles'
 * fixtures (`Fixture.seed`); the runners serve every group of the application, and the suite fails when an
 * operation has no example it can run.
 *
 * @since 0.1.0
 */
import { assert, describe, layer } from "@effect/vitest"
import type * as Bundle from "@service/core/Bundle"
import type * as ContractCase from "@service/core/ContractCase"
import * as Leaks from "@service/core/Leaks"
import * as Operation from "@service/core/Operation"
import { CredentialId, PersonId, WorkspaceId, WorkspaceSlug } from "@service/core/Ids"
import { Person, Principal } from "@service/core/Principal"
import { Workspace } from "@service/core/Workspace"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Fixture from "./Fixture.js"

/** @since 0.1.0 @category models */
export type Surface = "http" | "mcp" | "cli"

/**
 * What a call gave back, as the caller sees it.
 * - `Success`: the encoded output (an envelope), with any transport-only fields removed.
 * - `Refusal`: the domain block (`market_data`...), and the HTTP status when the transport has one.
 *
 * `raw` is the whole response as the caller received it (HTTP body, MCP result, CLI output).
 *
 * @since 0.1.0 @category models
 */
export type Outcome =
  | { readonly _tag: "Success"; readonly body: unknown; readonly raw: string }
  | { readonly _tag: "Refusal"; readonly status: number | undefined; readonly block: unknown; readonly raw: string }
  | {
    readonly _tag: "Denied"
    readonly status: number | undefined
    /** The `reason` of the FORBIDDEN answer. */
    readonly reason: unknown
    readonly raw: string
  }

/**
 * A transport under test.
 *
 * @since 0.1.0 @category models
 */
export interface Harness {
  /**
   * What the transport serves, in the form {@link expectedNames} gives: HTTP `"METHOD /api/v1/path"` read
   * from the served OpenAPI document; MCP tool names from `tools/list`; CLI command lines (`"service
   * market suppliers search"`) read from the command tree or its help.
   */
  readonly listed: Effect.Effect<ReadonlyArray<string>>
  /**
   * Calls the operation named `operation` of the served group named `group` with a model-facing `input`
   * the way a user of the transport would, in the suite's workspace or its test workspace, with the seat's
   * credential `as` (the owner's by default).
   */
  readonly call: (
    group: string,
    operation: string,
    input: Readonly<Record<string, unknown>>,
    where?: Fixture.Where,
    as?: Fixture.As
  ) => Effect.Effect<Outcome>
  /** Values no response may carry: the corpus's source identities, publishers and contact coordinates. */
  readonly forbidden: ReadonlyArray<string>
  /** The example values the bundles' fixtures gave, in each workspace. */
  readonly examples: { readonly [W in Fixture.Where]: Bundle.Examples }
}

/** @since 0.1.0 @category tags */
export class HarnessService extends Context.Tag("@service/conformance/Harness")<HarnessService, Harness>() {}

/**
 * The full paths of an operation's deprecated aliases (`group.http.aliases`): its path with the alias
 * segment in place of the canonical one, when the path has it.
 *
 * @since 0.1.0 @category expectations
 */
export const aliasPaths = (group: Operation.Group<unknown>, op: Operation.AnyOperation<unknown>): ReadonlyArray<string> =>
  (group.http.aliases ?? []).flatMap((alias) => {
    const parts = op.http.path.slice(1).split("/")
    if (!parts.includes(alias.canonical)) return []
    const path: `/${string}` = `/${parts.map((part) => (part === alias.canonical ? alias.segment : part)).join("/")}`
    return [Operation.httpPath(group, { ...op, http: { ...op.http, path } })]
  })

/**
 * The names a surface must list for `groups` (over HTTP, deprecated alias routes too).
 *
 * @since 0.1.0 @category expectations
 */
export const expectedNames = (
  surface: Surface,
  prefix: string,
  groups: ReadonlyArray<Operation.Group<unknown>>
): ReadonlyArray<string> =>
  groups.flatMap((group) =>
    Operation.servedOn(group, surface).flatMap((op) => {
      switch (surface) {
        case "http":
          return [`${op.http.method} ${Operation.httpPath(group, op)}`, ...aliasPaths(group, op).map((path) => `${op.http.method} ${path}`)]
        case "mcp":
          return [Operation.toolName(prefix, group.mcp.namespace, op.name)]
        case "cli":
          return [Operation.commandWords(prefix, group, op).join(" ")]
      }
    })
  ).sort()

/**
 * Twin groups whose operations fail with the codec's sample refusal for the code last set with
 * `inject`.
 *
 * @since 0.1.0 @category models
 */
export interface Twins<R> {
  readonly groups: ReadonlyArray<Operation.Group<R>>
  /** The twin of each real group, by the real group's name. */
  readonly twinOf: (group: Operation.Group<R>) => Operation.Group<R>
  readonly inject: (code: string) => void
}

/**
 * Builds the twins of `groups`.
 *
 * @since 0.1.0 @category constructors
 */
export const refusalTwins = <R>(groups: ReadonlyArray<Operation.Group<R>>): Twins<R> => {
  let injected = ""
  const twins = groups.map((group): Operation.Group<R> => {
    const fail = Effect.suspend(() => {
      const sample = group.refusals.sampleOf(injected)
      return sample === undefined ? Effect.dieMessage(`No sample refusal for ${injected}`) : Effect.fail(sample)
    })
    return {
      ...group,
      name: `${group.name}Conformance`,
      title: `${group.title} (conformance twin)`,
      http: { ...group.http, prefix: `${group.http.prefix}/__conformance` },
      mcp: { namespace: `${group.mcp.namespace}_conformance` },
      cli: { ...group.cli, word: `${group.cli.word}-conformance` },
      operations: group.operations.map((op) => ({ ...op, runModel: () => fail, runCanonical: () => fail }))
    }
  })
  return {
    groups: twins,
    twinOf: (group) => {
      const twin = twins.find((t) => t.name === `${group.name}Conformance`)
      if (twin === undefined) throw new Error(`No twin for group ${group.name}`)
      return twin
    },
    inject: (code) => {
      injected = code
    }
  }
}

const readPath = (value: unknown, path: ReadonlyArray<string | number>): unknown => {
  let current = value
  for (const key of path) {
    if (Array.isArray(current) && typeof key === "number") current = current[key]
    else if (Predicate.isRecord(current) && typeof key === "string") current = current[key]
    else return undefined
  }
  return current
}

const isPlaceholder = (value: unknown): boolean =>
  (typeof value === "string" && /^<[^<>]+>$/.test(value)) || (Array.isArray(value) && value.length > 0 && value.every(isPlaceholder))

/**
 * The fields of an example input still holding a placeholder (`"<topic>"`), nested ones by dotted path.
 *
 * @since 0.1.0 @category examples
 */
export const placeholdersIn = (input: unknown, at = ""): ReadonlyArray<string> => {
  if (isPlaceholder(input)) return [at]
  if (!Predicate.isRecord(input) || Array.isArray(input)) return []
  return Object.entries(input).flatMap(([field, value]) => placeholdersIn(value, at === "" ? field : `${at}.${field}`))
}

/**
 * Where an operation's example runs: its test workspace when the capability says so.
 *
 * @since 0.1.0 @category examples
 */
export const whereOf = (op: Operation.AnyOperation<unknown>): Fixture.Where =>
  op.capability.runsIn === "test_workspace" ? "test_workspace" : "workspace"

/**
 * The capability example of `op` as it runs: the fixture's example values over the declared example, then any
 * value still a placeholder read from a call of the `exampleFrom` operation (any served group's). The source runs
 * with its own example, resolved the same way, in the same workspace (a suggested edit's example opens an edit on
 * a topic the create example makes). A field the example leaves as a placeholder takes the value the source call
 * was given for the same field, so both name the same record.
 *
 * @since 0.1.0 @category examples
 */
export const resolveExample = (
  harness: Harness,
  groups: ReadonlyArray<Operation.Group<unknown>>,
  op: Operation.AnyOperation<unknown>,
  where: Fixture.Where = whereOf(op),
  seen: ReadonlyArray<string> = []
): Effect.Effect<Readonly<Record<string, unknown>>> =>
  Effect.gen(function*() {
    const given: Readonly<Record<string, unknown>> = { ...op.capability.example, ...harness.examples[where][op.name] }
    const from = op.capability.exampleFrom
    if (from === undefined || placeholdersIn(given).length === 0) return given
    if (seen.includes(op.name)) return yield* Effect.dieMessage(`${op.name}: exampleFrom loops through ${seen.join(", ")}`)
    const found = groups.flatMap((group) =>
      group.operations.filter((candidate) => candidate.name === from.operation).map((source) => ({ group, source }))
    )[0]
    if (found === undefined) return yield* Effect.dieMessage(`${op.name}: exampleFrom names unknown ${from.operation}`)
    const sourceInput = yield* resolveExample(harness, groups, found.source, where, [...seen, op.name])
    const outcome = yield* harness.call(found.group.name, found.source.name, sourceInput, where)
    if (outcome._tag !== "Success") {
      return yield* Effect.dieMessage(`${op.name}: the source example ${from.operation} was refused: ${outcome.raw.slice(0, 500)}`)
    }
    const read: Array<readonly [string, unknown]> = []
    for (const { field, path } of [{ path: from.path, field: from.field }, ...(from.also ?? [])]) {
      const value = readPath(outcome.body, path)
      if (value === undefined) return yield* Effect.dieMessage(`${op.name}: nothing at ${path.join(".")} of ${from.operation}`)
      read.push([field, value])
    }
    const carried = Object.entries(given).flatMap(([field, example]) =>
      isPlaceholder(example) && field in sourceInput ? [[field, sourceInput[field]] as const] : []
    )
    return { ...given, ...Object.fromEntries(carried), ...Object.fromEntries(read) }
  })

const recordId = /^[a-z]+(?:_[a-z]+)*_[0-9a-f]{16,}$/

/**
 * The fields of a fixture's example values that name seeded records by id (`contact_id`, `contact_ids`).
 *
 * @since 0.1.0 @category examples
 */
export const recordIdsIn = (given: Readonly<Record<string, unknown>> | undefined): ReadonlyArray<string> =>
  Object.entries(given ?? {}).flatMap(([field, value]) =>
    (typeof value === "string" && recordId.test(value)) ||
      (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && recordId.test(v)))
      ? [field]
      : []
  )

const blockCode = (group: Operation.Group<unknown>, block: unknown): unknown =>
  Predicate.isRecord(block) ? block[group.refusals.codeField] : undefined

/** @since 0.1.0 @category models */
export interface SuiteOptions<R, E> {
  readonly surface: Surface
  /** The declared groups (without twins). */
  readonly groups: ReadonlyArray<Operation.Group<R>>
  /** Serves every group given (the declared ones and their twins) and returns the harness. */
  readonly harness: (groups: ReadonlyArray<Operation.Group<R>>, twins: Twins<R>) => Layer.Layer<HarnessService, E>
  /** The surface prefix the transport was configured with (default `service`). */
  readonly prefix?: string | undefined
  readonly timeout?: number | undefined
}

const violationsOf = (outcome: Outcome, expect: ContractCase.Expectation, given: ContractCase.Given): ReadonlyArray<string> => {
  if ("refused" in expect) {
    if (outcome._tag !== "Refusal") return [`expected the refusal ${expect.refused}, got an answer: ${outcome.raw.slice(0, 400)}`]
    return []
  }
  if (outcome._tag !== "Success") return [`expected an answer, got: ${outcome.raw.slice(0, 400)}`]
  return expect.answered(outcome.body, given)
}

/**
 * Runs one contract case: reads its given values, calls, and returns the violations found.
 *
 * @since 0.1.0 @category cases
 */
export const runCase = (
  harness: Harness,
  group: Operation.Group<unknown>,
  c: ContractCase.Case
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const given: Record<string, unknown> = {}
    for (const [name, read] of Object.entries(c.given ?? {})) {
      const readInput = typeof read.input === "function" ? read.input(given) : read.input
      const outcome = yield* harness.call(group.name, read.operation, readInput)
      if (outcome._tag !== "Success") return [`given ${name}: ${read.operation} was refused: ${outcome.raw.slice(0, 400)}`]
      const value = readPath(outcome.body, read.path)
      if (value === undefined) return [`given ${name}: nothing at ${read.path.join(".")} of ${read.operation}`]
      given[name] = value
    }
    const input = typeof c.input === "function" ? c.input(given) : c.input
    const outcome = yield* harness.call(group.name, c.operation, input)
    const expect = c.expect
    if ("refused" in expect && outcome._tag === "Refusal") {
      const code = blockCode(group, outcome.block)
      if (code !== expect.refused) return [`expected the refusal ${expect.refused}, got ${String(code)}: ${outcome.raw.slice(0, 400)}`]
      // The status (HTTP, and the CLI's statusCode) is the codec's for the code.
      const status = group.refusals.rules[expect.refused]?.status
      const wrongStatus = outcome.status !== undefined && status !== undefined && outcome.status !== status
        ? [`${expect.refused} came with status ${outcome.status}, the codec says ${status}`]
        : []
      return [...wrongStatus, ...(expect.check?.(outcome.block, given) ?? [])]
    }
    return violationsOf(outcome, expect, given)
  })

const sampleMember = new Principal({
  workspace: new Workspace({ id: WorkspaceId.make("ws_sample"), slug: WorkspaceSlug.make("sample"), name: "sample" }),
  person: Option.some(new Person({ id: PersonId.make("person_sample"), displayName: "A member" })),
  role: "member",
  scopes: [],
  credential: { id: CredentialId.make("key_sample"), kind: "api_key" }
})

const assertDenied = (outcome: Outcome, reason: string, surface: Surface): void => {
  assert.strictEqual(outcome._tag, "Denied", `expected FORBIDDEN (${reason}), got: ${outcome.raw.slice(0, 500)}`)
  if (outcome._tag !== "Denied") return
  assert.strictEqual(outcome.reason, reason, outcome.raw.slice(0, 500))
  if (surface !== "mcp") assert.strictEqual(outcome.status, 403, outcome.raw.slice(0, 500))
}

/**
 * Registers the conformance tests of one transport.
 *
 * @since 0.1.0 @category suites
 */
export const suite = <R, E>(options: SuiteOptions<R, E>): void => {
  const twins = refusalTwins(options.groups)
  const served = [...options.groups, ...twins.groups]
  const prefix = options.prefix ?? "service"
  const erase = (group: Operation.Group<R>): Operation.Group<unknown> => group
  const declared = options.groups.map(erase)
  // Every response the suite saw, whole, for the last test's scan.
  const seen: Array<{ readonly call: string; readonly raw: string }> = []
  const watched = Effect.map(HarnessService, (harness): Harness => ({
    ...harness,
    call: (groupName, operation, input, where, as) =>
      harness.call(groupName, operation, input, where, as).pipe(Effect.tap((outcome) => {
        seen.push({ call: `${groupName}.${operation}`, raw: outcome.raw })
        const group = served.find((candidate) => candidate.name === groupName)
        if (outcome._tag === "Success" && group?.invariant !== undefined) {
          const broken = group.invariant(operation, outcome.body)
          assert.deepStrictEqual(broken, [], `${groupName}.${operation} broke the group's invariant: ${broken.join(" | ")}`)
        }
      }))
  }))
  layer(options.harness(served, twins), { timeout: options.timeout ?? 300_000 })(`conformance over ${options.surface}`, (it) => {
    it.effect("lists exactly the declared operations", () =>
      Effect.gen(function*() {
        const harness = yield* watched
        const listed = [...(yield* harness.listed)].sort()
        assert.deepStrictEqual(listed, [...expectedNames(options.surface, prefix, served.map(erase))])
      }))

    // Every declared operation must have an example the suite can run: what the fixtures give and exampleFrom
    // reads leave no placeholder behind.
    it.effect("every operation on the surface has a runnable example", () =>
      Effect.gen(function*() {
        const harness = yield* watched
        const missing: Array<string> = []
        for (const group of options.groups.map(erase)) {
          for (const op of Operation.servedOn(group, options.surface)) {
            const input = yield* resolveExample(harness, options.groups.map(erase), op)
            const left = placeholdersIn(input)
            if (left.length > 0) missing.push(`${op.name} (${left.join(", ")})`)
          }
        }
        assert.deepStrictEqual(missing, [], `examples still naming a placeholder: ${missing.join("; ")}`)
      }))

    for (const realGroup of options.groups) {
      const group = erase(realGroup)
      const twin = erase(twins.twinOf(realGroup))
      for (const op of Operation.servedOn(group, options.surface)) {
        describe(`${group.name}.${op.name}`, () => {
          // Before the example runs as the owner: a denied call that changed something would make it fail.
          if (!op.annotations.readOnly) {
            it.effect("a credential holding only read scopes is refused with missing_scope", () =>
              Effect.gen(function*() {
                const harness = yield* watched
                const input = yield* resolveExample(harness, declared, op)
                const outcome = yield* harness.call(group.name, op.name, input, whereOf(op), "reader")
                assertDenied(outcome, "missing_scope", options.surface)
              }))
          }
          if (op.authorize !== undefined) {
            const authorize = op.authorize
            it.effect("a faceless key is refused, and a member's key when the rule refuses members", () =>
              Effect.gen(function*() {
                const harness = yield* watched
                const input = yield* resolveExample(harness, declared, op)
                const faceless = yield* harness.call(group.name, op.name, input, whereOf(op), "faceless")
                assertDenied(faceless, "person_required", options.surface)
                const memberRefused = Either.isLeft(yield* Effect.either(authorize(sampleMember)))
                if (memberRefused) {
                  assertDenied(yield* harness.call(group.name, op.name, input, whereOf(op), "member"), "role_required", options.surface)
                }
              }))
          }

          // A record is its workspace's own: the ids the fixtures seeded in the suite's workspace are not found from
          // its test workspace (another workspace of the same owner), whatever the operation does with them.
          if (whereOf(op) === "workspace") {
            it.effect("another workspace's ids are refused", () =>
              Effect.gen(function*() {
                const harness = yield* watched
                const named = recordIdsIn(harness.examples.workspace[op.name])
                if (named.length === 0) return
                const input = yield* resolveExample(harness, declared, op)
                const outcome = yield* harness.call(group.name, op.name, input, "test_workspace")
                assert.strictEqual(outcome._tag, "Refusal", `${op.name} with ${named.join(", ")} of another workspace: ${outcome.raw.slice(0, 500)}`)
              }))
          }

          it.effect("the capability example runs and its output decodes with the declared schema", () =>
            Effect.gen(function*() {
              const harness = yield* watched
              const input = yield* resolveExample(harness, declared, op)
              const outcome = yield* harness.call(group.name, op.name, input, whereOf(op))
              assert.strictEqual(outcome._tag, "Success", outcome.raw.slice(0, 2000))
              if (outcome._tag === "Success") {
                const decoded = Schema.decodeUnknownEither(op.output)(outcome.body)
                assert.isTrue(decoded._tag === "Right", `output of ${op.name} does not decode`)
              }
            }))

          it.effect("an unknown input field gives the structural refusal", () =>
            Effect.gen(function*() {
              const harness = yield* watched
              const input = yield* resolveExample(harness, declared, op)
              const outcome = yield* harness.call(group.name, op.name, { ...input, conformance_unknown_field: "x" }, whereOf(op))
              assert.strictEqual(outcome._tag, "Refusal")
              if (outcome._tag === "Refusal") {
                assert.strictEqual(blockCode(group, outcome.block), group.refusals.invalidInputCode)
                if (options.surface === "http") {
                  assert.strictEqual(outcome.status, group.refusals.rules[group.refusals.invalidInputCode]?.status)
                }
              }
            }))

          it.effect(`each declared refusal (${op.refuses.join(", ")}) reaches the caller unchanged`, () =>
            Effect.gen(function*() {
              const harness = yield* watched
              const input = yield* resolveExample(harness, declared, op)
              const twinOp = twin.operations.find((candidate) => candidate.name === op.name)
              if (twinOp === undefined) return yield* Effect.dieMessage(`no twin for ${op.name}`)
              for (const code of op.refuses) {
                twins.inject(code)
                const outcome = yield* harness.call(twin.name, twinOp.name, input, whereOf(op))
                const expected = group.refusals.describe(group.refusals.sampleOf(code))
                assert.isDefined(expected)
                assert.strictEqual(outcome._tag, "Refusal", `${code}: ${outcome.raw.slice(0, 500)}`)
                if (outcome._tag === "Refusal" && expected !== undefined) {
                  assert.deepStrictEqual(outcome.block, expected.block, code)
                  if (options.surface === "http") assert.strictEqual(outcome.status, expected.status, code)
                }
              }
            }))
        })
      }

      const onSurface = new Set(Operation.servedOn(group, options.surface).map((op) => op.name))
      const cases = (group.cases ?? []).filter((c) =>
        onSurface.has(c.operation) && (c.surfaces === undefined || c.surfaces.includes(options.surface))
      )
      if (cases.length > 0) {
        describe(`${group.name}: contract cases`, () => {
          for (const c of cases) {
            it.effect(`${c.rule}: ${c.title} (${c.operation})`, () =>
              Effect.gen(function*() {
                const harness = yield* watched
                const violations = yield* runCase(harness, group, c)
                assert.deepStrictEqual(violations, [], `${c.rule}: ${c.title}: ${violations.join(" | ")}`)
              }))
          }
        })
      }
    }

    // Last: it reads what every test above saw.
    it.effect("no response carries a source identity, a publisher or a contact coordinate", () =>
      Effect.gen(function*() {
        const harness = yield* watched
        assert.isAbove(harness.forbidden.length, 0, "the harness names no forbidden values")
        const answered = new Set(seen.map((entry) => entry.call))
        const found = Leaks.find(seen.map((entry) => entry.raw), harness.forbidden)
        const leaked = seen.flatMap((entry, i) => (found[i] ?? []).map((needle) => `${entry.call}: ${needle}`))
        assert.deepStrictEqual(leaked, [], `a response leaked a forbidden value: ${leaked.join(" | ")}`)
        for (const realGroup of options.groups) {
          for (const op of Operation.servedOn(erase(realGroup), options.surface)) {
            assert.isTrue(answered.has(`${realGroup.name}.${op.name}`), `${op.name} was never called`)
          }
        }
      }))
  })
}
