/**
 * The address of the client that sent a request, for limits counted per address (the door's 120 a minute).
 * Behind a reverse proxy or load balancer every request comes from the proxy's socket, so the client is read from
 * `Forwarded` (RFC 7239) or `X-Forwarded-For`, but only when the socket's peer is a proxy the operator named in
 * `SERVICE_TRUSTED_PROXIES` (addresses or CIDR blocks, comma-separated): anyone can send those headers, so
 * without it they are never read.
 *
 * The forwarded chain is read from the right (the hop nearest the service): every address that is itself a
 * trusted proxy is skipped, and the first that is not is the client. A chain made only of trusted proxies gives
 * its leftmost address; a malformed entry stops the walk at the last trusted hop.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

/** An address, IPv4 or IPv6 (an IPv4-mapped IPv6 address is read as its IPv4 address). @since 0.1.0 @category models */
export type Address = { readonly v: 4; readonly address: ipaddr.IPv4 } | { readonly v: 6; readonly address: ipaddr.IPv6 }

/** A trusted proxy: one address, or a block of them. @since 0.1.0 @category models */
export type Range = { readonly v: 4; readonly base: ipaddr.IPv4; readonly bits: number } | { readonly v: 6; readonly base: ipaddr.IPv6; readonly bits: number }

const parseAddress = (text: string): Option.Option<Address> => {
  const trimmed = text.trim().replace(/^\[|\]$/g, "")
  const family = isIP(trimmed)
  if (family === 4) return Option.some({ v: 4, address: ipaddr.IPv4.parse(trimmed) })
  if (family !== 6) return Option.none()
  const v6 = ipaddr.IPv6.parse(trimmed)
  // An IPv4 address seen through an IPv6 socket (::ffff:10.0.0.1) is that IPv4 address.
  return Option.some(v6.isIPv4MappedAddress() ? { v: 4, address: v6.toIPv4Address() } : { v: 6, address: v6 })
}

/**
 * One trusted proxy, an address (`10.0.0.7`) or a block (`10.0.0.0/8`, `fd00::/8`); none when malformed.
 *
 * @since 0.1.0 @category parsing
 */
export const parseRange = (text: string): Option.Option<Range> => {
  const [address = "", bitsText, ...rest] = text.trim().split("/")
  if (rest.length > 0) return Option.none()
  return Option.flatMap(parseAddress(address), (parsed): Option.Option<Range> => {
    const max = parsed.v === 4 ? 32 : 128
    const bits = bitsText === undefined ? max : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN
    if (!(bits >= 0 && bits <= max)) return Option.none()
    return Option.some(parsed.v === 4 ? { v: 4, base: parsed.address, bits } : { v: 6, base: parsed.address, bits })
  })
}

/**
 * `SERVICE_TRUSTED_PROXIES`: the proxies whose forwarded headers name the client, comma-separated addresses or
 * CIDR blocks. Unset: no forwarded header is read.
 *
 * @since 0.1.0 @category config
 */
export const trustedProxiesConfig: Config.Config<ReadonlyArray<Range>> = Config.string("SERVICE_TRUSTED_PROXIES").pipe(
  Config.withDefault(""),
  Config.mapOrFail((text): Either.Either<ReadonlyArray<Range>, ConfigError.ConfigError> => {
    const parts = text.split(",").map((part) => part.trim()).filter((part) => part.length > 0)
    const ranges: Array<Range> = []
    for (const part of parts) {
      const range = parseRange(part)
      if (Option.isNone(range)) {
        return Either.left(ConfigError.InvalidData([], `"${part}" is not an IP address or a CIDR block (e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)`))
      }
      ranges.push(range.value)
    }
    return Either.right(ranges)
  }),
  Config.withDescription("Reverse proxies or load balancers whose Forwarded / X-Forwarded-For headers name the client (addresses or CIDR blocks).")
)

const trusted = (ranges: ReadonlyArray<Range>, address: Address): boolean =>
  ranges.some((range) =>
    range.v === 4 ? address.v === 4 && address.address.match(range.base, range.bits) : address.v === 6 && address.address.match(range.base, range.bits)
  )

/** The `for=` addresses of a `Forwarded` header, in order (obfuscated or unknown ones kept as they are). */
const forwardedFor = (header: string): ReadonlyArray<string> =>
  header.split(",").flatMap((element) =>
    element.split(";").flatMap((pair) => {
      const [name, value] = pair.split("=", 2).map((part) => part.trim())
      if (name?.toLowerCase() !== "for" || value === undefined) return []
      // for="[2001:db8::1]:4711" or for=192.0.2.60:8080: the address without quotes or port.
      const unquoted = value.replace(/^"|"$/g, "")
      const bracketed = /^\[([^\]]+)\]/.exec(unquoted)
      if (bracketed?.[1] !== undefined) return [bracketed[1]]
      return [unquoted.includes(".") ? unquoted.replace(/:\d+$/, "") : unquoted]
    })
  )

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the nearest untrusted hop of
 * the forwarded chain (`Forwarded` first, else `X-Forwarded-For`).
 *
 * @since 0.1.0 @category resolving
 */
export const resolve = (
  ranges: ReadonlyArray<Range>,
  socket: Option.Option<string>,
  headers: Readonly<Record<string, string | undefined>>
): Option.Option<string> => {
  if (ranges.length === 0 || Option.isNone(socket)) return socket
  const peer = parseAddress(socket.value)
  if (Option.isNone(peer) || !trusted(ranges, peer.value)) return socket
  const forwarded = headers["forwarded"]
  const chain = forwarded !== undefined
    ? forwardedFor(forwarded)
    : (headers["x-forwarded-for"] ?? "").split(",").map((hop) => hop.trim()).filter((hop) => hop.length > 0)
  let client = peer.value.address.toString()
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = parseAddress(chain[i] ?? "")
    if (Option.isNone(hop)) break
    client = hop.value.address.toString()
    if (!trusted(ranges, hop.value)) break
  }
  return Option.some(client)
}
