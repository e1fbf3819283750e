/**
 * People and access through the real server, as a person reaches them: an operator makes the people (the
 * `people create` command's service), they sign in at `/sign-in` (JSON, and the HTML form), the session cookie and
 * its CSRF token drive the key, member and invitation routes, the keys they mint work on the workspace's routes
 * within their scopes, a member's and a faceless key are refused a topic approval that an admin's key makes, a
 * revoked key and a removed member stop at once, and repeated failed sign-ins wait. One server per database target.
 */
import { assert, layer } from "@effect/vitest"
import * as Accounts from "@service/core/Accounts"
import { WorkspaceSlug } from "@service/core/Ids"
import { Email, People } from "@service/identity/People"
import * as TestDatabase from "@service/storage/TestDatabase"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { type Answer, jsonOf, rest, Running, serverOn } from "./support/Rest.js"

const PASSWORD = "correct horse battery staple"
const people = {
  ana: { email: "ana@acme.example", name: "Ana Owner", role: "owner" },
  carla: { email: "carla@acme.example", name: "Carla Admin", role: "admin" },
  beto: { email: "beto@acme.example", name: "Beto Member", role: "member" },
  dora: { email: "dora@elsewhere.example", name: "Dora Invited", role: null },
  eva: { email: "eva@elsewhere.example", name: "Eva Invited", role: null },
  fran: { email: "fran@acme.example", name: "Fran Admin", role: "admin" },
  gus: { email: "gus@acme.example", name: "Gus Admin", role: "admin" },
  hugo: { email: "hugo@acme.example", name: "Hugo Member", role: "member" },
  ines: { email: "ines@acme.example", name: "Ines Admin", role: "admin" },
  juan: { email: "juan@acme.example", name: "Juan Admin", role: "admin" }
} as const

const prepared = Layer.effectDiscard(
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const directory = yield* People
    const acme = yield* accounts.createWorkspace({ slug: WorkspaceSlug.make("acme"), name: "Acme" })
    for (const person of Object.values(people)) {
      const made = yield* directory.create({ email: Schema.decodeSync(Email)(person.email), name: person.name, password: Redacted.make(PASSWORD) })
      if (person.role !== null) yield* accounts.addMember({ workspaceId: acme.id, personId: made.person.id, role: person.role })
    }
  }).pipe(Effect.orDie)
)

const json = { "content-type": "application/json" }
const api = (path: string) => `/api/v1/workspaces/acme${path}`

const Session = Schema.parseJson(Schema.Struct({
  person: Schema.Struct({ id: Schema.String, name: Schema.String, email: Schema.NullOr(Schema.String) }),
  workspaces: Schema.Array(Schema.Struct({ slug: Schema.String, role: Schema.String })),
  csrf_token: Schema.String
}))
const CreatedKey = Schema.parseJson(Schema.Struct({ id: Schema.String, secret: Schema.String, prefix: Schema.NullOr(Schema.String), scopes: Schema.Array(Schema.String), owner: Schema.NullOr(Schema.Struct({ person_id: Schema.String })) }))
const Keys = Schema.parseJson(Schema.Struct({ keys: Schema.Array(Schema.Struct({ id: Schema.String, status: Schema.String, owner: Schema.NullOr(Schema.Struct({ person_id: Schema.String })), last_used_at: Schema.NullOr(Schema.String) })) }))
const Members = Schema.parseJson(Schema.Struct({ members: Schema.Array(Schema.Struct({ person_id: Schema.String, email: Schema.NullOr(Schema.String), role: Schema.String })) }))
/** What a removal or a demotion says it did with the faceless keys the person answered for. */
const ReleasedKeys = Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))
const KeysReleased = Schema.Struct({ revoked: ReleasedKeys, handed_over: ReleasedKeys })

const Refusal = Schema.parseJson(Schema.Struct({ statusCode: Schema.Number, identity: Schema.Struct({ code: Schema.String }) }))
const Forbidden = Schema.parseJson(Schema.Struct({ code: Schema.Literal("FORBIDDEN"), reason: Schema.String, required_scopes: Schema.optional(Schema.Array(Schema.String)) }))
const Topic = Schema.parseJson(Schema.Struct({ id: Schema.String, status: Schema.String }))

