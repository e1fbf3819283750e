/**
 * Mounts the MCP server (streamable HTTP, official SDK) at `/mcp` inside the Effect HTTP app, serving the
 * application's operation groups as tools and its bundles' extra methods (`events/*`). The caller is
 * authenticated here with the same credentials as REST; the MCP handler receives the Principal.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type * as App from "@service/app/App"
import { Authenticator, type PresentedCredential } from "@service/core/Authenticator"
import type * as Mount from "@service/core/Mount"
import * as ApiError from "@service/http/ApiError"
import * as Authentication from "@service/http/Authentication"
import * as RequestId from "@service/http/RequestId"
import * as McpHandler from "@service/mcp/McpHandler"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as McpInstructions from "./McpInstructions.js"

/** The server name MCP clients see, on HTTP and stdio alike: one server, two transports. @since 0.1.0 @category constants */
export const serverInfo = { name: "service", version: "0.1.0" } as const

const credentialOf = (headers: Readonly<Record<string, string | undefined>>): Option.Option<PresentedCredential> => {
  // Two credentials are none: the REST API's rule (Authentication.ambiguous).
  if (Authentication.ambiguous(headers)) return Option.none()
  const apiKey = headers["x-api-key"]
  if (apiKey !== undefined && apiKey.length > 0) return Option.some({ kind: "api_key", secret: Redacted.make(apiKey), resource: "mcp" })
  const authorization = headers["authorization"]
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization)
  const token = match?.[1]
  return token === undefined ? Option.none() : Option.some({ kind: "bearer", secret: Redacted.make(token), resource: "mcp" })
}

/**
 * The handler options for an application: its groups, its bundles' methods and the agents' instructions.
 *
 * @since 0.1.0 @category options
 */
export const handlerOptions = <S, E, D, R>(app: App.Application<S, E, D, R>) => ({
  ...serverInfo,
  instructions: McpInstructions.instructions,
  groups: app.groups,
  methods: app.methods
})

/**
 * How `/mcp` is listed in OpenAPI: not a REST route, the endpoint MCP clients connect to.
 *
 * @since 0.1.0 @category documentation
 */
export const description: Mount.Description = {
  name: "mcp",
  method: "POST",
  path: "/mcp",
  summary: "MCP endpoint (streamable HTTP)",
  description:
    "Not a REST route: the Model Context Protocol endpoint (streamable HTTP, protocol 2026-07-28 and the 2025 era) that MCP clients connect to, with the same x-api-key or bearer token. Every operation with an MCP surface is a tool (`service_<namespace>_<operation>`); `events/list`, `events/subscribe` and `events/unsubscribe` are served beside them. JSON-RPC messages in, JSON-RPC answers out.",
  tag: "MCP",
  body: { maxBytes: McpHandler.defaultMaxRequestBodySize, contentTypes: ["application/json"], description: "A JSON-RPC message (or a 2025-era batch of at most 10)." },
  answers: [
    { status: 200, description: "The JSON-RPC answer." },
    {
      status: 401,
      description: "No valid credential: the same body as the REST API's, and WWW-Authenticate names the endpoint's OAuth metadata (resource_metadata).",
      schema: ApiError.Unauthorized,
      headers: { "www-authenticate": "Bearer realm=\"service\", resource_metadata=\"…/.well-known/oauth-protected-resource/mcp\", ApiKey …" }
    }
  ],
  public: false
}

/** @since 0.1.0 @category layers */
export const layer = <S, E, D, R>(app: App.Application<S, E, D, R>) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const authenticator = yield* Authenticator
      const metadata = authenticator.resourceMetadata
      const challenge = metadata === undefined ? Effect.succeed(Authentication.challenge()) : Effect.map(metadata("mcp"), (url) => Authentication.challenge("service", url))
      const mcp = yield* McpHandler.makeWebHandler(handlerOptions(app))
      yield* Effect.addFinalizer(() => Effect.promise(() => mcp.close()))
      const serve = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = yield* RequestId.get
        const credential = credentialOf(request.headers)
        const principal = Option.isNone(credential)
          ? Option.none()
          : yield* authenticator.authenticate(credential.value).pipe(Effect.option)
        if (Option.isNone(principal)) {
          // The REST API's 401, body and challenge, with this endpoint's metadata.
          return ApiError.respond(ApiError.Unauthorized, 401, new ApiError.Unauthorized({
            statusCode: 401,
            code: "UNAUTHENTICATED",
            message: "Authentication required: send a valid API key in x-api-key or a bearer token in Authorization.",
            request_id: requestId
          }), { "www-authenticate": yield* challenge })
        }
        return yield* HttpApp.fromWebHandler((webRequest) => mcp.handle(webRequest, principal.value))
      })
      yield* router.all("/mcp", RequestId.withRequestId(serve))
    })
  )
