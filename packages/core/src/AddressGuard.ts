/**
 * Whether an address someone else chose may be contacted: the service posts to addresses chosen by its users
 * (Destinations, MCP subscriptions) and its OAuth server fetches what an unauthenticated request names (a client's
 * metadata document, JWKS or logout URI), so without a guard anyone could make it reach its own network, the cloud
 * metadata endpoint or a neighbour's private service (server-side request forgery). One guard serves every outgoing
 * request; `GuardedHttp` sends them (decision 0089).
 *
 * The rules: `https:` only; no user name or password in the URL; the host resolved once and EVERY address it
 * resolves to a global unicast address (no loopback, private, link-local and metadata, carrier-grade NAT,
 * multicast, broadcast, reserved, benchmarking or documentation range, and no IPv6 form that embeds or
 * translates to such an IPv4 address). An IP literal in the URL is checked directly. The check answers the
 * addresses it validated, and the sender connects to one of exactly those (with the URL's host name as TLS
 * server name and `Host`), so a DNS answer that changes between check and connect (rebinding) cannot steer
 * the request elsewhere. The sender runs the check again at every send, not only when a subscription is made.
 *
 * The address classification comes from `ipaddr.js` (its `range()`), completed by a short table of the
 * special-purpose blocks it does not name (IANA special-purpose address registries).
 *
 * On a developer's machine `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true` ({@link layerConfig}) also admits
 * `http:`, loopback and private addresses, for deliveries and the OAuth server's fetches alike; cloud metadata
 * endpoints stay refused (decision 0070).
 *
 * @since 0.1.0
 */
import { lookup } from "node:dns/promises"
import { isIP } from "node:net"
import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import ipaddr from "ipaddr.js"

/**
 * Which rule refused a URL: not an absolute URL, a scheme other than `https:`, a user name or password in the
 * URL, a host that does not resolve, or an address in a range deliveries may not reach.
 *
 * @since 0.1.0
 * @category models
 */
export const Rule = Schema.Literal("malformed_url", "scheme", "userinfo", "unresolvable", "blocked_address")
/** @since 0.1.0 @category models */
export type Rule = typeof Rule.Type

/**
 * A delivery URL the guard refuses. The message names the rule and, for an address, the host, the address and
 * its range; it never repeats the URL's path, query or user information, which may carry secrets. The MCP
 * layer answers it as `-32015` with `data.reason` {@link UrlRejected.reason} (`url_rejected`).
 *
 * @since 0.1.0
 * @category errors
 */
export class UrlRejected extends Schema.TaggedError<UrlRejected>()("UrlRejected", {
  rule: Rule,
  message: Schema.String
}) {
  /** The spec's `data.reason` for an address refused before any request was made. */
  get reason(): "url_rejected" {
    return "url_rejected"
  }
}

/**
 * One validated address: what the sender connects to.
 *
 * @since 0.1.0
 * @category models
 */
export interface Address {
  readonly address: string
  readonly family: 4 | 6
}

/**
 * A URL that passed the guard: the parsed URL, its host name as written (without IPv6 brackets; the TLS server
 * name and the `Host` header) and every address the host resolved to, all validated.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly url: URL
  readonly hostname: string
  readonly addresses: Arr.NonEmptyReadonlyArray<Address>
}

/**
 * Resolves a host name to the textual addresses it has now, all of them (an empty list when it has none or
 * the lookup fails: either way there is nothing to contact).
 *
 * @since 0.1.0
 * @category models
 */
export type Resolve = (hostname: string) => Effect.Effect<ReadonlyArray<string>>

/**
 * The system resolver (`getaddrinfo` through `node:dns/promises` `lookup`, every address).
 *
 * @since 0.1.0
 * @category resolvers
 */
export const systemResolve: Resolve = (hostname) =>
  Effect.tryPromise(() => lookup(hostname, { all: true })).pipe(
    Effect.map((entries) => entries.map((entry) => entry.address)),
    Effect.catchAll((error) =>
      Effect.as(Effect.logDebug("AddressGuard: the host does not resolve", hostname, error.cause), [])
    )
  )

/** @since 0.1.0 @category tags */
export class AddressGuard extends Context.Tag("@service/core/AddressGuard")<AddressGuard, {
  /** Parses, resolves and validates a delivery URL; every call resolves afresh. */
  readonly check: (url: string) => Effect.Effect<Target, UrlRejected>
}>() {}

// -----------------------------------------------------------------------------
// Classification
// -----------------------------------------------------------------------------

type IPv4 = ipaddr.IPv4
type IPv6 = ipaddr.IPv6

