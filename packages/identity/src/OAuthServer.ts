/**
 * The OAuth 2.1 authorization server for MCP clients and the CLI, on panva's `oidc-provider` (decision 0068),
 * following the MCP authorization specification:
 *
 * - issuer `<base>/oauth`; its metadata (RFC 8414) at `/.well-known/oauth-authorization-server/oauth` and OpenID
 *   discovery at `/.well-known/openid-configuration/oauth` (and under `/oauth/.well-known/…`);
 * - two protected resources, each with its metadata (RFC 9728): `<base>/mcp` and `<base>/api/v1`;
 * - dynamic client registration (RFC 7591) and Client ID Metadata Documents; authorization code with PKCE S256 only;
 *   the `resource` parameter (RFC 8707) binds every token to one of the two; opaque access tokens (an hour) that
 *   every node looks up in the database, so revocation (RFC 7009) is at once; refresh tokens rotated on every use,
 *   a reused one revoking the whole grant; the device authorization grant (RFC 8628) for the CLI;
 * - sign-in is the person's session (`/sign-in`), and the consent page is ours: the workspace the tokens act in and
 *   each requested scope in words, `commercial:activate` never pre-checked and never granted unless ticked.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as CredentialCache from "@service/core/CredentialCache"
import { Crypto } from "@service/core/Crypto"
import { PersonId, WorkspaceId } from "@service/core/Ids"
import { AddressGuard } from "@service/core/AddressGuard"
import * as GuardedHttp from "@service/core/GuardedHttp"
import { corsOrigins, PublicAddress } from "@service/core/PublicAddress"
import { Scope, scopeDescriptions } from "@service/core/Principal"
import * as Spending from "@service/core/Spending"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import { createECDH, createHash } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Configuration } from "oidc-provider"
import { cookies, escape, page, pageHeaders } from "./internal/html.js"
import * as OAuthLimits from "./internal/oauthLimits.js"
import * as OAuthStore from "./internal/oauthStore.js"
import { People } from "./People.js"
import { Sessions } from "./Sessions.js"
import { sessionSecret } from "./SignInPages.js"

/** Where the OAuth server lives under the public address. @since 0.1.0 @category constants */
export const prefix = "/oauth"

/** The resources a token can be bound to: the MCP endpoint and the REST API. @since 0.1.0 @category models */
export type Resource = "mcp" | "api"

const resourcePaths: { readonly [R in Resource]: string } = { mcp: "/mcp", api: "/api/v1" }

/** The CLI's own client (a public client of the device flow). @since 0.1.0 @category constants */
export const cliClientId = "service-cli"

/** What an access token grants. @since 0.1.0 @category models */
export interface TokenGrant {
  readonly grantId: string
  readonly clientId: string
  readonly personId: PersonId
  readonly workspaceId: WorkspaceId
  readonly scopes: ReadonlyArray<Scope>
}

/** A Node request listener. @since 0.1.0 @category models */
export type Listener = (request: IncomingMessage, response: ServerResponse) => Promise<void>

/**
 * @since 0.1.0 @category tags
 */
export class OAuthServer extends Context.Tag("@service/identity/OAuthServer")<
  OAuthServer,
  {
    /** Serves the issuer's endpoints, its metadata and the consent pages (built on first use). */
    readonly listener: Effect.Effect<Listener>
    /** The live grant an access token carries for `resource`; none when unknown, expired, revoked or for the other resource. */
    readonly accessToken: (token: Redacted.Redacted<string>, resource: Resource) => Effect.Effect<Option.Option<TokenGrant>>
    /** The protected resource metadata (RFC 9728) of a resource. */
    readonly resourceMetadata: (resource: Resource) => Effect.Effect<Readonly<Record<string, unknown>>>
    /** Where a resource's metadata is, for the `WWW-Authenticate` challenge. */
    readonly resourceMetadataUrl: (resource: Resource) => Effect.Effect<string>
    /** Revokes every grant a person gave in a workspace (a member removed); how many. */
    readonly revokeGrantsOf: (personId: PersonId, workspaceId: WorkspaceId) => Effect.Effect<number>
  }
