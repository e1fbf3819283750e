/**
 * One signed delivery POST and what became of it, and the address verification a subscription starts with.
 * Transport only: no storage and no queue. The worker that retries (`RetrySchedule`) and the subscription
 * store decide what to do with an {@link Outcome}.
 *
 * Every request goes through the {@link AddressGuard} first, at every send: the URL is resolved afresh, every
 * address checked, and the request connects to a validated address with the URL's host name as `Host` and TLS
 * server name, so a DNS answer that changed since the subscription (rebinding) is refused, not followed.
 * Redirects are never followed; at most {@link RESPONSE_BODY_CAP} bytes of an answer are read; the whole
 * exchange (resolution included) has {@link DEFAULT_TIMEOUT} unless the caller gives another, measured on
 * Effect's `Clock`.
 *
 * Headers (Standard Webhooks 1.0.0 and the MCP events profile): `content-type: application/json`,
 * `webhook-id`, `webhook-timestamp`, `webhook-signature` with one `v1` entry per current secret (two during the
 * 24 hours after a renewal), plus the caller's extras such as `x-mcp-subscription-id`.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import { constantTimeEqual } from "@service/core/Crypto"
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { AddressGuard, Rule, UrlRejected } from "@service/core/AddressGuard"
import * as GuardedHttp from "@service/core/GuardedHttp"
import { signAll } from "./WebhookSignature.js"

// -----------------------------------------------------------------------------
// Limits
// -----------------------------------------------------------------------------

/**
 * The largest body a delivery carries: 256 KiB (spec: Limits; MCP events profile).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BODY_BYTES = 256 * 1024

/**
 * How much of a receiver's answer is read: enough for a verification echo, little enough that a receiver
 * cannot make the worker hold a large body.
 *
 * @since 0.1.0
 * @category constants
 */
export const RESPONSE_BODY_CAP = 4 * 1024

/**
 * How long one exchange may take, resolution to answer (spec: 10 seconds for a delivery and for a
 * verification answer).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TIMEOUT: Duration.Duration = Duration.seconds(10)

/**
 * Options of {@link send} and {@link verifyEndpoint}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The whole exchange's deadline; {@link DEFAULT_TIMEOUT} when omitted. */
  readonly timeout?: Duration.DurationInput
}

/**
 * A body over {@link MAX_BODY_BYTES}: nothing was sent. The event cannot be delivered as it is.
 *
 * @since 0.1.0
 * @category errors
 */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  size: Schema.Number,
  limit: Schema.Number
}) {
  override get message(): string {
    return `The delivery body has ${this.size} bytes; at most ${this.limit} are sent.`
  }
}

// -----------------------------------------------------------------------------
// Delivery
// -----------------------------------------------------------------------------

/**
 * The receiver answered 2xx: the event is delivered.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const Delivered = Schema.TaggedStruct("Delivered", { status: Schema.Int, latencyMs: Schema.NonNegative })

/**
 * The receiver answered 410: the subscription is to be disabled.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const Gone = Schema.TaggedStruct("Gone", {})

/**
 * The receiver answered 413: this event is dropped, the subscription continues.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const TooLarge = Schema.TaggedStruct("TooLarge", {})

/**
 * Why a delivery is to be tried again: another status, a redirect (never followed), no answer within the
 * timeout, a connection that failed (including a host that no longer resolves) or a TLS failure.
 *
 * @since 0.1.0
 * @category models
 */
export const RetryReason = Schema.Literal("status", "redirect", "timeout", "connection", "tls")
/** @since 0.1.0 @category models */
export type RetryReason = typeof RetryReason.Type

/**
 * Try again on the schedule. `status` is the receiver's answer when there was one; `retryAfter` its
 * `Retry-After` on 429 or 503 (seconds or an HTTP date); `detail` the error code of a failed connection.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const RetryLater = Schema.TaggedStruct("RetryLater", {
  reason: RetryReason,
  status: Schema.optional(Schema.Int),
  retryAfter: Schema.optional(Schema.DurationFromSelf),
  detail: Schema.optional(Schema.String)
})

/**
 * The address guard refused the URL at this send (it resolves to an address deliveries may not reach now, or
 * the URL is not acceptable at all); nothing was sent.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const Rejected = Schema.TaggedStruct("Rejected", { rule: Rule, message: Schema.String })

/**
 * What became of one delivery POST.
 *
 * @since 0.1.0
 * @category outcomes
 */
export const Outcome = Schema.Union(Delivered, Gone, TooLarge, RetryLater, Rejected)
/** @since 0.1.0 @category outcomes */
export type Outcome = typeof Outcome.Type