const expect = (answer: Answer, status: number) => assert.strictEqual(answer.status, status, answer.text.slice(0, 600))

/** A signed-in browser: its cookie and CSRF token. */
interface Browser {
  readonly cookie: string
  readonly csrf: string
  readonly personId: string
}

const signIn = (port: number, email: string, password = PASSWORD) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "POST", "/sign-in", json, JSON.stringify({ email, password }))
    expect(answer, 200)
    const setCookie = String(answer.headers["set-cookie"] ?? "")
    // Over plain http (no SERVICE_PUBLIC_URL): HttpOnly, SameSite=Lax, path /, not Secure, no __Host- prefix.
    assert.match(setCookie, /^service_session=svc_ses_[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/)
    const session = Schema.decodeUnknownSync(Session)(answer.text)
    return { cookie: setCookie.split(";")[0] ?? "", csrf: session.csrf_token, personId: session.person.id } satisfies Browser
  })

const asBrowser = (browser: Browser, unsafe = true) => ({ ...json, cookie: browser.cookie, ...(unsafe ? { "x-csrf-token": browser.csrf } : {}) })

const createKey = (port: number, headers: Readonly<Record<string, string>>, body: Readonly<Record<string, unknown>>) =>
  Effect.gen(function*() {
    const answer = yield* rest(port, "POST", api("/keys"), headers, JSON.stringify(body))
    expect(answer, 200)
    return Schema.decodeUnknownSync(CreatedKey)(answer.text)
  })