>() {}

const AccessRow = Schema.Struct({
  payload: Schema.Struct({
    aud: Schema.optional(Schema.Union(Schema.String, Schema.Array(Schema.String))),
    scope: Schema.optional(Schema.String),
    clientId: Schema.optional(Schema.String),
    grantId: Schema.optional(Schema.String)
  }),
  person_id: PersonId,
  workspace_id: WorkspaceId,
  expires_at: Schema.NullOr(Schema.DateFromSelf)
})

const isScope = Schema.is(Scope)

/** The scopes a consent page offers, in the order a person reads them: reads first, spending last. */
const ordered = (scopes: ReadonlyArray<string>): ReadonlyArray<Scope> =>
  Scope.literals.filter((scope) => scopes.includes(scope))

// An EC P-256 key derived from the deployment's fingerprint key: the same on every node and every start, so ID tokens
// (only when a client asks for `openid`) verify anywhere.
const signingKey = (seed: Buffer) => {
  const ecdh = createECDH("prime256v1")
  ecdh.setPrivateKey(seed)
  const point = ecdh.getPublicKey()
  return {
    kty: "EC",
    crv: "P-256",
    d: seed.toString("base64url"),
    x: point.subarray(1, 33).toString("base64url"),
    y: point.subarray(33, 65).toString("base64url"),
    kid: createHash("sha256").update(point).digest("base64url").slice(0, 16),
    alg: "ES256",
    use: "sig"
  }
}

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of request) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
    size += buffer.length
    if (size > 16 * 1024) throw new Error("body too large")
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString("utf8")
}

const send = (response: ServerResponse, status: number, contentType: string, body: string, headers: Readonly<Record<string, string>> = {}) => {
  response.writeHead(status, { "content-type": contentType, ...headers })
  response.end(body)
}

// No `form-action` here: browsers apply it to the redirects after a submit too, and the consent form's answer ends
// at the client's redirect URI, on another origin.
const consentHeaders = {
  ...pageHeaders,
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
}

const sendPage = (response: ServerResponse, status: number, title: string, body: string) =>
  send(response, status, "text/html; charset=utf-8", page(title, body), consentHeaders)

// A client metadata document or a JWKS is a few kilobytes; the provider's own limits are tighter still.
const loopbackHosts = new Set(["127.0.0.1", "[::1]", "localhost"])

/**
 * What is wrong with a redirect URI, by OAuth 2.1 (decision 0095): https, or http only on a loopback address (a
 * native client's local listener); no userinfo, no wildcard, no fragment.
 *
 * @since 0.1.0 @category validation
 */
export const redirectUriProblem = (uri: string): string | undefined => {
  const parsed = URL.parse(uri)
  if (parsed === null) return `${uri} is not a URI`
  if (uri.includes("*")) return "a wildcard (*) is not a redirect URI"
  if (parsed.username !== "" || parsed.password !== "") return "a redirect URI carries no user name or password"
  if (parsed.hash !== "" || uri.includes("#")) return "a redirect URI has no fragment"
  if (parsed.protocol === "https:") return undefined
  if (parsed.protocol === "http:") return loopbackHosts.has(parsed.hostname) ? undefined : "http is only for loopback addresses (127.0.0.1, [::1], localhost); use https"
  return "a redirect URI is https, or http on a loopback address"
}

const FETCHED_BODY_CAP = 64 * 1024
const FETCH_TIMEOUT = "5 seconds"

/**
 * @since 0.1.0 @category constructors
 */
