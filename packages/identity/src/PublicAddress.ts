/**
 * Where people reach the server: the base of the links the identity domain hands out (invitation links, the
 * sign-in page, and the OAuth issuer) and whether cookies are `Secure`. `SERVICE_PUBLIC_URL` when set (behind a
 * proxy or a domain name, e.g. `https://api.example.com`), else `http://<HOST>:<PORT>` as `npm start` listens.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** @since 0.1.0 @category models */
export interface Address {
  /** Without a trailing slash, e.g. `https://api.example.com`. */
  readonly base: string
  /** Behind https: cookies are `Secure` and take the `__Host-` prefix. */
  readonly secure: boolean
}

/** @since 0.1.0 @category tags */
export class PublicAddress extends Context.Tag("@service/identity/PublicAddress")<PublicAddress, Address>() {}

/** @since 0.1.0 @category constructors */
export const make = (base: string): Address => {
  const trimmed = base.replace(/\/+$/, "")
  return { base: trimmed, secure: trimmed.startsWith("https://") }
}

/** @since 0.1.0 @category layers */
export const layer: Layer.Layer<PublicAddress> = Layer.effect(
  PublicAddress,
  Effect.gen(function*() {
    const configured = yield* Config.option(Config.url("SERVICE_PUBLIC_URL"))
    if (Option.isSome(configured)) return make(configured.value.origin + configured.value.pathname)
    const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
    const port = yield* Config.integer("PORT").pipe(Config.withDefault(3000))
    // A wildcard bind is not an address a browser can open.
    const shown = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host
    return make(`http://${shown}:${port}`)
  }).pipe(Effect.orDie)
)
