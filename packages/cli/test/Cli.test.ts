import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Cli from "../src/Cli.js"
import { ExitCode } from "../src/Failure.js"
import { invalidRecordRefBody, searchEnvelope, unauthorizedBody } from "./Fixtures.js"

// -----------------------------------------------------------------------------
// Harness: a recording HttpClient, captured stdout/stderr, an explicit environment
// -----------------------------------------------------------------------------

interface Reply {
  readonly status: number
  readonly body: unknown
}

interface Sent {
  readonly method: string
  readonly url: string
  readonly apiKey: string | undefined
  readonly body: unknown
}

const bodyOf = (request: HttpClientRequest.HttpClientRequest): unknown =>
  request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : undefined

interface Outcome {
  readonly code: number
  readonly sent: ReadonlyArray<Sent>
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs `service <args>` against a fake server answering `reply` (or failing at the transport when `reply` is
 * "unreachable"), with only the given environment variables visible to Config.
 */
const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly reply?: Reply | "unreachable"; readonly env?: Record<string, string> } = {}
): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const sent: Array<Sent> = []
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const reply = options.reply ?? { status: 200, body: searchEnvelope }
    const client = HttpClient.make((request, url) =>
      Effect.suspend(() => {
        sent.push({ method: request.method, url: url.toString(), apiKey: request.headers["x-api-key"], body: bodyOf(request) })
        if (reply === "unreachable") {
          return Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error("connect ECONNREFUSED") }))
        }
        return Effect.succeed(HttpClientResponse.fromWeb(
          request,
          new Response(JSON.stringify(reply.body), { status: reply.status, headers: { "content-type": "application/json" } })
        ))
      })
    )
    const console = yield* Effect.console
    const exit = yield* Cli.runWith(["node", "service", ...args]).pipe(
      Effect.provide(Layer.merge(NodeContext.layer, Layer.succeed(HttpClient.HttpClient, client))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(options.env ?? {})))),
      Effect.withConsole({
        ...console,
        log: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void stdout.push(parts.join(" "))),
        error: (...parts: ReadonlyArray<unknown>) => Effect.sync(() => void stderr.push(parts.join(" ")))
      }),
      Effect.exit
    )
    return { code: Cli.exitCodeOf(exit), sent, stdout: stdout.join("\n"), stderr: stderr.join("\n") }
  })

const withKey = ["--api-key", "svc_key_test"]

