import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { gzipSync } from "node:zlib"
import * as RawHttp from "./support/RawHttp.js"
import * as ToyDomain from "./support/ToyDomain.js"
import * as ToyServer from "./support/ToyServer.js"

const json = { "content-type": "application/json", "x-api-key": ToyDomain.KEY }
const echo = `${ToyServer.base}/echo`

const post = (body: string | Uint8Array, headers: Readonly<Record<string, string>> = json, path = echo) =>
  Effect.flatMap(RawHttp.port, (port) => RawHttp.send(port, { method: "POST", path, headers, body }))

const blockOf = (answer: RawHttp.Answer) => RawHttp.field(answer.json, "toy")

layer(ToyServer.layer, { excludeTestServices: true })("JSON bodies through a listening server", (it) => {
  it.effect("a valid body is echoed", () =>
    Effect.gen(function*() {
      const answer = yield* post(JSON.stringify({ text: "hola", count: 2 }))
      assert.strictEqual(answer.status, 200, answer.text)
      assert.deepStrictEqual(answer.json, { text: "hola", count: 2 })
      // A charset parameter and an application/*+json type are accepted.
      const withCharset = yield* post(JSON.stringify({ text: "hola" }), { ...json, "content-type": "application/json; charset=UTF-8" })
      assert.strictEqual(withCharset.status, 200, withCharset.text)
      const vendor = yield* post(JSON.stringify({ text: "hola" }), { ...json, "content-type": "application/vnd.toy+json" })
      assert.strictEqual(vendor.status, 200, vendor.text)
    }))

  it.effect("a declared length over the limit is 413 before a byte is read, and the connection closes", () =>
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const result = yield* RawHttp.stream(port, { path: echo, headers: json, totalBytes: 300 * 1024, declareLength: true })
      assert.strictEqual(result.status, 413)
      assert.deepInclude(JSON.parse(result.text), { statusCode: 413, code: "PAYLOAD_TOO_LARGE", max_body_bytes: 256 * 1024 })
      const small = yield* post(JSON.stringify({ text: "x".repeat(2000) }), json, `${ToyServer.base}/echo-small`)
      assert.strictEqual(small.status, 413)
      assert.strictEqual(small.headers["connection"], "close")
      assert.strictEqual(RawHttp.field(small.json, "max_body_bytes"), 1024)
    }))

  it.effect("a 100 MB chunked body gets 413 while the client is still sending, and is never buffered", () =>
    Effect.gen(function*() {
      const port = yield* RawHttp.port
      const total = 100 * 1024 * 1024
      const rssBefore = process.memoryUsage().rss
      const result = yield* RawHttp.stream(port, { path: echo, headers: json, totalBytes: total })
      const rssGrowth = process.memoryUsage().rss - rssBefore
      assert.strictEqual(result.status, 413, result.text)
      assert.strictEqual(RawHttp.field(JSON.parse(result.text), "code"), "PAYLOAD_TOO_LARGE")
      assert.isFalse(result.finishedSending, "the answer must come before the body was sent")
      assert.isBelow(result.sentWhenAnswered, 16 * 1024 * 1024, "the server stopped reading soon after the limit")
      assert.isBelow(rssGrowth, 64 * 1024 * 1024, "the body was not buffered")
      // The same body under the limit but chunked passes.
      const fine = yield* RawHttp.stream(port, { path: echo, headers: json, totalBytes: 90 * 1024 })
      assert.strictEqual(fine.status, 400, fine.text) // unterminated JSON string: a structural refusal, not a 500
    }))

  it.effect("malformed JSON, an empty body and invalid UTF-8 are 400 structural refusals with a short message", () =>
    Effect.gen(function*() {
      const hostile = `{"text": "${"z".repeat(50_000)}`
      const malformed = yield* post(hostile)
      assert.strictEqual(malformed.status, 400)
      assert.strictEqual(RawHttp.field(malformed.json, "code"), "VALIDATION_FAILED")
      assert.strictEqual(RawHttp.field(blockOf(malformed), "code"), "bad_value")
      assert.match(String(RawHttp.field(malformed.json, "message")), /not valid JSON/)
      assert.isBelow(malformed.text.length, 1200, "the refusal quotes at most an excerpt of the input")
      const empty = yield* post("")
      assert.strictEqual(empty.status, 400)
      assert.match(String(RawHttp.field(empty.json, "message")), /empty/)
      const latin1 = yield* post(new Uint8Array([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]))
      assert.strictEqual(latin1.status, 400)
      assert.match(String(RawHttp.field(latin1.json, "message")), /UTF-8/)
      // A long invalid value is quoted as an excerpt only.
      const longValue = yield* post(JSON.stringify({ text: "ok", mode: "q".repeat(20_000) }))
      assert.strictEqual(longValue.status, 400)
      assert.isBelow(longValue.text.length, 1500, longValue.text.slice(0, 300))
      assert.deepStrictEqual(RawHttp.field(blockOf(longValue), "allowed_values"), ["plain", "loud"])
    }))

  it.effect("compressed bodies and missing or wrong content types are 415, never read as something else", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ text: "hola" })
      const gzip = yield* post(gzipSync(body), { ...json, "content-encoding": "gzip" })
      assert.strictEqual(gzip.status, 415)
      assert.deepInclude(gzip.json, { statusCode: 415, code: "UNSUPPORTED_MEDIA_TYPE", accepted_content_types: ["application/json"] })
      assert.match(String(RawHttp.field(gzip.json, "message")), /gzip/)
      const identity = yield* post(body, { ...json, "content-encoding": "identity" })
      assert.strictEqual(identity.status, 200)
      const missing = yield* post(body, { "x-api-key": ToyDomain.KEY })
      assert.strictEqual(missing.status, 415, missing.text)
      const form = yield* post("text=hola", { "x-api-key": ToyDomain.KEY, "content-type": "application/x-www-form-urlencoded" })
      assert.strictEqual(form.status, 415)
      const text = yield* post(body, { "x-api-key": ToyDomain.KEY, "content-type": "text/plain" })
      assert.strictEqual(text.status, 415)
      const latin = yield* post(body, { ...json, "content-type": "application/json; charset=iso-8859-1" })
      assert.strictEqual(latin.status, 415)
    }))

  it.effect("a NUL character in a string or a property name is a structural refusal", () =>
    Effect.gen(function*() {
      const inValue = yield* post(JSON.stringify({ text: "a\u0000b" }))
      assert.strictEqual(inValue.status, 400)
      assert.strictEqual(RawHttp.field(blockOf(inValue), "field"), "text")
      assert.match(String(RawHttp.field(inValue.json, "message")), /NUL/)
      assert.notInclude(inValue.text, "\\u0000b", "the raw value is not echoed")
      const inKey = yield* post(JSON.stringify({ text: "a", "x\u0000": 1 }))
      assert.strictEqual(inKey.status, 400)
      const port = yield* RawHttp.port
      const inQuery = yield* RawHttp.send(port, { method: "GET", path: `${ToyServer.base}/items?prefix=a%00`, headers: json })
      assert.strictEqual(inQuery.status, 400)
      assert.strictEqual(RawHttp.field(inQuery.json, "toy", "field"), "prefix")
      const inPath = yield* RawHttp.send(port, { method: "GET", path: `${ToyServer.base}/items/a%00b`, headers: json })
      assert.strictEqual(inPath.status, 400)
      assert.strictEqual(RawHttp.field(inPath.json, "toy", "field"), "item_id")
    }))

  it.effect("a lone surrogate and nesting deeper than 64 levels are structural refusals, never a 500", () =>
    Effect.gen(function*() {
      const surrogate = yield* post(`{"text":"a\\ud800b"}`)
      assert.strictEqual(surrogate.status, 400, surrogate.text)
      assert.strictEqual(RawHttp.field(blockOf(surrogate), "field"), "text")
      assert.match(String(RawHttp.field(surrogate.json, "message")), /surrogate/)
      for (const depth of [65, 10_000]) {
        const deep = yield* post(`{"text":"a","extra":${"[".repeat(depth)}${"]".repeat(depth)}}`)
        assert.strictEqual(deep.status, 400, `${depth}: ${deep.text.slice(0, 300)}`)
        assert.match(String(RawHttp.field(deep.json, "message")), /deeper than 64 levels/)
      }
      // 64 levels is accepted as far as the text rule goes (the schema then refuses the unknown field).
      const allowed = yield* post(`{"text":"a","extra":${"[".repeat(63)}${"]".repeat(63)}}`)
      assert.strictEqual(allowed.status, 400)
      assert.notMatch(String(RawHttp.field(allowed.json, "message")), /deeper/)
    }))

  it.effect("a leading UTF-8 byte order mark is ignored", () =>
    Effect.gen(function*() {
      const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify({ text: "hola" }))])
      const answer = yield* post(bom)
      assert.strictEqual(answer.status, 200, answer.text)
      assert.deepStrictEqual(answer.json, { text: "hola", count: 1 })
      // Only one, and only at the start: a second one is not JSON whitespace.
      const twice = yield* post(new Uint8Array([0xef, 0xbb, 0xbf, ...bom]))
      assert.strictEqual(twice.status, 400)
    }))
})
