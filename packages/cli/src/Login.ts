/**
 * `service login` and `service logout`: the CLI signs a person in through the server's OAuth device grant (RFC 8628,
 * the public client `service-cli`), and keeps the tokens, bound to the REST API, per server address in
 * `<config folder>/service/credentials.json` (mode 0600; the folder is `SERVICE_CONFIG_DIR`, else `XDG_CONFIG_HOME`,
 * else `~/.config`). A command without `--api-key` or `SERVICE_API_KEY` sends the kept access token, refreshed (and
 * the rotated refresh token kept) when it is about to expire. `logout` revokes the refresh token (RFC 7009) and
 * forgets both.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import { Scope } from "@service/core/Principal"
import * as CliOptions from "@effect/cli/Options"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Cli from "./Cli.js"
import * as DemoKey from "./DemoKey.js"
import * as Failure from "./Failure.js"

/** The CLI's OAuth client id, registered by the server. @since 0.1.0 @category constants */
export const clientId = "service-cli"

// What the CLI asks for: every scope a person may give (not the transitional context:read); the consent page shows
// them and the person decides.
const requestedScopes = Scope.literals.filter((scope) => scope !== "context:read")

const Kept = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_at: Schema.Number,
  scope: Schema.String
})
type Kept = typeof Kept.Type

const Store = Schema.parseJson(Schema.Record({ key: Schema.String, value: Kept }))

const configDir = Effect.gen(function*() {
  const explicit = yield* Config.option(Config.string("SERVICE_CONFIG_DIR"))
  if (Option.isSome(explicit)) return explicit.value
  const xdg = yield* Config.option(Config.string("XDG_CONFIG_HOME"))
  if (Option.isSome(xdg)) return NodePath.join(xdg.value, "service")
  const home = yield* Config.string("HOME")
  return NodePath.join(home, ".config", "service")
}).pipe(Effect.orElseSucceed(() => NodePath.join(".config", "service")))

/** Where the tokens are kept. @since 0.1.0 @category storage */
export const storePath = Effect.map(configDir, (dir) => NodePath.join(dir, "credentials.json"))

const normal = (baseUrl: string) => baseUrl.replace(/\/+$/, "")

/**
 * One key per server: the loopback names of one port (`localhost`, `127.0.0.1`, `[::1]`) are one server, so a token
 * kept by `service login --base-url http://127.0.0.1:3000` is the one `http://localhost:3000` uses (issue 32 row 18).
 */
const sameServer = (baseUrl: string): string => {
  const url = URL.parse(normal(baseUrl))
  if (url === null || !DemoKey.loopbackHosts.has(url.hostname)) return normal(baseUrl)
  return `${url.protocol}//loopback:${url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port}${url.pathname.replace(/\/+$/, "")}`
}

/** The kept tokens of the server at `baseUrl`, under whichever of its names they were kept. */
const keptFor = (store: Readonly<Record<string, Kept>>, baseUrl: string): Kept | undefined =>
  store[normal(baseUrl)] ?? Object.entries(store).find(([key]) => sameServer(key) === sameServer(baseUrl))?.[1]

/**
 * Whether `service login` keeps tokens for the server at `baseUrl` (for a hint; nothing is refreshed).
 *
 * @since 0.1.0 @category credentials
 */
export const hasKept = (baseUrl: string): Effect.Effect<boolean> => Effect.map(readStore, (store) => keptFor(store, baseUrl) !== undefined)

const empty: Readonly<Record<string, Kept>> = {}

const readStore: Effect.Effect<Readonly<Record<string, Kept>>> = Effect.gen(function*() {
  const path = yield* storePath
  const text = yield* Effect.option(Effect.tryPromise(() => NodeFs.readFile(path, "utf8")))
  return Option.match(text, {
    onNone: () => empty,
    onSome: (json) => Option.getOrElse(Schema.decodeUnknownOption(Store)(json), () => empty)
  })
})

