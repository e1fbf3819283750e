/**
 * The CRM's own operations over the service: contact lists (filters, keyset pages), search ranking, strict
 * hand-made contacts, updates that set, clear and keep, Pipelines and stages (rename, add, reorder, archive and
 * what an archived one refuses), opportunities (list filters, close) and collections (member pages, add, remove,
 * delete). Every read and change is scoped by workspace.
 */
import { assert, layer } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { WorkspaceSlug } from "@service/core/Ids"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as Crm from "../src/Crm.js"
import * as CrmMigrations from "../src/CrmMigrations.js"

const workspace = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const slug = WorkspaceSlug.make(`crm-${Math.random().toString(36).slice(2, 10)}`)
  return (yield* accounts.createWorkspace({ slug, name: slug })).id
}).pipe(Effect.orDie)

const created = (outcome: Crm.ContactOutcome) =>
  outcome._tag === "Created" ? Effect.succeed(outcome.contact) : Effect.dieMessage(`expected Created, got ${outcome._tag}`)

const failureOf = <A, E>(effect: Effect.Effect<A, E>) => Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : undefined))

/** Which contact already has the field, as the refusal names it. */
const takenBy = (failure: unknown) => (failure instanceof Crm.ContactTaken ? [failure.field, failure.contactId] : failure)

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(Crm.layer, Accounts.layerSql).pipe(
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, [CoreMigrations.migrations, CrmMigrations.migrations])),
    Layer.orDie
  )

  layer(Env, { timeout: "120 seconds" })(`the CRM's surface on ${target.name}`, (it) => {
    it.effect("lists contacts newest first in keyset pages, filtered by company, Source, stage, creation range and text", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const made: Array<Crm.Contact> = []
        for (const [i, email] of ["ana@acme.mx", "luis@acme.mx", "eva@norte.mx", "raul@gmail.com", "sol@norte.mx"].entries()) {
          yield* TestClock.adjust("1 minute")
          const origin = i % 2 === 0 ? { sourceId: "src_aaaaaaaaaaaaaaaaaaaaaaaa" } : undefined
          made.push(yield* Effect.flatMap(crm.applyContact(ws, { name: `Person ${i}`, email, phone: i === 3 ? "+52 55 1234 5678" : undefined }, origin), created))
        }
        const ids = (page: Crm.Page<Crm.Contact>) => page.items.map((c) => c.id)
        const newestFirst = [...made].reverse().map((c) => c.id)
        // Pages of two, in order, ending with no cursor.
        const first = yield* crm.listContacts(ws, { limit: 2 })
        const second = yield* crm.listContacts(ws, { limit: 2, cursor: first.nextCursor ?? undefined })
        const third = yield* crm.listContacts(ws, { limit: 2, cursor: second.nextCursor ?? undefined })
        assert.deepStrictEqual([...ids(first), ...ids(second), ...ids(third)], newestFirst)
        assert.strictEqual(third.nextCursor, null)
        assert.instanceOf(yield* failureOf(crm.listContacts(ws, { limit: 2, cursor: "not-a-cursor" })), Crm.BadCursor)

        const acme = made[0]?.company_id ?? ""
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, companyId: acme })), [made[1]?.id, made[0]?.id])
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, sourceId: "src_aaaaaaaaaaaaaaaaaaaaaaaa" })), [made[4]?.id, made[2]?.id, made[0]?.id])
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, text: "NORTE" })), [made[4]?.id, made[2]?.id])
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, text: "1234 56" })), [made[3]?.id])
        // LIKE's own characters are text, not patterns.
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, text: "%" })), [])
        const middle = made[2]?.created_at ?? ""
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, createdFrom: middle })), [made[4]?.id, made[3]?.id, made[2]?.id])
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, createdTo: middle })), [made[2]?.id, made[1]?.id, made[0]?.id])

        const pipeline = yield* crm.createPipeline(ws, { name: "Ventas", stages: [{ name: "Nuevo" }, { name: "Ganado", outcome: "won" }] })
        const stage = pipeline.stages[0]?.id ?? ""
        yield* crm.openOpportunity(ws, { contactId: made[3]?.id ?? "", pipelineId: pipeline.id, stageId: stage, title: "Deal" })
        assert.deepStrictEqual(ids(yield* crm.listContacts(ws, { limit: 10, stageId: stage })), [made[3]?.id])
        // Another workspace sees none of them.
        assert.deepStrictEqual(ids(yield* crm.listContacts(yield* workspace, { limit: 10 })), [])
      }))

    it.effect("search ranks exact matches, then prefixes, and never finds an erased person", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const inside = yield* Effect.flatMap(crm.applyContact(ws, { name: "Mariana Ana", email: "mariana@acme.mx" }), created)
        yield* TestClock.adjust("1 minute")
        const prefix = yield* Effect.flatMap(crm.applyContact(ws, { name: "Ana Ruiz", email: "ruiz@acme.mx" }), created)
        yield* TestClock.adjust("1 minute")
        const exact = yield* Effect.flatMap(crm.applyContact(ws, { name: "Ana", email: "a@acme.mx" }), created)
        const found = yield* crm.searchContacts(ws, "ana", 10)
        assert.deepStrictEqual(found.map((c) => c.id), [exact.id, prefix.id, inside.id])
        yield* crm.erase(ws, prefix.id)
        assert.deepStrictEqual((yield* crm.searchContacts(ws, "ana", 10)).map((c) => c.id), [exact.id, inside.id])
      }))

    it.effect("a contact made by hand is refused when its email or phone is taken or erased, or when it has neither", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const made = yield* crm.createContact(ws, { name: "Ana", email: "Ana@Acme.mx", phone: "55 1234 5678" }, null)
        assert.deepStrictEqual([made.contact.email, made.contact.phone, Option.isSome(made.company)], ["ana@acme.mx", "5512345678", true])
        const taken = yield* failureOf(crm.createContact(ws, { email: "ana@acme.mx" }, null))
        assert.deepStrictEqual(takenBy(taken), ["email", made.contact.id])
        const phoneTaken = yield* failureOf(crm.createContact(ws, { email: "otra@acme.mx", phone: "5512345678" }, null))
        assert.deepStrictEqual(takenBy(phoneTaken), ["phone", made.contact.id])
        assert.instanceOf(yield* failureOf(crm.createContact(ws, { name: "Nobody" }, null)), Crm.NoPersonKey)
        yield* crm.erase(ws, made.contact.id)
        assert.instanceOf(yield* failureOf(crm.createContact(ws, { email: "ana@acme.mx" }, null)), Crm.ContactErased)
        // The same email in another workspace is that workspace's own.
        assert.strictEqual((yield* crm.createContact(yield* workspace, { email: "ana@acme.mx" }, null)).contact.email, "ana@acme.mx")
      }))

    it.effect("an update sets, clears and keeps fields, moves a new business email to its company, and refuses what it must", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const ana = (yield* crm.createContact(ws, { name: "Ana", email: "ana@acme.mx", role: "Compras" }, null)).contact
        const other = (yield* crm.createContact(ws, { email: "luis@norte.mx" }, null)).contact
        const renamed = yield* crm.updateContact(ws, ana.id, { name: "Ana Ruiz", role: null })
        assert.deepStrictEqual([renamed.contact.name, renamed.contact.role, renamed.contact.email], ["Ana Ruiz", null, "ana@acme.mx"])
        assert.deepStrictEqual([...renamed.changed].sort(), ["name", "role"])
        const unchanged = yield* crm.updateContact(ws, ana.id, { name: "Ana Ruiz" })
        assert.deepStrictEqual(unchanged.changed, [])
        const moved = yield* crm.updateContact(ws, ana.id, { email: "ana@sur.cl" })
        assert.strictEqual(Option.getOrThrow(moved.company).company.domain, "sur.cl")
        assert.notStrictEqual(moved.contact.company_id, ana.company_id)
        assert.deepStrictEqual(takenBy(yield* failureOf(crm.updateContact(ws, ana.id, { email: "luis@norte.mx" }))), ["email", other.id])
        assert.instanceOf(yield* failureOf(crm.updateContact(ws, ana.id, { email: null })), Crm.NoPersonKey)
        assert.instanceOf(yield* failureOf(crm.updateContact(ws, ana.id, { email: "not an email" })), Crm.NoPersonKey)
        assert.instanceOf(yield* failureOf(crm.updateContact(yield* workspace, ana.id, { name: "x" })), Crm.CrmNotFound)
        yield* crm.erase(ws, other.id)
        assert.instanceOf(yield* failureOf(crm.updateContact(ws, other.id, { name: "back" })), Crm.ContactErased)
      }))

    it.effect("Pipelines and stages are renamed, added, reordered and archived; an archived one takes no new deal", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const contact = (yield* crm.createContact(ws, { email: "ana@acme.mx" }, null)).contact
        const p = yield* crm.createPipeline(ws, { name: "Ventas", stages: [{ name: "Nuevo" }, { name: "Ganado", outcome: "won" }, { name: "Perdido", outcome: "lost" }] })
        const [nuevo, ganado, perdido] = p.stages.map((s) => s.id)
        if (nuevo === undefined || ganado === undefined || perdido === undefined) return yield* Effect.dieMessage("no stages")
        assert.strictEqual((yield* crm.renamePipeline(ws, p.id, "  Ventas 2027 ")).name, "Ventas 2027")
        const added = yield* crm.addStage(ws, p.id, { name: "Propuesta", outcome: "open", position: 1 })
        assert.deepStrictEqual(added.stages.map((s) => [s.name, s.position]), [["Nuevo", 0], ["Propuesta", 1], ["Ganado", 2], ["Perdido", 3]])
        const propuesta = added.stages[1]?.id ?? ""
        const reordered = yield* crm.reorderStages(ws, p.id, [propuesta, nuevo, ganado, perdido])
        assert.deepStrictEqual(reordered.stages.map((s) => s.name), ["Propuesta", "Nuevo", "Ganado", "Perdido"])
        assert.instanceOf(yield* failureOf(crm.reorderStages(ws, p.id, [propuesta, nuevo, ganado])), Crm.InvalidPipeline)
        assert.instanceOf(yield* failureOf(crm.reorderStages(ws, p.id, [propuesta, nuevo, ganado, ganado])), Crm.InvalidPipeline)
        assert.strictEqual((yield* crm.renameStage(ws, nuevo, "Contactado")).stages[1]?.name, "Contactado")

        // An open stage holding a deal cannot be archived; once the deal moves on, it can, and takes no new one.
        const deal = yield* crm.openOpportunity(ws, { contactId: contact.id, pipelineId: p.id, stageId: nuevo, title: "Deal" })
        assert.instanceOf(yield* failureOf(crm.archiveStage(ws, nuevo)), Crm.StageInUse)
        yield* crm.moveOpportunity(ws, deal.id, propuesta)
        assert.isTrue((yield* crm.archiveStage(ws, nuevo)).stages.find((s) => s.id === nuevo)?.archived)
        assert.instanceOf(yield* failureOf(crm.moveOpportunity(ws, deal.id, nuevo)), Crm.CrmNotFound)
        assert.instanceOf(yield* failureOf(crm.openOpportunity(ws, { contactId: contact.id, pipelineId: p.id, stageId: nuevo, title: "x" })), Crm.CrmNotFound)
        assert.instanceOf(yield* failureOf(crm.checkStage(ws, p.id, nuevo)), Crm.CrmNotFound)
        // The last open stage stays.
        assert.instanceOf(yield* failureOf(crm.archiveStage(ws, propuesta)), Crm.StageInUse)

        // An archived Pipeline keeps its deals readable and closable, and takes no new one.
        const archived = yield* crm.archivePipeline(ws, p.id)
        assert.isTrue(archived.archived)
        assert.instanceOf(yield* failureOf(crm.openOpportunity(ws, { contactId: contact.id, pipelineId: p.id, stageId: propuesta, title: "x" })), Crm.CrmNotFound)
        const closed = yield* crm.moveOpportunity(ws, deal.id, ganado).pipe(Effect.either)
        assert.isTrue(Either.isLeft(closed), "an archived Pipeline's stages take no move either")
        assert.strictEqual(Option.getOrThrow(yield* crm.getOpportunity(ws, deal.id)).stage_id, propuesta)
        // Another workspace cannot touch it.
        assert.instanceOf(yield* failureOf(crm.renamePipeline(yield* workspace, p.id, "mine")), Crm.CrmNotFound)
      }))

    it.effect("opportunities are listed by Pipeline, stage, company, contact and outcome, newest first", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const ana = (yield* crm.createContact(ws, { email: "ana@acme.mx" }, null)).contact
        const eva = (yield* crm.createContact(ws, { email: "eva@norte.mx" }, null)).contact
        const p = yield* crm.createPipeline(ws, { name: "Ventas", stages: [{ name: "Nuevo" }, { name: "Ganado", outcome: "won" }] })
        const q = yield* crm.createPipeline(ws, { name: "Renovaciones", stages: [{ name: "Abierto" }] })
        const nuevo = p.stages[0]?.id ?? ""
        const first = yield* crm.openOpportunity(ws, { contactId: ana.id, pipelineId: p.id, stageId: nuevo, title: "Uno" })
        yield* TestClock.adjust("1 minute")
        const second = yield* crm.openOpportunity(ws, { contactId: eva.id, pipelineId: p.id, stageId: nuevo, title: "Dos" })
        yield* TestClock.adjust("1 minute")
        const third = yield* crm.openOpportunity(ws, { contactId: ana.id, pipelineId: q.id, stageId: q.stages[0]?.id ?? "", title: "Tres" })
        yield* crm.moveOpportunity(ws, first.id, p.stages[1]?.id ?? "")
        const ids = (filter: Omit<Crm.OpportunityFilter, "limit">) => Effect.map(crm.listOpportunities(ws, { limit: 10, ...filter }), (page) => page.items.map((o) => o.id))
        assert.deepStrictEqual(yield* ids({}), [third.id, second.id, first.id])
        assert.deepStrictEqual(yield* ids({ pipelineId: p.id }), [second.id, first.id])
        assert.deepStrictEqual(yield* ids({ stageId: nuevo }), [second.id])
        assert.deepStrictEqual(yield* ids({ companyId: ana.company_id ?? "" }), [third.id, first.id])
        assert.deepStrictEqual(yield* ids({ contactId: eva.id }), [second.id])
        assert.deepStrictEqual(yield* ids({ outcome: "won" }), [first.id])
        const page = yield* crm.listOpportunities(ws, { limit: 2 })
        const rest = yield* crm.listOpportunities(ws, { limit: 2, cursor: page.nextCursor ?? undefined })
        assert.deepStrictEqual([...page.items, ...rest.items].map((o) => o.id), [third.id, second.id, first.id])
        const view = Option.getOrThrow(yield* crm.getOpportunity(ws, first.id))
        assert.deepStrictEqual([view.stage_name, view.outcome, view.company_id], ["Ganado", "won", ana.company_id])
      }))

    // Two connections at once: PostgreSQL only (PGlite is one connection).
    it.effect.skipIf(target.name === "pglite")("an intake applying the person while they are erased waits for the erasure and stores nothing", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const sql = yield* SqlClient.SqlClient
        const ws = yield* workspace
        const ana = yield* Effect.flatMap(crm.applyContact(ws, { name: "Ana Ruiz", email: "ana@acme.mx" }), created)
        const erasing = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        // The erasure holds its transaction open until told to commit.
        const erasure = yield* Effect.fork(sql.withTransaction(Effect.gen(function*() {
          yield* crm.erase(ws, ana.id)
          yield* Deferred.succeed(erasing, undefined)
          yield* Deferred.await(commit)
        })))
        yield* Deferred.await(erasing)
        const applying = yield* Effect.fork(crm.applyContact(ws, { name: "Ana Ruiz", email: "ana@acme.mx", role: "Compras" }))
        // Give the intake time to reach the contact's lock, then let the erasure commit.
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(erasure)
        const outcome = yield* Fiber.join(applying)
        assert.strictEqual(outcome._tag, "Erased")
        const after = Option.getOrThrow(yield* crm.getContact(ws, ana.id))
        assert.deepStrictEqual([after.name, after.email, after.role], [null, null, null])
        assert.deepStrictEqual((yield* crm.listContacts(ws, { limit: 10 })).items.map((c) => c.id), [ana.id])
      }))

    it.effect("collections page their members in the order added, grow, shrink and are deleted without their contacts", () =>
      Effect.gen(function*() {
        const crm = yield* Crm.Crm
        const ws = yield* workspace
        const people: Array<Crm.Contact> = []
        for (const name of ["a", "b", "c", "d"]) people.push((yield* crm.createContact(ws, { email: `${name}@acme.mx` }, null)).contact)
        const [a, b, c, d] = people.map((p) => p.id)
        if (a === undefined || b === undefined || c === undefined || d === undefined) return yield* Effect.dieMessage("no people")
        const made = yield* crm.createCollection(ws, { name: "Compras", contactIds: [a, b, a] })
        assert.deepStrictEqual(made.contactIds, [a, b])
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(yield* crm.addToCollection(ws, made.id, [c, b, d]), 2)
        assert.strictEqual(Option.getOrThrow(yield* crm.getCollection(ws, made.id)).size, 4)
        const first = yield* crm.collectionMembers(ws, made.id, { limit: 3 })
        const rest = yield* crm.collectionMembers(ws, made.id, { limit: 3, cursor: first.nextCursor ?? undefined })
        const members = [...first.items, ...rest.items].map((m) => m.id)
        assert.deepStrictEqual(new Set(members.slice(0, 2)), new Set([a, b]))
        assert.deepStrictEqual(new Set(members.slice(2)), new Set([c, d]))
        assert.strictEqual(rest.nextCursor, null)
        assert.strictEqual(yield* crm.removeFromCollection(ws, made.id, [a, a, "contact_000000000000000000000000"]), 1)
        assert.instanceOf(yield* failureOf(crm.addToCollection(ws, made.id, ["contact_000000000000000000000000"])), Crm.CrmNotFound)
        const stranger = yield* workspace
        assert.instanceOf(yield* failureOf(crm.addToCollection(stranger, made.id, [a])), Crm.CrmNotFound)
        const theirs = (yield* crm.createContact(stranger, { email: "x@otra.mx" }, null)).contact
        assert.instanceOf(yield* failureOf(crm.addToCollection(ws, made.id, [theirs.id])), Crm.CrmNotFound)
        const listed = yield* crm.listCollections(ws, { limit: 10 })
        assert.deepStrictEqual(listed.items.map((l) => [l.id, l.size]), [[made.id, 3]])
        assert.strictEqual((yield* crm.deleteCollection(ws, made.id)).size, 3)
        assert.isTrue(Option.isNone(yield* crm.getCollection(ws, made.id)))
        assert.isTrue(Option.isSome(yield* crm.getContact(ws, a)))
      }))
  })
}
