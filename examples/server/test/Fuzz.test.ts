/**
 * A fuzzer in the suite: generated bad requests against every route `/openapi.json` lists, the door, `/mcp` and the
 * OAuth server's endpoints (token, authorization, registration, revocation, device flow, consent; issue 32), on
 * the real server (`npm start`'s layers), over each database. Inputs: wrong types and unknown fields, huge and deep
 * values, NUL characters and lone surrogates, bytes that are not UTF-8, wrong content types and encodings, bodies
 * chunked and oversized, tampered ids, refs, cursors and tokens, two credentials. It asserts:
 *
 * - no 5xx, ever (the OAuth endpoints included: their refusals are the protocol's own shapes, or a page);
 * - every refusal in its documented shape (`{statusCode, code, message, request_id}` on the REST API,
 *   `{code, message, request_id}` at the door, a JSON-RPC error or a tool result on `/mcp`);
 * - a refused door request stores a bounded record, never its body;
 * - the server's heap stays bounded.
 *
 * A fixed seed and a modest count run in `npm test`; a longer run is one command:
 * `FUZZ_RUNS=3000 FUZZ_SEED=7 npx vitest run examples/server/test/Fuzz.test.ts`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import { Intake } from "@service/door/Intake"
import { Sources } from "@service/door/Sources"
import * as App from "@service/app/App"
import { Crypto } from "@service/core/Crypto"
import * as DemoSnapshot from "@service/market-warehouse/DemoSnapshot"
import { ensureDemo } from "@service/server/Demo"
import * as Server from "@service/server/Server"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { request as httpRequest } from "node:http"
import { jsonOf, Running, running } from "./support/Rest.js"

const KEY = "svc_key_fuzz_0123456789abcdef0123456789"
const runs = Number(process.env["FUZZ_RUNS"] ?? "400")
const seed = Number(process.env["FUZZ_SEED"] ?? "20261202")

class Door extends Context.Tag("Door")<Door, { readonly sourceId: string }>() {}

const prepared = Layer.effect(
  Door,
  Effect.gen(function*() {
    yield* ensureDemo(Option.some(Redacted.make(KEY)))
    const demo = Option.getOrThrow(yield* (yield* Accounts.Accounts).findWorkspaceBySlug(WorkspaceSlug.make("demo")))
    const { source } = yield* (yield* Sources).create(demo.id, { name: "Fuzzed form" })
    return { sourceId: source.id }
  }).pipe(Effect.orDie)
)

interface Sent {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** Sent with Content-Length, or chunked (no length) when `chunked`. */
  readonly body?: Uint8Array | undefined
  readonly chunked?: boolean | undefined
}

interface Got {
  readonly status: number
  readonly text: string
}

