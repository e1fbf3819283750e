/**
 * The pages and routes of signing in, mounted by the HTTP host (decision 0067):
 *
 * - `GET /sign-in`: the sign-in form (`?return_to=/path` comes back there after).
 * - `POST /sign-in`: email and password, as a form or JSON. Sets the session cookie (`HttpOnly`, `SameSite=Lax`,
 *   `Path=/`; `Secure` with the `__Host-` prefix behind https) and answers the session (JSON) or goes back
 *   (form). Five failures for an address make it wait 30 s, doubling to 15 minutes; a wrong address and a wrong
 *   password look alike.
 * - `GET /session`: who is signed in, their workspaces and the CSRF token that requests changing something with
 *   the cookie must send in `x-csrf-token`.
 * - `POST /sign-out`: ends the session (with its CSRF token).
 * - `GET /invitations/:token` and `POST /invitations/:token`: an invitation, accepted by the signed-in person it
 *   was sent to.
 *
 * @since 0.1.0
 */
import { limitKey } from "@service/core/ClientNetwork"
import * as Mount from "@service/core/Mount"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { cookies, escape, page, pageHeaders, safeReturn } from "./internal/html.js"
import { Invitations } from "./Invitations.js"
import * as Passwords from "./Passwords.js"
import { Email, People, type Someone } from "./People.js"
import { PublicAddress } from "@service/core/PublicAddress"
import * as Sessions from "./Sessions.js"

const tag = "Sign-in"
const bodyLimit = 16 * 1024
const formTypes = ["application/x-www-form-urlencoded", "application/json"]

/** What `GET /session` and a JSON sign-in answer. @since 0.1.0 @category models */
export const SessionView = Schema.Struct({
  person: Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.NullOr(Schema.String) }),
  workspaces: Schema.Array(Schema.Struct({ slug: Schema.String, name: Schema.String, role: Schema.String })),
  csrf_token: Schema.String.annotations({ description: "Send it in x-csrf-token with every request that changes something with the session cookie." }),
  expires_at: Schema.optional(Schema.String)
}).annotations({ identifier: "Session" })

const SignInFailed = Schema.Struct({
  code: Schema.Literal("SIGN_IN_FAILED", "SIGN_IN_LOCKED", "BAD_REQUEST"),
  message: Schema.String,
  retry_after_seconds: Schema.optional(Schema.Number)
}).annotations({ identifier: "SignInFailed" })

const SignedOut = Schema.Struct({ code: Schema.Literal("NOT_SIGNED_IN"), message: Schema.String }).annotations({ identifier: "NotSignedIn" })

type Fields = ReadonlyMap<string, string>

const decodeJson = Schema.decodeUnknownOption(Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown })))
const noFields: { readonly json: boolean; readonly fields: Fields } = { json: false, fields: new Map() }

