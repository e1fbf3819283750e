/**
 * The route table of the served groups: every HTTP operation with its full path, method, path parameters
 * and body limit. The handlers, the 404/405 shaping and the early body-limit check all read this one table,
 * so they agree with the HttpApi built from the same groups.
 *
 * @since 0.1.0
 */
import * as Operation from "@service/core/Operation"
import * as InputShape from "./InputShape.js"

/**
 * The body limit of a route that does not declare one.
 *
 * @since 0.1.0 @category constants
 */
export const defaultMaxBodyBytes = 256 * 1024

/** @since 0.1.0 @category models */
export interface Route<R> {
  readonly group: Operation.Group<R>
  readonly operation: Operation.AnyOperation<R>
  /** The endpoint's name in the HttpApi: the operation's, or `<operation>__<segment>` for a deprecated alias. */
  readonly endpoint: string
  /** For a deprecated alias: the segment served, the canonical one, and since when it is deprecated. */
  readonly alias: { readonly segment: string; readonly canonical: string; readonly since: string } | undefined
  readonly method: Operation.HttpMethod
  /** The full path pattern under `/api/v1`, with `:param` segments. */
  readonly path: string
  /** Every `:param` of the full path, prefix included. */
  readonly params: ReadonlyArray<string>
  /** The body limit, for routes whose input is the body. */
  readonly maxBodyBytes: number | undefined
  /**
   * A body route whose input needs no body field (every field is bound by the path or optional): an absent or
   * empty body is read as `{}` (decision 0075).
   */
  readonly bodyOptional: boolean
  readonly matches: (pathname: string) => boolean
}

/** @since 0.1.0 @category models */
export interface GroupPrefix<R> {
  readonly group: Operation.Group<R>
  /** The full prefix pattern, e.g. `/api/v1/workspaces/:workspace/market-data`. */
  readonly path: string
  /** Matches a pathname at or under the prefix and returns the values of its parameters. */
  readonly match: (pathname: string) => Readonly<Record<string, string>> | undefined
}

/** @since 0.1.0 @category models */
export interface Table<R> {
  readonly routes: ReadonlyArray<Route<R>>
  /** The route serving `method` at `pathname`. */
  readonly find: (method: string, pathname: string) => Route<R> | undefined
  /** The methods served at `pathname`, for 405. */
  readonly methodsAt: (pathname: string) => ReadonlyArray<string>
  /**
   * The group `pathname` was meant for, with the prefix's parameter values: of the groups whose prefix holds it, the
   * one with a route sharing the most leading segments with it (`/workspaces/demo/topics/` is the topics group's,
   * though many groups share the `/workspaces/:workspace` prefix). When several groups share the prefix and none of
   * their routes goes further, no group is named.
   */
  readonly groupAt: (pathname: string) =>
    | { readonly prefix: GroupPrefix<R>; readonly values: Readonly<Record<string, string>> }
    | undefined
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\~]/g, "\\$&")

/**
 * The `:param` names of a path pattern.
 *
 * @since 0.1.0 @category paths
 */
export const paramsOf = (path: string): ReadonlyArray<string> =>
  path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1))

const patternSource = (path: string): string =>
  path.split("/").map((segment) => (segment.startsWith(":") ? "([^/]+)" : escape(segment))).join("/")

/**
 * Fills the `:param` segments of a pattern; a parameter without a value keeps its `:param` form.
 *
 * @since 0.1.0 @category paths
 */
export const fill = (path: string, values: Readonly<Record<string, string>>): string =>
  path.split("/").map((segment) => {
    if (!segment.startsWith(":")) return segment
    const value = values[segment.slice(1)]
    return value === undefined ? segment : encodeURIComponent(value)
  }).join("/")

/**
 * A path with its `canonical` segment replaced by the deprecated `segment` (unchanged when it has none).
 *
 * @since 0.1.0 @category paths
 */
export const aliasPath = (path: `/${string}`, alias: { readonly segment: string; readonly canonical: string }): `/${string}` =>
  `/${path.slice(1).split("/").map((part) => (part === alias.canonical ? alias.segment : part)).join("/")}`

/**
 * The deprecated aliases of an operation's route: each alias whose canonical segment is in the operation's path
 * (relative to the group's prefix), with that path rewritten.
 *
 * @since 0.1.0 @category paths
 */
export const aliasesOf = <R>(
  group: Operation.Group<R>,
  operation: Operation.AnyOperation<R>
): ReadonlyArray<{ readonly alias: { readonly segment: string; readonly canonical: string; readonly since: string }; readonly relative: `/${string}` }> =>
  (group.http.aliases ?? []).flatMap((alias) => {
    const relative = aliasPath(operation.http.path, alias)
    return relative === operation.http.path ? [] : [{ alias, relative }]
  })