export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const sessions = yield* Sessions
  const people = yield* People
  const publicAddress = yield* PublicAddress
  const crypto = yield* Crypto
  const guard = yield* AddressGuard
  const runtime = yield* Effect.runtime<SqlClient.SqlClient>()
  const run = Runtime.runPromise(runtime)

  const urls = Effect.map(publicAddress.get, (address) => ({
    base: address.base,
    issuer: `${address.base}${prefix}`,
    resource: (resource: Resource) => `${address.base}${resourcePaths[resource]}`,
    metadata: (resource: Resource) => `${address.base}/.well-known/oauth-protected-resource${resourcePaths[resource]}`
  }))

  const allowedOrigins = new Set(yield* Effect.orDie(corsOrigins))
  const cookieKey = yield* crypto.fingerprint("oauth", "cookie-keys-v1")
  const seed = Buffer.from(`${yield* crypto.fingerprint("oauth", "signing-key-v1a")}${yield* crypto.fingerprint("oauth", "signing-key-v1b")}`, "hex")

  const recordGrant = (grantId: string, personId: string, workspaceId: string, clientId: string, scopes: ReadonlyArray<string>) =>
    sql`INSERT INTO identity.oauth_grants (grant_id, person_id, workspace_id, client_id, scopes)
        VALUES (${grantId}, ${personId}, ${workspaceId}, ${clientId}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(scopes)}::jsonb)))
        ON CONFLICT (grant_id) DO UPDATE SET workspace_id = EXCLUDED.workspace_id, scopes = EXCLUDED.scopes`.pipe(Effect.asVoid, Effect.orDie)

  const workspaceOfGrant = (grantId: string) =>
    sql`SELECT workspace_id FROM identity.oauth_grants WHERE grant_id = ${grantId} AND revoked_at IS NULL`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ workspace_id: Schema.String })))),
      Effect.map((rows) => Option.fromNullable(rows[0]?.workspace_id)),
      Effect.orDie
    )

  const build = Effect.gen(function*() {
    // Loaded on the first OAuth request, not at start: the library announces at import that it prefers Node 22, and
    // the CLI and worker processes, which never serve OAuth, stay quiet.
    const { default: Provider, errors } = yield* Effect.promise(() => import("oidc-provider"))
    const where = yield* urls
    const resources = new Map((["mcp", "api"] as const).map((resource) => [where.resource(resource), resource]))
    const configuration: Configuration = {
      adapter: OAuthStore.make(runtime, errors),
      // Every address the provider fetches (a client_id metadata document, a client's JWKS or logout URI) is chosen
      // by whoever sends the request, before any sign-in: it goes through the same guard as webhook deliveries, so
      // nothing internal is ever connected to (decision 0089).
      fetch: GuardedHttp.fetchThrough(guard, { bodyCap: FETCHED_BODY_CAP, timeout: FETCH_TIMEOUT }),
      clients: [{
        client_id: cliClientId,
        client_name: "service CLI",
        token_endpoint_auth_method: "none",
        grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
        response_types: [],
        redirect_uris: []
      }],
      clientDefaults: {
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        id_token_signed_response_alg: "ES256"
      },
      // A client's registered `scope` would cap what it can ever ask for (the 1.x SDK registers the scope of its
      // first request); what a client gets is decided on the consent page, per authorization.
      // The validator runs for every client (registered, or read from a Client ID Metadata Document), so the redirect
      // URI rules are checked there too (decision 0095).
      extraClientMetadata: {
        properties: ["scope"],
        validator: (_ctx, key, _value, metadata) => {
          if (key !== "scope") return
          delete metadata["scope"]
          const uris = metadata["redirect_uris"]
          for (const uri of Array.isArray(uris) ? uris : []) {
            const wrong = redirectUriProblem(String(uri))
            if (wrong !== undefined) throw new errors.InvalidRedirectUri(`redirect_uris: ${wrong}`)
          }
        }
      },
      responseTypes: ["code"],
      pkce: { required: () => true },
      // Browser clients: the configured origins, and a public client's own redirect origins.
      clientBasedCORS: (_ctx, origin, client) =>
        origin !== "null" &&
        (allowedOrigins.has(origin) || (client.clientAuthMethod === "none" && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin))),
      scopes: ["openid", "offline_access", ...Scope.literals],
      claims: { openid: ["sub"] },
      jwks: { keys: [signingKey(seed)] },
      cookies: { keys: [cookieKey], long: { sameSite: "lax" }, short: { sameSite: "lax" } },
      findAccount: async (_ctx, sub) => {
        const found = await run(people.find(PersonId.make(sub)))
        return Option.isNone(found) ? undefined : { accountId: sub, claims: () => ({ sub }) }
      },
      interactions: { url: (_ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true, initialAccessToken: false },
        revocation: {
          enabled: true,
          allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId
        },
        introspection: { enabled: false },
        deviceFlow: {
          enabled: true,
          charset: "base-20",
          mask: "****-****",
          userCodeInputSource: (ctx, form, _out, err) => {
            ctx.type = "html"
            ctx.body = page("Sign in the CLI", `<h1>Sign in the CLI</h1>
${err === undefined ? "" : `<p class="error" role="alert">That code is not valid: check it and try again.</p>`}
<p>Enter the code the <code>service login</code> command shows.</p>
${form}`)
          },
          userCodeConfirmSource: (ctx, form, client, _deviceInfo, userCode) => {
            ctx.type = "html"
            ctx.body = page("Sign in the CLI", `<h1>Sign in the CLI</h1>
<p>Is this the code <code>${escape(client.clientName ?? client.clientId)}</code> shows? <strong>${escape(userCode)}</strong></p>
${form}<button type="submit" form="op.deviceConfirmForm">Continue</button>
<button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Cancel</button>`)
          },
          successSource: (ctx) => {
            ctx.type = "html"
            ctx.body = page("Signed in", `<h1>Signed in</h1><p>You may close this window and go back to the command line.</p>`)
          }
        },
        userinfo: { enabled: false },
        clientIdMetadataDocument: {
          enabled: true,
          ack: "draft-02",
          allowFetch: (_ctx, clientId) => new URL(clientId).protocol === "https:"
        },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx, _client, oneOf) => oneOf ?? where.resource("mcp"),
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => {
            if (!resources.has(indicator)) throw new errors.InvalidTarget()
            return { scope: Scope.literals.join(" "), audience: indicator, accessTokenFormat: "opaque", accessTokenTTL: 60 * 60 }
          }
        }
      },
      // The CLI's client is shared by every copy of `service login`: a grant remembered for it would let anyone's
      // device code ride on the person's earlier consent. It asks every time; other clients keep theirs.
      loadExistingGrant: async (ctx) => {
        const decided = ctx.oidc.result?.["consent"]
        const fresh = typeof decided === "object" && decided !== null && "grantId" in decided && typeof decided.grantId === "string"
          ? decided.grantId
          : undefined
        if (fresh !== undefined) return ctx.oidc.provider.Grant.find(fresh)
        const clientId = ctx.oidc.client?.clientId
        if (clientId === undefined || clientId === cliClientId) return undefined
        const remembered = ctx.oidc.session?.grantIdFor(clientId)
        return remembered === undefined ? undefined : ctx.oidc.provider.Grant.find(remembered)
      },
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
      expiresWithSession: () => false,
      // Rotation consumes the presented refresh token before the provider resolves the `resource` asked for: a refresh
      // naming a resource the token was not granted for failed with invalid_target after burning the token, and the
      // client's next, correct refresh then revoked the whole grant as a reuse (issue 32 row 11). The resource is
      // checked here first, before anything is consumed.
      rotateRefreshToken: (ctx) => {
        const asked = ctx.oidc.params?.["resource"]
        const token = ctx.oidc.entities.RefreshToken
        if (typeof asked === "string" && token !== undefined && !token.resourceIndicators.has(asked)) {
          throw new errors.InvalidTarget()
        }
        return true
      },
      extraTokenClaims: async (_ctx, token) => {
        const grantId = "grantId" in token && typeof token.grantId === "string" ? token.grantId : undefined
        if (grantId === undefined) return undefined
        const workspace = await run(workspaceOfGrant(grantId))
        return Option.match(workspace, { onNone: () => undefined, onSome: (workspaceId) => ({ workspace_id: workspaceId }) })
      },
      ttl: {
        AccessToken: 60 * 60,
        AuthorizationCode: 60,
        DeviceCode: 10 * 60,
        Interaction: 60 * 60,
        Session: 14 * 24 * 60 * 60,
        Grant: 30 * 24 * 60 * 60,
        IdToken: 60 * 60,
        RefreshToken: 30 * 24 * 60 * 60
      },
      conformIdTokenClaims: true,
      renderError: (ctx, out) => {
        ctx.type = "html"
        ctx.body = page("Sign-in error", `<h1>That did not work</h1><p class="error">${escape(String(out["error_description"] ?? out["error"] ?? "error"))}</p>`)
      }
    }
    const provider = new Provider(where.issuer, configuration)
    provider.proxy = where.base.startsWith("https://")
    // The provider's own pages (the device code and confirmation pages, error pages, the pages that submit a form
    // onwards by script) refuse to be framed, as ours do. Only framing is added: such a page may carry the
    // provider's own policy (a script nonce), which is kept.
    provider.use(async (ctx, next) => {
      await next()
      if (!/text\/html/.test(String(ctx.response.get("content-type")))) return
      const policy = String(ctx.response.get("content-security-policy"))
      ctx.set("content-security-policy", policy === "" ? "frame-ancestors 'none'" : `${policy}; frame-ancestors 'none'`)
      ctx.set("x-frame-options", "DENY")
    })
    return { provider, callback: provider.callback(), where, errors }
  })

  const built = yield* Effect.cached(build)

  const toProvider = (oauth: Effect.Effect.Success<typeof build>, request: IncomingMessage, response: ServerResponse, path: string) => {
    // oidc-provider routes are relative to its mount: it reads the prefix from `baseUrl` (express style), which the
    // RFC 8414 path-insertion route would otherwise lose.
    Object.assign(request, { originalUrl: request.url, baseUrl: prefix })
    request.url = path
    return oauth.callback(request, response)
  }

  // Spending is a role (decision 0092): the box is offered only where the person may give it, and says where.
  const spendingBox = (workspaces: ReadonlyArray<{ readonly slug: string; readonly spends: boolean }>) => {
    const where = workspaces.filter((w) => w.spends).map((w) => w.slug)
    return where.length === 0
      ? { disabled: true, note: " Only a workspace's owners and admins give it." }
      : where.length === workspaces.length
      ? { disabled: false, note: "" }
      : { disabled: false, note: ` You may give it in ${where.join(", ")} only.` }
  }

  const consentPage = (uid: string, clientName: string, redirectHost: string | undefined, workspaces: ReadonlyArray<{ readonly slug: string; readonly name: string; readonly role: string; readonly spends: boolean }>, scopes: ReadonlyArray<Scope>, csrf: string, notice?: string) => {
    const spending = spendingBox(workspaces)
    const box = (scope: Scope) =>
      scope === Spending.spendingScope
        ? `<label><input type="checkbox" name="scope" value="${escape(scope)}"${spending.disabled ? " disabled" : ""}> <code>${escape(scope)}</code>: ${escape(scopeDescriptions[scope])}${escape(spending.note)}</label>`
        : `<label><input type="checkbox" name="scope" value="${escape(scope)}" checked> <code>${escape(scope)}</code>: ${escape(scopeDescriptions[scope])}</label>`
    return `<h1>Allow ${escape(clientName)}?</h1>
${notice === undefined ? "" : `<p class="error" role="alert">${escape(notice)}</p>`}
<p>${escape(clientName)} asks to act for you. Choose the workspace it acts in and what it may do there.</p>
${redirectHost === undefined ? "" : `<p class="redirect">If you allow it, you go back to <strong>${escape(redirectHost)}</strong> with the authorization.</p>`}
<form method="post" action="${prefix}/interaction/${escape(uid)}/consent">
<input type="hidden" name="csrf_token" value="${escape(csrf)}">
<label for="workspace">Workspace</label>
<select id="workspace" name="workspace">${workspaces.map((w) => `<option value="${escape(w.slug)}">${escape(w.name)} (${escape(w.slug)}, ${escape(w.role)})</option>`).join("")}</select>
<fieldset><legend>It may</legend>
${scopes.map(box).join("\n")}
</fieldset>
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>
<p class="muted">You can revoke it later: sign out of the client, or ask an owner to remove its access.</p>`
  }

  const interaction = async (oauth: Effect.Effect.Success<typeof build>, request: IncomingMessage, response: ServerResponse, path: string) => {
    const [uid, action] = path.slice(`${prefix}/interaction/`.length).split("/")
    const details = await oauth.provider.interactionDetails(request, response)
    if (details.uid !== uid) return sendPage(response, 400, "Sign-in error", `<h1>That link is stale</h1><p>Start again from your client.</p>`)
    const secret = sessionSecret({ headers: { cookie: request.headers.cookie } })
    const live = Option.isNone(secret) ? Option.none() : await run(sessions.open(secret.value))
    if (Option.isNone(secret) || Option.isNone(live)) {
      // Sign in first, then come back here.
      response.writeHead(303, { location: `/sign-in?return_to=${encodeURIComponent(`${prefix}/interaction/${details.uid}`)}` })
      response.end()
      return
    }
    const personId = live.value.personId
    if (details.prompt.name === "login") {
      return oauth.provider.interactionFinished(request, response, { login: { accountId: personId } }, { mergeWithLastSubmission: false })
    }
    if (details.prompt.name !== "consent") return sendPage(response, 400, "Sign-in error", `<h1>Unexpected step</h1>`)
    // The browser's session must be the person the authorization is for.
    if (details.session?.accountId !== personId) {
      return oauth.provider.interactionFinished(request, response, { login: { accountId: personId } }, { mergeWithLastSubmission: false })
    }
    const clientId = String(details.params["client_id"] ?? "")
    const client = await oauth.provider.Client.find(clientId)
    const clientName = client?.clientName ?? clientId
    // Where the code goes, so the person sees it before allowing (a registered name proves nothing).
    const redirectUri = details.params["redirect_uri"]
    const redirectHost = typeof redirectUri === "string" ? URL.parse(redirectUri)?.host : undefined
    const missing = details.prompt.details["missingResourceScopes"]
    const requested = new Map<string, ReadonlyArray<Scope>>()
    if (typeof missing === "object" && missing !== null) {
      for (const [resource, scopes] of Object.entries(missing)) {
        requested.set(resource, ordered(Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === "string") : []))
      }
    }
    // A client that names no scope gets market_data:read.
    const offered = ordered([...new Set([...requested.values()].flat())])
    const shown = offered.length === 0 ? ordered(["market_data:read"]) : offered
    const memberships = await run(people.memberships(personId))
    const workspaces = memberships.map((m) => ({ slug: m.workspace.slug, name: m.workspace.name, role: m.role, id: m.workspace.id, spends: m.spends }))
    const csrf = sessions.csrfOf(secret.value)
    if (request.method === "GET" || action !== "consent") {
      if (workspaces.length === 0) return sendPage(response, 403, "No workspace", `<h1>No workspace</h1><p>You are not a member of any workspace yet.</p>`)
      return sendPage(response, 200, "Allow access", consentPage(details.uid, clientName, redirectHost, workspaces, shown, csrf))
    }
    const form = new URLSearchParams(await readBody(request))
    if (!sessions.csrfMatches(secret.value, form.get("csrf_token") ?? "")) {
      return sendPage(response, 403, "Allow access", consentPage(details.uid, clientName, redirectHost, workspaces, shown, csrf, "The form expired: try again."))
    }
    if (form.get("decision") !== "allow") {
      return oauth.provider.interactionFinished(request, response, { error: "access_denied", error_description: "The person denied access." }, { mergeWithLastSubmission: false })
    }
    const workspace = workspaces.find((w) => w.slug === form.get("workspace"))
    if (workspace === undefined) {
      return sendPage(response, 403, "Allow access", consentPage(details.uid, clientName, redirectHost, workspaces, shown, csrf, "Choose one of your workspaces."))
    }
    const ticked = new Set(form.getAll("scope").filter(isScope))
    // A client the person allowed before asks only for what it does not hold yet; leaving that unticked keeps what it
    // holds (RFC 6749 3.3: fewer scopes than asked, and the token says which), instead of denying everything
    // (issue 32 row 16). The CLI's client never has one (loadExistingGrant).
    const existing = typeof details.grantId === "string" ? await oauth.provider.Grant.find(details.grantId) : undefined
    if (ticked.has(Spending.spendingScope) && !workspace.spends) {
      return sendPage(response, 403, "Allow access", consentPage(details.uid, clientName, redirectHost, workspaces, shown, csrf, `In ${workspace.slug} only owners and admins give commercial:activate: leave it unticked, or choose a workspace where you may.`))
    }
    const grant = existing ?? new oauth.provider.Grant({ accountId: personId, clientId })
    const oidcScopes = details.prompt.details["missingOIDCScope"]
    if (Array.isArray(oidcScopes)) grant.addOIDCScope(oidcScopes.filter((s): s is string => typeof s === "string").join(" "))
    const granted = new Set<string>()
    const resourcesAsked = requested.size === 0 ? [oauth.where.resource("mcp")] : [...requested.keys()]
    for (const resource of resourcesAsked) {
      const asked = requested.get(resource) ?? shown
      const yes = asked.filter((scope) => ticked.has(scope))
      const no = asked.filter((scope) => !ticked.has(scope))
      if (yes.length > 0) grant.addResourceScope(resource, yes.join(" "))
      if (no.length > 0) grant.rejectResourceScope(resource, no.join(" "))
      for (const scope of grant.getResourceScope(resource).split(" ").filter(isScope)) granted.add(scope)
    }
    if (granted.size === 0) {
      return oauth.provider.interactionFinished(request, response, { error: "access_denied", error_description: "No scope was granted." }, { mergeWithLastSubmission: false })
    }
    const grantId = await grant.save()
    await run(recordGrant(grantId, personId, workspace.id, clientId, [...granted]))
    return oauth.provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true })
  }

  const listener = Effect.map(built, (oauth): Listener => async (request, response) => {
    const url = new URL(request.url ?? "/", oauth.where.base)
    const path = url.pathname
    try {
      if (path === `/.well-known/oauth-authorization-server${prefix}`) return await toProvider(oauth, request, response, `/.well-known/oauth-authorization-server${url.search}`)
      if (path === `/.well-known/openid-configuration${prefix}`) return await toProvider(oauth, request, response, `/.well-known/openid-configuration${url.search}`)
      if (path.startsWith(`${prefix}/interaction/`)) return await interaction(oauth, request, response, path)
      // The device form's POST belongs to the browser session that showed the form (oidc-provider's `_session` cookie,
      // its default name); without it the provider fails saving a session it never created (a 500). The form is
      // stale: say so.
      if (request.method === "POST" && path === `${prefix}/device` && !cookies(request.headers.cookie).has("_session")) {
        return sendPage(response, 400, "Sign in the CLI", `<h1>That form expired</h1><p>Open the link <code>service login</code> printed again.</p>`)
      }
      // A device code read for the token endpoint is a poll, held to its interval (RFC 8628 3.5, decision 0095).
      if (request.method === "POST" && path === `${prefix}/token`) {
        return await OAuthLimits.polling.run(true, () => toProvider(oauth, request, response, `/token${url.search}`))
      }
      if (path === prefix || path.startsWith(`${prefix}/`)) return await toProvider(oauth, request, response, `${path.slice(prefix.length) || "/"}${url.search}`)
      return send(response, 404, "application/json", JSON.stringify({ error: "not_found" }))
    } catch (error) {
      if (response.headersSent) {
        response.end()
        return
      }
      // An interaction that expired or was never started: the client must start again.
      const known = error instanceof oauth.errors.OIDCProviderError ? error : undefined
      return sendPage(response, known?.statusCode ?? 500, "Sign-in error", `<h1>That did not work</h1><p class="error">${escape(known === undefined ? "Something went wrong; start again from your client." : known.error_description ?? known.message)}</p>`)
    }
  })

  const accessToken = (token: Redacted.Redacted<string>, resource: Resource) =>
    Effect.gen(function*() {
      const where = yield* urls
      const rows = yield* sql`
        SELECT t.payload, g.person_id, g.workspace_id, t.expires_at FROM identity.oauth_models t
        JOIN identity.oauth_grants g ON g.grant_id = t.grant_id AND g.revoked_at IS NULL
        WHERE t.model = 'AccessToken' AND t.id = ${OAuthStore.tokenHash(Redacted.value(token))} AND t.expires_at > now()
          AND NOT EXISTS (SELECT 1 FROM identity.oauth_models r WHERE r.model = 'RevokedGrant' AND r.id = t.grant_id)`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(AccessRow))),
        Effect.orDie
      )
      const row = rows[0]
      if (row === undefined) return Option.none<TokenGrant>()
      const audience = typeof row.payload.aud === "string" ? [row.payload.aud] : row.payload.aud ?? []
      // RFC 8707: a token for the MCP endpoint does not open the REST API, nor the other way round.
      if (!audience.includes(where.resource(resource))) return Option.none<TokenGrant>()
      yield* CredentialCache.validUntil(row.expires_at)
      return Option.some<TokenGrant>({
        grantId: row.payload.grantId ?? "",
        clientId: row.payload.clientId ?? "",
        personId: row.person_id,
        workspaceId: row.workspace_id,
        scopes: (row.payload.scope ?? "").split(" ").filter(isScope)
      })
    }).pipe(Effect.withSpan("OAuthServer.accessToken", { captureStackTrace: false }))

  const resourceMetadata = (resource: Resource) =>
    Effect.map(urls, (where) => ({
      resource: where.resource(resource),
      authorization_servers: [where.issuer],
      scopes_supported: Scope.literals,
      bearer_methods_supported: ["header"],
      resource_name: resource === "mcp" ? "service MCP server" : "service REST API",
      resource_documentation: `${where.base}/docs`
    }))

  const revokeGrantsOf = (personId: PersonId, workspaceId: WorkspaceId) =>
    Effect.gen(function*() {
      const rows = yield* sql`SELECT grant_id FROM identity.oauth_grants
        WHERE person_id = ${personId} AND workspace_id = ${workspaceId} AND revoked_at IS NULL`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(Schema.Struct({ grant_id: Schema.String })))),
        Effect.orDie
      )
      for (const row of rows) yield* OAuthStore.revokeGrant(row.grant_id)
      return rows.length
    })

  return OAuthServer.of({
    listener,
    accessToken,
    resourceMetadata,
    resourceMetadataUrl: (resource) => Effect.map(urls, (where) => where.metadata(resource)),
    revokeGrantsOf: (personId, workspaceId) => revokeGrantsOf(personId, workspaceId).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  })
})

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<OAuthServer, never, SqlClient.SqlClient | Sessions | People | PublicAddress | Crypto | AddressGuard> =
  Layer.effect(OAuthServer, make)

