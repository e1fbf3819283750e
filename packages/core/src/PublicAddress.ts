/**
 * Where people and clients reach the server: the base of the links a domain hands out (invitation links, the
 * sign-in page, the OAuth issuer and resource identifiers) and whether cookies are `Secure`. `SERVICE_PUBLIC_URL`
 * when set (behind a proxy or a domain name, e.g. `https://api.example.com`); otherwise the address the HTTP host
 * listens on once it does (`listening`), and before that `http://<HOST>:<PORT>` as `npm start` would listen.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

/** @since 0.1.0 @category models */
export interface Address {
  /** Without a trailing slash, e.g. `https://api.example.com`. */
  readonly base: string
  /** Behind https: cookies are `Secure` and take the `__Host-` prefix. */
  readonly secure: boolean
}

/** @since 0.1.0 @category tags */
export class PublicAddress extends Context.Tag("@service/core/PublicAddress")<
  PublicAddress,
  {
    readonly get: Effect.Effect<Address>
    /** The HTTP host says where it listens; a configured SERVICE_PUBLIC_URL still wins. */
    readonly listening: (host: string, port: number) => Effect.Effect<void>
  }
>() {}

/** @since 0.1.0 @category constructors */
export const address = (base: string): Address => {
  const trimmed = base.replace(/\/+$/, "")
  return { base: trimmed, secure: trimmed.startsWith("https://") }
}

// A wildcard bind is not an address a browser can open.
const reachable = (host: string, port: number) => {
  const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") && !host.startsWith("[") ? `[${host}]` : host
  return address(`http://${shown}:${port}`)
}

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<PublicAddress> = Layer.effect(
  PublicAddress,
  Effect.gen(function*() {
    const configured = yield* Config.option(Config.url("SERVICE_PUBLIC_URL")).pipe(Effect.orDie)
    const fallback = yield* Effect.all({
      host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
      port: Config.integer("PORT").pipe(Config.withDefault(3000))
    }).pipe(Effect.orDie)
    const bound = yield* Ref.make(Option.none<Address>())
    return PublicAddress.of({
      get: Option.match(configured, {
        onSome: (url) => Effect.succeed(address(url.origin + url.pathname)),
        onNone: () => Effect.map(Ref.get(bound), Option.getOrElse(() => reachable(fallback.host, fallback.port)))
      }),
      listening: (host, port) => Ref.set(bound, Option.some(reachable(host, port)))
    })
  })
)

/**
 * The other sites whose pages may call the server from a browser (CORS): `SERVICE_CORS_ORIGINS`, comma-separated
 * origins such as `http://localhost:6274` (the MCP Inspector). Empty by default.
 *
 * @since 0.1.0 @category config
 */
export const corsOrigins: Config.Config<ReadonlyArray<string>> = Config.string("SERVICE_CORS_ORIGINS").pipe(
  Config.withDefault(""),
  Config.map((value) => value.split(",").map((origin) => origin.trim().replace(/\/+$/, "")).filter((origin) => origin.length > 0)),
  Config.validate({
    message: "SERVICE_CORS_ORIGINS must be origins such as http://localhost:6274, separated by commas",
    validation: (list) => list.every((origin) => /^https?:\/\/[^/\s]+$/.test(origin))
  })
)

/** A fixed address, for tests and hosts that know it. @since 0.1.0 @category layers */
export const layerFixed = (base: string): Layer.Layer<PublicAddress> =>
  Layer.succeed(PublicAddress, PublicAddress.of({ get: Effect.succeed(address(base)), listening: () => Effect.void }))
