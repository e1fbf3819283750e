/**
 * Mounts the MCP server (streamable HTTP, official SDK) at /mcp inside the Effect HTTP app. The caller is
 * authenticated here with the same credentials as REST; the MCP handler receives the Principal.
 *
 * @since 0.1.0
 */
import * as App from "@service/app/App"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Authenticator, type PresentedCredential } from "@service/core/Authenticator"
import * as RequestId from "@service/http/RequestId"
import * as McpHandler from "@service/mcp/McpHandler"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as EventMethods from "./EventMethods.js"

const credentialOf = (headers: Readonly<Record<string, string | undefined>>): Option.Option<PresentedCredential> => {
  const apiKey = headers["x-api-key"]
  if (apiKey !== undefined && apiKey.length > 0) return Option.some({ kind: "api_key", secret: Redacted.make(apiKey) })
  const authorization = headers["authorization"]
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization)
  const token = match?.[1]
  return token === undefined ? Option.none() : Option.some({ kind: "bearer", secret: Redacted.make(token) })
}

/** @since 0.1.0 @category layers */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const mcp = yield* McpHandler.makeWebHandler({
      name: "service",
      version: "0.1.0",
      groups: App.groups,
      methods: EventMethods.methods,
      events: true
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => mcp.close()))
    const app = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = yield* RequestId.get
      const credential = credentialOf(request.headers)
      const principal = Option.isNone(credential)
        ? Option.none()
        : yield* authenticator.authenticate(credential.value).pipe(Effect.option)
      if (Option.isNone(principal)) {
        return HttpServerResponse.unsafeJson(
          {
            code: "UNAUTHENTICATED",
            message: "Authentication required: send a valid API key in x-api-key or a bearer token in Authorization.",
            request_id: requestId
          },
          { status: 401, headers: { "www-authenticate": "Bearer" } }
        )
      }
      return yield* HttpApp.fromWebHandler((webRequest) => mcp.handle(webRequest, principal.value))
    })
    yield* router.all("/mcp", RequestId.withRequestId(app))
  })
)
