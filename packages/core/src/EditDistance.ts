/**
 * The Levenshtein distance between two strings (insertions, deletions and substitutions each cost one), over UTF-16
 * code units: what fuzzy matching (a municipality's spelling) and "did you mean" (a mistyped command) both measure.
 *
 * @since 0.1.0
 */

/**
 * The number of single-unit edits that turn `a` into `b`.
 *
 * @since 0.1.0 @category measuring
 */
export const levenshtein = (a: string, b: string): number => {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost))
    }
    previous = current
  }
  return previous[b.length] ?? Math.max(a.length, b.length)
}
