import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import * as CoreMigrations from "@service/core/CoreMigrations"
import { Crypto } from "@service/core/Crypto"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import { Principal } from "@service/core/Principal"
import * as RequestContext from "@service/core/RequestContext"
import * as EventLedger from "@service/events/EventLedger"
import * as EventsMigrations from "@service/events/EventsMigrations"
import * as DemoCorpus from "@service/market-warehouse/DemoCorpus"
import * as MarketMigrations from "@service/market-warehouse/MarketMigrations"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as MarketLayer from "../src/MarketLayer.js"
import * as Opportunities from "../src/Opportunities.js"
import * as SavedSearches from "../src/SavedSearches.js"
import * as SavedSearchRefusal from "../src/SavedSearchRefusal.js"
import * as SavedSearchMigrations from "../src/SavedSearchMigrations.js"

const migrations = [CoreMigrations.migrations, MarketMigrations.migrations, EventsMigrations.migrations, SavedSearchMigrations.migrations]

/** Publishes a new snapshot holding only the demo files whose paths contain one of `names`; its snapshot id. */
const publishFiles = (names: ReadonlyArray<string>) =>
  DemoCorpus.loadAndPublishWhere((file) => names.some((name) => file.path.includes(name))).pipe(
    Effect.map(({ publication }) => publication.snapshotId),
    Effect.orDie
  )

/** The distinct records (fingerprints) the search matches now, every page. */
const matching = (input: Opportunities.SearchOpportunitiesInput) =>
  Effect.gen(function*() {
    const refs = new Set<string>()
    let cursor: string | undefined
    do {
      const page = yield* Opportunities.search({ ...input, limit: 50, ...(cursor === undefined ? {} : { cursor }) })
      for (const row of page.results) refs.add(row.record_fingerprint)
      cursor = page.page?.hasMore === true ? page.page.nextCursor ?? undefined : undefined
    } while (cursor !== undefined)
    return refs
  }).pipe(Effect.orDie)

const owner = Effect.gen(function*() {
  const accounts = yield* Accounts.Accounts
  const workspace = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make(`alerts-${Math.random().toString(36).slice(2, 8)}`), name: "alerts" })
  const person = yield* accounts.createPerson({ displayName: "Ana Ruiz" })
  yield* accounts.addMember({ workspaceId: workspace.id, personId: person.id, role: "owner" })
  return new Principal({
    workspace,
    person: Option.some(person),
    role: "owner",
    scopes: [],
    credential: { id: CredentialId.make("cred_alerts"), kind: "api_key" }
  })
}).pipe(Effect.orDie)

const refusalCode = <A, R>(effect: Effect.Effect<A, { readonly code: string }, R>) =>
  Effect.map(Effect.flip(effect), (refusal) => refusal.code)

const Matched = Schema.Struct({
  saved_search_id: Schema.String,
  name: Schema.String,
  kind: Schema.String,
  publication: Schema.String,
  added: Schema.Number,
  record_refs: Schema.Array(Schema.String),
  complete: Schema.Boolean
})

const GACM = { buyer: "GACM" } as const

