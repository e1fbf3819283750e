import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { decode, parseJson, REDACTED, redact } from "../src/NoticeBody.js"
import { readJson } from "./support/data.js"

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

// The parts of a template file these tests use.
const Sample = Schema.Struct({
  content_type: Schema.String,
  body: Schema.String,
  secret: Schema.String,
  expect: Schema.Struct({ resource_id: Schema.optional(Schema.String) })
})
const sample = (name: string) => Schema.decodeUnknownSync(Sample)(readJson(`templates/${name}.json`))

const Fields = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const decodedFields = (contentType: string, body: string | Uint8Array) => {
  const result = decode(contentType, typeof body === "string" ? utf8(body) : body)
  if (Either.isLeft(result)) return assert.fail(`refused: ${result.left.detail}`)
  return Schema.decodeUnknownSync(Fields)(result.right)
}

const refusalCode = (result: Either.Either<unknown, { readonly code: string }>): string | undefined =>
  Either.isLeft(result) ? result.left.code : undefined

describe("NoticeBody.parseJson", () => {
  it("keeps integers beyond 2^53 as their exact digits", () => {
    const parsed = parseJson(`{"id":706405506930370084,"small":9007199254740991,"neg":-9007199254740993,"f":1.5e3}`)
    assert.deepStrictEqual(Either.getOrThrow(parsed), {
      id: "706405506930370084",
      small: 9007199254740991,
      neg: "-9007199254740993",
      f: 1500
    })
  })

  it("decodes escapes and nesting like JSON.parse", () => {
    const text = `{"a":[1,{"b":"\\u00e9\\n\\"x\\"\\ud83d\\ude00"}],"c":null,"d":true,"e":false,"__proto__":{"p":1}}`
    assert.deepStrictEqual(Either.getOrThrow(parseJson(text)), JSON.parse(text))
    // `__proto__` is an own property of the result, never its prototype.
    const parsed = Either.getOrThrow(parseJson(text))
    assert.isTrue(Predicate.isRecord(parsed) && Object.hasOwn(parsed, "__proto__"))
    assert.strictEqual(Object.getPrototypeOf(parsed), Object.prototype)
  })

  for (const bad of ["", "{", "{\"a\":1,}", "[1,]", "01", "{'a':1}", "\"\u0001\"", "1 2", "nul", "\"\\x\""]) {
    it(`refuses ${JSON.stringify(bad)} as invalid_event`, () => {
      assert.strictEqual(refusalCode(parseJson(bad)), "invalid_event")
    })
  }

  it("refuses nesting deeper than the limit instead of overflowing the stack", () => {
    assert.strictEqual(refusalCode(parseJson("[".repeat(100_000))), "invalid_event")
  })
})

