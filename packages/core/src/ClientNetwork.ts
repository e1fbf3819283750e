/**
 * The key a limit per client address counts under (sign-in failures, OAuth registrations and codes, the door's
 * requests per minute): an IPv4 address itself, an IPv6 address its /64. A /64 is one subscriber's network: a host
 * picks any of its 2^64 addresses at will (privacy addresses change by themselves), so counting each IPv6 address
 * apart would limit nothing. An IPv4 address seen through an IPv6 socket (`::ffff:192.0.2.1`) is that IPv4
 * address; anything that is not an address is its own key.
 *
 * @since 0.1.0
 */
import ipaddr from "ipaddr.js"
import { isIP } from "node:net"

/**
 * `203.0.113.9` → `203.0.113.9`; `2001:db8:1:2:a:b:c:d` → `2001:db8:1:2::/64`; `::ffff:203.0.113.9` →
 * `203.0.113.9`.
 *
 * @since 0.1.0 @category keys
 */
export const limitKey = (address: string): string => {
  const trimmed = address.trim().replace(/^\[|\]$/g, "")
  if (isIP(trimmed) !== 6) return trimmed
  const v6 = ipaddr.IPv6.parse(trimmed)
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString()
  const network = [...v6.parts.slice(0, 4), 0, 0, 0, 0]
  return `${new ipaddr.IPv6(network).toString()}/64`
}