/** One request on a connection of its own; a connection the server closes after answering is not a failure. */
const send = (port: number, sent: Sent) =>
  Effect.async<Got>((resume) => {
    const headers: Record<string, string | number> = { ...sent.headers }
    if (sent.body !== undefined && sent.chunked !== true) headers["content-length"] = sent.body.byteLength
    // Node frames a body without a length as chunked only for some methods (not DELETE): said outright for all.
    if (sent.body !== undefined && sent.chunked === true) headers["transfer-encoding"] = "chunked"
    const req = httpRequest({ host: "127.0.0.1", port, method: sent.method, path: sent.path, headers, agent: false }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => parts.push(chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") })))
      res.on("error", () => resume(Effect.succeed({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") })))
    })
    // The server may answer (413) and close before the whole body is written: that is its right.
    req.on("error", (error) => resume(Effect.succeed({ status: -1, text: String(error) })))
    if (sent.body !== undefined && sent.chunked === true) {
      for (let at = 0; at < sent.body.byteLength; at += 64 * 1024) req.write(sent.body.subarray(at, at + 64 * 1024))
    } else if (sent.body !== undefined) {
      req.write(sent.body)
    }
    req.end()
  })

const encoder = new TextEncoder()

/** Percent-encoded; a lone surrogate (no UTF-8 form) becomes the bytes of one, which is not UTF-8 either. */
const enc = (text: string): string => {
  try {
    return encodeURIComponent(text)
  } catch {
    return "%ED%A0%80"
  }
}

// -- Generators ----------------------------------------------------------------------------------------------------

/** Strings a careless or hostile client sends. */
const nastyString = FastCheck.oneof(
  FastCheck.string({ maxLength: 40 }),
  FastCheck.string({ unit: "binary", maxLength: 40 }),
  FastCheck.constantFrom("a\u0000b", "\u0000", "a\ud800b", "\udfff", "' OR 1=1 --", "<script>", "../../etc/passwd", "%00", "🙂", ""),
  FastCheck.integer({ min: 1, max: 6000 }).map((n) => "x".repeat(n))
)

/** A value nested `depth` levels, written as text (JSON.stringify recurses). */
const deepText = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

/** JSON bodies: arbitrary values, wrong types, unknown fields, deep and huge ones, as text. */
const jsonText = FastCheck.oneof(
  FastCheck.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  FastCheck.dictionary(FastCheck.string({ maxLength: 12 }), FastCheck.oneof(nastyString, FastCheck.integer(), FastCheck.boolean(), FastCheck.constant(null))).map((v) => JSON.stringify(v)),
  FastCheck.record({ query: nastyString, state: nastyString, limit: FastCheck.oneof(FastCheck.integer(), nastyString), cursor: nastyString }).map((v) => JSON.stringify(v)),
  FastCheck.integer({ min: 60, max: 20_000 }).map((depth) => `{"query":${deepText(depth)}}`),
  FastCheck.constantFrom(`{"query":"a\\u0000b"}`, `{"title":"a\\ud800b"}`, `{"name":"\\u0000"}`, "{", "[]", "null", "\"x\"", "{\"a\":1,}")
)

const bodyBytes = FastCheck.oneof(
  jsonText.map((text) => encoder.encode(text)),
  FastCheck.uint8Array({ maxLength: 200 }),
  // Not UTF-8.
  FastCheck.constant(Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
  // Oversized.
  FastCheck.integer({ min: 257 * 1024, max: 600 * 1024 }).map((n) => encoder.encode(`{"query":"${"x".repeat(n)}"}`))
)

const contentType = FastCheck.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "application/json; charset=latin1",
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/cloudevents+json",
  ""
)

const credentials = FastCheck.constantFrom<Record<string, string>>(
  { "x-api-key": KEY },
  { "x-api-key": KEY },
  {},
  { "x-api-key": "svc_key_tampered" },
  { authorization: "Bearer nonsense" },
  { "x-api-key": KEY, authorization: "Bearer nonsense" }
)

const pathValue = FastCheck.oneof(
  nastyString.map(enc),
  FastCheck.constantFrom("contact_000000000000000000000000", "src_000000000000000000000000", "arr_000000000000000000000000", "~ref", "%00", "%ff", "a%2Fb"),
  FastCheck.integer({ min: 4000, max: 6000 }).map((n) => "A".repeat(n))
)

// -- Checks --------------------------------------------------------------------------------------------------------

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** What is wrong with an answer, if anything. */
const problemOf = (kind: "rest" | "door" | "mcp" | "oauth", sent: Sent, got: Got): string | undefined => {
  const where = `${sent.method} ${sent.path.slice(0, 100)}`
  if (got.status === -1) {
    return got.text.includes("ECONNRESET") || got.text.includes("EPIPE")
      ? undefined
      : `${where} (headers ${JSON.stringify(sent.headers)}, body ${sent.body?.byteLength ?? "none"}${sent.chunked === true ? " chunked" : ""}): ${got.text}`
  }
  if (got.status >= 500) return `${where}: ${got.status} ${got.text.slice(0, 300)}`
  if (got.status < 400) return undefined
  // OAuth answers in its own shapes ({error, error_description}, or an HTML page): what matters is no 5xx.
  if (kind === "oauth") return undefined
  const json = jsonOf(got.text)
  if (kind === "mcp") {
    // A JSON-RPC error, or the REST API's 401 body.
    if (isRecord(json) && (isRecord(json["error"]) || typeof json["code"] === "string")) return undefined
    return got.text.length === 0 ? undefined : `${where}: ${got.status} not a JSON-RPC error: ${got.text.slice(0, 200)}`
  }
  // Public share pages are pages: their 404 is a page too (docs/topics.md).
  if (kind === "rest" && sent.path.startsWith("/api/v1/s/")) return undefined
  if (!isRecord(json)) return `${where}: ${got.status} is not a JSON object: ${got.text.slice(0, 200)}`
  const required = kind === "door" ? ["code", "message", "request_id"] : ["statusCode", "code", "message", "request_id"]
  const missing = required.filter((field) => !(field in json))
  return missing.length === 0 ? undefined : `${where}: ${got.status} lacks ${missing.join(", ")}: ${got.text.slice(0, 200)}`
}

interface Route {
  readonly method: string
  readonly path: string
}

const routesOf = (openapi: unknown): ReadonlyArray<Route> => {
  if (!isRecord(openapi) || !isRecord(openapi["paths"])) return []
  return Object.entries(openapi["paths"]).flatMap(([path, item]) =>
    isRecord(item)
      ? Object.keys(item).filter((method) => ["get", "post", "put", "patch", "delete"].includes(method)).map((method) => ({ method: method.toUpperCase(), path }))
      : []
  )
}

for (const target of TestDatabase.targets()) {
  // Over a copy of the run's prepared demo corpus, so market reads answer (and are fuzzed) rather than 503.
  const Env = running.pipe(
    Layer.provideMerge(Server.layer(App.app, { port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(prepared),
    Layer.provideMerge(App.layer(TestDatabase.prepared(target, DemoSnapshot.over(App.migrations)), Crypto.layerTest)),
    Layer.orDie
  )
  layer(Env, { timeout: 0, excludeTestServices: true })(`the fuzzer on ${target.name}`, (it) => {
    it.effect(`${runs} generated bad requests over every route, the door, /mcp and OAuth: no 5xx, documented refusals, bounded records`, () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const { sourceId } = yield* Door
        const sql = yield* SqlClient.SqlClient
        const openapi = jsonOf((yield* send(port, { method: "GET", path: "/openapi.json", headers: {} })).text)
        const routes = routesOf(openapi).filter((route) => route.path.startsWith("/api/v1/") && !route.path.startsWith("/api/v1/door/"))
        assert.isAbove(routes.length, 80, "the document lists the API's routes")

        const restRequest = FastCheck.record({
          route: FastCheck.constantFrom(...routes),
          values: FastCheck.array(pathValue, { minLength: 4, maxLength: 4 }),
          query: FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("limit", "cursor", "text", "state", "x", "include_archived"), nastyString), { maxLength: 3 }),
          body: FastCheck.option(bodyBytes, { nil: undefined }),
          contentType,
          encoding: FastCheck.constantFrom(undefined, undefined, "gzip", "identity", "br, gzip"),
          credentials,
          chunked: FastCheck.boolean()
        }).map((r): Sent => {
          let i = 0
          const path = r.route.path.replace("{workspace}", "demo").replace(/\{[^}]+\}/g, () => r.values[i++ % r.values.length] ?? "x")
          const search = r.query.length === 0 ? "" : `?${r.query.map(([k, v]) => `${k}=${enc(v)}`).join("&")}`
          return {
            method: r.route.method,
            path: `${path}${search}`,
            headers: { ...r.credentials, ...(r.contentType === "" ? {} : { "content-type": r.contentType }), ...(r.encoding === undefined ? {} : { "content-encoding": r.encoding }) },
            body: r.route.method === "GET" ? undefined : r.body,
            chunked: r.chunked
          }
        })

        const doorRequest = FastCheck.record({
          source: FastCheck.oneof(FastCheck.constant(sourceId), FastCheck.constant(sourceId), pathValue),
          token: FastCheck.option(pathValue, { nil: undefined }),
          body: bodyBytes,
          contentType,
          signature: FastCheck.constantFrom("v1,AAAA", "v1,", "", "v2,abc", "v1,AAAA v1,BBBB"),
          id: nastyString,
          timestamp: FastCheck.oneof(FastCheck.constant(String(Math.floor(Date.now() / 1000))), FastCheck.constant("0"), nastyString),
          chunked: FastCheck.boolean()
        }).map((r): Sent => ({
          method: "POST",
          path: `/api/v1/door/${r.source}${r.token === undefined ? "" : `/${r.token}`}`,
          headers: {
            ...(r.contentType === "" ? {} : { "content-type": r.contentType }),
            "webhook-id": enc(r.id).slice(0, 200) || "m",
            "webhook-timestamp": enc(r.timestamp).slice(0, 40) || "0",
            ...(r.signature === "" ? {} : { "webhook-signature": r.signature })
          },
          body: r.body,
          chunked: r.chunked
        }))

        const mcpRequest = FastCheck.record({
          message: FastCheck.oneof(
            jsonText,
            FastCheck.record({ name: FastCheck.constantFrom("service_topics_create", "service_market_search_suppliers", "service_crm_contact_create", "service_nothing"), args: jsonText }).map(({ args, name }) =>
              `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`
            ),
            FastCheck.integer({ min: 11, max: 30 }).map((n) => `[${Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"tools/list"}`).join(",")}]`)
          ),
          encoding: FastCheck.constantFrom(undefined, undefined, "gzip"),
          credentials,
          chunked: FastCheck.boolean()
        }).map((r): Sent => ({
          method: "POST",
          path: "/mcp",
          headers: {
            ...r.credentials,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": "2025-03-26",
            ...(r.encoding === undefined ? {} : { "content-encoding": r.encoding })
          },
          body: encoder.encode(r.message),
          chunked: r.chunked
        }))

        const oauthValue = FastCheck.oneof(
          nastyString,
          FastCheck.constantFrom("service-cli", "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code", "client_credentials"),
          FastCheck.constantFrom(`http://127.0.0.1:${port}/api/v1`, `http://127.0.0.1:${port}/mcp`, "https://127.0.0.1/c.json", "http://evil.example/cb", "*", "openid offline_access commercial:activate")
        )
        const oauthForm = FastCheck.dictionary(
          FastCheck.constantFrom("client_id", "grant_type", "code", "refresh_token", "redirect_uri", "scope", "resource", "device_code", "user_code", "code_verifier", "token", "xsrf", "confirm", "abort"),
          oauthValue,
          { maxKeys: 6 }
        )
        const oauthRequest = FastCheck.oneof(
          FastCheck.record({
            path: FastCheck.constantFrom("/oauth/token", "/oauth/token/revocation", "/oauth/device/auth", "/oauth/device", "/oauth/interaction/x/consent", "/oauth/reg"),
            form: oauthForm,
            raw: FastCheck.option(bodyBytes, { nil: undefined }),
            contentType,
            chunked: FastCheck.boolean()
          }).map(({ chunked, contentType, form, path, raw }): Sent => ({
            method: "POST",
            path,
            headers: contentType === "" ? {} : { "content-type": contentType },
            body: raw ?? encoder.encode(path === "/oauth/reg"
              ? JSON.stringify({ redirect_uris: [form["redirect_uri"] ?? "https://a.example/cb"], client_name: form["client_id"] ?? "x", token_endpoint_auth_method: "none" })
              : Object.entries(form).map(([k, v]) => `${k}=${enc(v)}`).join("&")),
            chunked
          })),
          FastCheck.record({
            path: FastCheck.constantFrom("/oauth/auth", "/oauth/device", "/oauth/interaction/x", "/.well-known/oauth-authorization-server/oauth", "/oauth/jwks", "/oauth/reg/x"),
            form: oauthForm
          }).map(({ form, path }): Sent => ({
            method: "GET",
            path: `${path}?${Object.entries({ response_type: "code", ...form }).map(([k, v]) => `${k}=${enc(v)}`).join("&")}`,
            headers: {}
          }))
        )

        const anyRequest = FastCheck.oneof(
          { arbitrary: restRequest.map((sent) => ["rest", sent] as const), weight: 3 },
          { arbitrary: doorRequest.map((sent) => ["door", sent] as const), weight: 2 },
          { arbitrary: mcpRequest.map((sent) => ["mcp", sent] as const), weight: 2 },
          { arbitrary: oauthRequest.map((sent) => ["oauth", sent] as const), weight: 2 }
        )

        const storedBefore = yield* Effect.orDie(sql<{ n: number; bytes: string }>`SELECT count(*)::int AS n,
            coalesce(sum(octet_length(coalesce(body, '')) + octet_length(headers::text)), 0)::text AS bytes FROM door.arrivals`)
        const heapBefore = process.memoryUsage().heapUsed
        const problems: Array<string> = []
        const samples = FastCheck.sample(anyRequest, { numRuns: runs, seed })
        let doorSent = 0
        for (const [kind, sent] of samples) {
          if (kind === "door") doorSent++
          const got = yield* send(port, sent)
          const problem = problemOf(kind, sent, got)
          if (problem !== undefined) problems.push(problem)
        }
        assert.deepStrictEqual(problems.slice(0, 20), [], `${problems.length} of ${runs} requests broke a rule (seed ${seed})`)

        // Refused door requests keep bounded records: none holds a body, each is small.
        yield* (yield* Intake).refusalsKept
        const storedAfter = yield* Effect.orDie(sql<{ n: number; bytes: string }>`SELECT count(*)::int AS n,
            coalesce(sum(octet_length(coalesce(body, '')) + octet_length(headers::text)), 0)::text AS bytes FROM door.arrivals`)
        const added = (storedAfter[0]?.n ?? 0) - (storedBefore[0]?.n ?? 0)
        const addedBytes = Number(storedAfter[0]?.bytes ?? 0) - Number(storedBefore[0]?.bytes ?? 0)
        assert.isAtMost(added, doorSent)
        assert.isAtMost(addedBytes, Math.max(1, added) * 64 * 1024, `${added} records hold ${addedBytes} bytes`)
        const bodies = yield* Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM door.arrivals WHERE status = 'rejected' AND body IS NOT NULL`)
        assert.strictEqual(bodies[0]?.n, 0, "a refused request kept its body")

        // The heap comes back near where it was: nothing held on to per request.
        const heapAfter = process.memoryUsage().heapUsed
        assert.isBelow(heapAfter - heapBefore, 512 * 1024 * 1024, `heap grew by ${Math.round((heapAfter - heapBefore) / 1e6)} MB`)
      }))
  })
}
