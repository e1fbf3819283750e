/**
 * The OAuth routes the HTTP host mounts: the protected resource metadata of `/mcp` and of the REST API (RFC 9728,
 * public JSON), and everything the authorization server answers (its RFC 8414 metadata and OpenID discovery at the
 * root's `.well-known`, and `/oauth/*`: authorization, token, registration, revocation, device authorization, the
 * consent pages), handed to the OAuth server's Node listener with the body unread.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { limitKey } from "@service/core/ClientNetwork"
import * as Mount from "@service/core/Mount"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { escape, page, pageHeaders } from "./internal/html.js"
import * as OAuthLimits from "./internal/oauthLimits.js"
import { OAuthServer, prefix, type Resource } from "./OAuthServer.js"

const tag = "OAuth"

const ResourceMetadata = Schema.Struct({
  resource: Schema.String,
  authorization_servers: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  bearer_methods_supported: Schema.Array(Schema.String),
  resource_name: Schema.String,
  resource_documentation: Schema.String
}).annotations({ identifier: "ProtectedResourceMetadata" })

const metadataMount = (path: `/${string}`, name: string, resource: Resource) =>
  Mount.make({
    name,
    method: "GET",
    path,
    summary: `Protected resource metadata of ${resource === "mcp" ? "the MCP endpoint" : "the REST API"} (RFC 9728)`,
    description:
      "Where an OAuth client learns which authorization server issues tokens for this resource and which scopes exist. Every 401 names it in WWW-Authenticate (resource_metadata).",
    tag,
    answers: [{ status: 200, description: "The metadata.", schema: ResourceMetadata }],
    public: true,
    handle: () =>
      Effect.map(Effect.flatMap(OAuthServer, (oauth) => oauth.resourceMetadata(resource)), (metadata) =>
        Mount.json(metadata, 200, { "cache-control": "max-age=300" }))
  })

const delegated = Effect.map(Effect.flatMap(OAuthServer, (oauth) => oauth.listener), Mount.node)

const serverMetadata = (path: `/${string}`, name: string, summary: string) =>
  Mount.make({
    name,
    method: "GET",
    path,
    summary,
    description: "The authorization server's endpoints, grant types, PKCE methods (S256) and registration, for clients to discover.",
    tag,
    answers: [{ status: 200, description: "The metadata." }],
    public: true,
    handle: () => delegated
  })

// What anyone may ask before signing in is limited per client address (issue 32 rows 12 and 13, decision 0095):
// registering clients, starting device codes, and trying user codes on the device page.
const limitOf = (request: Mount.Request): OAuthLimits.Limit | undefined =>
  request.method === "POST" && request.path === `${prefix}/reg`
    ? OAuthLimits.registration
    : request.method === "POST" && request.path === `${prefix}/device/auth`
    ? OAuthLimits.deviceAuthorization
    : request.path === `${prefix}/device` && (request.method === "POST" || new URLSearchParams(request.search).has("user_code"))
    ? OAuthLimits.userCode
    : undefined

const refusal = (limit: OAuthLimits.Limit, wait: number): Mount.Response => {
  const headers = { "retry-after": String(wait), "cache-control": "no-store" }
  const said = limit.kind === "registration"
    ? "Too many client registrations from your address"
    : limit.kind === "device_authorization"
    ? "Too many sign-in codes started from your address"
    : "Too many sign-in codes tried from your address"
  return limit.kind === "user_code"
    ? Mount.text(page("Sign in the CLI", `<h1>Wait a moment</h1><p class="error" role="alert">${escape(`${said}: try again in ${wait} seconds.`)}</p>`), "text/html; charset=utf-8", 429, { ...pageHeaders, ...headers })
    : Mount.json({ error: "temporarily_unavailable", error_description: `${said}: retry in ${wait} seconds.` }, 429, headers)
}

const provider = (method: "GET" | "POST" | "DELETE" | "PUT") =>
  Mount.make({
    name: `oauth_${method.toLowerCase()}`,
    method,
    path: `${prefix}/*`,
    summary: "The OAuth authorization server",
    description: "Authorization, token, registration, revocation, device authorization and consent: see the RFC 8414 metadata.",
    tag,
    answers: [{ status: 200, description: "See the authorization server metadata." }],
    public: true,
    undocumented: true,
    handle: (request) =>
      Effect.gen(function*() {
        const limit = limitOf(request)
        if (limit !== undefined && Option.isSome(request.remoteAddress)) {
          const wait = yield* OAuthLimits.hit(limitKey(request.remoteAddress.value), limit)
          if (Option.isSome(wait)) return refusal(limit, wait.value)
        }
        return yield* delegated
      })
  })

/** What the OAuth routes need. @since 0.1.0 @category models */
export type Requirements = OAuthServer | SqlClient.SqlClient

/** @since 0.1.0 @category mounts */
export const mounts: ReadonlyArray<Mount.Mount<Requirements>> = [
  metadataMount("/.well-known/oauth-protected-resource/mcp", "oauth_resource_mcp", "mcp"),
  metadataMount("/.well-known/oauth-protected-resource/api/v1", "oauth_resource_api", "api"),
  // The bare form, for clients that look at the root first: the MCP endpoint's.
  metadataMount("/.well-known/oauth-protected-resource", "oauth_resource", "mcp"),
  serverMetadata(`/.well-known/oauth-authorization-server${prefix}`, "oauth_server_metadata", "Authorization server metadata (RFC 8414)"),
  serverMetadata(`/.well-known/openid-configuration${prefix}`, "oauth_openid_configuration", "OpenID discovery of the authorization server"),
  provider("GET"),
  provider("POST"),
  provider("PUT"),
  provider("DELETE")
]
