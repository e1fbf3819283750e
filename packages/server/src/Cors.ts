/**
 * Cross-origin access for browser-based clients (the MCP Inspector runs in a browser): when
 * `SERVICE_CORS_ORIGINS` names origins (comma-separated, e.g. `http://localhost:6274`), requests from them may call
 * `/mcp`, the REST API and the OAuth metadata, preflights are answered, and `WWW-Authenticate`, `Mcp-Session-Id`,
 * `Mcp-Protocol-Version` and `x-request-id` are readable by the page. Unset, no origin is allowed (the default: a
 * same-origin page and every non-browser client need nothing). Credentials (cookies) are never sent cross-origin: a
 * browser client authenticates with a bearer token. The OAuth server's own endpoints (token, registration,
 * revocation) answer CORS themselves for the same origins and for each public client's redirect origins.
 *
 * @since 0.1.0
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { corsOrigins } from "@service/core/PublicAddress"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.map(Effect.orDie(corsOrigins), (allowed) =>
    allowed.length === 0
      ? Layer.empty
      : HttpApiBuilder.middlewareCors({
        allowedOrigins: allowed,
        allowedMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
        allowedHeaders: ["authorization", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id", "x-api-key"],
        exposedHeaders: ["www-authenticate", "mcp-session-id", "mcp-protocol-version", "x-request-id", "retry-after"],
        maxAge: 600
      }))
)