for (const target of TestDatabase.targets()) {
  layer(serverOn(target, prepared), { timeout: "300 seconds" })(`people and access on ${target.name}`, (it) => {
    it.effect("a person signs in; the session reads workspace routes, and changes nothing without its CSRF token", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const page = yield* rest(port, "GET", "/sign-in?return_to=/session")
        expect(page, 200)
        assert.include(page.text, `<form method="post" action="/sign-in">`)
        assert.include(String(page.headers["content-security-policy"]), "frame-ancestors 'none'")

        const wrong = yield* rest(port, "POST", "/sign-in", json, JSON.stringify({ email: people.ana.email, password: "not the password" }))
        expect(wrong, 401)
        const unknown = yield* rest(port, "POST", "/sign-in", json, JSON.stringify({ email: "nobody@acme.example", password: "not the password" }))
        expect(unknown, 401)
        assert.deepStrictEqual(jsonOf(wrong.text), jsonOf(unknown.text), "a wrong address and a wrong password look alike")
        const elsewhere = yield* rest(port, "POST", "/sign-in", { ...json, origin: "https://evil.example" }, JSON.stringify({ email: people.ana.email, password: PASSWORD }))
        expect(elsewhere, 403)

        const ana = yield* signIn(port, people.ana.email)
        const session = Schema.decodeUnknownSync(Session)((yield* rest(port, "GET", "/session", { cookie: ana.cookie })).text)
        assert.deepStrictEqual(session.workspaces.map((w) => [w.slug, w.role]), [["acme", "owner"]])

        const members = yield* rest(port, "GET", api("/members"), asBrowser(ana, false))
        expect(members, 200)
        assert.deepStrictEqual(
          Schema.decodeUnknownSync(Members)(members.text).members.map((m) => [m.email, m.role]),
          Object.values(people).flatMap((person) => person.role === null ? [] : [[person.email, person.role]])
        )
        // Another workspace's slug: the answer a missing one gets.
        expect(yield* rest(port, "GET", "/api/v1/workspaces/demo/members", asBrowser(ana, false)), 404)

        const noToken = yield* rest(port, "POST", api("/keys"), { ...json, cookie: ana.cookie }, JSON.stringify({ name: "x", scopes: ["market_data:read"] }))
        expect(noToken, 401)
        const wrongToken = yield* rest(port, "POST", api("/keys"), { ...json, cookie: ana.cookie, "x-csrf-token": "forged" }, JSON.stringify({ name: "x", scopes: ["market_data:read"] }))
        expect(wrongToken, 401)
        const listed = Schema.decodeUnknownSync(Keys)((yield* rest(port, "GET", api("/keys"), asBrowser(ana, false))).text)
        assert.deepStrictEqual(listed.keys, [], "nothing was created without the token")

        // Issue 32 row 19: an explicit credential decides; the ambient cookie is no fallback for a bad one.
        expect(yield* rest(port, "GET", api("/members"), { ...asBrowser(ana, false), "x-api-key": "svc_key_bogus" }), 401)
        expect(yield* rest(port, "GET", api("/members"), { ...asBrowser(ana, false), authorization: "Bearer bogus" }), 401)
      }))

    it.effect("keys act as their person within their scopes; only a session gives commercial:activate; revocation is at once", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const reader = yield* createKey(port, asBrowser(ana), { name: "reader", scopes: ["market_data:read"], expires_in_days: 30 })
        assert.match(reader.secret, /^svc_key_/)
        assert.strictEqual(reader.prefix, reader.secret.slice(0, 12))
        assert.strictEqual(reader.owner?.person_id, ana.personId)
        const withKey = { ...json, "x-api-key": reader.secret }
        expect(yield* rest(port, "GET", api("/account/usage"), withKey), 200)

        // A write on a read key: 403, naming the scope to ask for.
        const write = yield* rest(port, "POST", api("/saved-searches"), withKey, JSON.stringify({ name: "x", kind: "opportunities", criteria: {} }))
        expect(write, 403)
        assert.deepStrictEqual(Schema.decodeUnknownSync(Forbidden)(write.text).required_scopes, ["saved_searches:write"])
        assert.match(String(write.headers["www-authenticate"]), /^Bearer error="insufficient_scope", scope="saved_searches:write"/)

        // A key gives no scope it lacks; this one cannot even manage keys.
        expect(yield* rest(port, "POST", api("/keys"), withKey, JSON.stringify({ name: "more", scopes: ["topics:write"] })), 403)
        const admin = yield* createKey(port, asBrowser(ana), { name: "keys", scopes: ["access:write", "market_data:read"] })
        const beyond = yield* rest(port, "POST", api("/keys"), { ...json, "x-api-key": admin.secret }, JSON.stringify({ name: "more", scopes: ["commercial:activate"] }))
        expect(beyond, 422)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(beyond.text).identity.code, "scope_not_held")
        // Signed in, the person may give it, when named.
        const spender = yield* createKey(port, asBrowser(ana), { name: "spender", scopes: ["commercial:read", "commercial:activate"] })
        assert.deepStrictEqual([...spender.scopes].sort(), ["commercial:activate", "commercial:read"])

        const before = Schema.decodeUnknownSync(Keys)((yield* rest(port, "GET", api("/keys"), asBrowser(ana, false))).text)
        assert.isNotNull(before.keys.find((k) => k.id === reader.id)?.last_used_at, "a used key says when")
        const revoked = yield* rest(port, "DELETE", api(`/keys/${reader.id}`), asBrowser(ana))
        expect(revoked, 200)
        expect(yield* rest(port, "GET", api("/account/usage"), withKey), 401)
      }))

    it.effect("a member's key and a faceless key are refused a topic approval; an admin's personal key approves", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const beto = yield* signIn(port, people.beto.email)
        const carla = yield* signIn(port, people.carla.email)
        const betoKey = yield* createKey(port, asBrowser(beto), { name: "beto", scopes: ["topics:write"] })
        const carlaKey = yield* createKey(port, asBrowser(carla), { name: "carla", scopes: ["topics:write"] })
        const facelessByMember = yield* rest(port, "POST", api("/keys"), asBrowser(beto), JSON.stringify({ name: "bot", scopes: ["topics:write"], faceless: true }))
        expect(facelessByMember, 422)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(facelessByMember.text).identity.code, "faceless_not_allowed")
        const faceless = yield* createKey(port, asBrowser(ana), { name: "bot", scopes: ["topics:write"], faceless: true })
        assert.isNull(faceless.owner)

        const topic = Schema.decodeUnknownSync(Topic)((yield* rest(port, "POST", api("/topics"), { ...json, "x-api-key": betoKey.secret }, JSON.stringify({ title: "Release checklist", body: "Tag, build, publish." }))).text)
        expect(yield* rest(port, "POST", api(`/topics/${topic.id}/propose`), { ...json, "x-api-key": betoKey.secret }, "{}"), 200)
        const asMember = yield* rest(port, "POST", api(`/topics/${topic.id}/approve`), { ...json, "x-api-key": betoKey.secret }, "{}")
        expect(asMember, 403)
        assert.strictEqual(Schema.decodeUnknownSync(Forbidden)(asMember.text).reason, "role_required")
        const asFaceless = yield* rest(port, "POST", api(`/topics/${topic.id}/approve`), { ...json, "x-api-key": faceless.secret }, "{}")
        expect(asFaceless, 403)
        assert.strictEqual(Schema.decodeUnknownSync(Forbidden)(asFaceless.text).reason, "person_required")
        const approved = yield* rest(port, "POST", api(`/topics/${topic.id}/approve`), { ...json, "x-api-key": carlaKey.secret }, "{}")
        expect(approved, 200)
        assert.strictEqual(Schema.decodeUnknownSync(Topic)(approved.text).status, "reviewed")

        // A member lists their own keys only; the owner every key.
        const betoKeys = Schema.decodeUnknownSync(Keys)((yield* rest(port, "GET", api("/keys"), asBrowser(beto, false))).text).keys
        assert.isTrue(betoKeys.length > 0 && betoKeys.every((k) => k.owner?.person_id === beto.personId))
        const allKeys = Schema.decodeUnknownSync(Keys)((yield* rest(port, "GET", api("/keys"), asBrowser(ana, false))).text).keys
        assert.isTrue(allKeys.some((k) => k.id === carlaKey.id) && allKeys.some((k) => k.id === faceless.id))
        // A member cannot revoke another's key: it is not theirs to see.
        expect(yield* rest(port, "DELETE", api(`/keys/${carlaKey.id}`), asBrowser(beto)), 404)
      }))

    it.effect("roles: an admin cannot make an owner, the last owner stays, a removed member's session and keys stop at once", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const carla = yield* signIn(port, people.carla.email)
        const beto = yield* signIn(port, people.beto.email)
        const betoKey = yield* createKey(port, asBrowser(beto), { name: "beto again", scopes: ["market_data:read"] })

        // Issue 32 row 7: an admin neither sees nor revokes an owner's personal key; the owner does both.
        const anaKey = yield* createKey(port, asBrowser(ana), { name: "ana's own", scopes: ["market_data:read"] })
        const listedBy = (who: Browser) =>
          rest(port, "GET", api("/keys"), asBrowser(who, false)).pipe(Effect.map((answer) => Schema.decodeUnknownSync(Keys)(answer.text).keys.map((key) => key.id)))
        assert.notInclude(yield* listedBy(carla), anaKey.id)
        assert.include(yield* listedBy(carla), betoKey.id, "an admin still sees a member's key")
        assert.include(yield* listedBy(ana), anaKey.id)
        const adminRevokes = yield* rest(port, "DELETE", api(`/keys/${anaKey.id}`), asBrowser(carla))
        expect(adminRevokes, 404)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(adminRevokes.text).identity.code, "key_not_found")
        expect(yield* rest(port, "GET", api("/account/usage"), { "x-api-key": anaKey.secret }), 200)
        expect(yield* rest(port, "DELETE", api(`/keys/${anaKey.id}`), asBrowser(ana)), 200)
        expect(yield* rest(port, "GET", api("/account/usage"), { "x-api-key": anaKey.secret }), 401)

        const promote = yield* rest(port, "PUT", api(`/members/${beto.personId}/role`), asBrowser(carla), JSON.stringify({ role: "owner" }))
        expect(promote, 409)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(promote.text).identity.code, "role_not_allowed")
        const demoteSelf = yield* rest(port, "PUT", api(`/members/${ana.personId}/role`), asBrowser(ana), JSON.stringify({ role: "admin" }))
        expect(demoteSelf, 409)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(demoteSelf.text).identity.code, "last_owner")
        const memberTries = yield* rest(port, "DELETE", api(`/members/${carla.personId}`), asBrowser(beto))
        expect(memberTries, 403)

        expect(yield* rest(port, "GET", api("/account/usage"), { "x-api-key": betoKey.secret }), 200)
        const removed = yield* rest(port, "DELETE", api(`/members/${beto.personId}`), asBrowser(carla))
        expect(removed, 200)
        const outcome = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ keys_revoked: Schema.Number, sessions_ended: Schema.Number })))(removed.text)
        assert.isAtLeast(outcome.keys_revoked, 1)
        assert.isAtLeast(outcome.sessions_ended, 1)
        expect(yield* rest(port, "GET", api("/account/usage"), { "x-api-key": betoKey.secret }), 401)
        expect(yield* rest(port, "GET", "/session", { cookie: beto.cookie }), 401)
      }))

    it.effect("an invitation is accepted by the person invited, once, after signing in (the HTML form)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const invited = yield* rest(port, "POST", api("/invitations"), asBrowser(ana), JSON.stringify({ email: people.dora.email, role: "member" }))
        expect(invited, 200)
        const acceptUrl = Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ accept_url: Schema.String })))(invited.text).accept_url
        const path = new URL(acceptUrl).pathname
        assert.match(path, /^\/invitations\/svc_inv_/)

        const anonymous = yield* rest(port, "GET", path)
        expect(anonymous, 200)
        assert.include(anonymous.text, "Sign in to accept")
        // The form sign-in comes back to the invitation.
        const form = yield* rest(port, "POST", "/sign-in", { "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams({ email: people.dora.email, password: PASSWORD, return_to: path }).toString())
        expect(form, 303)
        assert.strictEqual(form.headers["location"], path)
        const dora = String(form.headers["set-cookie"] ?? "").split(";")[0] ?? ""
        const pageSignedIn = yield* rest(port, "GET", path, { cookie: dora })
        const csrf = /name="csrf_token" value="([^"]+)"/.exec(pageSignedIn.text)?.[1] ?? ""
        assert.notStrictEqual(csrf, "")

        // Carla is signed in, but not the person invited.
        const carla = yield* signIn(port, people.carla.email)
        const notHers = yield* rest(port, "POST", path, { "content-type": "application/x-www-form-urlencoded", cookie: carla.cookie }, `csrf_token=${encodeURIComponent(carla.csrf)}`)
        expect(notHers, 403)
        const noToken = yield* rest(port, "POST", path, { "content-type": "application/x-www-form-urlencoded", cookie: dora }, "")
        expect(noToken, 403)
        const accepted = yield* rest(port, "POST", path, { "content-type": "application/x-www-form-urlencoded", cookie: dora }, `csrf_token=${encodeURIComponent(csrf)}`)
        expect(accepted, 200)
        assert.include(accepted.text, "Welcome to Acme")
        const again = yield* rest(port, "POST", path, { "content-type": "application/x-www-form-urlencoded", cookie: dora }, `csrf_token=${encodeURIComponent(csrf)}`)
        expect(again, 404)
        const members = Schema.decodeUnknownSync(Members)((yield* rest(port, "GET", api("/members"), asBrowser(ana, false))).text).members
        assert.deepInclude(members.map((m) => [m.email, m.role]), [people.dora.email, "member"])
      }))

    it.effect("an invitation holds only while its inviter may still grant the role (issue 32 row 8)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const carla = yield* signIn(port, people.carla.email)
        const invited = yield* rest(port, "POST", api("/invitations"), asBrowser(carla), JSON.stringify({ email: people.eva.email, role: "admin" }))
        expect(invited, 200)
        const path = new URL(Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ accept_url: Schema.String })))(invited.text).accept_url).pathname
        // The admin who invited is demoted before the invitation is accepted.
        expect(yield* rest(port, "PUT", api(`/members/${carla.personId}/role`), asBrowser(ana), JSON.stringify({ role: "member" })), 200)
        const eva = yield* signIn(port, people.eva.email)
        const page = yield* rest(port, "GET", path, { cookie: eva.cookie })
        const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? ""
        const refused = yield* rest(port, "POST", path, { "content-type": "application/x-www-form-urlencoded", cookie: eva.cookie }, `csrf_token=${encodeURIComponent(csrf)}`)
        expect(refused, 403)
        assert.include(refused.text, "can no longer give that role")
        const members = Schema.decodeUnknownSync(Members)((yield* rest(port, "GET", api("/members"), asBrowser(ana, false))).text).members
        assert.notInclude(members.map((m) => m.email), people.eva.email, "Eva did not join")
        expect(yield* rest(port, "PUT", api(`/members/${carla.personId}/role`), asBrowser(ana), JSON.stringify({ role: "admin" })), 200)
      }))

    it.effect("nothing outlives a removed admin: their faceless keys are revoked, or answer to the owner or admin they are handed to (issue 32 row 1)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const fran = yield* signIn(port, people.fran.email)
        const gus = yield* signIn(port, people.gus.email)
        const hugo = yield* signIn(port, people.hugo.email)
        const everything = ["market_data:read", "context:read", "commercial:read", "commercial:activate", "topics:write", "saved_searches:write", "crm:write", "door:admin", "events:write", "access:write"]
        const franKey = yield* createKey(port, asBrowser(fran), { name: "fran's robot", scopes: everything, faceless: true })
        const gusKey = yield* createKey(port, asBrowser(gus), { name: "gus's robot", scopes: everything, faceless: true })
        for (const key of [franKey, gusKey]) expect(yield* rest(port, "GET", api("/crm/contacts"), { "x-api-key": key.secret }), 200)

        const Listed = Schema.parseJson(Schema.Struct({
          keys: Schema.Array(Schema.Struct({
            id: Schema.String,
            status: Schema.String,
            created_by: Schema.NullOr(Schema.String),
            answered_by: Schema.NullOr(Schema.Struct({ person_id: Schema.String, name: Schema.NullOr(Schema.String) }))
          }))
        }))
        const listed = (id: string) =>
          rest(port, "GET", api("/keys"), asBrowser(ana, false)).pipe(
            Effect.map((answer) => Schema.decodeUnknownSync(Listed)(answer.text).keys.find((key) => key.id === id))
          )
        assert.deepStrictEqual(yield* listed(franKey.id), {
          id: franKey.id,
          status: "active",
          created_by: fran.personId,
          answered_by: { person_id: fran.personId, name: people.fran.name }
        })

        // Only a remaining owner or admin takes the keys over: not a member, not the person leaving.
        for (const heir of [hugo.personId, gus.personId]) {
          const refused = yield* rest(port, "DELETE", api(`/members/${gus.personId}?hand_keys_to=${heir}`), asBrowser(ana))
          expect(refused, 422)
          assert.strictEqual(Schema.decodeUnknownSync(Refusal)(refused.text).identity.code, "handover_not_allowed")
        }
        expect(yield* rest(port, "GET", "/session", { cookie: gus.cookie }), 200)

        const Removed = Schema.parseJson(Schema.Struct({
          keys_revoked: Schema.Number,
          keys: KeysReleased
        }))
        const handed = yield* rest(port, "DELETE", api(`/members/${gus.personId}?hand_keys_to=${fran.personId}`), asBrowser(ana))
        expect(handed, 200)
        assert.deepStrictEqual(Schema.decodeUnknownSync(Removed)(handed.text).keys.handed_over, [{ id: gusKey.id, name: "gus's robot" }])
        expect(yield* rest(port, "GET", api("/crm/contacts"), { "x-api-key": gusKey.secret }), 200)
        assert.deepStrictEqual((yield* listed(gusKey.id))?.answered_by, { person_id: fran.personId, name: people.fran.name })

        // Fran leaves with nobody named: every key she answers for stops, hers and the one handed to her.
        const removed = yield* rest(port, "DELETE", api(`/members/${fran.personId}`), asBrowser(ana))
        expect(removed, 200)
        const outcome = Schema.decodeUnknownSync(Removed)(removed.text)
        assert.sameMembers(outcome.keys.revoked.map((key) => key.id), [franKey.id, gusKey.id])
        assert.deepStrictEqual(outcome.keys.handed_over, [])
        assert.strictEqual(outcome.keys_revoked, 2)
        for (const key of [franKey, gusKey]) {
          expect(yield* rest(port, "GET", api("/crm/contacts"), { "x-api-key": key.secret }), 401)
          expect(yield* rest(port, "POST", api("/crm/contacts"), { ...json, "x-api-key": key.secret }, JSON.stringify({ name: "After Hours" })), 401)
          assert.strictEqual((yield* listed(key.id))?.status, "revoked")
        }
      }))

    it.effect("an admin made a member no longer answers for faceless keys: revoked, or handed to a remaining owner or admin", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const ines = yield* signIn(port, people.ines.email)
        const juan = yield* signIn(port, people.juan.email)
        const hugo = yield* signIn(port, people.hugo.email)
        const scopes = ["commercial:read", "commercial:activate", "crm:write", "access:write"]
        const inesKey = yield* createKey(port, asBrowser(ines), { name: "ines's robot", scopes, faceless: true })
        const juanKey = yield* createKey(port, asBrowser(juan), { name: "juan's robot", scopes, faceless: true })
        const RoleSet = Schema.parseJson(Schema.Struct({
          role: Schema.String,
          keys: KeysReleased
        }))
        const demote = (personId: string, handTo?: string) =>
          rest(port, "PUT", api(`/members/${personId}/role`), asBrowser(ana), JSON.stringify({ role: "member", ...(handTo === undefined ? {} : { hand_keys_to: handTo }) }))
        const roleOf = (personId: string) =>
          rest(port, "GET", api("/members"), asBrowser(ana, false)).pipe(
            Effect.map((answer) => Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ members: Schema.Array(Schema.Struct({ person_id: Schema.String, role: Schema.String })) })))(answer.text)),
            Effect.map((listed) => listed.members.find((member) => member.person_id === personId)?.role)
          )

        // Handed to a member: refused, and nothing changed.
        const refused = yield* demote(ines.personId, hugo.personId)
        expect(refused, 422)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(refused.text).identity.code, "handover_not_allowed")
        assert.strictEqual(yield* roleOf(ines.personId), "admin")

        // Handed to the owner: the key goes on, answered by her.
        const handed = yield* demote(ines.personId, ana.personId)
        expect(handed, 200)
        assert.deepStrictEqual(Schema.decodeUnknownSync(RoleSet)(handed.text), {
          role: "member",
          keys: { revoked: [], handed_over: [{ id: inesKey.id, name: "ines's robot" }] }
        })
        expect(yield* rest(port, "GET", api("/crm/contacts"), { "x-api-key": inesKey.secret }), 200)

        // Nobody named: the demoted admin's faceless key stops at once; their own session goes on as a member's.
        const revoked = yield* demote(juan.personId)
        expect(revoked, 200)
        assert.deepStrictEqual(Schema.decodeUnknownSync(RoleSet)(revoked.text).keys, { revoked: [{ id: juanKey.id, name: "juan's robot" }], handed_over: [] })
        expect(yield* rest(port, "GET", api("/crm/contacts"), { "x-api-key": juanKey.secret }), 401)
        expect(yield* rest(port, "GET", api("/crm/contacts"), asBrowser(juan, false)), 200)
      }))

    it.effect("spending is a role: a member's session cannot give commercial:activate; an owner's can (issue 32 row 2)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const hugo = yield* signIn(port, people.hugo.email)
        const refused = yield* rest(port, "POST", api("/keys"), asBrowser(hugo), JSON.stringify({ name: "spender", scopes: ["commercial:read", "commercial:activate"] }))
        expect(refused, 422)
        assert.strictEqual(Schema.decodeUnknownSync(Refusal)(refused.text).identity.code, "spending_not_allowed")
        assert.include(refused.text, "only its owners and admins hold and give it")
        const ana = yield* signIn(port, people.ana.email)
        const spender = yield* createKey(port, asBrowser(ana), { name: "spender", scopes: ["commercial:read", "commercial:activate"] })
        assert.include(spender.scopes, "commercial:activate")
        const Spending = Schema.parseJson(Schema.Struct({ members_may_spend: Schema.Boolean, member_monthly_cap: Schema.NullOr(Schema.Number) }))
        const seen = yield* rest(port, "GET", api("/spending"), asBrowser(hugo, false))
        expect(seen, 200)
        assert.deepStrictEqual(Schema.decodeUnknownSync(Spending)(seen.text), { members_may_spend: false, member_monthly_cap: null })
      }))

    it.effect("an invited address with no account makes one on the invitation page and lands in the workspace (issue 32 row 17)", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const ana = yield* signIn(port, people.ana.email)
        const invite = (email: string) =>
          Effect.gen(function*() {
            const invited = yield* rest(port, "POST", api("/invitations"), asBrowser(ana), JSON.stringify({ email, role: "member" }))
            expect(invited, 200)
            return new URL(Schema.decodeUnknownSync(Schema.parseJson(Schema.Struct({ accept_url: Schema.String })))(invited.text).accept_url).pathname
          })
        const form = { "content-type": "application/x-www-form-urlencoded" }
        const path = yield* invite("zoe@new.example")
        const page = yield* rest(port, "GET", path)
        expect(page, 200)
        assert.include(page.text, "Create your account")
        assert.strictEqual(page.headers["x-frame-options"], "DENY")

        const elsewhere = yield* rest(port, "POST", path, { ...form, origin: "https://evil.example" }, new URLSearchParams({ name: "Zoe", password: PASSWORD }).toString())
        expect(elsewhere, 403)
        const weak = yield* rest(port, "POST", path, form, new URLSearchParams({ name: "Zoe", password: "short" }).toString())
        expect(weak, 400)
        assert.include(weak.text, "at least 12 characters")
        const made = yield* rest(port, "POST", path, form, new URLSearchParams({ name: "Zoe New", password: PASSWORD }).toString())
        expect(made, 200)
        assert.include(made.text, "Welcome to Acme")
        const cookie = String(made.headers["set-cookie"] ?? "").split(";")[0] ?? ""
        const session = Schema.decodeUnknownSync(Session)((yield* rest(port, "GET", "/session", { cookie })).text)
        assert.deepStrictEqual(session.workspaces.map((w) => [w.slug, w.role]), [["acme", "member"]])
        expect(yield* rest(port, "GET", path), 404)
        yield* signIn(port, "zoe@new.example")

        // An address that has an account: the link holder signs in; no password is set through the link.
        const existing = yield* invite(people.eva.email)
        const offered = yield* rest(port, "GET", existing)
        assert.notInclude(offered.text, "Create your account")
        assert.include(offered.text, "Sign in to accept")
        const takeover = yield* rest(port, "POST", existing, form, new URLSearchParams({ name: "Mallory", password: "a new password for eva" }).toString())
        expect(takeover, 409)
        yield* signIn(port, people.eva.email)
      }))

    it.effect("sign-out ends the session; repeated failures for an address wait, then say for how long", () =>
      Effect.gen(function*() {
        const { port } = yield* Running
        const carla = yield* signIn(port, people.carla.email)
        const out = yield* rest(port, "POST", "/sign-out", asBrowser(carla), "{}")
        expect(out, 303)
        assert.match(String(out.headers["set-cookie"]), /^service_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0$/)
        expect(yield* rest(port, "GET", "/session", { cookie: carla.cookie }), 401)

        const attempt = () => rest(port, "POST", "/sign-in", json, JSON.stringify({ email: "Locked.Out@acme.example", password: "wrong password here" }))
        for (let i = 0; i < 4; i++) expect(yield* attempt(), 401)
        const fifth = yield* attempt()
        expect(fifth, 429)
        assert.strictEqual(fifth.headers["retry-after"], "30")
        const sixth = yield* attempt()
        expect(sixth, 429)
        assert.include(sixth.text, "SIGN_IN_LOCKED")
      }))
  })
}
