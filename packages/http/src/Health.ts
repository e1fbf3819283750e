/**
 * Liveness and readiness for a host: `GET /health` answers 200 whenever the process answers; `GET /ready`
 * answers 200 when every readiness check passes, otherwise 503 with a JSON body naming what is not ready.
 * Neither needs credentials and neither lives under `/api/v1`. The host decides what "ready" means by
 * providing {@link Readiness} (for example: database reachable, migrations applied, a publication active).
 *
 * ```ts
 * HttpApiBuilder.serve().pipe(Layer.provide(Health.layer), Layer.provide(Health.layerReadiness([...checks])), ...)
 * ```
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @since 0.1.0 @category models */
export interface CheckResult {
  readonly name: string
  readonly ready: boolean
  /** What was found, in words an operator can act on. */
  readonly detail: string
}

/** @since 0.1.0 @category models */
export interface Check {
  readonly name: string
  /** Succeeds with the state found; a failure or defect counts as not ready (its message becomes the detail). */
  readonly run: Effect.Effect<{ readonly ready: boolean; readonly detail: string }, unknown>
}

/**
 * What `/ready` reports, provided by the host.
 *
 * @since 0.1.0 @category tags
 */
export class Readiness extends Context.Tag("@service/http/Readiness")<
  Readiness,
  { readonly check: Effect.Effect<ReadonlyArray<CheckResult>> }
>() {}

/** A probe must answer even when a dependency hangs: a check that takes longer is reported as not ready. */
const checkTimeout = Duration.seconds(2)

const runCheck = (check: Check): Effect.Effect<CheckResult> =>
  check.run.pipe(
    Effect.timeoutFail({ duration: checkTimeout, onTimeout: () => `no answer within ${Duration.format(checkTimeout)}` }),
    Effect.map((result) => ({ name: check.name, ...result })),
    Effect.catchAllCause((cause) =>
      Effect.succeed({ name: check.name, ready: false, detail: describe(Cause.squash(cause)) })
    )
  )

const describe = (error: unknown): string =>
  typeof error === "string" ? error : error instanceof Error ? error.message : String(error)

/**
 * Readiness from a list of checks, run concurrently on every probe.
 *
 * @since 0.1.0 @category constructors
 */
export const makeReadiness = (checks: ReadonlyArray<Check>): Context.Tag.Service<Readiness> => ({
  check: Effect.forEach(checks, runCheck, { concurrency: "unbounded" })
})

/** @since 0.1.0 @category layers */
export const layerReadiness = (checks: ReadonlyArray<Check>): Layer.Layer<Readiness> =>
  Layer.succeed(Readiness, makeReadiness(checks))

const noStore = { "cache-control": "no-store" }

/**
 * The `/health` answer: the process is up.
 *
 * @since 0.1.0 @category handlers
 */
export const health: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.sync(() =>
  HttpServerResponse.unsafeJson({ status: "ok" }, { headers: noStore })
)

/**
 * The `/ready` answer for a set of check results: 200 when all pass, else 503 naming the ones that do not.
 *
 * @since 0.1.0 @category handlers
 */
export const readyResponse = (results: ReadonlyArray<CheckResult>): HttpServerResponse.HttpServerResponse => {
  const notReady = results.filter((r) => !r.ready).map((r) => r.name)
  return HttpServerResponse.unsafeJson(
    {
      ready: notReady.length === 0,
      not_ready: notReady,
      checks: Object.fromEntries(results.map((r) => [r.name, { ready: r.ready, detail: r.detail }]))
    },
    { status: notReady.length === 0 ? 200 : 503, headers: noStore }
  )
}

/**
 * The `/ready` handler over the host's {@link Readiness}.
 *
 * @since 0.1.0 @category handlers
 */
export const ready: Effect.Effect<HttpServerResponse.HttpServerResponse, never, Readiness> = Effect.flatMap(
  Readiness,
  (readiness) => Effect.map(readiness.check, readyResponse)
)

/**
 * Mounts `GET /health` and `GET /ready` on the `HttpApiBuilder` router, beside the API (no authentication).
 *
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<never, never, Readiness> = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    yield* router.get("/health", health)
    yield* router.get("/ready", Effect.provideService(ready, Readiness, readiness))
  })
)
