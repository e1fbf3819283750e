/**
 * Liveness and readiness for a host: `GET /health` answers 200 whenever the process answers; `GET /ready`
 * answers 200 when every readiness check passes, otherwise 503 with a JSON body naming what is not ready.
 * Neither needs credentials and neither lives under `/api/v1`. The host decides what "ready" means by
 * providing {@link Readiness} (for example: database reachable, migrations applied, a publication active).
 *
 * ```ts
 * HttpLayer.layer(groups, { mounts: Health.mounts }).pipe(Layer.provide(Health.layerReadiness([...checks])))
 * ```
 *
 * {@link health} and {@link readyResponse} answer the probes for a host that is still starting (`Listener`).
 *
 * @since 0.1.0
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Mount from "@service/core/Mount"

/** @since 0.1.0 @category models */
export interface CheckResult {
  readonly name: string
  readonly ready: boolean
  /** What was found, in words an operator can act on. */
  readonly detail: string
  /** Ready, but working around a fault (the node serves correctly, more slowly): `/ready` lists it under `degraded`. */
  readonly degraded?: boolean | undefined
}

/** @since 0.1.0 @category models */
export interface Check {
  readonly name: string
  /** Succeeds with the state found; a failure or defect counts as not ready (its message becomes the detail). */
  readonly run: Effect.Effect<{ readonly ready: boolean; readonly detail: string; readonly degraded?: boolean | undefined }, unknown>
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

const ReadyBody = Schema.Struct({
  ready: Schema.Boolean,
  not_ready: Schema.Array(Schema.String).annotations({ description: "The checks that do not pass." }),
  degraded: Schema.Array(Schema.String).annotations({
    description: "Checks that pass while working around a fault (the LISTEN connection is down: caches hold nothing)."
  }),
  checks: Schema.Record({ key: Schema.String, value: Schema.Struct({ ready: Schema.Boolean, detail: Schema.String }) })
}).annotations({ identifier: "Readiness", description: "Each check with what it found." })

const readyBody = (results: ReadonlyArray<CheckResult>) => {
  const notReady = results.filter((r) => !r.ready).map((r) => r.name)
  return {
    ready: notReady.length === 0,
    not_ready: notReady,
    degraded: results.filter((r) => r.degraded === true).map((r) => r.name),
    checks: Object.fromEntries(results.map((r) => [r.name, { ready: r.ready, detail: r.detail }]))
  }
}


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
  const body = readyBody(results)
  return HttpServerResponse.unsafeJson(body, { status: body.ready ? 200 : 503, headers: noStore })
}

/**
 * `GET /health` and `GET /ready` as routes for `HttpLayer.Options.mounts`: served beside the API with no
 * credential and listed in OpenAPI.
 *
 * @since 0.1.0 @category mounts
 */
export const mounts: ReadonlyArray<Mount.Mount<Readiness>> = [
  Mount.make({
    name: "health",
    method: "GET",
    path: "/health",
    summary: "Liveness",
    description: "Answers 200 whenever the process answers. No credential.",
    tag: "Probes",
    answers: [{ status: 200, description: "The process is up.", schema: Schema.Struct({ status: Schema.Literal("ok") }) }],
    public: true,
    handle: () => Effect.succeed(Mount.json({ status: "ok" }, 200, noStore))
  }),
  Mount.make({
    name: "ready",
    method: "GET",
    path: "/ready",
    summary: "Readiness",
    description:
      "Answers 200 when every check passes (the database answers, every migration is applied, and each domain's own checks, such as an active corpus publication), otherwise 503 naming what is not ready. No credential.",
    tag: "Probes",
    answers: [
      { status: 200, description: "Ready.", schema: ReadyBody },
      { status: 503, description: "Not ready: `not_ready` names the checks that do not pass.", schema: ReadyBody }
    ],
    public: true,
    handle: () =>
      Effect.flatMap(Readiness, (readiness) =>
        Effect.map(readiness.check, (results) => {
          const body = readyBody(results)
          return Mount.json(body, body.ready ? 200 : 503, noStore)
        }))
  })
]
