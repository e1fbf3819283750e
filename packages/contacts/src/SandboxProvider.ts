/**
 * A deterministic {@link ContactProvider} for tests, demos and test workspaces: the same account always gives the
 * same outcome and coordinates (derived from its `record_id`), with failures and latency set by configuration,
 * and a record of every request it worked, so tests can prove a retry never reached it twice.
 *
 * - About one account in five is `not_found` (by its id's hash); the others are `found` with
 *   `<hash>@sandbox.invalid` and a `+52 55 0100 ####` number (reserved, unreachable coordinates).
 * - `failRecordIds` are `failed`; `unavailableTimes` makes the first that many requests fail with
 *   `ProviderUnavailable`; `latency` delays each request.
 * - A request repeated with the same key answers the stored results and is not worked again.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { createHash } from "node:crypto"
import { type Account, ContactProvider, ProviderUnavailable, type ResearchRequest, type Result } from "./ContactProvider.js"

/** @since 0.1.0 @category models */
export interface Options {
  /** Accounts that are `failed` (default none). */
  readonly failRecordIds?: ReadonlyArray<string> | undefined
  /** The first `n` requests fail whole with `ProviderUnavailable` (default 0). */
  readonly unavailableTimes?: number | undefined
  /** Time each request takes (default none). */
  readonly latency?: Duration.DurationInput | undefined
}

/** What the sandbox worked: one entry per request actually researched (repeats by key are not). @since 0.1.0 @category tags */
export class SandboxCalls extends Context.Tag("@service/contacts/SandboxCalls")<SandboxCalls, {
  readonly worked: Effect.Effect<ReadonlyArray<ResearchRequest>>
}>() {}

const hashOf = (recordId: string): string => createHash("sha256").update(`sandbox:${recordId}`).digest("hex")

/**
 * The sandbox's outcome for one account: what every call for it answers.
 *
 * @since 0.1.0 @category sandbox
 */
export const outcomeOf = (account: Account, failing: ReadonlySet<string>): Result => {
  if (failing.has(account.record_id)) return { record_id: account.record_id, outcome: "failed", reason: "the sandbox was told to fail it" }
  const hash = hashOf(account.record_id)
  if (parseInt(hash.slice(0, 8), 16) % 5 === 0) return { record_id: account.record_id, outcome: "not_found" }
  const digits = String(parseInt(hash.slice(8, 16), 16) % 10_000).padStart(4, "0")
  return {
    record_id: account.record_id,
    outcome: "found",
    coordinates: { email: `${hash.slice(0, 12)}@sandbox.invalid`, phone: `+52 55 0100 ${digits}` }
  }
}

/** @since 0.1.0 @category constructors */
export const make = (options: Options = {}) =>
  Effect.gen(function*() {
    const failing = new Set(options.failRecordIds ?? [])
    const answered = yield* Ref.make(new Map<string, ReadonlyArray<Result>>())
    const worked = yield* Ref.make<ReadonlyArray<ResearchRequest>>([])
    const unavailable = yield* Ref.make(options.unavailableTimes ?? 0)
    const research = (request: ResearchRequest) =>
      Effect.gen(function*() {
        const key = `${request.workspaceId}:${request.requestKey}`
        const earlier = (yield* Ref.get(answered)).get(key)
        if (earlier !== undefined) return earlier
        if (options.latency !== undefined) yield* Effect.sleep(options.latency)
        const down = yield* Ref.modify(unavailable, (n) => [n > 0, Math.max(0, n - 1)])
        if (down) return yield* new ProviderUnavailable({ provider: "sandbox", reason: "the sandbox was told to be unavailable" })
        const results = request.accounts.map((account) => outcomeOf(account, failing))
        yield* Ref.update(answered, (map) => new Map(map).set(key, results))
        yield* Ref.update(worked, (all) => [...all, request])
        return results
      })
    return {
      provider: ContactProvider.of({ name: "sandbox", research }),
      calls: SandboxCalls.of({ worked: Ref.get(worked) })
    }
  })

/** The sandbox provider and its record of calls. @since 0.1.0 @category layers */
export const layer = (options: Options = {}): Layer.Layer<ContactProvider | SandboxCalls> =>
  Layer.effectContext(Effect.map(make(options), ({ calls, provider }) => Context.make(ContactProvider, provider).pipe(Context.add(SandboxCalls, calls))))

/**
 * How long each sandbox request takes: `SERVICE_CONTACT_SANDBOX_LATENCY`, default none. For demos of a slow
 * provider, and for tests that stop a process while its provider call is in flight.
 *
 * @since 0.1.0 @category config
 */
export const latencyConfig = Config.option(Config.duration("SERVICE_CONTACT_SANDBOX_LATENCY")).pipe(
  Config.withDescription("How long each request to the sandbox contact provider takes (default: none).")
)

/** {@link layer} with its latency from `SERVICE_CONTACT_SANDBOX_LATENCY`. @since 0.1.0 @category layers */
export const layerConfig: Layer.Layer<ContactProvider | SandboxCalls> = Layer.unwrapEffect(
  Effect.map(Effect.orDie(latencyConfig), (latency) => layer({ latency: latency._tag === "Some" ? latency.value : undefined }))
)
