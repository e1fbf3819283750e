/**
 * The command line in-process (`Cli.runWith` with a captured Console) against a recording fake server: what
 * it sends for each binding, what it prints, and its exit codes. The real server is in Conformance.test.ts
 * and in examples/cli; the process boundary in examples/cli's spawned tests.
 */
import * as Command from "@effect/cli/Command"
import { assert, describe, it } from "@effect/vitest"
import * as MarketOperations from "@service/market-contract/Operations"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Cli from "../src/Cli.js"
import { ExitCode } from "../src/Failure.js"
import { invalidRecordRefBody, searchEnvelope, supplierEnvelope, unauthorizedBody } from "./Fixtures.js"
import { runFake } from "./support/Run.js"
import * as Toy from "./support/ToyGroup.js"

const market = { groups: [MarketOperations.group] }
const withKey = ["--api-key", "svc_key_test"]
const ok = (body: unknown) => ({ status: 200, body: JSON.parse(JSON.stringify(body)) })
const searchOk = ok(searchEnvelope)

describe("Cli over the market group", () => {
  describe("flags", () => {
    it.effect("--scian-codes repeats and splits on commas; the body is JSON", () =>
      Effect.gen(function*() {
        const { code, sent } = yield* runFake([
          ...withKey, "market", "suppliers", "search", "--state", "Zacatecas",
          "--scian-codes", "212", "--scian-codes", "213,214"
        ], { ...market, reply: searchOk })
        assert.strictEqual(code, ExitCode.ok)
        assert.deepStrictEqual(sent[0]?.body, { state: "Zacatecas", scian_codes: ["212", "213", "214"] })
        assert.strictEqual(sent[0]?.contentType, "application/json")
      }))

    it.effect("sends every search flag under its schema field name", () =>
      Effect.gen(function*() {
        const { sent } = yield* runFake([
          ...withKey, "market", "suppliers", "search", "--query", "oro plata", "--state", "ZAC", "--rfc", "MNO010101AB1",
          "--limit", "5", "--query-mode", "any_terms", "--cursor", "CUR"
        ], { ...market, reply: searchOk })
        assert.deepStrictEqual(sent[0]?.body, {
          query: "oro plata",
          state: "ZAC",
          rfc: "MNO010101AB1",
          limit: 5,
          query_mode: "any_terms",
          cursor: "CUR"
        })
      }))

    it.effect("a query-bound input travels as URL parameters", () =>
      Effect.gen(function*() {
        const { sent } = yield* runFake([...withKey, "market", "capabilities", "--facets", "states,scian_codes"], {
          ...market,
          reply: { status: 400, body: invalidRecordRefBody }
        })
        assert.strictEqual(sent[0]?.method, "GET")
        assert.strictEqual(
          sent[0]?.url,
          "http://localhost:3000/api/v1/workspaces/demo/market-data/capabilities?facets=states%2Cscian_codes"
        )
      }))

    it.effect("the positional argument fills the path parameter, URL-encoded", () =>
      Effect.gen(function*() {
        const { sent } = yield* runFake([...withKey, "market", "suppliers", "get", "a/b?c"], {
          ...market,
          reply: { status: 404, body: invalidRecordRefBody }
        })
        assert.strictEqual(sent[0]?.method, "GET")
        assert.strictEqual(sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/market-data/suppliers/~ref/a%2Fb%3Fc")
      }))
  })

  describe("connection", () => {
    it.effect("--base-url, --api-key and --workspace before the command words shape the call", () =>
      Effect.gen(function*() {
        const { code, sent } = yield* runFake([
          "--base-url", "http://api.example.test:8080/", "--api-key", "svc_key_cli", "--workspace", "acme co",
          "market", "suppliers", "search", "--state", "Zacatecas"
        ], { ...market, reply: searchOk })
        assert.strictEqual(code, ExitCode.ok)
        assert.strictEqual(sent[0]?.method, "POST")
        assert.strictEqual(sent[0]?.url, "http://api.example.test:8080/api/v1/workspaces/acme%20co/market-data/suppliers/search")
        assert.strictEqual(sent[0]?.apiKey, "svc_key_cli")
      }))

    it.effect("fall back to SERVICE_BASE_URL, SERVICE_API_KEY and SERVICE_WORKSPACE", () =>
      Effect.gen(function*() {
        const { sent } = yield* runFake(["market", "suppliers", "search", "--state", "Zacatecas"], {
          ...market,
          reply: searchOk,
          env: { SERVICE_BASE_URL: "http://env.test:9000", SERVICE_API_KEY: "svc_key_env", SERVICE_WORKSPACE: "envws" }
        })
        assert.strictEqual(sent[0]?.url, "http://env.test:9000/api/v1/workspaces/envws/market-data/suppliers/search")
        assert.strictEqual(sent[0]?.apiKey, "svc_key_env")
      }))

    it.effect("flags win over the environment; defaults are localhost:3000 and demo", () =>
      Effect.gen(function*() {
        const flagged = yield* runFake(["--api-key", "svc_key_flag", "market", "suppliers", "search", "--state", "X"], {
          ...market,
          reply: searchOk,
          env: { SERVICE_API_KEY: "svc_key_env" }
        })
        assert.strictEqual(flagged.sent[0]?.apiKey, "svc_key_flag")
        assert.strictEqual(flagged.sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/market-data/suppliers/search")
      }))

    it.effect("without an API key nothing is sent and the exit code is the authentication one", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runFake(["market", "suppliers", "search", "--state", "X"], market)
        assert.strictEqual(code, ExitCode.denied)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "SERVICE_API_KEY")
      }))
  })

  describe("checked before the call", () => {
    it.effect("an invalid choice is a usage error naming the choices", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runFake([...withKey, "market", "suppliers", "search", "--query", "oro", "--query-mode", "fuzzy"], market)
        assert.strictEqual(code, ExitCode.usage)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "exact_phrase")
      }))

    it.effect("a value the input schema refuses gets the codec's block, before any call", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runFake([...withKey, "market", "suppliers", "search", "--state", "X", "--limit", "100"], market)
        assert.strictEqual(code, ExitCode.refused)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "error: market-data refused before sending (input schema)")
        assert.include(stderr, "semantic_code: invalid_field_value")
        assert.include(stderr, "field: limit")
        assert.include(stderr, "allowed_range.maximum: 50")
      }))

    it.effect("with --json, the local refusal is the body the server would send, on stderr", () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runFake([
          ...withKey, "market", "suppliers", "search", "--state", "X", "--input-json", "{\"source_slugs\":[\"denue\"]}", "--json"
        ], market)
        assert.strictEqual(code, ExitCode.refused)
        assert.strictEqual(stdout, "")
        const body: unknown = JSON.parse(stderr)
        assert.deepInclude(body, { code: "VALIDATION_FAILED" })
        // source_slugs is canonical-only: the model-facing schema refuses it, naming the fields it accepts.
        assert.nestedPropertyVal(body, "market_data.semantic_code", "invalid_field_value")
        assert.nestedPropertyVal(body, "market_data.field", "source_slugs")
      }))

    it.effect("--input-json that is not one JSON object is a usage error", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runFake([...withKey, "market", "suppliers", "search", "--input-json", "[1]"], market)
        assert.strictEqual(code, ExitCode.usage)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "--input-json must be one JSON object")
      }))
  })

  describe("output and exit codes", () => {
    it.effect("prints the operation's summary by default, with the command for the next page; --json prints the wire output", () =>
      Effect.gen(function*() {
        const summary = yield* runFake([...withKey, "market", "suppliers", "search", "--state", "Zacatecas"], { ...market, reply: searchOk })
        assert.include(summary.stdout, "1. MINERA DEL NORTE")
        assert.include(summary.stdout, "more: yes — next: service market suppliers search --state Zacatecas --cursor CURSOR_NEXT")
        const json = yield* runFake([...withKey, "market", "suppliers", "search", "--state", "Zacatecas", "--json"], { ...market, reply: searchOk })
        assert.deepStrictEqual(JSON.parse(json.stdout), searchOk.body)
        assert.strictEqual(json.stderr, "")
      }))

    it.effect("an operation that declares no summary gets the generic summary (key facts of the record)", () =>
      Effect.gen(function*() {
        const group = MarketOperations.group
        const withoutSummaries = { ...group, operations: group.operations.map((op) => ({ ...op, cli: { ...op.cli, summary: undefined } })) }
        const { stdout } = yield* runFake([...withKey, "market", "suppliers", "get", "REF"], {
          groups: [withoutSummaries],
          reply: ok(supplierEnvelope)
        })
        assert.include(stdout, "results.name: MINERA DEL NORTE")
        assert.notInclude(stdout, "{…}")
      }))

    it.effect("a server refusal prints its block on stderr and exits with the refusal code", () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runFake([...withKey, "market", "suppliers", "get", "REF"], {
          ...market,
          reply: { status: 404, body: invalidRecordRefBody }
        })
        assert.strictEqual(code, ExitCode.refused)
        assert.strictEqual(stdout, "")
        assert.include(stderr, "error: market-data refused (HTTP 404, request_id req_refused)")
        assert.include(stderr, "semantic_code: invalid_record_ref")
        assert.include(stderr, "recovery.action: search_again")
      }))

    it.effect("with --json, a server refusal prints the wire error body on stderr", () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runFake([...withKey, "market", "suppliers", "get", "REF", "--json"], {
          ...market,
          reply: { status: 404, body: invalidRecordRefBody }
        })
        assert.strictEqual(code, ExitCode.refused)
        assert.strictEqual(stdout, "")
        assert.deepStrictEqual(JSON.parse(stderr), invalidRecordRefBody)
      }))

    it.effect("401 exits with the authentication code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake([...withKey, "market", "capabilities"], { ...market, reply: { status: 401, body: unauthorizedBody } })
        assert.strictEqual(code, ExitCode.denied)
        assert.include(stderr, "UNAUTHENTICATED (HTTP 401")
      }))

    it.effect("an unknown workspace (a 404 without a block) exits with the authentication code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake([...withKey, "market", "capabilities"], {
          ...market,
          reply: { status: 404, body: { statusCode: 404, code: "NOT_FOUND", message: "No such workspace for this credential.", request_id: "r" } }
        })
        assert.strictEqual(code, ExitCode.denied)
        assert.include(stderr, "NOT_FOUND (HTTP 404, request_id r)")
      }))

    it.effect("a router 404 listing the group's routes is a version mismatch, not a denial", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake([...withKey, "market", "capabilities"], {
          ...market,
          reply: {
            status: 404,
            body: { statusCode: 404, code: "NOT_FOUND", message: "No such route.", request_id: "r", endpoint: {}, operations: [] }
          }
        })
        assert.strictEqual(code, ExitCode.unexpected)
        assert.include(stderr, "does not serve GET /api/v1/workspaces/:workspace/market-data/capabilities")
      }))

    it.effect("a transport failure exits with the connection code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runFake([...withKey, "market", "capabilities"], { ...market, reply: "unreachable" })
        assert.strictEqual(code, ExitCode.unreachable)
        assert.include(stderr, "could not reach http://localhost:3000")
      }))

    it.effect("an undeclared answer, or a success that does not decode, exits with the unexpected code", () =>
      Effect.gen(function*() {
        const internal = yield* runFake([...withKey, "market", "capabilities"], {
          ...market,
          reply: { status: 500, body: { code: "INTERNAL", message: "boom", request_id: "req_500" } }
        })
        assert.strictEqual(internal.code, ExitCode.unexpected)
        assert.include(internal.stderr, "HTTP 500, INTERNAL, request_id req_500")
        const garbled = yield* runFake([...withKey, "market", "capabilities"], { ...market, reply: { status: 200, body: { nope: 1 } } })
        assert.strictEqual(garbled.code, ExitCode.unexpected)
        assert.include(garbled.stderr, "is the server the same version?")
      }))
  })

  it("exitCodeOf: success is 0 and interruption 130", () => {
    assert.strictEqual(Cli.exitCodeOf(Exit.void), ExitCode.ok)
    assert.strictEqual(Cli.exitCodeOf(Exit.interrupt(Effect.runSync(Effect.fiberId))), ExitCode.interrupted)
  })
})

