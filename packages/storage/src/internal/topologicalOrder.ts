import * as Either from "effect/Either"

/**
 * Why ordering could not be computed.
 *
 * @internal
 */
export type OrderProblem =
  | { readonly _tag: "UnknownDependency"; readonly node: string; readonly dependency: string }
  | { readonly _tag: "Cycle"; readonly nodes: ReadonlyArray<string> }

/**
 * Orders nodes so that each comes after everything it depends on.
 *
 * Kahn's algorithm, always taking the earliest ready node in input order, so that the result is
 * stable: nodes without a mutual constraint keep the order the caller gave them in. Inputs are
 * small (one node per package), so the quadratic scan is irrelevant.
 *
 * @internal
 */
export const topologicalOrder = <A>(
  nodes: ReadonlyArray<A>,
  key: (node: A) => string,
  dependencies: (node: A) => ReadonlyArray<string>
): Either.Either<ReadonlyArray<A>, OrderProblem> => {
  const known = new Set(nodes.map(key))
  for (const node of nodes) {
    for (const dependency of dependencies(node)) {
      if (!known.has(dependency)) {
        return Either.left({ _tag: "UnknownDependency", node: key(node), dependency })
      }
    }
  }
  const placed = new Set<string>()
  const ordered: Array<A> = []
  let remaining = [...nodes]
  while (remaining.length > 0) {
    const ready = remaining.find((node) => dependencies(node).every((dependency) => placed.has(dependency)))
    if (ready === undefined) {
      return Either.left({ _tag: "Cycle", nodes: remaining.map(key) })
    }
    placed.add(key(ready))
    ordered.push(ready)
    remaining = remaining.filter((node) => node !== ready)
  }
  return Either.right(ordered)
}