const readFields = (request: Mount.Request) =>
  Effect.gen(function*() {
    const bytes = yield* request.body
    const text = new TextDecoder().decode(bytes)
    const type = (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase()
    if (type === "application/json") {
      const parsed = decodeJson(text)
      const fields: Map<string, string> = new Map()
      if (Option.isSome(parsed)) for (const [key, value] of Object.entries(parsed.value)) if (typeof value === "string") fields.set(key, value)
      return { json: true, fields: fields satisfies Fields }
    }
    const fields: Fields = new Map(new URLSearchParams(text))
    return { json: false, fields }
  })

/**
 * A request from another site is refused: a sign-in form posted from elsewhere would sign the browser in as someone
 * else (login CSRF). Browsers send `Origin` with every POST; a client without one (curl) is not a browser.
 */
const sameOrigin = (request: Mount.Request, base: string): boolean => {
  const origin = request.headers["origin"]
  if (origin === undefined || origin === "null") return origin === undefined
  const host = request.headers["host"]
  return origin === new URL(base).origin || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`))
}

const cookieName = (secure: boolean) => secure ? Sessions.secureCookieName : Sessions.cookieName

const setCookie = (secure: boolean, value: string, maxAge: number) =>
  `${cookieName(secure)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`

/** The session secret of a request's cookie (either name: a server may move behind https). */
export const sessionSecret = (request: { readonly headers: Readonly<Record<string, string | undefined>> }): Option.Option<Redacted.Redacted<string>> => {
  const jar = cookies(request.headers["cookie"])
  return Option.map(Option.fromNullable(jar.get(Sessions.secureCookieName) ?? jar.get(Sessions.cookieName)), Redacted.make)
}

const signedIn = (request: Mount.Request) =>
  Effect.gen(function*() {
    const secret = sessionSecret(request)
    if (Option.isNone(secret)) return Option.none<{ readonly secret: Redacted.Redacted<string>; readonly person: Someone }>()
    const sessions = yield* Sessions.Sessions
    const live = yield* sessions.open(secret.value)
    if (Option.isNone(live)) return Option.none()
    const person = yield* (yield* People).find(live.value.personId)
    return Option.map(person, (found) => ({ secret: secret.value, person: found }))
  })

const sessionView = (person: Someone, csrf: string, expiresAt?: Date) =>
  Effect.gen(function*() {
    const memberships = yield* (yield* People).memberships(person.id)
    return {
      person: { id: person.id, name: person.name, email: person.email },
      workspaces: memberships.map((m) => ({ slug: m.workspace.slug, name: m.workspace.name, role: m.role })),
      csrf_token: csrf,
      ...(expiresAt === undefined ? {} : { expires_at: expiresAt.toISOString() })
    }
  })

const html = (status: number, title: string, body: string, headers: Readonly<Record<string, string>> = {}) =>
  Mount.text(page(title, body), "text/html; charset=utf-8", status, { ...pageHeaders, ...headers })

const signInForm = (returnTo: string, error?: string, email = "") =>
  `<h1>Sign in</h1>
${error === undefined ? "" : `<p class="error" role="alert">${escape(error)}</p>`}
<form method="post" action="/sign-in">
<input type="hidden" name="return_to" value="${escape(returnTo)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escape(email)}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`

/** @since 0.1.0 @category mounts */
export const signInPage = Mount.make({
  name: "sign_in_page",
  method: "GET",
  path: "/sign-in",
  summary: "The sign-in page",
  description: "An HTML form for email and password. `return_to` (a path on this server) is where it goes after.",
  tag,
  answers: [{ status: 200, description: "The sign-in page (or who is signed in).", contentType: "text/html" }],
  public: true,
  handle: (request) =>
    Effect.gen(function*() {
      const returnTo = safeReturn(new URLSearchParams(request.search).get("return_to"), "/session")
      const current = yield* signedIn(request)
      if (Option.isSome(current)) {
        const sessions = yield* Sessions.Sessions
        const csrf = sessions.csrfOf(current.value.secret)
        return html(200, "Signed in", `<h1>Signed in</h1>
<p>You are signed in as ${escape(current.value.person.name)} (${escape(current.value.person.email ?? "")}).</p>
<p><a href="${escape(returnTo)}">Continue</a></p>
<form method="post" action="/sign-out"><input type="hidden" name="csrf_token" value="${escape(csrf)}"><button type="submit">Sign out</button></form>`)
      }
      return html(200, "Sign in", signInForm(returnTo))
    })
})

/** @since 0.1.0 @category mounts */
export const signIn = Mount.make({
  name: "sign_in",
  method: "POST",
  path: "/sign-in",
  summary: "Sign in",
  description:
    "Email and password, as a form (the page's) or JSON `{email, password}`. Sets the session cookie and answers the session with its CSRF token (JSON) or goes to `return_to` (form). After 5 failures for an address it waits 30 s, doubling to 15 minutes (429 with Retry-After).",
  tag,
  body: { maxBytes: bodyLimit, contentTypes: formTypes, description: "email, password, and return_to for the form." },
  answers: [
    { status: 200, description: "Signed in (JSON): the session, with its cookie.", schema: SessionView, headers: { "set-cookie": "The session cookie." } },
    { status: 303, description: "Signed in (form): back to return_to, with the cookie.", headers: { "set-cookie": "The session cookie." } },
    { status: 400, description: "No email or password, or a body that could not be read.", schema: SignInFailed },
    { status: 401, description: "Wrong email address or password (never which).", schema: SignInFailed },
    { status: 403, description: "A form posted from another site.", schema: SignInFailed },
    { status: 429, description: "Too many failures for this address: wait Retry-After seconds.", schema: SignInFailed, headers: { "retry-after": "Seconds to wait." } }
  ],
  public: true,
  handle: (request) =>
    Effect.gen(function*() {
      const address = yield* (yield* PublicAddress).get
      if (!sameOrigin(request, address.base)) {
        return Mount.json({ code: "BAD_REQUEST", message: "A sign-in from another site is refused." }, 403)
      }
      const read = yield* Effect.either(readFields(request))
      if (read._tag === "Left") return Mount.json({ code: "BAD_REQUEST", message: "The body could not be read (16 KiB at most)." }, 400)
      const { json, fields } = read.right
      const email = fields.get("email") ?? ""
      const password = fields.get("password") ?? ""
      const returnTo = safeReturn(fields.get("return_to"), "/session")
      if (email.trim() === "" || password === "") {
        return json
          ? Mount.json({ code: "BAD_REQUEST", message: "Send email and password." }, 400)
          : html(400, "Sign in", signInForm(returnTo, "Enter your email address and password.", email))
      }
      const outcome = yield* Effect.either((yield* People).signIn(email, Redacted.make(password), Option.getOrUndefined(Option.map(request.remoteAddress, limitKey))))
      if (outcome._tag === "Left") {
        const refused = outcome.left
        const waits = refused.reason !== "invalid"
        const status = waits ? 429 : 401
        const headers: Record<string, string> = waits ? { "retry-after": String(refused.retryAfterSeconds) } : {}
        return json
          ? Mount.json({
            code: waits ? "SIGN_IN_LOCKED" : "SIGN_IN_FAILED",
            message: refused.message,
            ...(waits ? { retry_after_seconds: refused.retryAfterSeconds } : {})
          }, status, headers)
          : html(status, "Sign in", signInForm(returnTo, refused.message, email), headers)
      }
      const sessions = yield* Sessions.Sessions
      // A session secret that came in with the request is ended: signing in never reuses one (session fixation).
      const previous = sessionSecret(request)
      if (Option.isSome(previous)) yield* sessions.end(previous.value)
      const started = yield* sessions.start(outcome.right.id)
      const cookie = setCookie(address.secure, Redacted.value(started.secret), Sessions.lifetimeSeconds)
      if (json) return Mount.json(yield* sessionView(outcome.right, started.csrf, started.expiresAt), 200, { "set-cookie": cookie, "cache-control": "no-store" })
      return Mount.text("", "text/plain", 303, { location: returnTo, "set-cookie": cookie, "cache-control": "no-store" })
    })
})

/** @since 0.1.0 @category mounts */
export const session = Mount.make({
  name: "session_read",
  method: "GET",
  path: "/session",
  summary: "Who is signed in",
  description: "The signed-in person, their workspaces and roles, and the CSRF token to send in x-csrf-token.",
  tag,
  answers: [
    { status: 200, description: "The session.", schema: SessionView },
    { status: 401, description: "No live session cookie.", schema: SignedOut }
  ],
  public: true,
  handle: (request) =>
    Effect.gen(function*() {
      const current = yield* signedIn(request)
      if (Option.isNone(current)) return Mount.json({ code: "NOT_SIGNED_IN", message: "Sign in at /sign-in." }, 401, { "cache-control": "no-store" })
      const sessions = yield* Sessions.Sessions
      return Mount.json(yield* sessionView(current.value.person, sessions.csrfOf(current.value.secret)), 200, { "cache-control": "no-store" })
    })
})

const csrfOk = (request: Mount.Request, secret: Redacted.Redacted<string>, fields: Fields) =>
  Effect.map(Sessions.Sessions, (sessions) =>
    sessions.csrfMatches(secret, request.headers["x-csrf-token"] ?? fields.get("csrf_token") ?? ""))

/** @since 0.1.0 @category mounts */
export const signOut = Mount.make({
  name: "sign_out",
  method: "POST",
  path: "/sign-out",
  summary: "Sign out",
  description: "Ends the session of the cookie; needs its CSRF token (x-csrf-token, or csrf_token in the form).",
  tag,
  body: { maxBytes: bodyLimit, contentTypes: formTypes, description: "csrf_token, for the page's form." },
  answers: [
    { status: 303, description: "Signed out: to the sign-in page, the cookie cleared." },
    { status: 403, description: "No CSRF token, or not this session's.", schema: SignedOut }
  ],
  public: true,
  handle: (request) =>
    Effect.gen(function*() {
      const address = yield* (yield* PublicAddress).get
      const clear = setCookie(address.secure, "", 0)
      const secret = sessionSecret(request)
      if (Option.isNone(secret)) return Mount.text("", "text/plain", 303, { location: "/sign-in", "set-cookie": clear })
      const fields = yield* readFields(request).pipe(Effect.orElseSucceed(() => noFields))
      if (!(yield* csrfOk(request, secret.value, fields.fields))) {
        return Mount.json({ code: "NOT_SIGNED_IN", message: "Sign out needs the session's CSRF token." }, 403)
      }
      yield* (yield* Sessions.Sessions).end(secret.value)
      return Mount.text("", "text/plain", 303, { location: "/sign-in", "set-cookie": clear })
    })
})

const invitationPage = (request: Mount.Request, notice?: string) =>
  Effect.gen(function*() {
    const token = Redacted.make(request.params["token"] ?? "")
    const invitation = yield* (yield* Invitations).open(token)
    if (Option.isNone(invitation)) {
      return html(404, "Invitation", `<h1>Invitation</h1><p class="error">This invitation link is not valid: it was used, revoked or has expired. Ask for a new one.</p>`)
    }
    const { workspaceName, workspaceSlug, role, email } = invitation.value
    const intro = `<h1>Join ${escape(workspaceName)}</h1>
<p>You are invited to the workspace <strong>${escape(workspaceSlug)}</strong> as <strong>${escape(role)}</strong>, at ${escape(email)}.</p>
${notice === undefined ? "" : `<p class="error" role="alert">${escape(notice)}</p>`}`
    const current = yield* signedIn(request)
    if (Option.isNone(current)) {
      // Someone with no account makes one here: holding the link proves the address (issue 32 row 17).
      if (Option.isNone(yield* (yield* People).findByEmail(email))) {
        return html(200, "Invitation", `${intro}<h2>Create your account</h2>
<form method="post" action="${escape(request.path)}">
<label for="name">Your name</label><input id="name" name="name" autocomplete="name" required maxlength="120">
<label for="password">Choose a password (at least ${Passwords.minLength} characters)</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="${Passwords.minLength}">
<button type="submit">Create the account and join</button>
</form>
<p class="muted">Already have an account for ${escape(email)}? <a href="/sign-in?return_to=${encodeURIComponent(request.path)}">Sign in to accept</a></p>`)
      }
      return html(200, "Invitation", `${intro}<p><a href="/sign-in?return_to=${encodeURIComponent(request.path)}">Sign in to accept</a></p>`)
    }
    const csrf = (yield* Sessions.Sessions).csrfOf(current.value.secret)
    return html(200, "Invitation", `${intro}<p>Signed in as ${escape(current.value.person.name)} (${escape(current.value.person.email ?? "")}).</p>
<form method="post" action="${escape(request.path)}"><input type="hidden" name="csrf_token" value="${escape(csrf)}"><button type="submit">Accept</button></form>`)
  })

const welcome = (joined: { readonly workspaceName: string; readonly workspaceSlug: string; readonly role: string }, headers: Readonly<Record<string, string>> = {}) =>
  html(200, "Joined", `<h1>Welcome to ${escape(joined.workspaceName)}</h1>
<p>You are a${joined.role === "admin" ? "n" : ""} ${escape(joined.role)} of <strong>${escape(joined.workspaceSlug)}</strong>.</p>
<p class="muted">Its API lives under /api/v1/workspaces/${escape(joined.workspaceSlug)}; create a key with <code>service keys create</code>.</p>`, headers)

/**
 * An invited address with no account: the account is made with the name and password given, the invitation accepted
 * as it, and the browser signed in. The link is the proof of the address, so it is checked first; an address that has
 * an account meanwhile must sign in instead (nobody sets another person's password through a link). A form from
 * another site is refused, as the sign-in form is.
 */
const joinWithNewAccount = (request: Mount.Request, fields: Fields) =>
  Effect.gen(function*() {
    const address = yield* (yield* PublicAddress).get
    if (!sameOrigin(request, address.base)) return html(403, "Invitation", `<h1>Invitation</h1><p class="error">A form from another site is refused.</p>`)
    const token = Redacted.make(request.params["token"] ?? "")
    const open = yield* (yield* Invitations).open(token)
    if (Option.isNone(open)) {
      return html(404, "Invitation", `<h1>Invitation</h1><p class="error">This invitation link is not valid: it was used, revoked or has expired. Ask for a new one.</p>`)
    }
    const name = (fields.get("name") ?? "").trim()
    const again = (notice: string) => Effect.map(invitationPage(request, notice), (page) => ({ ...page, status: 400 }))
    if (name.length === 0 || name.length > 120) return yield* again("Give your name (at most 120 characters).")
    const people = yield* People
    const email = Schema.decodeUnknownOption(Email)(open.value.email)
    if (Option.isNone(email)) return yield* again("This invitation's address cannot hold an account: ask for a new invitation.")
    const made = yield* Effect.either(people.create({ email: email.value, name, password: Redacted.make(fields.get("password") ?? "") }))
    if (made._tag === "Left") {
      return made.left._tag === "EmailTaken"
        ? { ...(yield* invitationPage(request, "An account for this address exists: sign in to accept.")), status: 409 }
        : yield* again(made.left.message)
    }
    const joined = yield* Effect.either((yield* Invitations).accept(token, made.right.person))
    if (joined._tag === "Left") return { ...(yield* invitationPage(request, joined.left.message)), status: 403 }
    const started = yield* (yield* Sessions.Sessions).start(made.right.person.id)
    return welcome(joined.right, { "set-cookie": setCookie(address.secure, Redacted.value(started.secret), Sessions.lifetimeSeconds) })
  })

/** @since 0.1.0 @category mounts */
export const invitation = Mount.make({
  name: "invitation_page",
  method: "GET",
  path: "/invitations/:token",
  summary: "An invitation",
  description: "The page an invitation link opens: the workspace and role, and (signed in as the person invited) the button to accept.",
  tag,
  params: { token: "The invitation's token, from its link." },
  answers: [
    { status: 200, description: "The invitation.", contentType: "text/html" },
    { status: 404, description: "Used, revoked, expired or unknown.", contentType: "text/html" }
  ],
  public: true,
  handle: (request) => invitationPage(request)
})

/** @since 0.1.0 @category mounts */
export const acceptInvitation = Mount.make({
  name: "invitation_accept",
  method: "POST",
  path: "/invitations/:token",
  summary: "Accept an invitation",
  description:
    "Accepts as the signed-in person (the one invited), with the session's CSRF token; or, for an address with no account yet, creates the account (name and password) and accepts as it, signed in. Then the workspace is theirs with the role.",
  tag,
  params: { token: "The invitation's token, from its link." },
  body: { maxBytes: bodyLimit, contentTypes: formTypes, description: "csrf_token (signed in), or name and password (a new account)." },
  answers: [
    { status: 200, description: "Accepted.", contentType: "text/html" },
    { status: 303, description: "Not signed in: to the sign-in page." },
    { status: 400, description: "A new account's name or password does not do.", contentType: "text/html" },
    { status: 403, description: "No CSRF token, or another person's invitation.", contentType: "text/html" },
    { status: 404, description: "Used, revoked, expired or unknown.", contentType: "text/html" }
  ],
  public: true,
  handle: (request) =>
    Effect.gen(function*() {
      const current = yield* signedIn(request)
      if (Option.isNone(current)) {
        const fields = yield* readFields(request).pipe(Effect.orElseSucceed(() => noFields))
        if (fields.fields.has("password")) return yield* joinWithNewAccount(request, fields.fields)
        return Mount.text("", "text/plain", 303, { location: `/sign-in?return_to=${encodeURIComponent(request.path)}` })
      }
      const fields = yield* readFields(request).pipe(Effect.orElseSucceed(() => noFields))
      if (!(yield* csrfOk(request, current.value.secret, fields.fields))) {
        const page = yield* invitationPage(request, "The form expired: try again.")
        return { ...page, status: 403 }
      }
      const accepted = yield* Effect.either((yield* Invitations).accept(Redacted.make(request.params["token"] ?? ""), current.value.person))
      if (accepted._tag === "Left") {
        return accepted.left.reason === "invalid"
          ? html(404, "Invitation", `<h1>Invitation</h1><p class="error">${escape(accepted.left.message)}</p>`)
          : { ...(yield* invitationPage(request, accepted.left.message)), status: 403 }
      }
      return welcome(accepted.right)
    })
})

/** What the sign-in routes need. @since 0.1.0 @category models */
export type Requirements = Sessions.Sessions | People | Invitations | PublicAddress

/** @since 0.1.0 @category mounts */
export const mounts: ReadonlyArray<Mount.Mount<Requirements>> = [signInPage, signIn, session, signOut, invitation, acceptInvitation]