describe("Cli over any group", () => {
  const toy = { groups: [Toy.group] }

  it.effect("every input kind has its flag: choices, lists, numbers, booleans, nested flags, --input-json for the rest", () =>
    Effect.gen(function*() {
      const { code, sent, stderr } = yield* runFake([
        ...withKey, "toy", "things", "aggregate",
        "--currency", "MXN", "--group-by", "buyer,year", "--years", "2023", "--years", "2024", "--ratio", "0.5",
        "--include-empty", "--compare-from-date", "2023-01-01", "--compare-to-date", "2023-12-31",
        "--input-json", "{\"segments\":[{\"id\":\"a\",\"query\":\"oro\"}],\"limit\":3,\"currency\":\"USD\"}"
      ], { ...toy, reply: ok({ groups: [{ key: "b", count: 2 }], page: { hasMore: false } }) })
      assert.strictEqual(code, ExitCode.ok, stderr)
      assert.strictEqual(sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/toy/things/aggregate")
      assert.deepStrictEqual(sent[0]?.body, {
        // The flag wins over --input-json.
        currency: "MXN",
        group_by: ["buyer", "year"],
        years: [2023, 2024],
        ratio: 0.5,
        include_empty: true,
        compare_period: { from_date: "2023-01-01", to_date: "2023-12-31" },
        segments: [{ id: "a", query: "oro" }],
        limit: 3
      })
    }))

  it.effect("a missing required field is refused with the group's codec, under its own key", () =>
    Effect.gen(function*() {
      const { code, sent, stderr } = yield* runFake([...withKey, "toy", "things", "aggregate", "--group-by", "buyer"], toy)
      assert.strictEqual(code, ExitCode.refused)
      assert.lengthOf(sent, 0)
      assert.include(stderr, "error: toy-block refused before sending")
      assert.include(stderr, "code: bad_value")
      assert.include(stderr, "field: currency")
    }))

  it.effect("a list element outside its choices is refused with the allowed values", () =>
    Effect.gen(function*() {
      const { code, stderr } = yield* runFake([...withKey, "toy", "things", "aggregate", "--currency", "MXN", "--group-by", "buyer,month"], toy)
      assert.strictEqual(code, ExitCode.refused)
      assert.include(stderr, "allowed_values: buyer, year")
    }))

  it.effect("a path binding takes the positional; other fields of a GET become URL parameters; literal numbers are choices", () =>
    Effect.gen(function*() {
      const { sent, code, stderr } = yield* runFake([...withKey, "toy", "things", "get", "t/1", "--detail", "2"], {
        ...toy,
        reply: ok({ ref: "t/1", name: "One", tags: [] })
      })
      assert.strictEqual(code, ExitCode.ok, stderr)
      assert.strictEqual(sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/toy/things/~ref/t%2F1?detail=2")
    }))

  it.effect("a list on a query binding repeats the parameter", () =>
    Effect.gen(function*() {
      const { sent } = yield* runFake([...withKey, "toy", "things", "list", "--tags", "a,b"], { ...toy, reply: ok({ things: [] }) })
      assert.strictEqual(sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/toy/things?tags=a&tags=b")
    }))

  it.effect("a server refusal is read from the body's block under the codec's key", () =>
    Effect.gen(function*() {
      const { code, stderr } = yield* runFake([...withKey, "toy", "things", "get", "t1"], {
        ...toy,
        reply: { status: 410, body: { statusCode: 410, code: "VALIDATION_FAILED", message: "Gone.", request_id: "r1", toy_block: { code: "gone", why: "Gone." } } }
      })
      assert.strictEqual(code, ExitCode.refused)
      assert.include(stderr, "error: toy-block refused (HTTP 410, request_id r1)\ncode: gone\nwhy: Gone.")
    }))

  it.effect("the prefix is the transport's, never the domain's", () =>
    Effect.gen(function*() {
      const help = yield* runFake(["--help"], { ...toy, prefix: "acme" })
      assert.include(help.stdout, "acme toy things aggregate")
      assert.include(help.stdout, "acme [--base-url URL]")
      assert.notMatch(help.stdout, /service (toy|\[|<)/)
      const call = yield* runFake([...withKey, "toy", "things", "list"], { ...toy, prefix: "acme", reply: ok({ things: [] }) })
      assert.strictEqual(call.code, ExitCode.ok)
    }))

  it.effect("an operator subtree hangs from the root: listed, checked and run", () =>
    Effect.gen(function*() {
      const ping = Command.make("ping", {}, () => Console.log("pong")).pipe(Command.withDescription("Answers pong. Twice as fast."))
      const operator = Command.make("ops").pipe(Command.withDescription("Operator commands."), Command.withSubcommands([ping]))
      const help = yield* runFake(["--help"], { ...toy, operator })
      assert.match(help.stdout, /service ops ping +Answers pong\./)
      const unknown = yield* runFake(["ops", "pong"], { ...toy, operator })
      assert.strictEqual(unknown.code, ExitCode.usage)
      assert.include(unknown.stderr, "unknown command 'pong' for 'service ops'. Did you mean 'ping'? Use one of: ping.")
      const ran = yield* runFake(["ops", "ping"], { ...toy, operator })
      assert.strictEqual(ran.code, ExitCode.ok)
      assert.strictEqual(ran.stdout, "pong")
    }))
})
