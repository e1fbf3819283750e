/**
 * Which credential a command sends, first found first: `--api-key` or `SERVICE_API_KEY` (as `x-api-key`), the
 * access token `service login` keeps for the server (as `Authorization: Bearer`, refreshed when due), and beside a
 * local `npm start` the demo workspace's kept key.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as DemoKey from "./DemoKey.js"
import * as Login from "./Login.js"

/** @since 0.1.0 @category models */
export interface Credential {
  readonly kind: "api_key" | "bearer"
  readonly secret: Redacted.Redacted<string>
  /** Which credential it is, in words, for a refusal's hint (issue 32 row 18). */
  readonly source: string
}

/** @since 0.1.0 @category credentials */
export const resolve = (settings: {
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly baseUrl: string
  readonly workspace: string
}): Effect.Effect<Option.Option<Credential>> =>
  Effect.gen(function*() {
    if (Option.isSome(settings.apiKey)) {
      return Option.some<Credential>({ kind: "api_key", secret: settings.apiKey.value, source: "the API key given (--api-key or SERVICE_API_KEY)" })
    }
    const token = yield* Login.bearerFor(settings.baseUrl)
    if (Option.isSome(token)) {
      return Option.some<Credential>({ kind: "bearer", secret: token.value, source: `the token \`service login\` keeps for ${settings.baseUrl}` })
    }
    const demo = yield* DemoKey.orDemo(Option.none(), settings)
    return Option.map(demo, (secret): Credential => ({
      kind: "api_key",
      secret,
      source: `the demo workspace's key (${DemoKey.fileName} in the server's data folder), as no login is kept for ${settings.baseUrl}`
    }))
  })
