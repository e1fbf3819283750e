import * as SqlClient from "@effect/sql/SqlClient"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as Crm from "@service/crm/Crm"
import * as CrmMigrations from "@service/crm/CrmMigrations"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as DoorMigrations from "../src/DoorMigrations.js"
import * as Intake from "../src/Intake.js"
import * as Mappings from "../src/Mappings.js"
import * as NoticeBody from "../src/NoticeBody.js"
import * as Sources from "../src/Sources.js"
import * as StandardWebhooks from "../src/StandardWebhooks.js"
import * as Templates from "../src/Templates.js"
import { readJson } from "./support/data.js"

const migrations = [CoreMigrations.migrations, CrmMigrations.migrations, EventsMigrations.migrations, DoorMigrations.migrations]

// The samples are signed at 1735689600; their files verify them 30 seconds later.
const NOW = 1_735_689_630
const encoder = new TextEncoder()

// -----------------------------------------------------------------------------
// The template samples
// -----------------------------------------------------------------------------

const SampleHeaders = Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.String) })
const Expect = Schema.Struct({
  event_type: Schema.optional(Schema.NullOr(Schema.String)),
  notice_id: Schema.NullOr(Schema.String),
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String),
  phone: Schema.NullOr(Schema.String),
  company: Schema.NullOr(Schema.String),
  first_name: Schema.optional(Schema.NullOr(Schema.String)),
  last_name: Schema.optional(Schema.NullOr(Schema.String)),
  email_reserved_domain: Schema.optional(Schema.Boolean),
  arrival_status: Schema.optional(Schema.String)
})
const NegativeCase = Schema.Struct({
  description: Schema.String,
  headers: Schema.optional(SampleHeaders),
  body: Schema.optional(Schema.String),
  path_hint: Schema.optional(Schema.String),
  expect_valid: Schema.optional(Schema.Boolean),
  reason: Schema.optional(Schema.String),
  arrival_status: Schema.optional(Schema.String)
})
const ExtraCase = Schema.Struct({ name: Schema.String, headers: SampleHeaders, body: Schema.String, expect: Expect })
const Sample = Schema.Struct({
  template: Templates.TemplateName,
  headers: SampleHeaders,
  body: Schema.String,
  secret: Schema.String,
  expect: Expect,
  negative_cases: Schema.Array(NegativeCase),
  extra_cases: Schema.optional(Schema.Array(ExtraCase))
})
type Sample = typeof Sample.Type

const samples: ReadonlyArray<Sample> = Templates.TemplateName.literals.map((name) =>
  Schema.decodeUnknownSync(Sample)(readJson(`templates/${name}.json`))
)

const requestOf = (
  base: Readonly<Record<string, string | null>>,
  body: string,
  changes: Readonly<Record<string, string | null>> = {}
): Intake.DoorRequest => {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries({ ...base, ...changes })) if (value !== null) headers[name] = value
  return { headers, body: encoder.encode(body) }
}

const isAddress = (sample: Sample) => Templates.requiresSecretAddress(Templates.template(sample.template))

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

const workspace = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`hook-${Math.random().toString(36).slice(2, 10)}`)
  return (yield* accounts.createWorkspace({ slug, name: slug })).id
}).pipe(Effect.orDie)

let sequence = 0
const signed = (secret: string, value: unknown, options: { readonly id?: string } = {}): Effect.Effect<Intake.DoorRequest> =>
  Effect.gen(function*() {
    const timestamp = Math.floor((yield* TestClock.currentTimeMillis) / 1000)
    const id = options.id ?? `msg_hook_${++sequence}`
    const body = encoder.encode(JSON.stringify(value))
    return {
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": StandardWebhooks.sign({ secret, id, timestamp, body })
      },
      body
    }
  })

const plain = (value: unknown): Intake.DoorRequest => ({
  headers: { "content-type": "application/json" },
  body: encoder.encode(JSON.stringify(value))
})

const arrivalIdOf = (receipt: Intake.Receipt): string => {
  if (receipt._tag !== "Accepted") throw new Error(`expected Accepted, got ${receipt._tag}`)
  return receipt.arrivalId
}

