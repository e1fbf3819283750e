import { createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { DoorCode, type DoorRefusal } from "../src/DoorRefusal.js"
import {
  isPersonEvent,
  mappingErrors,
  PersonField,
  readNotice,
  readRules,
  requiresSecretAddress,
  template,
  TemplateName,
  templates,
  verify,
  verifyAddressToken
} from "../src/Templates.js"
import { readJson } from "./support/data.js"

// -----------------------------------------------------------------------------
// The data files, decoded
// -----------------------------------------------------------------------------

// A null header value in a case means "this header is removed".
const CaseHeaders = Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })

const Expect = Schema.Struct(
  {
    valid_signature: Schema.optional(Schema.NullOr(Schema.Boolean)),
    valid_address_token: Schema.optional(Schema.Boolean),
    event_type: Schema.optional(Schema.NullOr(Schema.String)),
    contact_event: Schema.optional(Schema.Boolean),
    notice_id: Schema.optional(Schema.NullOr(Schema.String)),
    arrival_status: Schema.optional(Schema.String)
  },
  // The person fields (and notes such as person_paths) are read by name below.
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
type Expect = typeof Expect.Type

const NegativeCase = Schema.Struct({
  description: Schema.String,
  headers: Schema.optional(CaseHeaders),
  body: Schema.optional(Schema.String),
  path_hint: Schema.optional(Schema.String),
  expect_valid: Schema.optional(Schema.Boolean),
  reason: Schema.optional(Schema.String),
  expect_valid_with_wrong_key_handling: Schema.optional(Schema.Boolean),
  arrival_status: Schema.optional(Schema.String)
})
type NegativeCase = typeof NegativeCase.Type

const ExtraCase = Schema.Struct({
  name: Schema.String,
  content_type: Schema.optional(Schema.String),
  headers: CaseHeaders,
  body: Schema.String,
  expect: Expect
})

const TemplateFile = Schema.Struct({
  template: TemplateName,
  content_type: Schema.String,
  path_hint: Schema.optional(Schema.String),
  headers: CaseHeaders,
  body: Schema.String,
  secret: Schema.String,
  verification: Schema.Struct({ now: Schema.optional(Schema.Number) }),
  expect: Expect,
  negative_cases: Schema.Array(NegativeCase),
  extra_cases: Schema.optional(Schema.Array(ExtraCase))
})
type TemplateFile = typeof TemplateFile.Type

const files: ReadonlyArray<TemplateFile> = TemplateName.literals.map((name) =>
  Schema.decodeUnknownSync(TemplateFile)(readJson(`templates/${name}.json`))
)

const PersonValue = Schema.NullOr(Schema.String)

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

const headersOf = (...layers: ReadonlyArray<typeof CaseHeaders.Type | undefined>): Record<string, string> => {
  const merged: Record<string, string> = {}
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer ?? {})) {
      if (value === null) delete merged[name]
      else merged[name] = value
    }
  }
  return merged
}

// `/door/<source>/<token>`: the token is the third segment, absent on the signed door path.
const tokenOf = (pathHint: string | undefined): string | undefined =>
  pathHint?.split("/").filter((segment) => segment.length > 0)[2]

