/**
 * "Did you mean" for a mistyped command word or flag: the closest known name by edit distance, when it is close
 * enough to be what was meant (or the only name that starts with what was typed).
 *
 * @since 0.1.0
 */
import * as EditDistance from "@service/core/EditDistance"

/**
 * The Levenshtein distance between two words (insertions, deletions and substitutions each cost one).
 *
 * @since 0.1.0 @category suggestions
 */
export const distance = EditDistance.levenshtein

/**
 * The known name `word` most likely stands for: the nearest within a third of its length (at least 2 edits
 * allowed), else the only name it is a prefix of. `undefined` when nothing is close.
 *
 * @since 0.1.0 @category suggestions
 */
export const closest = (word: string, known: ReadonlyArray<string>): string | undefined => {
  const limit = Math.max(2, Math.floor(word.length / 3))
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const name of known) {
    const d = distance(word.toLowerCase(), name.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  if (best !== undefined && bestDistance <= limit && bestDistance < word.length) return best
  const prefixed = known.filter((name) => name.startsWith(word))
  return word.length >= 2 && prefixed.length === 1 ? prefixed[0] : undefined
}

/**
 * ` Did you mean 'x'?` for a message, or nothing.
 *
 * @since 0.1.0 @category suggestions
 */
export const didYouMean = (word: string, known: ReadonlyArray<string>, show: (name: string) => string = (name) => name): string => {
  const found = closest(word, known)
  return found === undefined ? "" : ` Did you mean '${show(found)}'?`
}