const writeStore = (store: Readonly<Record<string, Kept>>) =>
  Effect.gen(function*() {
    const path = yield* storePath
    yield* Effect.promise(async () => {
      await NodeFs.mkdir(NodePath.dirname(path), { recursive: true, mode: 0o700 })
      const temporary = `${path}.${process.pid}.tmp`
      await NodeFs.writeFile(temporary, JSON.stringify(store, null, 2), { mode: 0o600 })
      await NodeFs.rename(temporary, path)
    })
  })

const keep = (baseUrl: string, kept: Option.Option<Kept>) =>
  Effect.flatMap(readStore, (store) => {
    const others = Object.fromEntries(Object.entries(store).filter(([key]) => sameServer(key) !== sameServer(baseUrl)))
    return writeStore(Option.match(kept, { onNone: () => others, onSome: (value) => ({ ...others, [normal(baseUrl)]: value }) }))
  })

const post = (url: string, fields: Readonly<Record<string, string>>) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: new URLSearchParams(fields).toString()
      })
      const body: unknown = await response.json().catch(() => ({}))
      return { status: response.status, body }
    },
    catch: (cause) => Failure.Failure.Unreachable({ baseUrl: new URL(url).origin, reason: String(cause) })
  })

const TokenAnswer = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_in: Schema.Number,
  scope: Schema.optionalWith(Schema.String, { default: () => "" })
})
const ErrorAnswer = Schema.Struct({ error: Schema.String, error_description: Schema.optional(Schema.String) })
const DeviceAnswer = Schema.Struct({
  device_code: Schema.String,
  user_code: Schema.String,
  verification_uri: Schema.String,
  verification_uri_complete: Schema.String,
  expires_in: Schema.Number,
  interval: Schema.optional(Schema.Number)
})

const keptFrom = (answer: typeof TokenAnswer.Type) =>
  Effect.map(Clock.currentTimeMillis, (now): Kept => ({
    access_token: answer.access_token,
    refresh_token: answer.refresh_token,
    expires_at: now + answer.expires_in * 1000,
    scope: answer.scope
  }))

/**
 * The device grant, start to end: asks for a code, says where to enter it (stderr), polls until the person allows,
 * denies, or the code expires, and keeps the tokens.
 *
 * @since 0.1.0 @category login
 */
export const login = (baseUrl: string) =>
  Effect.gen(function*() {
    const base = normal(baseUrl)
    const started = yield* post(`${base}/oauth/device/auth`, { client_id: clientId, scope: requestedScopes.join(" "), resource: `${base}/api/v1` })
    const device = Schema.decodeUnknownOption(DeviceAnswer)(started.body)
    if (Option.isNone(device)) {
      return yield* Effect.fail(Failure.unexpected(`The server at ${base} does not offer sign-in for the CLI (HTTP ${started.status}).`))
    }
    yield* Console.error(
      `To sign in, open ${device.value.verification_uri_complete}\n(or ${device.value.verification_uri} and enter ${device.value.user_code}), then allow the CLI. Waiting…`
    )
    let interval = device.value.interval ?? 5
    const deadline = (yield* Clock.currentTimeMillis) + device.value.expires_in * 1000
    while ((yield* Clock.currentTimeMillis) < deadline) {
      yield* Effect.sleep(Duration.seconds(interval))
      const polled = yield* post(`${base}/oauth/token`, {
        grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        device_code: device.value.device_code,
        client_id: clientId
      })
      const tokens = Schema.decodeUnknownOption(TokenAnswer)(polled.body)
      if (Option.isSome(tokens)) {
        const kept = yield* keptFrom(tokens.value)
        yield* keep(base, Option.some(kept))
        return kept
      }
      const error = Option.getOrUndefined(Schema.decodeUnknownOption(ErrorAnswer)(polled.body))
      if (error?.error === "authorization_pending") continue
      if (error?.error === "slow_down") {
        interval += 5
        continue
      }
      return yield* Effect.fail(Failure.Failure.Denied({
        status: polled.status,
        code: (error?.error ?? "sign_in_failed").toUpperCase(),
        message: error?.error === "access_denied" ? "Sign-in was denied in the browser." : `Sign-in failed: ${error?.error_description ?? error?.error ?? polled.status}.`,
        requestId: undefined,
        body: undefined
      }))
    }
    return yield* Effect.fail(Failure.Failure.Denied({ status: undefined, code: "EXPIRED_TOKEN", message: "The sign-in code expired: run login again.", requestId: undefined, body: undefined }))
  })