describe("Cli", () => {
  describe("array flags", () => {
    it.effect("--scian-codes repeats and splits on commas", () =>
      Effect.gen(function*() {
        const { code, sent } = yield* runCli([
          ...withKey, "market", "suppliers", "search", "--state", "Zacatecas",
          "--scian-codes", "212", "--scian-codes", "213,214"
        ])
        assert.strictEqual(code, ExitCode.ok)
        assert.deepStrictEqual(sent[0]?.body, { state: "Zacatecas", scian_codes: ["212", "213", "214"] })
      }))

    it.effect("sends every search flag under its schema field name", () =>
      Effect.gen(function*() {
        const { sent } = yield* runCli([
          ...withKey, "market", "suppliers", "search", "--query", "oro plata", "--state", "ZAC", "--rfc", "MNO010101AB1",
          "--limit", "5", "--query-mode", "any_terms", "--cursor", "CUR"
        ])
        assert.deepStrictEqual(sent[0]?.body, {
          query: "oro plata",
          state: "ZAC",
          rfc: "MNO010101AB1",
          limit: 5,
          query_mode: "any_terms",
          cursor: "CUR"
        })
      }))

    it.effect("--facets repeats and splits, and is sent comma-separated", () =>
      Effect.gen(function*() {
        const { sent } = yield* runCli([...withKey, "market", "capabilities", "--facets", "states", "--facets", "scian_codes"], {
          reply: { status: 400, body: invalidRecordRefBody }
        })
        assert.strictEqual(
          sent[0]?.url,
          "http://localhost:3000/api/v1/workspaces/demo/market-data/capabilities?facets=states%2Cscian_codes"
        )
      }))
  })

  describe("parent options", () => {
    it.effect("--base-url, --api-key and --workspace before `market` shape the call", () =>
      Effect.gen(function*() {
        const { code, sent } = yield* runCli([
          "--base-url", "http://api.example.test:8080/", "--api-key", "svc_key_cli", "--workspace", "acme",
          "market", "suppliers", "search", "--state", "Zacatecas"
        ])
        assert.strictEqual(code, ExitCode.ok)
        assert.strictEqual(sent[0]?.method, "POST")
        assert.strictEqual(sent[0]?.url, "http://api.example.test:8080/api/v1/workspaces/acme/market-data/suppliers/search")
        assert.strictEqual(sent[0]?.apiKey, "svc_key_cli")
      }))

    it.effect("fall back to SERVICE_BASE_URL, SERVICE_API_KEY and SERVICE_WORKSPACE", () =>
      Effect.gen(function*() {
        const { sent } = yield* runCli(["market", "suppliers", "search", "--state", "Zacatecas"], {
          env: { SERVICE_BASE_URL: "http://env.test:9000", SERVICE_API_KEY: "svc_key_env", SERVICE_WORKSPACE: "envws" }
        })
        assert.strictEqual(sent[0]?.url, "http://env.test:9000/api/v1/workspaces/envws/market-data/suppliers/search")
        assert.strictEqual(sent[0]?.apiKey, "svc_key_env")
      }))

    it.effect("flags win over the environment; defaults are localhost:3000 and demo", () =>
      Effect.gen(function*() {
        const flagged = yield* runCli(["--api-key", "svc_key_flag", "market", "suppliers", "search", "--state", "X"], {
          env: { SERVICE_API_KEY: "svc_key_env" }
        })
        assert.strictEqual(flagged.sent[0]?.apiKey, "svc_key_flag")
        assert.strictEqual(flagged.sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/market-data/suppliers/search")
      }))

    it.effect("without an API key nothing is sent and the exit code is the authentication one", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runCli(["market", "suppliers", "search", "--state", "X"])
        assert.strictEqual(code, ExitCode.denied)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "SERVICE_API_KEY")
      }))
  })

  describe("validation", () => {
    it.effect("an invalid --query-mode is rejected before any call", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runCli([...withKey, "market", "suppliers", "search", "--query", "oro", "--query-mode", "fuzzy"])
        assert.strictEqual(code, ExitCode.usage)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "exact_phrase")
      }))

    it.effect("a value the input schema refuses is reported as a refusal before any call", () =>
      Effect.gen(function*() {
        const { code, sent, stderr } = yield* runCli([...withKey, "market", "suppliers", "search", "--state", "X", "--limit", "100"])
        assert.strictEqual(code, ExitCode.refused)
        assert.lengthOf(sent, 0)
        assert.include(stderr, "semantic_code: invalid_field_value")
        assert.include(stderr, "field: limit")
      }))
  })

  describe("output and exit codes", () => {
    it.effect("prints the compact summary by default and the full envelope with --json", () =>
      Effect.gen(function*() {
        const summary = yield* runCli([...withKey, "market", "suppliers", "search", "--state", "Zacatecas"])
        assert.include(summary.stdout, "1. MINERA DEL NORTE")
        assert.include(summary.stdout, "more: yes — next: service market suppliers search --state Zacatecas --cursor CURSOR_NEXT")
        const json = yield* runCli([...withKey, "market", "suppliers", "search", "--state", "Zacatecas", "--json"])
        assert.deepStrictEqual(JSON.parse(json.stdout), JSON.parse(JSON.stringify(searchEnvelope)))
      }))

    it.effect("get escapes the record ref into the path", () =>
      Effect.gen(function*() {
        const { sent } = yield* runCli([...withKey, "market", "suppliers", "get", "a/b?c"], {
          reply: { status: 404, body: invalidRecordRefBody }
        })
        assert.strictEqual(sent[0]?.method, "GET")
        assert.strictEqual(sent[0]?.url, "http://localhost:3000/api/v1/workspaces/demo/market-data/suppliers/~ref/a%2Fb%3Fc")
      }))

    it.effect("a server refusal prints the market_data block on stderr and exits with the refusal code", () =>
      Effect.gen(function*() {
        const { code, stderr, stdout } = yield* runCli([...withKey, "market", "suppliers", "get", "REF"], {
          reply: { status: 404, body: invalidRecordRefBody }
        })
        assert.strictEqual(code, ExitCode.refused)
        assert.strictEqual(stdout, "")
        assert.include(stderr, "semantic_code: invalid_record_ref")
        assert.include(stderr, "recovery.action: search_again")
        assert.include(stderr, "request_id req_refused")
      }))

    it.effect("401 exits with the authentication code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runCli([...withKey, "market", "capabilities"], {
          reply: { status: 401, body: unauthorizedBody }
        })
        assert.strictEqual(code, ExitCode.denied)
        assert.include(stderr, "UNAUTHENTICATED (HTTP 401")
      }))

    it.effect("a transport failure exits with the connection code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runCli([...withKey, "market", "capabilities"], { reply: "unreachable" })
        assert.strictEqual(code, ExitCode.unreachable)
        assert.include(stderr, "could not reach http://localhost:3000")
      }))

    it.effect("an undeclared answer exits with the unexpected code", () =>
      Effect.gen(function*() {
        const { code, stderr } = yield* runCli([...withKey, "market", "capabilities"], {
          reply: { status: 500, body: { code: "INTERNAL", message: "boom", request_id: "req_500" } }
        })
        assert.strictEqual(code, ExitCode.unexpected)
        assert.include(stderr, "HTTP 500")
      }))
  })

  it("exitCodeOf: success is 0 and interruption 130", () => {
    assert.strictEqual(Cli.exitCodeOf(Exit.void), ExitCode.ok)
    assert.strictEqual(Cli.exitCodeOf(Exit.interrupt(Effect.runSync(Effect.fiberId))), ExitCode.interrupted)
  })
})
