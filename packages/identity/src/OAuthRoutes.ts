/**
 * The OAuth routes the HTTP host mounts: the protected resource metadata of `/mcp` and of the REST API (RFC 9728,
 * public JSON), and everything the authorization server answers (its RFC 8414 metadata and OpenID discovery at the
 * root's `.well-known`, and `/oauth/*`: authorization, token, registration, revocation, device authorization, the
 * consent pages), handed to the OAuth server's Node listener with the body unread.
 *
 * @since 0.1.0
 */
import * as Mount from "@service/core/Mount"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
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
    handle: () => delegated
  })

/** What the OAuth routes need. @since 0.1.0 @category models */
export type Requirements = OAuthServer

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