/**
 * One delivery: the URL as the subscriber gave it, the message id (`webhook-id`: the ledger's event id, the same
 * on every retry), the attempt's Unix seconds (`webhook-timestamp`; Effect's `Clock` when omitted), the body
 * bytes exactly as signed, every current secret, and extra headers (`x-mcp-subscription-id`). Extras cannot
 * replace the signed headers, `content-type`, `host` or `content-length`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SendInput {
  readonly url: string
  readonly id: string
  readonly timestamp?: number
  readonly body: Uint8Array
  readonly secrets: Arr.NonEmptyReadonlyArray<Redacted.Redacted<string>>
  readonly headers?: Readonly<Record<string, string>>
}

// -----------------------------------------------------------------------------
// The exchange both operations share
// -----------------------------------------------------------------------------

type Exchange =
  | { readonly _tag: "Answered"; readonly answer: GuardedHttp.Answer; readonly latencyMs: number }
  | { readonly _tag: "Failed"; readonly failure: GuardedHttp.Failure }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Refused"; readonly error: UrlRejected }

const OWN_HEADERS = ["content-type", "webhook-id", "webhook-timestamp", "webhook-signature", "host", "content-length"]

const signedExchange = (input: SendInput, bodyCap: number, options: Options | undefined) =>
  Effect.gen(function*() {
    const guard = yield* AddressGuard
    const started = yield* Clock.currentTimeMillis
    const timestamp = input.timestamp ?? Math.floor(started / 1000)
    const extras = Object.entries(input.headers ?? {}).filter(([name]) => !OWN_HEADERS.includes(name.toLowerCase()))
    const headers = {
      ...Object.fromEntries(extras),
      "content-type": "application/json",
      "webhook-id": input.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signAll({ secrets: Arr.map(input.secrets, Redacted.value), id: input.id, timestamp, body: input.body })
    }
    const exchange: Effect.Effect<Exchange> = guard.check(input.url).pipe(
      Effect.flatMap((target) => GuardedHttp.exchange(target, { method: "POST", headers, body: input.body, bodyCap })),
      Effect.flatMap((answer) =>
        Effect.map(Clock.currentTimeMillis, (now): Exchange => ({ _tag: "Answered", answer, latencyMs: now - started }))
      ),
      Effect.catchAll((error) =>
        Effect.succeed<Exchange>(
          error instanceof UrlRejected ? { _tag: "Refused", error } : { _tag: "Failed", failure: error }
        )
      )
    )
    return yield* Effect.timeoutTo(exchange, {
      duration: options?.timeout ?? DEFAULT_TIMEOUT,
      onSuccess: (result) => result,
      onTimeout: (): Exchange => ({ _tag: "TimedOut" })
    })
  })

// `Retry-After` is delta seconds or an HTTP date (RFC 9110, 10.2.3); a date in the past means now.
const retryAfterOf = (value: string | undefined, nowMillis: number): Option.Option<Duration.Duration> => {
  if (value === undefined) return Option.none()
  const text = value.trim()
  if (/^[0-9]+$/.test(text)) return Option.some(Duration.seconds(Number(text)))
  const date = Date.parse(text)
  return Number.isNaN(date) ? Option.none() : Option.some(Duration.millis(Math.max(0, date - nowMillis)))
}

const classify = (answer: GuardedHttp.Answer, latencyMs: number, nowMillis: number): Outcome => {
  const { status } = answer
  if (status >= 200 && status < 300) return Delivered.make({ status, latencyMs })
  if (status === 410) return Gone.make({})
  if (status === 413) return TooLarge.make({})
  if (status >= 300 && status < 400) return RetryLater.make({ reason: "redirect", status })
  if (status === 429 || status === 503) {
    const retryAfter = Option.getOrUndefined(retryAfterOf(answer.headers["retry-after"], nowMillis))
    return RetryLater.make(retryAfter === undefined ? { reason: "status", status } : { reason: "status", status, retryAfter })
  }
  return RetryLater.make({ reason: "status", status })
}

/**
 * Sends one signed delivery and classifies the answer (see {@link Outcome}). A body over
 * {@link MAX_BODY_BYTES} fails with {@link PayloadTooLarge} before anything is resolved or sent. A host that
 * no longer resolves is `RetryLater` (`connection`): DNS failures are often passing; any other refusal of the
 * guard is `Rejected`.
 *
 * @since 0.1.0
 * @category delivery
 */
