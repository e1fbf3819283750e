import { assert, describe, it, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Crm from "../src/Crm.js"
import * as CrmMigrations from "../src/CrmMigrations.js"
import { isFreeMail } from "../src/FreeMail.js"

const workspace = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`crm-${Math.random().toString(36).slice(2, 10)}`)
  return (yield* accounts.createWorkspace({ slug, name: slug })).id
}).pipe(Effect.orDie)

describe("normalization", () => {
  it("keeps emails lower-cased and phones as digits with their plus", () => {
    assert.strictEqual(Crm.normalizeEmail("  Ana.Ruiz@Acme.MX "), "ana.ruiz@acme.mx")
    assert.strictEqual(Crm.normalizeEmail("not an email"), null)
    assert.strictEqual(Crm.normalizePhone("+52 (55) 1234-5678"), "+525512345678")
    assert.strictEqual(Crm.normalizePhone("123"), null)
    assert.isTrue(isFreeMail("gmail.com"))
    assert.isFalse(isFreeMail("acme.mx"))
  })
})

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Crm.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`the CRM on ${target.name}`, (it) => {
    it.effect("creates a contact and the company of its business domain once; a free-mail address creates none", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const ana = yield* crm.applyContact(ws, { name: "Ana Ruiz", email: "ana@acme.mx", company: "Acme SA" })
        assert.strictEqual(ana._tag, "Created")
        if (ana._tag !== "Created") return
        const company = Option.getOrThrow(ana.company)
        assert.deepStrictEqual([company.created, company.company.name, company.company.domain], [true, "Acme SA", "acme.mx"])
        const luis = yield* crm.applyContact(ws, { name: "Luis", email: "luis@ACME.mx" })
        assert.isTrue(luis._tag === "Created" && Option.getOrThrow(luis.company).created === false)
        assert.isTrue(luis._tag === "Created" && luis.contact.company_id === company.company.id)
        const gmail = yield* crm.applyContact(ws, { name: "Pepe", email: "pepe@gmail.com", company: "Pepe's" })
        assert.isTrue(gmail._tag === "Created" && Option.isNone(gmail.company) && gmail.contact.company_id === null)
        // Another workspace has its own contacts and companies.
        const other = yield* workspace
        const again = yield* crm.applyContact(other, { email: "ana@acme.mx" })
        assert.isTrue(again._tag === "Created" && Option.getOrThrow(again.company).created)
      }))

    it.effect("the same person again updates what changed, or nothing; email and phone of two contacts is a conflict", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const first = yield* crm.applyContact(ws, { name: "Eva", email: "eva@example.org", phone: "+52 55 1111 2222" })
        assert.strictEqual(first._tag, "Created")
        assert.strictEqual((yield* crm.applyContact(ws, { email: "EVA@example.org" }))._tag, "Unchanged")
        const updated = yield* crm.applyContact(ws, { phone: "+525511112222", role: "CFO" })
        assert.isTrue(updated._tag === "Updated" && updated.changed.join() === "role")
        const other = yield* crm.applyContact(ws, { name: "Otro", email: "otro@example.org" })
        assert.strictEqual(other._tag, "Created")
        const conflict = yield* crm.applyContact(ws, { email: "otro@example.org", phone: "+52 55 1111 2222" })
        assert.strictEqual(conflict._tag, "Conflict")
        assert.strictEqual((yield* crm.applyContact(ws, { name: "Nadie" }))._tag, "NoPersonKey")
      }))

    it.effect("erasure removes personal data and refuses the person later, by email or by phone", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const created = yield* crm.applyContact(ws, { name: "Borrar", email: "borrar@acme.mx", phone: "5544332211" })
        if (created._tag !== "Created") return assert.fail(created._tag)
        yield* crm.erase(ws, created.contact.id)
        const after = Option.getOrThrow(yield* crm.getContact(ws, created.contact.id))
        assert.deepStrictEqual([after.name, after.email, after.phone], [null, null, null])
        assert.strictEqual((yield* crm.applyContact(ws, { email: "Borrar@acme.mx" }))._tag, "Erased")
        assert.strictEqual((yield* crm.applyContact(ws, { phone: "55 4433 2211", email: "new@acme.mx" }))._tag, "Erased")
        assert.isFalse(yield* crm.isErased(ws, { email: "someone@acme.mx" }))
        assert.isTrue(Either.isLeft(yield* Effect.either(crm.erase(ws, "contact_nope"))))
      }))

    it.effect("opportunities move through the stages of their own pipeline only", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const pipeline = yield* crm.createPipeline(ws, { name: "Ventas", stages: [{ name: "Nuevo" }, { name: "Ganado", outcome: "won" }] })
        const other = yield* crm.createPipeline(ws, { name: "Otro", stages: [{ name: "X" }] })
        const contact = yield* crm.applyContact(ws, { email: "op@acme.mx" })
        if (contact._tag !== "Created") return assert.fail(contact._tag)
        const [nuevo, ganado] = pipeline.stages
        if (nuevo === undefined || ganado === undefined) return assert.fail("stages")
        const opportunity = yield* crm.openOpportunity(ws, { contactId: contact.contact.id, pipelineId: pipeline.id, stageId: nuevo.id, title: "Primer pedido" })
        const moved = yield* crm.moveOpportunity(ws, opportunity.id, ganado.id)
        assert.deepStrictEqual([moved.previousStageId, moved.opportunity.stage_id, moved.outcome], [nuevo.id, ganado.id, "won"])
        const foreign = yield* Effect.either(crm.moveOpportunity(ws, opportunity.id, other.stages[0]?.id ?? ""))
        assert.isTrue(Either.isLeft(foreign) && foreign.left.kind === "stage")
        assert.isTrue(Either.isLeft(yield* Effect.either(crm.createPipeline(ws, { name: "Vacío", stages: [] }))))
        // Another workspace cannot see or move it.
        const stranger = yield* workspace
        assert.isTrue(Either.isLeft(yield* Effect.either(crm.moveOpportunity(stranger, opportunity.id, nuevo.id))))
      }))

    it.effect("a collection holds exactly the selected contacts of its workspace", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const a = yield* crm.applyContact(ws, { email: "a@acme.mx" })
        const b = yield* crm.applyContact(ws, { email: "b@acme.mx" })
        if (a._tag !== "Created" || b._tag !== "Created") return assert.fail("contacts")
        const collection = yield* crm.createCollection(ws, { name: "Prospectos", contactIds: [b.contact.id, a.contact.id, a.contact.id] })
        assert.strictEqual(collection.contactIds.length, 2)
        const members = yield* crm.collectionContacts(ws, collection.id)
        assert.deepStrictEqual(members.map((c) => c.id).sort(), [a.contact.id, b.contact.id].sort())
        // Among a selection: only the selected members, never a contact outside the collection.
        const c = yield* crm.applyContact(ws, { email: "c@acme.mx" })
        if (c._tag !== "Created") return assert.fail("contact c")
        const among = yield* crm.collectionContacts(ws, collection.id, [a.contact.id, c.contact.id, "contact_unknown"])
        assert.deepStrictEqual(among.map((x) => x.id), [a.contact.id])
        assert.deepStrictEqual(yield* crm.collectionContacts(ws, collection.id, []), [])
        const stranger = yield* workspace
        assert.isTrue(Either.isLeft(yield* Effect.either(crm.createCollection(stranger, { name: "x", contactIds: [a.contact.id] }))))
        assert.isTrue(Either.isLeft(yield* Effect.either(crm.collectionContacts(stranger, collection.id))))
      }))
  })
}
