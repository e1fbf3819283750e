/**
 * HTTP authentication: `x-api-key`, `Authorization: Bearer` or the session cookie of a signed-in person, resolved by
 * the core Authenticator port into the request's Principal. With the cookie, a request that changes something must
 * also carry the session's CSRF token in `x-csrf-token`.
 *
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Authenticator } from "@service/core/Authenticator"
import { CurrentPrincipal } from "@service/core/Principal"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { Unauthorized } from "./ApiError.js"
import * as RequestId from "./RequestId.js"

/**
 * @since 0.1.0 @category middleware
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@service/http/Authentication", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: {
    apiKey: HttpApiSecurity.apiKey({ key: "x-api-key", in: "header" }),
    bearer: HttpApiSecurity.bearer,
    // Named as over plain http; behind https the cookie is `__Host-service_session`, read below as well.
    session: HttpApiSecurity.apiKey({ key: "service_session", in: "cookie" }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "The session cookie of a person signed in at /sign-in (`__Host-service_session` behind https). Requests that change something also send the session's CSRF token (GET /session) in x-csrf-token."
      )
    )
  }
}) {}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * Whether a request presents more than one credential header (`x-api-key` and `Authorization`): refused, as a
 * credential that does not verify is, whatever the other one holds.
 *
 * @since 0.1.0 @category checks
 */
export const ambiguous = (headers: Readonly<Record<string, string | undefined>>): boolean =>
  (headers["x-api-key"] ?? "").length > 0 && (headers["authorization"] ?? "").length > 0

/**
 * Whether a request names a credential of its own (`x-api-key` or `Authorization`). Then that credential decides:
 * the session cookie a browser sends along is never a fallback for a key or token that does not verify.
 *
 * @since 0.1.0 @category checks
 */
export const explicit = (headers: Readonly<Record<string, string | undefined>>): boolean =>
  (headers["x-api-key"] ?? "").length > 0 || (headers["authorization"] ?? "").length > 0

/** The workspace slug a request's path names (`/api/v1/workspaces/<slug>/…`), if any. */
const workspaceOf = (url: string): string | undefined => {
  const match = /\/workspaces\/([^/?#]+)/.exec(url)
  return match?.[1] === undefined ? undefined : decodeURIComponent(match[1])
}

/**
 * The `WWW-Authenticate` challenge of every 401 (RFC 9110 section 11.6.1 requires one): the registered
 * `Bearer` scheme (RFC 6750) and an `ApiKey` scheme naming the header, both in one realm. Comma-joined in
 * one field value, which RFC 9110 section 5.3 makes equivalent to two header lines. It carries no
 * `error` parameter: a 401 never says why a credential was refused. See docs/decisions/0030.
 *
 * @since 0.1.0 @category constants
 */
export const challenge = (realm = "service", resourceMetadata?: string): string =>
  `Bearer realm="${realm}"${resourceMetadata === undefined ? "" : `, resource_metadata="${resourceMetadata}"`}, ApiKey realm="${realm}", header="x-api-key"`

const unauthorized = Effect.map(RequestId.get, (requestId) =>
  new Unauthorized({
    statusCode: 401,
    code: "UNAUTHENTICATED",
    message: "Authentication required: send a valid API key in x-api-key or a bearer token in Authorization.",
    request_id: requestId
  }))

/**
 * @since 0.1.0 @category layers
 */
export const layer: Layer.Layer<Authentication, never, Authenticator> = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const check = (kind: "api_key" | "bearer") => (secret: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // Two credentials are refused as one bad one: which of them would speak for the request is not the
        // server's to guess (a bad key beside a good token must not pass on the token).
        if (Redacted.value(secret).length === 0 || ambiguous(request.headers)) return yield* Effect.flatMap(unauthorized, Effect.fail)
        return yield* authenticator.authenticate({ kind, secret, resource: "api" }).pipe(
          Effect.catchTag("Unauthenticated", () => Effect.flatMap(unauthorized, Effect.fail))
        )
      })
    const session = (secret: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const value = Redacted.value(secret) !== "" ? secret : Redacted.make(request.cookies["__Host-service_session"] ?? "")
        if (Redacted.value(value) === "" || explicit(request.headers)) return yield* Effect.flatMap(unauthorized, Effect.fail)
        return yield* authenticator.authenticate({
          kind: "session",
          secret: value,
          workspace: workspaceOf(request.url),
          csrf: safeMethods.has(request.method) ? undefined : Redacted.make(request.headers["x-csrf-token"] ?? "")
        }).pipe(Effect.catchTag("Unauthenticated", () => Effect.flatMap(unauthorized, Effect.fail)))
      })
    return Authentication.of({ apiKey: check("api_key"), bearer: check("bearer"), session })
  })
)