/**
 * The kept access token for a server, refreshed when it expires within a minute; none when there is none or it
 * cannot be refreshed (then it is forgotten).
 *
 * @since 0.1.0 @category credentials
 */
export const bearerFor = (baseUrl: string): Effect.Effect<Option.Option<Redacted.Redacted<string>>> =>
  Effect.gen(function*() {
    const base = normal(baseUrl)
    const kept = keptFor(yield* readStore, base)
    if (kept === undefined) return Option.none()
    const now = yield* Clock.currentTimeMillis
    if (kept.expires_at - now > 60_000) return Option.some(Redacted.make(kept.access_token))
    const refreshed = yield* Effect.option(
      post(`${base}/oauth/token`, { grant_type: "refresh_token", refresh_token: kept.refresh_token, client_id: clientId, resource: `${base}/api/v1` })
    )
    const tokens = Option.flatMap(refreshed, (answer) => Schema.decodeUnknownOption(TokenAnswer)(answer.body))
    if (Option.isNone(tokens)) {
      yield* keep(base, Option.none())
      return Option.none()
    }
    const next = yield* keptFrom(tokens.value)
    yield* keep(base, Option.some(next))
    return Option.some(Redacted.make(next.access_token))
  })

/**
 * Revokes the kept refresh token (and with it the grant's tokens) and forgets them; whether there were any.
 *
 * @since 0.1.0 @category login
 */
export const logout = (baseUrl: string) =>
  Effect.gen(function*() {
    const base = normal(baseUrl)
    const kept = keptFor(yield* readStore, base)
    if (kept === undefined) return false
    yield* Effect.option(post(`${base}/oauth/token/revocation`, { token: kept.refresh_token, token_type_hint: "refresh_token", client_id: clientId }))
    yield* keep(base, Option.none())
    return true
  })

const baseUrlOption = CliOptions.text("base-url").pipe(
  CliOptions.withDescription("Server address (env SERVICE_BASE_URL)."),
  CliOptions.optional
)

// The command's own --base-url, else the root's (`service --base-url X login`, or SERVICE_BASE_URL): the root
// settings already resolve the environment and the default.
const resolveBase = (given: Option.Option<string>) =>
  Option.match(given, {
    onSome: Effect.succeed,
    onNone: () => Effect.map(Cli.Settings, (settings) => settings.baseUrl)
  })

/**
 * `service login`, for `Cli.Options.operators` through `Cli.operator`.
 *
 * @since 0.1.0 @category commands
 */
export const loginCommand = (_defaultBaseUrl?: string) =>
  Command.make("login", { baseUrl: baseUrlOption }, ({ baseUrl }) =>
    Effect.gen(function*() {
      const base = yield* resolveBase(baseUrl)
      const kept = yield* login(base)
      yield* Console.log(`Signed in to ${normal(base)} (scopes: ${kept.scope}). Try: service whoami --workspace <slug>`)
    })).pipe(Command.withDescription("Sign the CLI in through the browser (OAuth device grant); the tokens are kept for this server."))

/**
 * `service logout`, for `Cli.Options.operators` through `Cli.operator`.
 *
 * @since 0.1.0 @category commands
 */
export const logoutCommand = (_defaultBaseUrl?: string) =>
  Command.make("logout", { baseUrl: baseUrlOption }, ({ baseUrl }) =>
    Effect.gen(function*() {
      const base = yield* resolveBase(baseUrl)
      const had = yield* logout(base)
      yield* Console.log(had ? `Signed out of ${normal(base)}: its tokens are revoked and forgotten.` : `Not signed in to ${normal(base)}.`)
    })).pipe(Command.withDescription("Revoke and forget the tokens kept for this server."))