for (const target of TestDatabase.targets()) {
  const Env = Layer.mergeAll(SavedSearches.layer, EventLedger.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(MarketLayer.layer, EventLedger.layer, Accounts.layerSql, RequestContext.layerTest)),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.withMigrations(target, migrations)),
    Layer.orDie
  )

  layer(Env, { timeout: "180 seconds" })(`saved searches on ${target.name}`, (it) => {
    it.effect("before a publication a search cannot be saved; then criteria the search refuses, paging and unknown fields are refused", () =>
      Effect.gen(function*() {
        const saved = yield* SavedSearches.SavedSearches
        const principal = yield* owner
        assert.strictEqual(yield* refusalCode(saved.create(principal, { name: "x", kind: "opportunities", criteria: GACM })), "saved_searches_unavailable")
        yield* publishFiles(["ocds_gacm_naicm_records"])
        assert.strictEqual(yield* refusalCode(saved.create(principal, { name: "x", kind: "opportunities", criteria: {} })), "criteria_refused")
        const broad = yield* Effect.flip(saved.create(principal, { name: "x", kind: "opportunities", criteria: {} }))
        assert.include(broad.why, "query_too_broad")
        assert.strictEqual(yield* refusalCode(saved.create(principal, { name: "x", kind: "opportunities", criteria: { ...GACM, limit: 5 } })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(saved.create(principal, { name: "x", kind: "awards", criteria: { bogus: 1 } })), "invalid_field_value")
        assert.strictEqual(yield* refusalCode(saved.create(principal, { name: "x", kind: "risks", criteria: { mark_kinds: ["embargo"] } })), "criteria_refused")
        // A wrong value in the criteria is fixed, not narrowed: the field is named and the recovery is fix_arguments.
        const unknownState = yield* Effect.flip(saved.create(principal, { name: "x", kind: "opportunities", criteria: { ...GACM, state: "Narnia" } }))
        assert.strictEqual(unknownState.code, "invalid_field_value")
        assert.strictEqual(unknownState.field, "criteria.state")
        assert.include(unknownState.why, "unknown_state")
        assert.strictEqual(SavedSearchRefusal.codec.rules[unknownState.code].action, "fix_arguments")
        assert.strictEqual(SavedSearchRefusal.codec.rules["criteria_refused"].action, "narrow_query")
        assert.deepStrictEqual(yield* saved.list(principal.workspace.id), [])
      }))

    it.effect("a publication that adds matching records alerts once, with the added count and refs that open", () =>
      Effect.gen(function*() {
        const saved = yield* SavedSearches.SavedSearches
        const ledger = yield* EventLedger.EventLedger
        const principal = yield* owner
        const first = yield* publishFiles(["ocds_gacm_naicm_records"])
        const before = yield* matching(GACM)
        const created = yield* saved.create(principal, { name: "GACM tenders", kind: "opportunities", criteria: GACM })
        assert.match(created.id, /^srch_[0-9a-f]{24}$/)
        assert.deepStrictEqual([created.matching, created.complete, created.checked_publication], [before.size, true, first])
        // Compared with this publication when saved: nothing to alert.
        assert.strictEqual(yield* saved.check, 0)

        const second = yield* publishFiles(["ocds_gacm_naicm_records", "ocds_gacm_naicm_releases", "compranet_contratos_2015"])
        const after = yield* matching(GACM)
        const added = [...after].filter((fingerprint) => !before.has(fingerprint))
        assert.isAbove(added.length, 0, "the second publication adds GACM opportunities")
        assert.strictEqual(yield* saved.check, 1)
        const entries = yield* ledger.read({ workspaceId: principal.workspace.id, names: ["search.matched"], limit: 10 })
        assert.strictEqual(entries.length, 1)
        assert.strictEqual(entries[0]?.subject, `saved_search/${created.id}`)
        const alert = Schema.decodeUnknownSync(Matched)(entries[0]?.payload)
        assert.deepStrictEqual(
          [alert.saved_search_id, alert.name, alert.kind, alert.publication, alert.added, alert.complete],
          [created.id, "GACM tenders", "opportunities", second, added.length, true]
        )
        // The refs open, and name records that were added.
        assert.strictEqual(alert.record_refs.length, Math.min(added.length, SavedSearches.MAX_REFS_PER_ALERT))
        for (const ref of alert.record_refs) {
          const detail = yield* Opportunities.get({ record_ref: ref }).pipe(Effect.orDie)
          assert.isTrue(added.includes(detail.results.record_fingerprint), detail.results.record_fingerprint)
        }
        // Once per publication: checking again records nothing.
        assert.strictEqual(yield* saved.check, 0)
        const [listed] = yield* saved.list(principal.workspace.id)
        assert.deepStrictEqual([listed?.matching, listed?.checked_publication], [after.size, second])

        // A publication that adds nothing matching (the same files again) alerts nothing.
        yield* publishFiles(["ocds_gacm_naicm_records", "ocds_gacm_naicm_releases", "compranet_contratos_2015"])
        assert.strictEqual(yield* saved.check, 0)
        assert.strictEqual((yield* ledger.read({ workspaceId: principal.workspace.id, names: ["search.matched"], limit: 10 })).length, 1)
      }))

    it.effect("a deleted search alerts no more; deleting it again is not found", () =>
      Effect.gen(function*() {
        const saved = yield* SavedSearches.SavedSearches
        const ledger = yield* EventLedger.EventLedger
        const principal = yield* owner
        yield* publishFiles(["ocds_gacm_naicm_records"])
        const created = yield* saved.create(principal, { name: "GACM", kind: "opportunities", criteria: GACM })
        yield* saved.remove(principal.workspace.id, created.id)
        assert.strictEqual(yield* refusalCode(saved.remove(principal.workspace.id, created.id)), "saved_search_not_found")
        yield* publishFiles(["ocds_gacm_naicm_records", "ocds_gacm_naicm_releases", "compranet_contratos_2015"])
        assert.strictEqual(yield* saved.check, 0)
        assert.deepStrictEqual(yield* ledger.read({ workspaceId: principal.workspace.id, names: ["search.matched"], limit: 10 }), [])
        assert.deepStrictEqual(yield* saved.list(principal.workspace.id), [])
      }))
  })
}