// "invalid_signature (401, same as unknown Source)" and "webhook_headers or 401" name their code first.
const codeOf = (reason: string | undefined): DoorCode =>
  Schema.decodeUnknownSync(DoorCode)((reason ?? "").split(/[\s(]/)[0])

const assertVerdict = (
  verdict: Either.Either<void, DoorRefusal>,
  expectValid: boolean,
  reason: string | undefined
): void => {
  if (expectValid) {
    assert.isTrue(Either.isRight(verdict), Either.isLeft(verdict) ? verdict.left.detail : "")
  } else {
    assert.isTrue(Either.isLeft(verdict), "expected a refusal")
    if (Either.isLeft(verdict)) assert.strictEqual(verdict.left.code, codeOf(reason))
  }
}

const nowOf = (file: TemplateFile): number => file.verification.now ?? Math.floor(Date.now() / 1000)

// Compares every field the file's `expect` names with what readNotice gives.
const assertNotice = (
  file: TemplateFile,
  expect: Expect,
  input: { readonly headers: Record<string, string>; readonly body: string; readonly contentType?: string }
): void => {
  const t = template(file.template)
  const notice = Either.getOrThrow(
    readNotice(t, {
      headers: input.headers,
      body: utf8(input.body),
      ...(input.contentType === undefined ? {} : { contentType: input.contentType })
    })
  )
  if (expect.event_type !== undefined) assert.strictEqual(notice.eventType, expect.event_type, "event type")
  if (expect.notice_id !== undefined) assert.strictEqual(notice.noticeId, expect.notice_id, "notice id")
  if (expect.contact_event !== undefined) {
    assert.strictEqual(isPersonEvent(t, notice.eventType), expect.contact_event, "contact event")
  }
  for (const field of PersonField.literals) {
    if (Object.hasOwn(expect, field)) {
      assert.strictEqual(notice.person[field], Schema.decodeUnknownSync(PersonValue)(expect[field]), field)
    }
  }
  // An Arrival without an email or a phone has no person to create.
  if (expect.arrival_status === "no_person") {
    assert.isNull(notice.person.email)
    assert.isNull(notice.person.phone)
  }
}

// -----------------------------------------------------------------------------
// Template catalogue
// -----------------------------------------------------------------------------

describe("templates", () => {
  it("has the eleven templates, in the order of TemplateName, each with a data file", () => {
    assert.deepStrictEqual(templates.map((t) => t.name), [...TemplateName.literals])
    assert.deepStrictEqual(files.map((f) => f.template), [...TemplateName.literals])
  })

  it("every path of every template compiles", () => {
    for (const t of templates) {
      const rules = [t.eventTypePath, t.noticeIdPath, ...PersonField.literals.map((field) => t.defaultMapping[field])]
      assert.deepStrictEqual(rules.flatMap(mappingErrors), [], t.name)
    }
  })

  it("mappingErrors names a broken path", () => {
    assert.strictEqual(mappingErrors(["a[b", "a..b", "a[=x]", "ok.path[0]"]).length, 3)
  })

  it("reads composed keys only when every part is present, and joins names with what is found", () => {
    const body = { a: "x", b: { c: 2 } }
    assert.strictEqual(readRules([{ concat: ["a", "b.c"], separator: ":", whenMissing: "null" }], body), "x:2")
    assert.isNull(readRules([{ concat: ["a", "b.d"], separator: ":", whenMissing: "null" }], body))
    assert.strictEqual(readRules([{ concat: ["a", "b.d"], separator: " ", whenMissing: "skip" }], body), "x")
    assert.strictEqual(readRules(["missing", "header:X-Topic"], body, { "x-topic": "t" }), "t")
  })
})

// -----------------------------------------------------------------------------
// One block per data file
// -----------------------------------------------------------------------------

for (const file of files) {
  const t = template(file.template)
  const mainHeaders = headersOf(file.headers)
  const verifyCase = (headers: Record<string, string>, body: string) =>
    verify(t, { secret: file.secret, headers, body: utf8(body), now: nowOf(file) })

  describe(`template ${file.template}`, () => {
    if (requiresSecretAddress(t)) {
      it("main sample: needs the secret address, whose token is accepted", () => {
        assert.isNull(file.expect.valid_signature ?? null)
        assert.isTrue(file.expect.valid_address_token)
        assertVerdict(verifyCase(mainHeaders, file.body), false, "webhook_headers")
        assertVerdict(verifyAddressToken(file.secret, tokenOf(file.path_hint)), true, undefined)
      })
    } else {
      it("main sample: verifies with its secret at verification.now", () => {
        assert.isTrue(file.expect.valid_signature)
        assertVerdict(verifyCase(mainHeaders, file.body), true, undefined)
      })
    }

    it("main sample: readNotice yields the expected fields", () => {
      assertNotice(file, file.expect, { headers: mainHeaders, body: file.body, contentType: file.content_type })
    })

    for (const negative of file.negative_cases) {
      it(`negative: ${negative.description}`, () => runNegative(file, negative))
    }

    for (const extra of file.extra_cases ?? []) {
      it(`extra: ${extra.name}`, () => {
        const headers = headersOf(file.headers, extra.headers)
        if (extra.expect.valid_signature !== undefined && extra.expect.valid_signature !== null) {
          assertVerdict(verifyCase(headers, extra.body), extra.expect.valid_signature, undefined)
        }
        if (extra.expect.valid_address_token !== undefined) {
          assertVerdict(verifyAddressToken(file.secret, tokenOf(file.path_hint)), extra.expect.valid_address_token, undefined)
        }
        assertNotice(file, extra.expect, {
          headers,
          body: extra.body,
          ...(extra.content_type === undefined ? {} : { contentType: extra.content_type })
        })
      })
    }
  })
}

function runNegative(file: TemplateFile, negative: NegativeCase): void {
  const t = template(file.template)
  const headers = headersOf(file.headers, negative.headers)
  const body = negative.body ?? file.body
  if (negative.expect_valid_with_wrong_key_handling !== undefined) {
    // Stripe: the same header must not match a key derived the Standard Webhooks way, and must match the raw one.
    const signature = /t=(\d+),v1=([0-9a-f]+)/.exec(headers["stripe-signature"] ?? "")
    assert.isNotNull(signature)
    const [, timestamp = "", v1 = ""] = signature ?? []
    const wrongKey = Buffer.from(file.secret.replace(/^whsec_/, ""), "base64")
    const wrong = createHmac("sha256", wrongKey).update(`${timestamp}.${body}`).digest("hex")
    assert.strictEqual(wrong === v1, negative.expect_valid_with_wrong_key_handling)
    assertVerdict(verify(t, { secret: file.secret, headers, body: utf8(body), now: nowOf(file) }), true, undefined)
    return
  }
  if (negative.expect_valid === undefined) return assert.fail(`case without a verdict: ${negative.description}`)
  const verdict = requiresSecretAddress(t)
    ? verifyAddressToken(file.secret, tokenOf(negative.path_hint ?? file.path_hint))
    : verify(t, { secret: file.secret, headers, body: utf8(body), now: nowOf(file) })
  assertVerdict(verdict, negative.expect_valid, negative.reason)
  if (negative.arrival_status !== undefined) {
    assertNotice(file, { arrival_status: negative.arrival_status }, { headers, body })
  }
}

// -----------------------------------------------------------------------------
// Scheme details the files do not cover
// -----------------------------------------------------------------------------

const hmacHex = (key: string, text: string) => createHmac("sha256", key).update(text).digest("hex")

describe("verify: scheme details", () => {
  const body = "{\"type\":\"customer.created\"}"
  const now = 1_735_689_600

  const code = (verdict: Either.Either<void, DoorRefusal>): string => (Either.isLeft(verdict) ? verdict.left.code : "valid")

  it("stripe: ±300 s is the window, both directions", () => {
    const at = (t: number) =>
      code(verify(template("stripe"), {
        secret: "whsec_x",
        headers: { "Stripe-Signature": `t=${t},v1=${hmacHex("whsec_x", `${t}.${body}`)}` },
        body: utf8(body),
        now
      }))
    assert.deepStrictEqual([at(now - 300), at(now + 300), at(now - 301), at(now + 301)], [
      "valid",
      "valid",
      "stale_timestamp",
      "stale_timestamp"
    ])
  })

  it("stripe and calendly: a header without one numeric t is webhook_headers", () => {
    for (const value of ["v1=abc", "t=12a,v1=abc", "t=1,t=2,v1=abc", "garbage"]) {
      assert.strictEqual(
        code(verify(template("stripe"), { secret: "s", headers: { "stripe-signature": value }, body: utf8(body), now })),
        "webhook_headers",
        value
      )
    }
    assert.strictEqual(code(verify(template("calendly"), { secret: "s", headers: {}, body: utf8(body), now })), "webhook_headers")
  })

  it("webflow: the window is in milliseconds; a missing timestamp is webhook_headers", () => {
    const at = (ms: number) =>
      code(verify(template("webflow"), {
        secret: "k",
        headers: { "x-webflow-timestamp": String(ms), "x-webflow-signature": hmacHex("k", `${ms}:${body}`) },
        body: utf8(body),
        now
      }))
    assert.deepStrictEqual([at(now * 1000 + 300_000), at(now * 1000 - 300_001), at(now)], [
      "valid",
      "stale_timestamp",
      "stale_timestamp"
    ])
    assert.strictEqual(
      code(verify(template("webflow"), { secret: "k", headers: { "x-webflow-signature": "00" }, body: utf8(body), now })),
      "webhook_headers"
    )
  })

  it("tally, typeform, shopify, calcom, hotmart, clerk: a missing header is webhook_headers", () => {
    const signing: ReadonlyArray<TemplateName> = ["tally", "typeform", "shopify", "calcom", "hotmart", "clerk"]
    for (const name of signing) {
      assert.strictEqual(code(verify(template(name), { secret: "s", headers: {}, body: utf8(body), now })), "webhook_headers", name)
    }
  })

  it("jotform and posthog: verify refuses, the address token decides", () => {
    const unsigned: ReadonlyArray<TemplateName> = ["jotform", "posthog"]
    for (const name of unsigned) {
      assert.isTrue(requiresSecretAddress(template(name)))
      assert.strictEqual(code(verify(template(name), { secret: "tok", headers: {}, body: utf8(body), now })), "webhook_headers")
    }
    assert.strictEqual(code(verifyAddressToken("tok_a", "tok_a")), "valid")
    assert.strictEqual(code(verifyAddressToken("tok_a", "tok_b")), "invalid_signature")
    assert.strictEqual(code(verifyAddressToken("tok_a", "tok_a_longer")), "invalid_signature")
    assert.strictEqual(code(verifyAddressToken("tok_a", undefined)), "webhook_headers")
  })
})

// Clerk's check is Standard Webhooks under other header names: it must agree with every Standard Webhooks vector.
const Vector = Schema.Struct({
  name: Schema.String,
  secret: Schema.String,
  payload: Schema.String,
  now: Schema.Number,
  expected: Schema.Literal("valid", "invalid"),
  reason: Schema.optional(Schema.String),
  headers: Schema.Record({ key: Schema.String, value: Schema.String })
})
const vectors = Schema.decodeUnknownSync(Schema.Struct({ cases: Schema.Array(Vector) }))(
  readJson("standard-webhooks-vectors.json")
).cases

describe("verify clerk: Standard Webhooks vectors", () => {
  for (const vector of vectors) {
    it(vector.name, () => {
      const verdict = verify(template("clerk"), {
        secret: vector.secret,
        headers: vector.headers,
        body: utf8(vector.payload),
        now: vector.now
      })
      assertVerdict(verdict, vector.expected === "valid", vector.reason)
    })
  }
})
