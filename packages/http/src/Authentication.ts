/**
 * HTTP authentication: `x-api-key` or `Authorization: Bearer`, resolved by the core Authenticator port into
 * the request's Principal.
 *
 * @since 0.1.0
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Authenticator } from "@service/core/Authenticator"
import { CurrentPrincipal } from "@service/core/Principal"
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
    bearer: HttpApiSecurity.bearer
  }
}) {}

/**
 * The `WWW-Authenticate` challenge of every 401 (RFC 9110 section 11.6.1 requires one): the registered
 * `Bearer` scheme (RFC 6750) and an `ApiKey` scheme naming the header, both in one realm. Comma-joined in
 * one field value, which RFC 9110 section 5.3 makes equivalent to two header lines. It carries no
 * `error` parameter: a 401 never says why a credential was refused. See docs/decisions/0030.
 *
 * @since 0.1.0 @category constants
 */
export const challenge = (realm = "service"): string => `Bearer realm="${realm}", ApiKey realm="${realm}", header="x-api-key"`

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
      Redacted.value(secret).length === 0
        ? Effect.flatMap(unauthorized, Effect.fail)
        : authenticator.authenticate({ kind, secret }).pipe(
          Effect.catchTag("Unauthenticated", () => Effect.flatMap(unauthorized, Effect.fail))
        )
    return Authentication.of({ apiKey: check("api_key"), bearer: check("bearer") })
  })
)