// Why each `range()` name of ipaddr.js is refused, for the message.
const V4_RANGES: Readonly<Record<ReturnType<IPv4["range"]>, string>> = {
  unicast: "global unicast",
  unspecified: "'this network' (0.0.0.0/8)",
  broadcast: "broadcast",
  multicast: "multicast (224.0.0.0/4)",
  linkLocal: "link-local (169.254.0.0/16, cloud metadata)",
  loopback: "loopback (127.0.0.0/8)",
  carrierGradeNat: "carrier-grade NAT (100.64.0.0/10)",
  private: "private (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16)",
  reserved: "reserved (192.0.0.0/24, documentation, 192.88.99.0/24 or 240.0.0.0/4)"
}

const V6_RANGES: Readonly<Record<ReturnType<IPv6["range"]>, string>> = {
  unicast: "global unicast",
  unspecified: "unspecified (::)",
  linkLocal: "link-local (fe80::/10)",
  multicast: "multicast (ff00::/8)",
  loopback: "loopback (::1)",
  uniqueLocal: "unique local (fc00::/7)",
  ipv4Mapped: "IPv4-mapped (::ffff:0:0/96)",
  rfc6145: "IPv4-translated (::ffff:0:0:0/96)",
  rfc6052: "NAT64 (64:ff9b::/96)",
  "6to4": "6to4 (2002::/16)",
  teredo: "Teredo (2001::/32)",
  reserved: "documentation (2001:db8::/32)"
}

// Special-purpose blocks ipaddr.js 1.x calls plain unicast. IPv4: only benchmarking is missing (the other
// blocks it does not name, such as AS112 or AMT, are globally reachable). IPv6: every address outside
// 2000::/3 is refused anyway (not global unicast); the table names the blocks a message should spell out and
// the non-global ones inside 2000::/3.
const cidr4 = (text: string): [IPv4, number] => ipaddr.IPv4.parseCIDR(text)
const cidr6 = (text: string): [IPv6, number] => ipaddr.IPv6.parseCIDR(text)