const digits = (text: string | null): string => (text ?? "").replace(/\D/g, "")

const StoredRow = Schema.Struct({ body: Schema.NullOr(Schema.String), headers: Schema.Unknown, reading: Schema.Unknown })

const storedOf = (arrivalId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT body, headers, reading FROM door.arrivals WHERE id = ${arrivalId}`
    const row = yield* Schema.decodeUnknown(StoredRow)(rows[0])
    return { ...row, reading: Option.getOrNull(Schema.decodeUnknownOption(Mappings.Reading)(row.reading)) }
  }).pipe(Effect.orDie)

const statusOf = (ws: string, id: string) =>
  Effect.map(Effect.flatMap(Intake.Intake, (intake) => intake.arrival(ws, id)), (a) => Option.getOrThrow(a).status)

// A generic webhook mapping for notices shaped `{type, id, contact: {...}}`.
const contactMapping: Mappings.MappingInput = {
  event_type: ["type"],
  accepted_events: ["signup"],
  notice_id: ["id"],
  items: null,
  fields: {
    email: ["contact.email"],
    phone: ["contact.phone"],
    first_name: ["contact.first"],
    last_name: ["contact.last"],
    company: ["contact.company"]
  }
}

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Intake.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Layer.mergeAll(Sources.layer, Crm.layer, EventLedger.layer)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`webhook Sources on ${target.name}`, (it) => {
    /** A template Source for a sample: its tool's secret pasted in, or its token for the address. */
    const templateSource = (ws: string, sample: Sample) =>
      Effect.gen(function*() {
        const sources = yield* Sources.Sources
        const created = yield* sources.create(ws, {
          name: sample.template,
          type: "webhook",
          template: sample.template,
          ...(isAddress(sample) ? {} : { signingSecret: Redacted.make(sample.secret) })
        })
        const token = created.token === undefined ? null : Redacted.value(created.token)
        const send = (request: Intake.DoorRequest) =>
          Effect.flatMap(Intake.Intake, (intake) =>
            token === null ? intake.receive(created.source.id, request) : intake.receiveAddress(created.source.id, token, request))
        return { source: created.source, token, send }
      }).pipe(Effect.orDie)

    const setup = Effect.gen(function*() {
      yield* TestClock.setTime(NOW * 1000)
      return { ws: yield* workspace, intake: yield* Intake.Intake, sources: yield* Sources.Sources }
    })

    it.effect("every template's sample verifies through its Source and yields its person fields (test mailboxes end no_person)", () =>
      Effect.gen(function*() {
        const { intake, ws } = yield* setup
        const crm = yield* Crm.Crm
        const cases = samples.flatMap((sample) => [
          { sample, label: sample.template, headers: sample.headers, body: sample.body, expect: sample.expect },
          ...(sample.extra_cases ?? []).map((extra) => ({ sample, label: `${sample.template}: ${extra.name}`, ...extra }))
        ])
        for (const { body, expect, headers, label, sample } of cases) {
          const { send } = yield* templateSource(ws, sample)
          const receipt = yield* send(requestOf(headers, body))
          assert.deepStrictEqual(receipt._tag, "Accepted", label)
          const arrivalId = arrivalIdOf(receipt)
          yield* intake.drain("test")
          const arrival = Option.getOrThrow(yield* intake.arrival(ws, arrivalId))
          // The files flag addresses on reserved domains; the door counts exactly those as test mailboxes.
          const test = expect.email !== null && Mappings.testMailbox(expect.email) !== null
          assert.strictEqual(test, expect.email_reserved_domain ?? false, label)
          const wanted = expect.arrival_status ?? (test ? "no_person" : "accepted")
          assert.strictEqual(arrival.status, wanted, `${label}: ${arrival.status_detail}`)
          if (expect.event_type !== undefined) assert.strictEqual(arrival.event_type, expect.event_type, label)
          const { reading } = yield* storedOf(arrivalId)
          assert.isNotNull(reading, label)
          assert.strictEqual(reading?.email ?? null, expect.email, label)
          assert.strictEqual(reading?.phone ?? null, expect.phone, label)
          assert.strictEqual(reading?.company ?? null, expect.company, label)
          if (expect.first_name !== undefined) assert.strictEqual(reading?.first_name ?? null, expect.first_name, label)
          if (expect.last_name !== undefined) assert.strictEqual(reading?.last_name ?? null, expect.last_name, label)
          const name = reading?.name ?? ([reading?.first_name, reading?.last_name].filter((part) => part != null).join(" ") || null)
          assert.strictEqual(name, expect.name, label)
          if (wanted === "accepted") {
            const contact = Option.getOrThrow(yield* crm.getContact(ws, arrival.contact_id ?? ""))
            assert.strictEqual(contact.email?.toLowerCase(), expect.email?.toLowerCase(), label)
            assert.strictEqual(contact.name, expect.name, label)
            assert.strictEqual(digits(contact.phone), digits(expect.phone), label)
          } else {
            assert.isNull(arrival.contact_id, label)
          }
        }
      }))

    it.effect("each template's negative case is refused as its file says; the valid variants are accepted", () =>
      Effect.gen(function*() {
        const { intake, ws } = yield* setup
        let checked = 0
        for (const sample of samples) {
          for (const negative of sample.negative_cases) {
            const label = `${sample.template}: ${negative.description}`
            const { send, source, token } = yield* templateSource(ws, sample)
            if (negative.path_hint !== undefined) {
              // Jotform's address cases: a wrong token, and the signed route without a token.
              const request = requestOf(sample.headers, sample.body)
              const refused = token !== null && negative.path_hint.split("/").length > 3
                ? yield* Effect.flip(intake.receiveAddress(source.id, "tok_wrong", request))
                : yield* Effect.flip(intake.receive(source.id, request))
              assert.include(negative.reason ?? "", refused.code === "invalid_signature" ? "invalid_signature" : "webhook_headers", label)
              checked++
              continue
            }
            if (negative.expect_valid === undefined) continue
            const request = requestOf(sample.headers, negative.body ?? sample.body, negative.headers ?? {})
            if (negative.expect_valid) {
              const receipt = yield* send(request)
              assert.strictEqual(receipt._tag, "Accepted", label)
              if (negative.arrival_status !== undefined) {
                yield* intake.drain("test")
                assert.strictEqual(yield* statusOf(ws, arrivalIdOf(receipt)), negative.arrival_status, label)
              }
            } else {
              const refused = yield* Effect.flip(send(request))
              assert.strictEqual(refused.code, negative.reason, label)
            }
            checked++
          }
        }
        assert.isAtLeast(checked, 25)
      }))

    it.effect("secret address: the right token is accepted; a wrong token, an unknown Source and the other route answer the same 401", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const jotform = samples.find((s) => s.template === "jotform")
        if (jotform === undefined) return assert.fail("no jotform sample")
        const { source, token } = yield* templateSource(ws, jotform)
        if (token === null) return assert.fail("a Jotform Source has a token")
        assert.match(token, /^tok_[A-Za-z0-9_-]{32}$/)
        const request = requestOf(jotform.headers, jotform.body)
        const wrong = yield* Effect.flip(intake.receiveAddress(source.id, `${token}x`, request))
        const unknown = yield* Effect.flip(intake.receiveAddress("src_doesnotexist000000000000", token, request))
        assert.deepStrictEqual({ code: wrong.code, detail: wrong.detail }, { code: "invalid_signature", detail: unknown.detail })
        assert.strictEqual(unknown.code, "invalid_signature")
        // A Standard Webhooks Source does not answer on the address route, whatever token is tried.
        const generic = yield* sources.create(ws, { name: "generic", type: "webhook" })
        const other = yield* Effect.flip(intake.receiveAddress(generic.source.id, token, request))
        assert.deepStrictEqual({ code: other.code, detail: other.detail }, { code: unknown.code, detail: unknown.detail })
        // The address Source on the signed route answers as an unknown Source there.
        const signedRoute = yield* Effect.flip(intake.receive(source.id, request))
        const signedUnknown = yield* Effect.flip(intake.receive("src_doesnotexist000000000000", request))
        assert.deepStrictEqual({ code: signedRoute.code, detail: signedRoute.detail }, { code: signedUnknown.code, detail: signedUnknown.detail })
        // A Stripe-shaped request to an unknown Source fails like a wrong Stripe signature, not on missing headers.
        const stripe = samples.find((s) => s.template === "stripe")
        if (stripe === undefined) return assert.fail("no stripe sample")
        const stripeUnknown = yield* Effect.flip(intake.receive("src_doesnotexist000000000000", requestOf(stripe.headers, stripe.body)))
        assert.strictEqual(stripeUnknown.code, "invalid_signature")
        arrivalIdOf(yield* intake.receiveAddress(source.id, token, request))
        // Rotation: the new token works at once and the old one is dead at once.
        const rotated = yield* sources.rotate(ws, source.id)
        if (!("token" in rotated)) return assert.fail("an address Source rotates its token")
        const fresh = Redacted.value(rotated.token)
        const old = yield* Effect.flip(intake.receiveAddress(source.id, token, request))
        assert.deepStrictEqual({ code: old.code, detail: old.detail }, { code: unknown.code, detail: unknown.detail })
        const again = yield* intake.receiveAddress(source.id, fresh, request)
        assert.strictEqual(again._tag, "Duplicate")
        // The token itself is never stored.
        const sql = yield* SqlClient.SqlClient
        const stored = JSON.stringify(yield* sql`SELECT * FROM door.sources WHERE id = ${source.id}`)
        assert.notInclude(stored, fresh)
        assert.notInclude(stored, token)
      }))

    it.effect("a token the tool echoes back is redacted from the stored body, headers and example", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const jotform = samples.find((s) => s.template === "jotform")
        if (jotform === undefined) return assert.fail("no jotform sample")
        const { source, token } = yield* templateSource(ws, jotform)
        if (token === null) return assert.fail("a Jotform Source has a token")
        const echoed = jotform.body.split(jotform.secret).join(token).split("src_jotform_example").join(source.id)
        assert.include(echoed, token)
        const arrivalId = arrivalIdOf(yield* intake.receiveAddress(source.id, token, requestOf(jotform.headers, echoed, { "x-echo": token })))
        const stored = yield* storedOf(arrivalId)
        assert.notInclude(stored.body ?? "", token)
        assert.include(stored.body ?? "", `/door/${source.id}/[redacted]`)
        assert.notInclude(JSON.stringify(stored.headers), token)
        const detail = Option.getOrThrow(yield* sources.detail(ws, source.id))
        assert.include(JSON.stringify(detail.example), "[redacted]")
        assert.notInclude(JSON.stringify(detail.example), token)
        // The redacted notice still reads (example.org is a test domain: no person).
        yield* intake.drain("test")
        assert.strictEqual(yield* statusOf(ws, arrivalId), "no_person")
        assert.strictEqual((yield* storedOf(arrivalId)).reading?.email, "margaret.hamilton@example.org")
        // Hotmart's static token arrives in a header: kept redacted too.
        const hotmart = samples.find((s) => s.template === "hotmart")
        if (hotmart === undefined) return assert.fail("no hotmart sample")
        const hot = yield* templateSource(ws, hotmart)
        const hotArrival = arrivalIdOf(yield* hot.send(requestOf(hotmart.headers, hotmart.body)))
        assert.notInclude(JSON.stringify((yield* storedOf(hotArrival)).headers), hotmart.secret)
      }))

    it.effect("an unmapped Source keeps its first notice as example with a proposal; confirming raises the version; reprocess counts", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const created = yield* sources.create(ws, { name: "Landing page", type: "webhook" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        assert.isTrue(secret.startsWith("whsec_"))
        assert.isUndefined(created.token)
        const id = created.source.id
        const first = { type: "signup", id: "n-1", contact: { email: "lucia@acme.mx", first: "Lucía", last: "Pérez", phone: "+52 55 1111 2222", plan: "pro" } }
        const receipt = yield* intake.receive(id, yield* signed(secret, first))
        assert.deepStrictEqual(receipt._tag === "Accepted" ? receipt.status : receipt._tag, "unmapped")
        const second = arrivalIdOf(
          yield* intake.receive(id, yield* signed(secret, { type: "signup", id: "n-2", contact: { email: "info@acme.mx" } }))
        )
        const firstId = arrivalIdOf(receipt)
        assert.strictEqual(yield* statusOf(ws, firstId), "unmapped")
        const detail = Option.getOrThrow(yield* sources.detail(ws, id))
        assert.isNull(detail.mapping)
        assert.strictEqual(detail.verification, "standard-webhooks")
        assert.deepStrictEqual(detail.example, first)
        assert.isNotNull(detail.example_received_at)
        const proposal = detail.proposal
        if (proposal === null) return assert.fail("a proposal is derived from the example")
        assert.deepStrictEqual(proposal.fields.email, ["contact.email"])
        assert.deepStrictEqual(proposal.fields.phone, ["contact.phone"])
        assert.deepStrictEqual(proposal.fields.first_name, ["contact.first"])
        assert.deepStrictEqual(proposal.fields.last_name, ["contact.last"])
        assert.deepStrictEqual([proposal.event_type, proposal.accepted_events, proposal.notice_id], [["type"], ["signup"], ["id"]])
        assert.deepStrictEqual(detail.undecided_fields, ["contact.plan"])
        assert.deepStrictEqual(Schema.decodeUnknownSync(Sources.SourceDetail)(JSON.parse(JSON.stringify(detail))), detail)
        // A broken path is refused with the problems found.
        const broken = yield* Effect.flip(sources.confirmMapping(ws, id, { ...proposal, fields: { email: ["contact.[email"] } }))
        assert.strictEqual(broken._tag, "MappingInvalid")
        if (broken._tag === "MappingInvalid") assert.include(broken.problems.join(), "fields.email")
        const v1 = yield* sources.confirmMapping(ws, id, proposal)
        assert.strictEqual(v1.mapping?.version, 1)
        const v2 = yield* sources.confirmMapping(ws, id, { ...proposal, fields: { ...proposal.fields, role: ["contact.plan"] } })
        assert.strictEqual(v2.mapping?.version, 2)
        assert.deepStrictEqual(v2.undecided_fields, [])
        // Both are requeued; both readings changed (there was none); only Lucía names a person (info@ is shared).
        assert.deepStrictEqual(yield* intake.reprocess(ws, id), { requeued: 2, changed: 2, unchanged: 0, expired: 0, created: 1 })
        yield* intake.drain("test")
        assert.strictEqual(yield* statusOf(ws, firstId), "accepted")
        assert.strictEqual(yield* statusOf(ws, second), "no_person")
        const arrival = Option.getOrThrow(yield* intake.arrival(ws, firstId))
        const contact = Option.getOrThrow(yield* (yield* Crm.Crm).getContact(ws, arrival.contact_id ?? ""))
        assert.deepStrictEqual([contact.name, contact.role], ["Lucía Pérez", "pro"])
        // Again: the shared mailbox reads the same; nothing else is left to reprocess.
        assert.deepStrictEqual(yield* intake.reprocess(ws, id), { requeued: 1, changed: 0, unchanged: 1, expired: 0, created: 0 })
        yield* intake.drain("test")
        assert.strictEqual(yield* statusOf(ws, second), "no_person")
        assert.deepStrictEqual(yield* intake.reprocess(ws, id, second), { requeued: 1, changed: 0, unchanged: 1, expired: 0, created: 0 })
        assert.strictEqual((yield* Effect.flip(intake.reprocess(ws, id, "arr_nope")))._tag, "ArrivalNotFound")
        assert.strictEqual((yield* Effect.flip(intake.reprocess(ws, "src_nope", second)))._tag, "SourceNotFound")
        // Later notices add the fields the mapping does not read.
        yield* intake.receive(id, yield* signed(secret, { type: "signup", id: "n-3", contact: { email: "marta@acme.mx", utm: "ads" } }))
        assert.deepStrictEqual(Option.getOrThrow(yield* sources.detail(ws, id)).undecided_fields, ["contact.utm"])
      }))

    it.effect("accepted events, batches and duplicates by notice id and by content", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const created = yield* sources.create(ws, { name: "App", type: "webhook" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        const id = created.source.id
        yield* sources.confirmMapping(ws, id, contactMapping)
        // A type the mapping does not accept: no Arrival.
        const ignored = yield* intake.receive(id, yield* signed(secret, { type: "pageview", id: "p-1", contact: { email: "x@acme.mx" } }))
        assert.deepStrictEqual(ignored, Intake.Receipt.Ignored({ reason: "unsupported_event", eventType: "pageview" }))
        // The same notice id under another webhook-id and other content is the same notice.
        const notice = { type: "signup", id: "s-1", contact: { email: "pablo@acme.mx" } }
        const arrivalId = arrivalIdOf(yield* intake.receive(id, yield* signed(secret, notice)))
        const sameId = yield* intake.receive(id, yield* signed(secret, { ...notice, contact: { email: "otro@acme.mx" } }))
        assert.deepStrictEqual(sameId, Intake.Receipt.Duplicate({ arrivalId, status: "received" }))
        // Without a notice id, the content's fingerprint is the key (a secret-address Source: no webhook-id).
        const address = yield* sources.create(ws, { name: "Form", type: "webhook", verification: "secret-address" })
        const token = Redacted.value(address.token ?? Redacted.make(""))
        assert.isUndefined(address.secret)
        yield* sources.confirmMapping(ws, address.source.id, { ...contactMapping, notice_id: [] })
        const once = arrivalIdOf(yield* intake.receiveAddress(address.source.id, token, plain({ type: "signup", contact: { email: "ana@acme.mx" } })))
        const twice = yield* intake.receiveAddress(address.source.id, token, plain({ type: "signup", contact: { email: "ana@acme.mx" } }))
        assert.deepStrictEqual(twice, Intake.Receipt.Duplicate({ arrivalId: once, status: "received" }))
        const other = yield* intake.receiveAddress(address.source.id, token, plain({ type: "signup", contact: { email: "eva@acme.mx" } }))
        assert.strictEqual(other._tag, "Accepted")
        // Urlencoded bodies read the same way.
        const form = yield* intake.receiveAddress(address.source.id, token, {
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: encoder.encode("type=signup&email=form%40acme.mx")
        })
        assert.strictEqual(form._tag, "Accepted")
        // A batch: one Arrival per element of an accepted type, the others counted as ignored.
        const batchSource = yield* sources.create(ws, { name: "Import", type: "webhook" })
        const batchSecret = Redacted.value(batchSource.secret ?? Redacted.make(""))
        yield* sources.confirmMapping(ws, batchSource.source.id, { ...contactMapping, items: "people[]", fields: { email: ["email"], name: ["name"] } })
        const batch = {
          batch: "b-1",
          people: [
            { type: "signup", id: "p-1", email: "uno@acme.mx", name: "Uno" },
            { type: "unsubscribe", id: "p-2", email: "dos@acme.mx" },
            { type: "signup", email: "tres@acme.mx", name: "Tres" }
          ]
        }
        const receipt = yield* intake.receive(batchSource.source.id, yield* signed(batchSecret, batch, { id: "msg_batch_1" }))
        if (receipt._tag !== "Batch") return assert.fail(receipt._tag)
        assert.strictEqual(receipt.ignored, 1)
        assert.deepStrictEqual(receipt.arrivals.map((a) => [a.status, a.duplicate]), [["received", false], ["received", false]])
        const resent = yield* intake.receive(batchSource.source.id, yield* signed(batchSecret, batch, { id: "msg_batch_1" }))
        if (resent._tag !== "Batch") return assert.fail(resent._tag)
        assert.deepStrictEqual(resent.arrivals.map((a) => [a.arrivalId, a.duplicate]), receipt.arrivals.map((a) => [a.arrivalId, true]))
        yield* intake.drain("test")
        const crm = yield* Crm.Crm
        const names: Array<string | null> = []
        for (const element of receipt.arrivals) {
          const arrival = Option.getOrThrow(yield* intake.arrival(ws, element.arrivalId))
          assert.strictEqual(arrival.status, "accepted")
          names.push(Option.getOrThrow(yield* crm.getContact(ws, arrival.contact_id ?? "")).name)
        }
        assert.deepStrictEqual(names, ["Uno", "Tres"])
        assert.strictEqual(yield* statusOf(ws, arrivalId), "accepted")
        assert.strictEqual(yield* statusOf(ws, once), "accepted")
      }))

    it.effect("no person: a shared mailbox, a notice with no key; a notice that no longer fits the mapping is unmapped", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const created = yield* sources.create(ws, { name: "Contact", type: "webhook" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        const id = created.source.id
        yield* sources.confirmMapping(ws, id, contactMapping)
        const send = (contact: unknown) =>
          Effect.flatMap(signed(secret, { type: "signup", id: `c-${++sequence}`, contact }), (r) => intake.receive(id, r))
        const shared = arrivalIdOf(yield* send({ email: "noreply@acme.mx", phone: "+52 55 3333 4444" }))
        const tagged = arrivalIdOf(yield* send({ email: "Test+1@acme.mx" }))
        const testTld = arrivalIdOf(yield* send({ email: "rosa@shop.test" }))
        const nameOnly = arrivalIdOf(yield* send({ first: "Solo", company: "Acme" }))
        const phoneOnly = arrivalIdOf(yield* send({ phone: "+52 55 5555 6666", first: "Tel" }))
        const nothing = arrivalIdOf(yield* send({ unrelated: true }))
        yield* intake.drain("test")
        for (const arrival of [shared, tagged, testTld, nameOnly, nothing]) assert.strictEqual(yield* statusOf(ws, arrival), "no_person")
        assert.strictEqual(yield* statusOf(ws, phoneOnly), "accepted")
        const detail = Option.getOrThrow(yield* intake.arrival(ws, shared)).status_detail ?? ""
        assert.include(detail, "shared mailbox")
        // A mapping none of whose paths reads in these notices: reprocessed, they are not understood.
        yield* sources.confirmMapping(ws, id, { event_type: [], accepted_events: [], notice_id: ["uuid"], items: null, fields: { email: ["person.email"] } })
        assert.deepStrictEqual(yield* intake.reprocess(ws, id), { requeued: 5, changed: 5, unchanged: 0, expired: 0, created: 0 })
        yield* intake.drain("test")
        assert.strictEqual(yield* statusOf(ws, nothing), "unmapped")
        assert.include(Option.getOrThrow(yield* intake.arrival(ws, nothing)).status_detail ?? "", "does not fit mapping version 2")
        assert.strictEqual(yield* statusOf(ws, phoneOnly), "accepted")
        assert.deepStrictEqual(Mappings.TEST_MAILBOXES.domains, ["example.com", "example.net", "example.org"])
      }))

    it.effect("source input is checked; a tool-signed Source has nothing of ours to rotate", () =>
      Effect.gen(function*() {
        const { sources, ws } = yield* setup
        const missing = yield* Effect.flip(sources.create(ws, { name: "Stripe", type: "webhook", template: "stripe" }))
        assert.deepStrictEqual([missing._tag, missing.field], ["SourceInputInvalid", "signingSecret"])
        const notOurs = yield* Effect.flip(
          sources.create(ws, { name: "Jot", type: "webhook", template: "jotform", signingSecret: Redacted.make("x") })
        )
        assert.strictEqual(notOurs.field, "signingSecret")
        const clerk = yield* Effect.flip(sources.create(ws, { name: "Clerk", type: "webhook", template: "clerk", signingSecret: Redacted.make("plain") }))
        assert.strictEqual(clerk.field, "signingSecret")
        const cloud = yield* Effect.flip(sources.create(ws, { name: "CE", type: "cloudevents", template: "stripe" }))
        assert.strictEqual(cloud.field, "template")
        const wrongKind = yield* Effect.flip(sources.create(ws, { name: "T", type: "webhook", template: "tally", verification: "secret-address" }))
        assert.strictEqual(wrongKind.field, "verification")
        const stripe = yield* sources.create(ws, { name: "Stripe", type: "webhook", template: "stripe", signingSecret: Redacted.make("whsec_x") })
        assert.deepStrictEqual([stripe.secret, stripe.token], [undefined, undefined])
        const detail = Option.getOrThrow(yield* sources.detail(ws, stripe.source.id))
        assert.deepStrictEqual([detail.verification, detail.mapping?.version, detail.mapping?.accepted_events], [
          "hmac",
          1,
          Templates.template("stripe").personEvents
        ])
        assert.strictEqual((yield* Effect.flip(sources.rotate(ws, stripe.source.id)))._tag, "SourceInputInvalid")
        // The tool's secret is stored sealed, never as given.
        const sql = yield* SqlClient.SqlClient
        assert.notInclude(JSON.stringify(yield* sql`SELECT * FROM door.sources WHERE id = ${stripe.source.id}`), "whsec_x")
        // A generic Standard Webhooks Source rotates its whsec_ secret.
        const generic = yield* sources.create(ws, { name: "G", type: "webhook" })
        const rotated = yield* sources.rotate(ws, generic.source.id)
        assert.isTrue("secret" in rotated)
      }))

    it.effect("after 30 days the raw notice and the example are gone: reprocess counts the Arrival expired", () =>
      Effect.gen(function*() {
        const { intake, sources, ws } = yield* setup
        const created = yield* sources.create(ws, { name: "Old", type: "webhook" })
        const secret = Redacted.value(created.secret ?? Redacted.make(""))
        const id = created.source.id
        const arrivalId = arrivalIdOf(
          yield* intake.receive(id, yield* signed(secret, { type: "signup", id: "o-1", contact: { email: "vieja@acme.mx" } }))
        )
        yield* TestClock.adjust("30 days")
        yield* TestClock.adjust("1 second")
        assert.isAtLeast(yield* intake.purgeExpired, 2)
        const detail = Option.getOrThrow(yield* sources.detail(ws, id))
        assert.deepStrictEqual([detail.example, detail.example_received_at], [null, null])
        assert.isNotNull(detail.proposal)
        yield* sources.confirmMapping(ws, id, contactMapping)
        assert.deepStrictEqual(yield* intake.reprocess(ws, id), { requeued: 0, changed: 0, unchanged: 0, expired: 1, created: 0 })
        assert.strictEqual(yield* statusOf(ws, arrivalId), "unmapped")
      }))
  })
}

describe("a mapping proposed from a tool's real notice", () => {
  it("reads the sample's person, not a form name or a display name", () => {
    for (const name of ["calendly", "jotform", "posthog", "shopify", "webflow"] as const) {
      const sample = samples.find((s) => s.template === name)
      if (sample === undefined) return assert.fail(name)
      const body = NoticeBody.decode(sample.headers["content-type"] ?? "", encoder.encode(sample.body))
      if (Either.isLeft(body)) return assert.fail(body.left.detail)
      const proposal = Mappings.propose(body.right)
      assert.deepStrictEqual(Mappings.problems(proposal), [], name)
      const reading = Mappings.read(proposal, body.right)
      assert.strictEqual(reading.email, sample.expect.email, name)
      assert.strictEqual(digits(reading.phone), digits(sample.expect.phone), name)
      const named = reading.name ?? [reading.first_name, reading.last_name].filter((part) => part !== null).join(" ")
      assert.strictEqual(named, sample.expect.name, name)
    }
  })

  it("proposes a batch for a list of people", () => {
    const proposal = Mappings.propose({ sent_at: "2026-01-01", contacts: [{ email: "a@acme.mx", full_name: "A B" }] })
    assert.strictEqual(proposal.items, "contacts[]")
    assert.deepStrictEqual(proposal.fields, { email: ["email"], name: ["full_name"] })
  })
})
