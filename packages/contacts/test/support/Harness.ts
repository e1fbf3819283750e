/**
 * What the unlock tests share: a provider that counts the calls it answered and can be told to hang (a process
 * that dies mid-call) or to die once (a crash after the debit), and a workspace with contacts in a collection.
 */
import * as Accounts from "@service/core/Accounts"
import { CredentialId, WorkspaceSlug } from "@service/core/Ids"
import { Principal, type Scope } from "@service/core/Principal"
import type { Workspace } from "@service/core/Workspace"
import * as Crm from "@service/crm/Crm"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { ContactProvider, ProviderUnavailable, type ResearchRequest, type Result } from "../../src/ContactProvider.js"
import * as SandboxProvider from "../../src/SandboxProvider.js"

/** @since 0.1.0 */
export class ProviderControl extends Context.Tag("test/ProviderControl")<ProviderControl, {
  /** Every request that reached the provider and was answered, in order. */
  readonly answered: Effect.Effect<ReadonlyArray<ResearchRequest>>
  /** Every request that reached the provider, answered or not. */
  readonly reached: Effect.Effect<ReadonlyArray<ResearchRequest>>
  /** The next request under this key never answers (its caller's process is about to die); resolves when it arrives. */
  readonly hangNext: (requestKey: string) => Effect.Effect<Deferred.Deferred<void>>
  /** Forgets a {@link hangNext} no request consumed. */
  readonly cancelHang: (requestKey: string) => Effect.Effect<void>
  /** The next request under this key dies before reaching the provider (a crash after the debit). */
  readonly dieNext: (requestKey: string) => Effect.Effect<void>
  /** The next `times` requests under this key find the provider unavailable. */
  readonly downFor: (requestKey: string, times: number) => Effect.Effect<void>
  /** From now on these accounts are `failed`. */
  readonly failAccounts: (recordIds: ReadonlyArray<string>) => Effect.Effect<void>
}>() {}

/** A sandbox behind the controls above. */
export const provider = (options: SandboxProvider.Options = {}): Layer.Layer<ContactProvider | ProviderControl | SandboxProvider.SandboxCalls> =>
  Layer.effectContext(Effect.gen(function*() {
    const sandbox = yield* SandboxProvider.make(options)
    const answered = yield* Ref.make<ReadonlyArray<ResearchRequest>>([])
    const reached = yield* Ref.make<ReadonlyArray<ResearchRequest>>([])
    const hangs = yield* Ref.make(new Map<string, Deferred.Deferred<void>>())
    const dies = yield* Ref.make(new Set<string>())
    const failing = yield* Ref.make(new Set<string>())
    const down = yield* Ref.make(new Map<string, number>())
    const research = (request: ResearchRequest) =>
      Effect.gen(function*() {
        const dying = yield* Ref.modify(dies, (set) => {
          const next = new Set(set)
          return [next.delete(request.requestKey), next]
        })
        if (dying) return yield* Effect.dieMessage("the process died before the provider answered")
        yield* Ref.update(reached, (all) => [...all, request])
        const unavailable = yield* Ref.modify(down, (map) => {
          const left = map.get(request.requestKey) ?? 0
          return [left > 0, new Map(map).set(request.requestKey, Math.max(0, left - 1))]
        })
        if (unavailable) return yield* new ProviderUnavailable({ provider: "test-sandbox", reason: "told to be down" })
        const hang = yield* Ref.modify(hangs, (map) => {
          const next = new Map(map)
          const found = next.get(request.requestKey)
          next.delete(request.requestKey)
          return [found, next]
        })
        if (hang !== undefined) {
          yield* Deferred.succeed(hang, undefined)
          return yield* Effect.never
        }
        const failed = yield* Ref.get(failing)
        const results = (yield* sandbox.provider.research(request)).map((result): Result =>
          failed.has(result.record_id) ? { record_id: result.record_id, outcome: "failed", reason: "told to fail it" } : result
        )
        yield* Ref.update(answered, (all) => [...all, request])
        return results
      })
    const control = ProviderControl.of({
      answered: Ref.get(answered),
      reached: Ref.get(reached),
      hangNext: (requestKey) =>
        Effect.flatMap(Deferred.make<void>(), (entered) => Effect.as(Ref.update(hangs, (map) => new Map(map).set(requestKey, entered)), entered)),
      cancelHang: (requestKey) =>
        Ref.update(hangs, (map) => {
          const next = new Map(map)
          next.delete(requestKey)
          return next
        }),
      dieNext: (requestKey) => Ref.update(dies, (set) => new Set(set).add(requestKey)),
      downFor: (requestKey, times) => Ref.update(down, (map) => new Map(map).set(requestKey, times)),
      failAccounts: (ids) => Ref.update(failing, (set) => new Set([...set, ...ids]))
    })
    return Context.make(ContactProvider, ContactProvider.of({ name: "test-sandbox", research })).pipe(
      Context.add(ProviderControl, control),
      Context.add(SandboxProvider.SandboxCalls, sandbox.calls)
    )
  }))

/** A workspace (or a test workspace of a new one) with an owner, `n` contacts, and a collection of all of them. */
export const workspaceWithContacts = (n: number, options: { readonly scopes?: ReadonlyArray<Scope>; readonly test?: boolean } = {}) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const crm = yield* Crm.Crm
    const slug = () => WorkspaceSlug.make(`unl-${Math.random().toString(36).slice(2, 10)}`)
    const parent = yield* accounts.createWorkspace({ slug: slug(), name: "unlocks" })
    const workspace: Workspace = options.test === true
      ? yield* accounts.createWorkspace({ slug: slug(), name: "unlocks test", testOf: parent })
      : parent
    const person = yield* accounts.createPerson({ displayName: "Ana Ruiz" })
    const principal = new Principal({
      workspace,
      person: Option.some(person),
      role: "owner",
      scopes: options.scopes ?? ["commercial:read", "commercial:activate"],
      credential: { id: CredentialId.make(`cred_${Math.random().toString(36).slice(2, 10)}`), kind: "api_key" }
    })
    const contactIds: Array<string> = []
    for (let i = 0; i < n; i++) {
      const outcome = yield* crm.applyContact(workspace.id, { name: `Contacto ${i}`, email: `c${i}@norte-${i}.mx` })
      if (outcome._tag !== "Created") return yield* Effect.dieMessage(`not created: ${outcome._tag}`)
      contactIds.push(outcome.contact.id)
    }
    const collection = yield* crm.createCollection(workspace.id, { name: "Norte", contactIds })
    return { principal, contactIds: [...contactIds].sort(), collectionId: collection.id }
  }).pipe(Effect.orDie)