const V4_EXTRA: ReadonlyArray<readonly [[IPv4, number], string]> = [
  [cidr4("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"]
]

const V6_EXTRA: ReadonlyArray<readonly [[IPv6, number], string]> = [
  [cidr6("::/96"), "IPv4-compatible (::/96, deprecated)"],
  [cidr6("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"],
  [cidr6("100::/64"), "discard-only (100::/64)"],
  [cidr6("2001::/23"), "IETF protocol assignments (2001::/23: Teredo, benchmarking, ORCHID)"],
  [cidr6("3fff::/20"), "documentation (3fff::/20)"],
  [cidr6("5f00::/16"), "segment routing SIDs (5f00::/16)"]
]

const GLOBAL_UNICAST_V6 = cidr6("2000::/3")

// Cloud metadata services, refused under every policy: they hand out the host's own credentials, so no setting
// may open them. Their ranges are refused anyway (169.254.169.254 of AWS, GCP and Azure is link-local, Alibaba's
// 100.100.100.200 carrier-grade NAT), except AWS's IPv6 endpoint inside fc00::/7, which the private allowance
// admits; naming them all keeps them refused if a policy ever admits more.
const METADATA_V4: ReadonlyArray<IPv4> = [ipaddr.IPv4.parse("169.254.169.254"), ipaddr.IPv4.parse("100.100.100.200")]
const METADATA_V6: ReadonlyArray<IPv6> = [ipaddr.IPv6.parse("fd00:ec2::254")]
const METADATA_LABEL = "cloud metadata endpoint"

/** What the policy allows beyond the production rules. */
interface Policy {
  readonly schemes: ReadonlyArray<string>
  readonly loopback: boolean
  /** 10/8, 172.16/12, 192.168/16 and fc00::/7 (unique local). */
  readonly private: boolean
}

const production: Policy = { schemes: ["https:"], loopback: false, private: false }
const loopbackForTests: Policy = { schemes: ["https:", "http:"], loopback: true, private: false }
const privateForDevelopment: Policy = { schemes: ["https:", "http:"], loopback: true, private: true }

const sameAddress = (a: IPv4 | IPv6, b: IPv4 | IPv6) => a.toNormalizedString() === b.toNormalizedString()

// Left: the label of the range that refuses the address.
const judge4 = (policy: Policy, address: IPv4): Either.Either<void, string> =>
  Either.flatMap(judgeRange4(policy, address), () =>
    METADATA_V4.some((known) => sameAddress(known, address)) ? Either.left(`${METADATA_LABEL} (${address.toString()})`) : Either.void)

const judgeRange4 = (policy: Policy, address: IPv4): Either.Either<void, string> => {
  const range = address.range()
  if (range === "loopback" && policy.loopback) return Either.void
  if (range === "private" && policy.private) return Either.void
  if (range !== "unicast") return Either.left(V4_RANGES[range])
  const extra = V4_EXTRA.find(([block]) => address.match(block))
  return extra === undefined ? Either.void : Either.left(extra[1])
}

// The IPv4 address a 6to4 address carries in bits 16..47.
const embeddedIn6to4 = (address: IPv6): IPv4 => {
  const high = address.parts[1] ?? 0
  const low = address.parts[2] ?? 0
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
}

const judge6 = (policy: Policy, address: IPv6): Either.Either<Address, string> => {
  const range = address.range()
  // An IPv4-mapped address reaches the IPv4 address it carries: judge that one and connect over IPv4.
  if (range === "ipv4Mapped") {
    const v4 = address.toIPv4Address()
    return Either.mapBoth(judge4(policy, v4), {
      onLeft: (label) => `${V6_RANGES.ipv4Mapped} carrying ${label}`,
      onRight: (): Address => ({ address: v4.toString(), family: 4 })
    })
  }
  if (range === "loopback" && policy.loopback) return Either.right({ address: address.toString(), family: 6 })
  if (range === "uniqueLocal" && policy.private) {
    return METADATA_V6.some((known) => sameAddress(known, address))
      ? Either.left(`${METADATA_LABEL} (${address.toString()})`)
      : Either.right({ address: address.toString(), family: 6 })
  }
  // A 6to4 address is routed to the IPv4 address it embeds, so that address must be global too.
  if (range === "6to4") {
    return Either.mapBoth(judge4(production, embeddedIn6to4(address)), {
      onLeft: (label) => `${V6_RANGES["6to4"]} embedding ${label}`,
      onRight: (): Address => ({ address: address.toString(), family: 6 })
    })
  }
  if (range !== "unicast") return Either.left(V6_RANGES[range])
  const extra = V6_EXTRA.find(([block]) => address.match(block))
  if (extra !== undefined) return Either.left(extra[1])
  if (!address.match(GLOBAL_UNICAST_V6)) return Either.left("not global unicast (outside 2000::/3)")
  return Either.right({ address: address.toString(), family: 6 })
}

// Node's strict `isIP` decides what is an address at all: ipaddr.js 1.x also reads legacy spellings
// (`0x7f.1`, `2130706433`) and cannot read every valid IPv6 spelling (`::1.2.3.4`); either way it refuses.
const judge = (policy: Policy, text: string): Either.Either<Address, string> => {
  const family = isIP(text)
  if (family === 4 && ipaddr.IPv4.isValidFourPartDecimal(text)) {
    return Either.map(judge4(policy, ipaddr.IPv4.parse(text)), (): Address => ({ address: text, family: 4 }))
  }
  if (family === 6 && ipaddr.IPv6.isValid(text)) return judge6(policy, ipaddr.IPv6.parse(text))
  return Either.left("unreadable (not a plain IPv4 or IPv6 address)")
}

// -----------------------------------------------------------------------------
// Check
// -----------------------------------------------------------------------------

const rejected = (rule: Rule, message: string) => Effect.fail(new UrlRejected({ rule, message }))

const parseUrl = (text: string): Effect.Effect<URL, UrlRejected> =>
  Effect.try({
    try: () => new URL(text),
    catch: () => new UrlRejected({ rule: "malformed_url", message: "The delivery address is not an absolute URL." })
  })

const checkWith = (policy: Policy, resolve: Resolve) => (text: string): Effect.Effect<Target, UrlRejected> =>
  Effect.gen(function*() {
    const url = yield* parseUrl(text)
    if (!policy.schemes.includes(url.protocol)) {
      return yield* rejected("scheme", `The delivery address must use ${policy.schemes.map((s) => s.slice(0, -1)).join(" or ")}.`)
    }
    if (url.username !== "" || url.password !== "") {
      return yield* rejected("userinfo", "The delivery address must not carry a user name or password.")
    }
    const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname
    const literal = isIP(hostname) !== 0
    const found = literal ? [hostname] : yield* resolve(hostname)
    if (!Arr.isNonEmptyReadonlyArray(found)) {
      return yield* rejected("unresolvable", `The host ${hostname} of the delivery address does not resolve.`)
    }
    const judged = Either.all(
      Arr.map(found, (address) => Either.mapLeft(judge(policy, address), (label) => ({ address, label })))
    )
    if (Either.isLeft(judged)) {
      const { address, label } = judged.left
      const where = literal ? `The delivery address ${hostname} is` : `The host ${hostname} resolves to ${address},`
      return yield* rejected("blocked_address", `${where} in a range deliveries may not reach: ${label}.`)
    }
    return { url, hostname, addresses: judged.right }
  }).pipe(Effect.withSpan("AddressGuard.check", { captureStackTrace: false }))

// -----------------------------------------------------------------------------
// Constructors and layers
// -----------------------------------------------------------------------------

/**
 * The guard with the production rules. `resolve` defaults to the system resolver; replacing it (a test, a host
 * with its own DNS) never relaxes a rule.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: { readonly resolve?: Resolve }): AddressGuard["Type"] =>
  AddressGuard.of({ check: checkWith(production, options?.resolve ?? systemResolve) })

/**
 * The production guard over the system resolver. It reads no configuration: a host that must never relax it
 * passes this layer (`App.Options.addressGuard`); the default, {@link layerConfig}, is the same unless a developer
 * switches the private-address setting on.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<AddressGuard> = Layer.sync(AddressGuard, () => make())

/**
 * A guard for tests against a local receiver: it also allows `http:` and loopback addresses (127.0.0.0/8,
 * ::1) and nothing else; private, link-local, metadata and every other range stay refused.
 *
 * Why a constructor and not only a setting: test code chooses it by name, which a review sees, and it admits less
 * than the development setting ({@link layerConfig}): loopback only, no private network.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeAllowingLoopbackForTests = (options?: { readonly resolve?: Resolve }): AddressGuard["Type"] =>
  AddressGuard.of({ check: checkWith(loopbackForTests, options?.resolve ?? systemResolve) })

/**
 * {@link makeAllowingLoopbackForTests} as a layer. For tests only.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAllowingLoopbackForTests = (options?: { readonly resolve?: Resolve }): Layer.Layer<AddressGuard> =>
  Layer.sync(AddressGuard, () => makeAllowingLoopbackForTests(options))

/**
 * A guard for a developer's machine: `http:` and `https:`, loopback (127.0.0.0/8, ::1) and private receivers
 * (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7). Link-local, cloud metadata endpoints and every other
 * range stay refused, as do user information and other schemes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeAllowingPrivateAddresses = (options?: { readonly resolve?: Resolve }): AddressGuard["Type"] =>
  AddressGuard.of({ check: checkWith(privateForDevelopment, options?.resolve ?? systemResolve) })

/**
 * `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES`: whether Destinations and MCP subscriptions may name `http:`,
 * loopback and private receivers, and the OAuth server fetch a client's documents from them. For local development
 * and tests only, never production: with it on, anyone who may create a Destination, or send an authorization
 * request, can make the service connect to its own host and network.
 *
 * @since 0.1.0
 * @category config
 */
export const allowPrivateAddressesConfig: Config.Config<boolean> = Config.boolean("SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES").pipe(
  Config.withDefault(false),
  Config.withDescription(
    "Local development and tests only, never production: let Destinations and MCP subscriptions deliver to, and the OAuth server fetch client documents from, http, loopback and private addresses (cloud metadata stays refused)."
  )
)

/**
 * What a host prints while the private-address setting is on (its start banner, a worker's log).
 *
 * @since 0.1.0
 * @category config
 */
export const allowPrivateAddressesWarning =
  "SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES is on: webhooks may be delivered to, and OAuth client documents fetched from, http, loopback and private addresses. For local development only; never in production."

/**
 * The warnings the configuration calls for: one line while the private-address setting is on, none otherwise.
 *
 * @since 0.1.0
 * @category config
 */
export const warnings: Effect.Effect<ReadonlyArray<string>, ConfigError.ConfigError> = Effect.map(
  allowPrivateAddressesConfig,
  (on) => (on ? [allowPrivateAddressesWarning] : [])
)

/**
 * The guard the configuration asks for: {@link make}'s production rules, or with
 * `SERVICE_DELIVERY_ALLOW_PRIVATE_ADDRESSES=true` {@link makeAllowingPrivateAddresses}, logged as a warning when
 * built so every process that delivers says so.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<AddressGuard, ConfigError.ConfigError> = Layer.effect(
  AddressGuard,
  Effect.gen(function*() {
    if (!(yield* allowPrivateAddressesConfig)) return make()
    yield* Effect.logWarning(allowPrivateAddressesWarning)
    return makeAllowingPrivateAddresses()
  })
)