/**
 * The canonical path of a request made on a deprecated alias.
 *
 * @since 0.1.0 @category paths
 */
export const canonicalPath = (pathname: string, alias: { readonly segment: string; readonly canonical: string }): string =>
  pathname.split("/").map((part) => (part === alias.segment ? alias.canonical : part)).join("/")

const decodeSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** How many leading segments of `segments` a route pattern matches (a parameter matches any non-empty segment). */
const sharedSegments = (pattern: string, segments: ReadonlyArray<string>): number => {
  const parts = pattern.split("/")
  let shared = 0
  for (const [i, part] of parts.entries()) {
    const segment = segments[i]
    if (segment === undefined || (part.startsWith(":") ? segment.length === 0 : decodeSegment(segment) !== part)) break
    shared += 1
  }
  return shared
}

/**
 * Whether a body route needs no body: every top-level field of its input is filled from the path or optional. Read
 * from the declaration, so every action route of every domain (`approve`, `archive`, `merge`...) is found alike.
 *
 * @since 0.1.0 @category bodies
 */
export const bodyOptional = <R>(operation: Operation.AnyOperation<R>): boolean => {
  const input = operation.http.input
  if (input.kind !== "body") return false
  const bound = Object.values(Operation.pathFields(input))
  const properties = InputShape.propertiesOf(operation.input.ast)
  return properties !== undefined && properties.every((p) => p.isOptional || bound.includes(String(p.name)))
}

/**
 * Builds the table of the groups' HTTP operations.
 *
 * @since 0.1.0 @category constructors
 */
export const make = <R>(groups: ReadonlyArray<Operation.Group<R>>): Table<R> => {
  const routes: Array<Route<R>> = []
  const prefixes: Array<GroupPrefix<R>> = []
  for (const group of groups) {
    const prefixPath = `/api/v1${group.http.prefix}`
    const prefixParams = paramsOf(prefixPath)
    const prefixPattern = new RegExp(`^${patternSource(prefixPath)}(?:/|$)`)
    prefixes.push({
      group,
      path: prefixPath,
      match: (pathname) => {
        const found = prefixPattern.exec(pathname)
        if (found === null) return undefined
        return Object.fromEntries(prefixParams.map((name, i) => [name, decodeSegment(found[i + 1] ?? "")]))
      }
    })
    for (const operation of Operation.servedOn(group, "http")) {
      const variants = [
        { path: Operation.httpPath(group, operation), endpoint: operation.name, alias: undefined },
        ...aliasesOf(group, operation).map(({ alias, relative }) => ({
          path: `/api/v1${group.http.prefix}${relative}`,
          endpoint: `${operation.name}__${alias.segment}`,
          alias
        }))
      ]
      for (const { alias, endpoint, path } of variants) {
        const pattern = new RegExp(`^${patternSource(path)}/?$`)
        routes.push({
          group,
          operation,
          endpoint,
          alias,
          method: operation.http.method,
          path,
          params: paramsOf(path),
          maxBodyBytes: operation.http.input.kind === "body"
            ? operation.http.input.maxBodyBytes ?? defaultMaxBodyBytes
            : undefined,
          bodyOptional: bodyOptional(operation),
          matches: (pathname) => pattern.test(pathname)
        })
      }
    }
  }
  // Longest prefix first, so a nested group (a conformance twin) wins over its parent.
  prefixes.sort((a, b) => b.path.length - a.path.length)
  return {
    routes,
    find: (method, pathname) => routes.find((route) => route.method === method && route.matches(pathname)),
    methodsAt: (pathname) => [...new Set(routes.filter((route) => route.matches(pathname)).map((route) => route.method))],
    groupAt: (pathname) => {
      const segments = pathname.split("/")
      const candidates = prefixes.flatMap((prefix) => {
        const values = prefix.match(pathname)
        if (values === undefined) return []
        const reach = Math.max(
          prefix.path.split("/").length,
          ...routes.filter((route) => route.group === prefix.group).map((route) => sharedSegments(route.path, segments))
        )
        return [{ prefix, values, reach, own: reach > prefix.path.split("/").length }]
      })
      // Deepest reach first; on a tie the longer prefix (a nested group, a conformance twin) first.
      candidates.sort((a, b) => b.reach - a.reach || b.prefix.path.length - a.prefix.path.length)
      const [best, next] = candidates
      if (best === undefined) return undefined
      const shared = next !== undefined && next.reach === best.reach && next.prefix.path === best.prefix.path
      return best.own || !shared ? { prefix: best.prefix, values: best.values } : undefined
    }
  }
}

/**
 * The longest path parameter the router matches (find-my-way`s maxParamLength, set by `HttpLayer`): a longer segment matches no route.
 *
 * @since 0.1.0 @category constants
 */
export const maxPathParamLength = 4096