describe("NoticeBody.decode", () => {
  it("reads Shopify's customer id as its exact digits", () => {
    const shopify = sample("shopify")
    const body = decodedFields(shopify.content_type, shopify.body)
    assert.strictEqual(body.id, "706405506930370084")
    assert.strictEqual(body.id, shopify.expect.resource_id)
    assert.strictEqual(body.email, "bob@biller.com")
  })

  it("accepts JSON with a charset and +json types, and assumes JSON when no type is sent", () => {
    assert.deepStrictEqual(decodedFields("application/json; charset=UTF-8", `{"a":1}`), { a: 1 })
    assert.deepStrictEqual(decodedFields("application/cloudevents+json", `{"a":1}`), { a: 1 })
    assert.deepStrictEqual(decodedFields("", `{"a":1}`), { a: 1 })
  })

  it("refuses JSON in another charset, bytes that are not UTF-8, and unsupported types", () => {
    assert.strictEqual(refusalCode(decode("application/json; charset=latin1", utf8("{}"))), "invalid_event")
    assert.strictEqual(refusalCode(decode("application/json", new Uint8Array([0x7b, 0xff, 0x7d]))), "invalid_event")
    assert.strictEqual(refusalCode(decode("application/xml", utf8("<a/>"))), "invalid_event")
  })

  it("urlencoded: + is a space, percent-escapes are UTF-8 bytes, repeated names become lists", () => {
    const body = "name=Ada+Lovelace&email=ada%40example.org&note=caf%C3%A9+%2B+th%C3%A9&empty=&flag&tag=a&tag=b&x%5B1%5D=y"
    assert.deepStrictEqual(decodedFields("application/x-www-form-urlencoded", body), {
      name: "Ada Lovelace",
      email: "ada@example.org",
      note: "café + thé",
      empty: "",
      flag: "",
      tag: ["a", "b"],
      "x[1]": "y"
    })
  })

  it("urlencoded: raw UTF-8 bytes and a declared latin1 charset", () => {
    assert.deepStrictEqual(decodedFields("application/x-www-form-urlencoded", "city=Uberlândia"), { city: "Uberlândia" })
    assert.deepStrictEqual(
      decodedFields("application/x-www-form-urlencoded; charset=ISO-8859-1", "city=Uberl%E2ndia"),
      { city: "Uberlândia" }
    )
    assert.strictEqual(
      refusalCode(decode("application/x-www-form-urlencoded", utf8("city=Uberl%E2ndia"))),
      "invalid_event"
    )
  })

  it("multipart: CRLF lines, an empty part, a JSON part offered as an object, a quoted boundary", () => {
    const body = [
      "preamble to ignore",
      "--XyZ",
      "Content-Disposition: form-data; name=\"empty\"",
      "",
      "",
      "--XyZ",
      "Content-Disposition: form-data; name=\"text\"",
      "",
      "two\r\nlines",
      "--XyZ",
      "Content-Disposition: form-data; name=\"rawRequest\"",
      "",
      "{\"q3_name\":{\"first\":\"Ada\",\"last\":\"Lovelace\"},\"id\":706405506930370084}",
      "--XyZ",
      "Content-Disposition: form-data; name=\"list\"",
      "",
      "[1, 2]",
      "--XyZ",
      "Content-Disposition: form-data; name=\"notJson\"",
      "",
      "{not json",
      "--XyZ",
      "Content-Disposition: form-data; name=\"upload\"; filename=\"a.txt\"",
      "Content-Type: text/plain",
      "",
      "hello",
      "--XyZ",
      "",
      "a part without headers is skipped",
      "--XyZ--",
      ""
    ].join("\r\n")
    assert.deepStrictEqual(decodedFields("multipart/form-data; boundary=\"XyZ\"", body), {
      empty: "",
      text: "two\r\nlines",
      rawRequest: { q3_name: { first: "Ada", last: "Lovelace" }, id: "706405506930370084" },
      list: [1, 2],
      notJson: "{not json",
      upload: { filename: "a.txt", contentType: "text/plain", size: 5 }
    })
  })

  it("multipart: Jotform's real shape, with rawRequest as nested answers", () => {
    const jotform = sample("jotform")
    const body = decodedFields(jotform.content_type, jotform.body)
    assert.strictEqual(body.submissionID, "6123456789012345678")
    assert.strictEqual(body.action, "")
    const raw = Schema.decodeUnknownSync(Fields)(body.rawRequest)
    assert.deepStrictEqual(raw.q3_fullName, { first: "Margaret", last: "Hamilton" })
    assert.strictEqual(raw.path, "/submit/251234567890123")
  })

  it("multipart: refuses a missing boundary or a body without its closing delimiter", () => {
    assert.strictEqual(refusalCode(decode("multipart/form-data", utf8("--a\r\n\r\n--a--"))), "invalid_event")
    assert.strictEqual(
      refusalCode(decode("multipart/form-data; boundary=a", utf8("--a\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\ny"))),
      "invalid_event"
    )
    assert.strictEqual(refusalCode(decode("multipart/form-data; boundary=b", utf8("--a--"))), "invalid_event")
  })
})

describe("NoticeBody.redact", () => {
  it("removes the secret-address token Jotform echoes in webhookURL", () => {
    const jotform = sample("jotform")
    const body = decodedFields(jotform.content_type, jotform.body)
    const redacted = Schema.decodeUnknownSync(Fields)(redact(body, [jotform.secret]))
    assert.strictEqual(redacted.webhookURL, `https://crm.example.test/api/v1/door/src_jotform_example/${REDACTED}`)
    assert.notInclude(JSON.stringify(redacted), jotform.secret)
    // Everything else is untouched.
    assert.deepStrictEqual({ ...redacted, webhookURL: body.webhookURL }, body)
  })

  it("redacts nested strings, property names and percent-encoded forms; ignores empty secrets", () => {
    const notice = { a: ["x-s3cr/t-y", { "k-s3cr/t": "s3cr%2Ft" }], n: 1, z: null }
    assert.deepStrictEqual(redact(notice, ["s3cr/t", ""]), {
      a: [`x-${REDACTED}-y`, { [`k-${REDACTED}`]: REDACTED }],
      n: 1,
      z: null
    })
    assert.strictEqual(redact(notice, [""]), notice)
    assert.isTrue(Predicate.isRecord(redact(notice, [])))
  })
})