export const send = (input: SendInput, options?: Options): Effect.Effect<Outcome, PayloadTooLarge, AddressGuard> =>
  Effect.gen(function*() {
    if (input.body.byteLength > MAX_BODY_BYTES) {
      return yield* new PayloadTooLarge({ size: input.body.byteLength, limit: MAX_BODY_BYTES })
    }
    const exchange = yield* signedExchange(input, 0, options)
    switch (exchange._tag) {
      case "Answered":
        return classify(exchange.answer, exchange.latencyMs, yield* Clock.currentTimeMillis)
      case "Failed":
        return RetryLater.make({ reason: exchange.failure.kind, detail: exchange.failure.detail })
      case "TimedOut":
        return RetryLater.make({ reason: "timeout" })
      case "Refused":
        return exchange.error.rule === "unresolvable"
          ? RetryLater.make({ reason: "connection", detail: "unresolvable" })
          : Rejected.make({ rule: exchange.error.rule, message: exchange.error.message })
    }
  }).pipe(Effect.withSpan("WebhookPost.send", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// Address verification
// -----------------------------------------------------------------------------

/**
 * The receiver echoed the challenge in time: the address is verified.
 *
 * @since 0.1.0
 * @category verification
 */
export const Verified = Schema.TaggedStruct("Verified", {})

/**
 * The receiver answered, or could be reached, but did not echo the challenge: another status, a body that is
 * not `{"challenge": <same>}`, a failed connection or TLS handshake. `detail` says which, without secrets.
 *
 * @since 0.1.0
 * @category verification
 */
export const ChallengeFailed = Schema.TaggedStruct("ChallengeFailed", { detail: Schema.String })

/**
 * No answer within the timeout.
 *
 * @since 0.1.0
 * @category verification
 */
export const Timeout = Schema.TaggedStruct("Timeout", {})

/**
 * What became of an address verification. A refused address is the guard's own {@link UrlRejected}.
 *
 * @since 0.1.0
 * @category verification
 */
export const VerificationOutcome = Schema.Union(Verified, ChallengeFailed, Timeout, UrlRejected)
/** @since 0.1.0 @category verification */
export type VerificationOutcome = typeof VerificationOutcome.Type

/**
 * The spec's `data.reason` of the `-32015` error a failed verification answers (`events/subscribe`); none
 * when the address is verified.
 *
 * @since 0.1.0
 * @category verification
 */
export const failureReason = (
  outcome: VerificationOutcome
): Option.Option<"challenge_failed" | "timeout" | "url_rejected"> => {
  switch (outcome._tag) {
    case "Verified":
      return Option.none()
    case "ChallengeFailed":
      return Option.some("challenge_failed")
    case "Timeout":
      return Option.some("timeout")
    case "UrlRejected":
      return Option.some(outcome.reason)
  }
}

/**
 * What {@link verifyEndpoint} needs: the URL, the subscriber's secret and the subscription id (sent as
 * `x-mcp-subscription-id`).
 *
 * @since 0.1.0
 * @category verification
 */
export interface VerifyInput {
  readonly url: string
  readonly secret: Redacted.Redacted<string>
  readonly subscriptionId: string
}

const Echo = Schema.parseJson(Schema.Struct({ challenge: Schema.String }))
const decodeEcho = Schema.decodeUnknownEither(Echo)

const nonce = (): string => randomBytes(24).toString("base64url")

const judgeEcho = (answer: GuardedHttp.Answer, challenge: string): VerificationOutcome => {
  if (answer.status < 200 || answer.status >= 300) {
    return ChallengeFailed.make({ detail: `the receiver answered ${answer.status}, not 2xx` })
  }
  if (answer.truncated) {
    return ChallengeFailed.make({ detail: `the answer is longer than ${RESPONSE_BODY_CAP} bytes` })
  }
  return Either.match(decodeEcho(answer.body.toString("utf8")), {
    onLeft: () => ChallengeFailed.make({ detail: "the answer is not JSON with a challenge string" }),
    onRight: (echo) =>
      constantTimeEqual(echo.challenge, challenge)
        ? Verified.make({})
        : ChallengeFailed.make({ detail: "the answer's challenge differs from the one sent" })
  })
}

/**
 * Verifies a subscriber's address: POSTs `{"type":"verification","challenge":"<random>"}` signed with the
 * subscriber's secret, with `webhook-id` `msg_verification_<random>` and `x-mcp-subscription-id`, and requires a
 * 2xx answer within the timeout whose JSON body is `{"challenge": <the same value>}` (compared in constant time).
 * A host that does not resolve is `UrlRejected`, as is any other refusal of the guard.
 *
 * @since 0.1.0
 * @category verification
 */
export const verifyEndpoint = (
  input: VerifyInput,
  options?: Options
): Effect.Effect<VerificationOutcome, never, AddressGuard> =>
  Effect.gen(function*() {
    const challenge = nonce()
    const body = new TextEncoder().encode(JSON.stringify({ type: "verification", challenge }))
    const exchange = yield* signedExchange(
      {
        url: input.url,
        id: `msg_verification_${nonce()}`,
        body,
        secrets: [input.secret],
        headers: { "x-mcp-subscription-id": input.subscriptionId }
      },
      RESPONSE_BODY_CAP,
      options
    )
    switch (exchange._tag) {
      case "Answered":
        return judgeEcho(exchange.answer, challenge)
      case "Failed":
        return ChallengeFailed.make({ detail: `${exchange.failure.kind} failed (${exchange.failure.detail})` })
      case "TimedOut":
        return Timeout.make({})
      case "Refused":
        return exchange.error
    }
  }).pipe(Effect.withSpan("WebhookPost.verifyEndpoint", { captureStackTrace: false }))
